"""DocVQA (val): a replay on the bundled sample to the ANLS computed by hand (the local copy and the
Hub layout), and a replay of tricky replies whose per-question scores and mean equal those of the
Robust Reading Competition's evaluation script (read from MMTASKS_REFERENCE_DIR: it carries no
license), of lmms-eval's ``anls`` and of VLMEvalKit's ``process_line``/``hit_calculate`` (both
bundled verbatim in tests/reference/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import anls_replay
from tests.anls_replay import Run
from tests.folder_runs import SAMPLE, package_unchanged, read_jsonl, results_of, run_copy

REFERENCE = Path(__file__).resolve().parent / "reference"
TASK = "docvqa_val"

#: the RRC evaluation script has no license, so it is not redistributed: the test comparing with it
#: reads it from MMTASKS_REFERENCE_DIR (the file as downloaded from docvqa.org / rrc.cvc.uab.es; the
#: copy in github.com/QwenLM/Qwen-VL eval_mm/infographicsvqa_eval.py at
#: aa00ed04091eea5fcdd32985e7915f1c53e7d599 is the same script) and is skipped without it
RRC_SCRIPT = "infographicsvqa_eval.py"


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("docvqa"):
        yield


# --- the sample, by hand ------------------------------------------------------------

SAMPLE_REPLIES = {
    "49153": "4417",          # 4417: 1
    "49154": "03/17/1998",    # 03/17/98: 2 insertions over 10 characters: 0.8
    "49155": "1250",          # 1,250.00: 4 over 8: 0.5, at the threshold, kept ($1,250.00: 0.44)
    "57349": " j.  doe ",     # J. Doe: the same once lowercased and whitespace collapsed: 1
    "57350": "Budget",        # budget review: 7 over 13: 0.46, below 0.5: 0
}


@pytest.mark.parametrize("hub", [False, True], ids=["local", "hub"])
def test_docvqa_sample_by_hand(tmp_path: Path, hub: bool) -> None:
    if hub:
        pytest.importorskip("datasets")
    rows = [(f"{TASK}_copy", doc, reply) for doc, reply in SAMPLE_REPLIES.items()]
    proc, out = run_copy(tmp_path, "docvqa", "lmms-lab/DocVQA", rows, hub=hub)
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    # (1 + 0.8 + 0.5 + 1 + 0) / 5
    assert results["results"][f"{TASK}_copy"]["anls"] == pytest.approx(66.0)
    sample = json.loads((out / "samples" / f"{TASK}_copy.jsonl").read_text(encoding="utf-8").splitlines()[0])
    parts = sample["prompt"][-1]["content"]
    assert [p["type"] for p in parts] == ["image", "text"]
    assert parts[1]["text"] == "What is the invoice number?\nAnswer the question using a single word or phrase."


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    root = SAMPLE / "docvqa"
    hub = datasets.load_dataset(str(root / "hf"), "DocVQA", split="validation")
    hub = hub.cast_column("image", datasets.Image(decode=False))
    local = read_jsonl(root / "docvqa_val.jsonl")
    assert list(hub.features) == ["questionId", "question", "question_types", "image", "docId", "ucsf_document_id",
                                  "ucsf_document_page_no", "answers", "data_split"]
    assert [{k: v for k, v in r.items() if k != "image"} for r in hub] == [
        {k: v for k, v in r.items() if k != "image"} for r in local]
    assert [r["image"]["bytes"] for r in hub] == [(root / r["image"]).read_bytes() for r in local]


# --- tricky replies against the reference code (tests/anls_replay.py) -------------------

@pytest.fixture(scope="module")
def tricky_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return anls_replay.tricky_run(tmp_path_factory.mktemp("docvqa"), TASK, "docvqa", SAMPLE / "docvqa" / "images" / "txpp0227_3.jpg")


def test_tricky_replies_by_hand(tricky_run: Run) -> None:
    anls_replay.check_by_hand(tricky_run, TASK)


def test_the_rrc_script_scores_as_the_task(tricky_run: Run, tmp_path: Path) -> None:
    anls_replay.check_rrc_script(tricky_run, TASK, tmp_path, RRC_SCRIPT, "docvqa")


def test_lmms_eval_scores_as_the_task(tricky_run: Run) -> None:
    anls_replay.check_lmms_eval(tricky_run)


def test_vlmevalkit_scores_as_the_task(tricky_run: Run) -> None:
    anls_replay.check_vlmevalkit(tricky_run, "DocVQA_VAL")


def test_anls_equals_the_references_on_drawn_replies() -> None:
    anls_replay.check_drawn_replies("DocVQA_VAL")
