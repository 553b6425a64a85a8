"""MIRB from a copy of its folder on an include path (local and Hub layout), replayed replies scored by
hand with the authors' rules; the category averages."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.folder_runs import hub_folder, package_unchanged
from tests.folder_runs import parts_of, plugin, results_of, run_copy_target as run_copy, samples_of



@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mirb"):
        yield


# --- MIRB ---------------------------------------------------------------------------------

#: doc -> (reply, parsed prediction, right) by the authors' evals/eval.py (gold: the sample's answers)
MIRB_REPLIES = {
    "food_1": ("B. salad", "B", True),                              # cut at the first period
    "sightseeing_1": ("It is in Paris, France", "It is in Paris, France", True),  # the answer inside
    "codeu_1": ("The first one", "The first one", False),           # gold A: not the letter
    "plot_code_1": ("Red.", "Red", True),                           # case ignored
    "analogy_1": ("Yes, it does", "Yes, it does", True),            # "yes" in it
    "3d_scene_1": ("three", "3", True),                             # a number word
    "image_jigsaw_1": ("C", "C", True),
    "count_1": ("There are 2 stars.\nMaybe 3", "2", False),         # cut at the newline: the first number 2
    "count_2": ("2", "2", True),
    "attribute_1": ("No. Yes, I mean", "No", True),                 # cut at the period: no "yes", gold no
    "visual_chain_1": ("Two steps", "", False),                     # no digit, not a number word: ""
    "arxiv_1": ("counting shapes", "counting shapes", True),
}
#: subsets: food, sightseeing 100; codeu 0, plot_code, analogy, 3d_scene 100; image_jigsaw 100,
#: count 50, attribute 100; visual_chain 0, arxiv 100
MIRB_CATEGORIES = {"knowledge": 100.0, "reasoning": 75.0, "perception": 250 / 3, "multi_hop": 50.0}


def check_mirb(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 0, proc.stderr
    res = results_of(out)["results"]["mirb_copy"]
    assert {k: res[k] for k in MIRB_CATEGORIES} == pytest.approx(MIRB_CATEGORIES)
    assert res["acc"] == pytest.approx((100 + 75 + 250 / 3 + 50) / 4)   # the authors' Average
    assert res["acc_micro"] == pytest.approx(100 * 9 / 12)             # lmms-eval's, every question alike
    samples = samples_of(out, "mirb_copy")
    assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, (_, p, _) in MIRB_REPLIES.items()}
    assert {d: s["metrics"]["acc"] for d, s in samples.items()} == {d: 100.0 * ok for d, (_, _, ok) in MIRB_REPLIES.items()}
    by_category = results_of(out)["breakdowns"]["mirb_copy"]["category"]
    assert {k: v["n"] for k, v in by_category.items()} == {"Knowledge": 2, "Reasoning": 4, "Perception": 4, "Multi-Hop": 2}


def mirb_rows() -> list[tuple[str, str, str]]:
    return [("mirb_copy", d, r) for d, (r, _, _) in MIRB_REPLIES.items()]


def test_mirb_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "mirb", "mirb_copy", mirb_rows())
    check_mirb(proc, out)
    sample = samples_of(out, "mirb_copy")["3d_scene_1"]
    # the authors' input: the subset's instruction, the images, the question
    assert parts_of(sample) == ["The following images are different views of the same 3D scene. Answer with a "
                                "single number.", "<img>", "<img>", "How many chairs are in the room?"]


def test_mirb_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hub = {"mirb.yaml": {"path: VLLMs/MIRB-hf": f"path: {hub_folder('mirb', 'hf')}"}}
    proc, out = run_copy(tmp_path, "mirb", "mirb_copy", mirb_rows(), hub=hub)
    check_mirb(proc, out)


def test_mirb_averages_need_no_full_set() -> None:
    registry, path = plugin("mirb", "mirb_scoring.py")
    fns = registry.aggregators.get("mirb_mean", plugins=[path]).fn.__globals__
    # only two subsets of two categories: the Average is over the categories present
    assert fns["category_means"]({"food": [100.0, 0.0], "count": [100.0]}) == {
        "knowledge": 50.0, "reasoning": None, "perception": 100.0, "multi_hop": None}
    assert fns["average"]({"food": [100.0, 0.0], "count": [100.0]}) == pytest.approx(75.0)
    assert fns["average"]({}) is None
