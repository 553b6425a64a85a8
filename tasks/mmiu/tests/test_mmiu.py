"""MMIU from a copy of its folder on an include path, replayed replies scored by hand; its adapter and
task mean; its Hub copy holds the local records."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_runs import (REPO, SAMPLE, package_unchanged, parts_of, plugin, read_jsonl, results_of, run_copy, samples_of)



@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mmiu"):
        yield


# --- MMIU --------------------------------------------------------------------------------

#: doc index -> (reply, parsed, right); gold letters are the sample's outputs
MMIU_REPLIES = {
    "0": ("B", "B", True),                  # jigsaw_puzzle_solving, gold B
    "1": ("B.", "B", False),                # jigsaw_puzzle_solving, gold A
    "2": ("C", "C", True),                  # ravens_progressive_matrices
    "3": ("(A)", "A", True),                # threeD_Depth_Estimation
    "4": ("I think it is D", "D", True),    # temporal_ordering: "I" is no option letter (A-D)
    "5": ("B", "B", False),                 # next_image_prediction, gold A
    "6": ("no idea", None, False),          # spot_the_diff: unparsed
    "7": ("A", "A", True),                  # emotion_recognition_expw
    "8": ("C", "C", True),                  # forensic_detection_blink
}


def run_mmiu(tmp_path: Path, *, hub: bool) -> Path:
    rows = [("mmiu_copy", d, r) for d, (r, _, _) in MMIU_REPLIES.items()]
    # the Hub's records name their images inside the unzipped zips, found from the working directory
    proc, out = run_copy(tmp_path, "mmiu", "FanqingM/MMIU-Benchmark", rows, hub=hub,
                         cwd=SAMPLE / "mmiu" if hub else REPO)
    assert proc.returncode == 1, proc.stderr  # one unparsed answer
    results = results_of(out)
    res = results["results"]["mmiu_copy"]
    by_task = {k: (v["acc"], v["n"]) for k, v in results["breakdowns"]["mmiu_copy"]["task"].items()}
    assert by_task == {"jigsaw_puzzle_solving": (50.0, 2), "ravens_progressive_matrices": (100.0, 1),
                       "threeD_Depth_Estimation": (100.0, 1), "temporal_ordering": (100.0, 1),
                       "next_image_prediction": (0.0, 1), "spot_the_diff": (0.0, 1),
                       "emotion_recognition_expw": (100.0, 1), "forensic_detection_blink": (100.0, 1)}
    # the authors' Overall: the mean of the 8 task accuracies, 550 / 8; per question 6 of 9
    assert res["acc"] == pytest.approx(550 / 8)
    assert res["acc_micro"] == pytest.approx(100 * 6 / 9)
    by_relation = {k: (v["acc"], v["n"]) for k, v in results["breakdowns"]["mmiu_copy"]["relation"].items()}
    assert by_relation == {"2D-spatial": (pytest.approx(200 / 3), 3), "3D-spatial": (100.0, 1),
                           "Continuous-temporal": (100.0, 1), "Discrete-temporal": (0.0, 1),
                           "High-level-obj-semantic": (0.0, 1), "High-level-sub-semantic": (100.0, 1),
                           "Low-level-semantic": (100.0, 1)}
    assert results["problems"]["mmiu_copy"]["unparsed"] == 1
    samples = samples_of(out, "mmiu_copy")
    assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, (_, p, _) in MMIU_REPLIES.items()}
    return out


def test_mmiu_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    out = run_mmiu(tmp_path, hub=False)
    samples = samples_of(out, "mmiu_copy")
    records = read_jsonl(SAMPLE / "mmiu" / "mmiu.jsonl")
    tail = "\nAnswer with the option's letter from the given choices directly."
    # several images: "Image-k: " before each, then question, context and the instruction
    assert parts_of(samples["0"]) == ["Image-1: ", "<img>", "\nImage-2: ", "<img>", "\nImage-3: ", "<img>",
                                      f"\n{records[0]['question']}\n{records[0]['context']}{tail}"]
    # one image: the image first, then a newline (InternVL's chat puts "<image>\n" in front)
    assert parts_of(samples["2"]) == ["<img>", f"\n{records[2]['question']}\n{records[2]['context']}{tail}"]
    assert [p["image"] for p in samples["8"]["prompt"][-1]["content"] if p["type"] == "image"] == [
        str((SAMPLE / "mmiu" / rel).resolve()) for rel in records[8]["input_image_path"]]


def test_mmiu_from_the_hub_layout(tmp_path: Path) -> None:
    run_mmiu(tmp_path, hub=True)






def test_mmiu_choices_adapter() -> None:
    from mmtasks.errors import DataError

    registry, path = plugin("mmiu", "mmiu_scoring.py")
    adapt = registry.adapters.get("mmiu_choices", plugins=[path])
    rec = {"options": "A: the first image\nB: the second: left\nC: 3, 4", "output": "B"}
    assert adapt(rec)["choices"] == ["the first image", "the second: left", "3, 4"]
    assert adapt(rec)["output"] == "B"
    with pytest.raises(DataError):
        adapt({"options": "B: starts at B"})
    with pytest.raises(DataError):
        adapt({"options": ["A", "B"]})


def test_mmiu_task_mean_is_the_mean_of_task_accuracies() -> None:
    registry, path = plugin("mmiu", "mmiu_scoring.py")
    agg = registry.aggregators.get("mmiu_task_mean", plugins=[path])
    fns = agg.fn.__globals__
    # tasks with 1/2, 3/3 and 0/1 right: (50 + 100 + 0) / 3 = 50; per question 4 / 6
    groups = {"a": [100.0, 0.0], "b": [100.0, 100.0, 100.0], "c": [0.0]}
    assert fns["mean_of_means"](groups) == pytest.approx(50.0)
    assert fns["mean_of_means"]({}) is None
    err = fns["bootstrap_mean_of_means_stderr"](groups, 0)
    assert err is not None and 0 < err < 50
    assert fns["bootstrap_mean_of_means_stderr"]({"a": [100.0, 100.0], "b": [0.0]}, 0) == 0.0  # no spread within tasks




def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    # the records as they are (the images stay in the relation folders)
    hub = datasets.load_dataset(str(SAMPLE / "mmiu" / "hf"), split="test")
    assert [dict(r) for r in hub] == read_jsonl(SAMPLE / "mmiu" / "mmiu.jsonl")
