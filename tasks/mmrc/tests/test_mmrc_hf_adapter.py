"""The provisional ``mmrc_hf`` adapter: likely Hub field names map to the local MMRC format,
a missing field is a DataError that names it, and the adapter plugs into dataset loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image as PILImage

from mmtasks.config.task_config import TaskConfig
from mmtasks import registry
from mmtasks.dialogues.replay_probe import record_of
from mmtasks.documents.dataset import load_documents
from mmtasks.errors import DataError
from tests.plugins import plugin

mmrc, MMRC = plugin("mmrc")

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample" / "mmrc" / "mmrc.jsonl"

HUB_LIKE = {
    "conversation_id": 17,
    "topic": "music",
    "conversations": [
        {"from": "human", "value": "I play guitar.", "image": ["images/17/1.jpg"]},
        {"from": "gpt", "value": "Nice!"},
        {"from": "human", "value": "I switched to piano."},
        {"from": "gpt", "value": "Great."},
    ],
    "qa_pairs": [
        {"type": "Information Update", "question_type": "multiple choice", "q": "What do I play now?",
         "choices": ["A. guitar", "B. piano"], "gt": "B", "updates": 1},
        {"type": "answer refusal", "question": "What is my teacher's name?", "answer": "Not mentioned.", "refuse": True},
        {"type": "IU", "format": "true/false", "question": "I play piano.", "answer": True},
    ],
}


def test_local_records_pass_through() -> None:
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        assert mmrc.record.hub_to_local(rec) == rec
        # the adapter also checks the record and fills in the defaults, as the local adapter does
        adapted = registry.adapters.get("mmrc_hf", plugins=[MMRC])(rec)
        assert adapted == registry.adapters.get("mmrc", plugins=[MMRC])(rec)
        assert all(q["format"] in ("open", "choice", "tf") for q in adapted["questions"])


def test_hub_like_names_are_mapped() -> None:
    out = mmrc.record.hub_to_local(HUB_LIKE)
    assert out["id"] == "17" and out["category"] == "music"
    assert out["turns"] == [
        {"user": "I play guitar.", "images": ["images/17/1.jpg"], "assistant": "Nice!"},
        {"user": "I switched to piano.", "images": [], "assistant": "Great."},
    ]
    iu, ar, tf = out["questions"]
    assert iu == {"ability": "IU", "format": "choice", "question": "What do I play now?", "answer": "B",
                  "options": {"A": "guitar", "B": "piano"}, "updates": 1}
    assert ar["ability"] == "AR" and ar["format"] == "open" and ar["refuse"] is True
    assert tf["format"] == "tf" and tf["answer"] == "true"


@pytest.mark.parametrize(("drop", "field"), [("qa_pairs", "questions"), ("conversations", "turns"), ("conversation_id", "id")])
def test_missing_field_is_named(drop: str, field: str) -> None:
    rec = {k: v for k, v in HUB_LIKE.items() if k != drop}
    with pytest.raises(DataError) as err:
        registry.adapters.get("mmrc_hf", plugins=[MMRC])(rec)
    assert err.value.field == field and "provisional" in err.value.message and "looked for" in err.value.message


def test_missing_question_field_and_unknown_ability() -> None:
    rec = {**HUB_LIKE, "qa_pairs": [{"type": "IE", "question": "What do I play?"}]}
    with pytest.raises(DataError) as err:
        registry.adapters.get("mmrc_hf", plugins=[MMRC])(rec)
    assert err.value.field == "questions.0.answer" and err.value.doc_id == "17"
    rec = {**HUB_LIKE, "qa_pairs": [{"type": "humour", "question": "?", "answer": "!"}]}
    with pytest.raises(DataError, match="unknown ability 'humour'"):
        registry.adapters.get("mmrc_hf", plugins=[MMRC])(rec)


def test_embedded_images_are_refused() -> None:
    rec = {**HUB_LIKE, "conversations": [{"role": "user", "content": "hi", "images": [{"bytes": b"..."}]}]}
    with pytest.raises(DataError, match="embedded images"):
        registry.adapters.get("mmrc_hf", plugins=[MMRC])(rec)


def test_adapter_plugs_into_loading(tmp_path: Path) -> None:
    folder = tmp_path / "mmrc"
    (folder / "images" / "17").mkdir(parents=True)
    PILImage.new("RGB", (4, 4), "red").save(folder / "images" / "17" / "1.jpg")
    (folder / "hub.jsonl").write_text(json.dumps(HUB_LIKE) + "\n", encoding="utf-8")
    config = TaskConfig.model_validate({
        "task": "t", "protocol": "replay_probe",
        "dataset": {"local": {"dir": "mmrc", "file": "hub.jsonl"}, "adapter": "mmrc_hf", "images_field": "turns[].images"},
    })
    (doc,) = load_documents(config, tmp_path, adapter=registry.adapters.get("mmrc_hf", plugins=[MMRC]))
    assert doc.doc_id == "17" and [img.label for img in doc.images] == ["images/17/1.jpg"]
    conv = mmrc.record.conversation_of(doc.record)
    assert [q.ability for q in conv.questions] == ["IU", "AR", "IU"]
    assert record_of(doc).image_numbers() == [[0], []]  # what the replay protocol attaches per turn
