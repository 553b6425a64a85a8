"""InfographicVQA (val): a replay on the bundled sample to the ANLS computed by hand (the local copy and the
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
TASK = "infovqa_val"

#: the RRC evaluation script has no license, so it is not redistributed: the test comparing with it
#: reads it from MMTASKS_REFERENCE_DIR (the file as downloaded from docvqa.org / rrc.cvc.uab.es; the
#: copy in github.com/QwenLM/Qwen-VL eval_mm/infographicsvqa_eval.py at
#: aa00ed04091eea5fcdd32985e7915f1c53e7d599 is the same script) and is skipped without it
RRC_SCRIPT = "infographicsvqa_eval.py"


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("infovqa"):
        yield


# --- the sample, by hand ------------------------------------------------------------

SAMPLE_REPLIES = {
    "98251": "64 %",          # 64%: 1 insertion over 4: 0.75 (64: 2 over 4, 0.5)
    "98252": "finland.",      # Finland: 1 over 8: 0.875
    "98253": "three",         # 3: 5 over 5: 0
    "98254": "600",           # 600: 1
    "98255": "50 percent",    # 50% and 50: 8 over 10: 0.2, below 0.5: 0
}


@pytest.mark.parametrize("hub", [False, True], ids=["local", "hub"])
def test_infovqa_sample_by_hand(tmp_path: Path, hub: bool) -> None:
    if hub:
        pytest.importorskip("datasets")
    rows = [(f"{TASK}_copy", doc, reply) for doc, reply in SAMPLE_REPLIES.items()]
    proc, out = run_copy(tmp_path, "infovqa", "lmms-lab/DocVQA", rows, hub=hub)
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    # (0.75 + 0.875 + 0 + 1 + 0) / 5
    assert results["results"][f"{TASK}_copy"]["anls"] == pytest.approx(52.5)
    sample = json.loads((out / "samples" / f"{TASK}_copy.jsonl").read_text(encoding="utf-8").splitlines()[0])
    parts = sample["prompt"][-1]["content"]
    assert [p["type"] for p in parts] == ["image", "text"]
    assert parts[1]["text"] == ("What percentage of people drink coffee daily?\n"
                                "Answer the question using a single word or phrase.")


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    root = SAMPLE / "infovqa"
    hub = datasets.load_dataset(str(root / "hf"), "InfographicVQA", split="validation")
    hub = hub.cast_column("image", datasets.Image(decode=False))
    local = read_jsonl(root / "infovqa_val.jsonl")
    assert list(hub.features) == ["questionId", "question", "answers", "answer_type", "image", "image_url",
                                  "operation/reasoning", "ocr", "data_split"]
    assert [{k: v for k, v in r.items() if k != "image"} for r in hub] == [
        {k: v for k, v in r.items() if k != "image"} for r in local]
    assert [r["image"]["bytes"] for r in hub] == [(root / r["image"]).read_bytes() for r in local]


# --- tricky replies against the reference code (tests/anls_replay.py) -------------------

@pytest.fixture(scope="module")
def tricky_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return anls_replay.tricky_run(tmp_path_factory.mktemp("infovqa"), TASK, "infovqa", SAMPLE / "infovqa" / "images" / "30052.jpg")


def test_tricky_replies_by_hand(tricky_run: Run) -> None:
    anls_replay.check_by_hand(tricky_run, TASK)


def test_the_rrc_script_scores_as_the_task(tricky_run: Run, tmp_path: Path) -> None:
    anls_replay.check_rrc_script(tricky_run, TASK, tmp_path, RRC_SCRIPT, "infographicsvqa")


def test_lmms_eval_scores_as_the_task(tricky_run: Run) -> None:
    anls_replay.check_lmms_eval(tricky_run)


def test_vlmevalkit_scores_as_the_task(tricky_run: Run) -> None:
    anls_replay.check_vlmevalkit(tricky_run, "InfoVQA_VAL")


def test_anls_equals_the_references_on_drawn_replies() -> None:
    anls_replay.check_drawn_replies("DocVQA_VAL")
