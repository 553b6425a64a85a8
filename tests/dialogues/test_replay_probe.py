"""The replay_probe protocol driven directly (no scheduler, no server): data and config errors,
note failures, broken replays and probe threads, ability filters, predict-only, and rescoring a
run with ``replay:`` through the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image as PILImage

from mmtasks.cli import main
from mmtasks.config.task_registry import TaskRegistry
from mmtasks import registry
from mmtasks.dialogues.protocols import DialogueContext
from mmtasks.core.sample import Sample
from mmtasks.errors import ConfigError, DataError
from mmtasks.core.request import Reply, Request
from mmtasks.task import Task

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
VERDICT = '{"score": 3, "matched_items": 1, "model_items": 1, "named_images": [1], "refused": false}'

Responder = Callable[[Request], Reply]


def record(**overrides: Any) -> dict[str, Any]:
    rec = {
        "id": "c1", "category": "travel",
        "turns": [{"user": "I am Li.", "images": ["images/c1/1.png"], "assistant": "Hi Li."},
                  {"user": "Two photos.", "images": ["images/c1/2.png", "images/c1/3.png"], "assistant": "Nice."},
                  {"user": "I moved to Paris.", "assistant": "Noted."},
                  {"user": "What to pack?", "assistant": "Boots."}],
        "questions": [{"ability": "IE", "question": "My name?", "answer": "Li", "items": ["Li"]},
                      {"ability": "CR", "format": "choice", "question": "Where?", "options": {"A": "Rome", "B": "Paris"}, "answer": "B"},
                      {"ability": "AR", "question": "My dog?", "answer": "Unknown.", "refuse": True}],
    }
    rec.update(overrides)
    return rec


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "mmrc" / "images" / "c1"
    folder.mkdir(parents=True)
    for i, colour in enumerate(("red", "green", "blue"), start=1):
        PILImage.new("RGB", (4, 4), colour).save(folder / f"{i}.png")
    return tmp_path


def write(data_dir: Path, *records: dict[str, Any]) -> None:
    (data_dir / "mmrc" / "mmrc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def task(name: str = "mmrc", **overrides: Any) -> Task:
    config, path = TaskRegistry.discover([]).load(name)
    return Task(config, path, protocol_overrides=overrides)


def drive(t: Task, data_dir: Path, respond: Responder, ctx: DialogueContext) -> tuple[Sample, list[list[Request]]]:
    doc = next(t.documents(data_dir))
    dialogue = registry.protocols.get("replay_probe").run(t.state(doc), ctx)
    waves: list[list[Request]] = []
    try:
        wave = next(dialogue)
        while True:
            waves.append(wave)
            wave = dialogue.send([respond(r) for r in wave])
    except StopIteration as stop:
        return stop.value, waves


def responder(note: Callable[[int], str] | None = None, fail_model: Callable[[Request], bool] = lambda r: False) -> Responder:
    def respond(r: Request) -> Reply:
        if r.target == "judge":
            return Reply(text=VERDICT)
        if r.target == "notetaker":
            return Reply(text=note(r.position + 1) if note else "{}")
        if fail_model(r):
            return Reply.failure("HTTP 500")
        return Reply(text=f"answer {r.position}")

    return respond


JUDGED = DialogueContext(has_judge=True)


def test_positions_number_the_model_requests_in_order(data_dir: Path) -> None:
    write(data_dir, record())
    sample, waves = drive(task(), data_dir, responder(), JUDGED)
    model = [r for w in waves for r in w if r.target == "model"]
    assert [r.position for r in model] == list(range(7))          # 4 turns, then 3 probes
    assert sample.responses == [f"answer {i}" for i in range(7)]
    assert [len(w) for w in waves] == [1, 1, 1, 1, 3, 3]          # turns, one probe wave, one judge wave
    t = task()
    m = t.aggregator.fn(t.scoring, [sample], 0).metrics
    assert m["ie"] == 3.0 and m["ep"] == 1.0 and m["rp"] == 0.0
    # the conversation's own means: exact match over its choice/tf questions, the judge's score over all
    assert sample.metrics == {"exact_match": 0.0, "score": 3.0}
    cr = sample.extra["questions"][1]
    assert cr["parsed"] is None and cr["metrics"] == {"exact_match": 0.0}   # "answer 5" names no option
    assert sample.unparsed == 1 and cr["reference"] == "B. Paris"
    assert [(j["question"], j["group"]) for j in sample.judge] == [(0, "IE"), (1, "CR"), (2, "AR")]


@pytest.mark.parametrize(("items", "shown"), [(["Li"], "Reference items: Li"),
                                               ([], "Reference items: (not listed: take the facts stated in the reference answer)")])
def test_ie_judge_prompt_lists_the_label_items(data_dir: Path, items: list[str], shown: str) -> None:
    rec = record()
    rec["questions"][0]["items"] = items
    write(data_dir, rec)
    sample, waves = drive(task(), data_dir, responder(), JUDGED)
    ie_prompt = waves[-1][0].messages[-1].plain_text
    assert shown in ie_prompt and "(IE)" in ie_prompt and "<conversation>" not in ie_prompt
    cr_prompt = waves[-1][1].messages[-1].plain_text
    assert "[Turn 2] User: [Image 2] [Image 3] Two photos." in cr_prompt and "[Turn 2] Assistant: answer 1" in cr_prompt
    t = task()
    assert t.aggregator.fn(t.scoring, [sample], 0).metrics["ep"] == 1.0  # the verdict's counts decide, label items or not


def test_unparsable_and_failed_notes_keep_the_previous_note(data_dir: Path) -> None:
    write(data_dir, record())
    notes = {1: '{"user_info": {"name": "Li"}}', 2: "I could not write JSON", 4: '{"user_info": {"city": "Paris"}}'}

    def respond(r: Request) -> Reply:
        if r.target == "notetaker" and r.position == 2:
            return Reply.failure("HTTP 503")
        return responder(note=lambda turn: notes[turn])(r)

    sample, waves = drive(task(), data_dir, respond, DialogueContext(has_judge=True, notetaking=True))
    log = sample.extra["notes"]
    assert [e["note"] for e in log] == [{"user_info": {"name": "Li"}}] * 3 + [{"user_info": {"city": "Paris"}}]
    assert [e["error"] is not None for e in log] == [False, True, True, False]
    assert sample.extra["note_unparsed"] == 1 and sample.extra["note_failures"] == 1
    assert sample.failures == ["note after turn 3: HTTP 503"]
    # The note taker of turn 3 saw the note kept from turn 1, and only turn 3's text.
    third = [r for w in waves for r in w if r.target == "notetaker"][2]
    assert '"name": "Li"' in third.messages[-1].plain_text and "I moved to Paris." in third.messages[-1].plain_text
    probes = waves[4]
    assert all('"city": "Paris"' in r.messages[-1].plain_text for r in probes)


def test_failed_turn_stops_the_replay(data_dir: Path) -> None:
    write(data_dir, record())
    sample, waves = drive(task(), data_dir, responder(fail_model=lambda r: r.position == 1), JUDGED)
    assert len(waves) == 2 and sample.responses == ["answer 0", None]
    assert sample.failures == ["turn 2: HTTP 500"] and sample.extra["replayed"] is False
    assert all(q["response"] is None and q["verdict"] is None for q in sample.extra["questions"])


def test_failed_cumulative_probe_leaves_later_questions_unanswered(data_dir: Path) -> None:
    write(data_dir, record())
    sample, waves = drive(task(probe="cumulative"), data_dir, responder(fail_model=lambda r: r.position == 5), JUDGED)
    answered = [q["response"] for q in sample.extra["questions"]]
    assert answered == ["answer 4", None, None]
    assert len(waves[-1]) == 1 and waves[-1][0].target == "judge"  # only the answered question is judged


def test_reference_history_needs_recorded_replies(data_dir: Path) -> None:
    rec = record()
    rec["turns"][2].pop("assistant")
    write(data_dir, rec)
    with pytest.raises(DataError) as err:
        drive(task(history="reference"), data_dir, responder(), JUDGED)
    assert err.value.field == "turns.2.assistant" and err.value.doc_id == "c1"


@pytest.mark.parametrize(("change", "field"), [
    ({"questions": [{"ability": "XY", "question": "?", "answer": "!"}]}, "questions.0.ability"),
    ({"questions": [{"ability": "CR", "format": "choice", "question": "?", "options": {"A": "x"}, "answer": "C"}]}, "questions.0"),
    ({"questions": [{"ability": "IM", "question": "?", "answer": "!", "images": [4]}]}, "questions.0.images"),
    ({"turns": []}, "turns"),
])
def test_bad_records_name_the_field(data_dir: Path, change: dict, field: str) -> None:
    write(data_dir, record(**change))
    with pytest.raises(DataError) as err:
        drive(task(), data_dir, responder(), JUDGED)
    assert err.value.field == field and err.value.doc_id == "c1"
    assert err.value.file is not None and err.value.file.endswith("mmrc.jsonl") and err.value.line == 1


def test_config_errors_at_load() -> None:
    config, path = TaskRegistry.discover().load("mmrc")
    typo = config.model_copy(update={"protocol_args": {**config.protocol_args, "probes": "cumulative"}})
    with pytest.raises(ConfigError, match="unknown key") as info:
        Task(typo, path)
    assert info.value.field == "protocol_args.probes" and "did you mean 'probe'" in str(info.value)
    with pytest.raises(ConfigError, match="--probes does not apply"):
        task(probes="cumulative")
    with pytest.raises(ConfigError, match="combined"):
        Task(config, path, image_mode="combined")


def test_ability_variant_and_predict_only(data_dir: Path) -> None:
    write(data_dir, record())
    sample, waves = drive(task("mmrc_ar"), data_dir, responder(), DialogueContext(predict_only=True))
    assert [q["ability"] for q in sample.extra["questions"]] == ["AR"]
    assert all(r.target == "model" for w in waves for r in w)    # no judge calls
    assert sample.extra["questions"][0]["verdict"] is None and sample.judge == []


def test_replay_rescoring_sends_the_recorded_answers(tmp_path: Path) -> None:
    base = ["--tasks", "mmrc", "--data-dir", str(SAMPLE), "--no-cache", "--no-progress", "--predict-only"]
    assert main([*base, "--model", "random", "--output-path", str(tmp_path / "a")]) == 0
    assert main([*base, "--model", f"replay:{tmp_path / 'a'}", "--output-path", str(tmp_path / "b")]) == 0

    def responses(run: str) -> dict[str, list]:
        lines = (tmp_path / run / "samples" / "mmrc.jsonl").read_text(encoding="utf-8").splitlines()
        return {s["doc_id"]: [q["response"] for q in s["extra"]["questions"]] + s["responses"] for s in map(json.loads, lines)}

    first = responses("a")
    assert first == responses("b") and all(None not in r for r in first.values())


@pytest.mark.parametrize(("rec", "field"), [
    ({"turns": [], "questions": [{"question": "?"}]}, "turns"),
    ({"turns": [{"user": "hi"}], "questions": []}, "questions"),
    ({"turns": [{"images": []}], "questions": [{"question": "?"}]}, "turns.0.user"),
])
def test_the_generic_record_is_checked_without_a_benchmark_adapter(rec: dict, field: str) -> None:
    from mmtasks.dialogues.replay_probe import record_of
    from mmtasks.documents.dataset import Document

    with pytest.raises(DataError) as err:
        record_of(Document(index=0, doc_id="g1", record=rec, images=(), source="g.jsonl"))
    assert err.value.field == field and err.value.doc_id == "g1" and err.value.file == "g.jsonl"
