"""MMT-Bench (multi-image) from a copy of its folder on an include path (local and Hub layout), replayed
replies scored by hand; VLMEvalKit's exact matching."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.folder_runs import hub_folder, package_unchanged
from tests.folder_runs import parts_of, plugin, results_of, run_copy_target as run_copy, samples_of



@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mmt_bench_mi"):
        yield


# --- MMT-Bench (multi-image) ---------------------------------------------------------------

#: doc -> (reply, parsed letter, right, read_by) by VLMEvalKit's exact matching; gold 1 B, 2 A, 3 A, 4 C, 5 B
MMT_REPLIES = {
    "1": ("I see three shapes", None, False, None),                 # no option letter or text: unparsed
    "2": ("A. yes", "A", True, "rule"),                             # the one letter, among the last 4 words
    # the one letter is not among the last 4 words; "answer is A" names it
    "3": ("The answer is A, because the first card says DAY 1 and the last says DAY 3 clearly", "A", True, "rule"),
    "4": ("I think the fourth image, option C, or maybe D", "C", True, "option_text"),  # two letters: the option text
    "5": ("Cannot determine the answer", "Z", False, "rule"),        # a refusal: Z, wrong
}


def check_mmt(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 1, proc.stderr  # one unparsed reply is a problem
    results = results_of(out)
    assert results["results"]["mmt_bench_mi_copy"]["acc"] == pytest.approx(60.0)
    assert results["problems"]["mmt_bench_mi_copy"]["unparsed"] == 1
    samples = samples_of(out, "mmt_bench_mi_copy")
    assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, (_, p, _, _) in MMT_REPLIES.items()}
    assert {d: s["read_by"] for d, s in samples.items()} == {d: how for d, (_, _, _, how) in MMT_REPLIES.items()}
    by_l2 = results["breakdowns"]["mmt_bench_mi_copy"]["l2_category"]
    assert {k: (v["acc"], v["n"]) for k, v in by_l2.items()} == {
        "multiple_image_analysis": (0.0, 2), "cross_image_matching": (100.0, 1), "temporal_understanding": (100.0, 1),
        "image_retrieval": (100.0, 1)}


def mmt_rows() -> list[tuple[str, str, str]]:
    return [("mmt_bench_mi_copy", d, r) for d, (r, *_) in MMT_REPLIES.items()]


def test_mmt_bench_mi_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "mmt_bench_mi", "mmt_bench_mi_copy", mmt_rows())
    check_mmt(proc, out)
    # VLMEvalKit's prompt: the images, then question, options and instruction
    assert parts_of(samples_of(out, "mmt_bench_mi_copy")["2"]) == [
        "<img>", "<img>", "Question: Are the two images the same shape?\nOptions:\nA. yes\nB. no\n"
        "Please select the correct answer from the options above. \n"]


def test_mmt_bench_mi_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hub = {"mmt_bench_mi.yaml": {"path: lmms-lab-encoder/MMT_MI-Benchmark": f"path: {hub_folder('mmt_bench_mi', 'hf')}"}}
    proc, out = run_copy(tmp_path, "mmt_bench_mi", "mmt_bench_mi_copy", mmt_rows(), hub=hub)
    check_mmt(proc, out)


@pytest.mark.parametrize(("reply", "letter"), [
    ("B", "B"),
    ("(B) the second", "B"),
    ("Failed to obtain answer via API", None),
    ("Z", "Z"),
    ("the correct answer is **b**", "B"),          # any case
    ("A B", None),                                  # two letters, no option text
    ("the second", "B"),                            # the option text
    ("the second or the third", None),              # two option texts
])
def test_vlmeval_exact_matching(reply: str, letter: str | None) -> None:
    registry, path = plugin("mmt_bench_mi", "mmt_scoring.py")
    parse = registry.parsers.get("vlmeval_option", plugins=[path]).fn
    assert parse(reply, {"A": "the first", "B": "the second", "C": "the third", "D": None}) == letter
