"""MMMU-Pro from a copy of its folder on an include path (local JSONL and the Hub-style parquet), replayed
replies scored by hand with the authors' rules; the answer rule; its Hub copies hold the local records."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.folder_runs import SAMPLE, hub_folder, package_unchanged
from tests.folder_runs import parts_of, plugin, read_jsonl, results_of, run_copy_target as run_copy, samples_of



@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mmmu_pro"):
        yield


# --- MMMU-Pro -----------------------------------------------------------------------------

#: (task, doc, reply, parsed, right, read_by); gold: standard Math D, Art B, History B, Biology B;
#: vision Math D, Geography C, Chemistry A
MMMU_PRO_REPLIES = [
    ("mmmu_pro_copy", "test_Math_1", "Answer: D", "D", True, "rule"),               # step 0: after "Answer:"
    ("mmmu_pro_copy", "test_Art_1", "The answer is (B).", "B", True, "rule"),        # "(B)"
    # "Answer: (C) Both" names C and B after "Answer:": not one letter, so on to "(C)"
    ("mmmu_pro_copy", "test_History_1", "Answer: (C) Both", "C", False, "rule"),
    # no letter of A-D, no option text ("six"): random.Random("42:test_Biology_1") draws A of A-D
    ("mmmu_pro_copy", "test_Biology_1", "It has six legs, I count them.", "A", False, "random"),
    ("mmmu_pro_vision_copy", "test_Math_1", "The sum is 21.\nAnswer: D", "D", True, "rule"),
    ("mmmu_pro_vision_copy", "test_Geography_1", "C. East", "C", True, "rule"),   # "C." (step 3)
    # the option texts "co2" (B) and "o2" (D) both occur; "o2" occurs last: D
    ("mmmu_pro_vision_copy", "test_Chemistry_1", "I would say CO2 since it is a common molecule", "D", False,
     "option_text"),
]


def check_mmmu_pro(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 1, proc.stderr  # one guessed answer is a problem
    results = results_of(out)
    assert results["results"]["mmmu_pro_copy"]["acc"] == pytest.approx(50.0)            # 2 of 4
    assert results["results"]["mmmu_pro_vision_copy"]["acc"] == pytest.approx(200 / 3)  # 2 of 3
    assert results["groups"]["mmmu_pro_all_copy"]["average"] == pytest.approx((50.0 + 200 / 3) / 2)
    assert results["coverage"]["mmmu_pro_copy"]["guessed"] == 1
    for task in ("mmmu_pro_copy", "mmmu_pro_vision_copy"):
        samples = samples_of(out, task)
        rows = [r for r in MMMU_PRO_REPLIES if r[0] == task]
        assert {d: s["parsed"] for d, s in samples.items()} == {d: p for _, d, _, p, _, _ in rows}
        assert {d: s["metrics"]["acc"] for d, s in samples.items()} == {d: 100.0 * ok for _, d, _, _, ok, _ in rows}
        assert {d: s["read_by"] for d, s in samples.items()} == {d: how for _, d, _, _, _, how in rows}
    by_difficulty = results["breakdowns"]["mmmu_pro_copy"]["topic_difficulty"]
    assert {k: (v["acc"], v["n"]) for k, v in by_difficulty.items()} == {"Easy": (50.0, 2), "Medium": (100.0, 1),
                                                                         "Hard": (0.0, 1)}


def mmmu_pro_rows() -> list[tuple[str, str, str]]:
    return [(t, d, r) for t, d, r, *_ in MMMU_PRO_REPLIES]


def test_mmmu_pro_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "mmmu_pro", "mmmu_pro_all_copy", mmmu_pro_rows())
    check_mmmu_pro(proc, out)
    samples = samples_of(out, "mmmu_pro_copy")
    tail = "Answer with the option letter from the given choices directly."
    # the authors' prompt: question, "A. option" lines, the instruction; the shuffled image options
    # <image 2>, <image 1>, <image 3> each stand where their tag is
    assert parts_of(samples["test_Art_1"]) == ["Which image shows a red circle?\nA. ", "<img>", "\nB. ", "<img>",
                                               "\nC. ", "<img>", "\nD. A blue square\nE. A green triangle\nF. A yellow "
                                               "star\nG. A purple diamond\nH. An orange circle\nI. A red square\nJ. None "
                                               f"of them\n{tail}"]
    images = [Path(p["image"]).relative_to(SAMPLE / "mmmu_pro").as_posix()
              for p in samples["test_Art_1"]["prompt"][-1]["content"] if p["type"] == "image"]
    assert images == [f"images/standard/test_Art_1/{k}.jpg" for k in (2, 1, 3)]
    assert parts_of(samples["test_Biology_1"]) == ["<img>", " How many legs does the drawn insect have?\nA. 4\nB. 6\n"
                                                   f"C. 8\nD. 10\n{tail}"]
    vision = samples_of(out, "mmmu_pro_vision_copy")
    assert parts_of(vision["test_Math_1"]) == [
        "Answer with the option letter from the given choices directly. The last line of your response should be "
        "of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of options.", "<img>"]


def test_mmmu_pro_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hub = {"mmmu_pro.yaml": {"path: MMMU/MMMU_Pro": f"path: {hub_folder('mmmu_pro', 'hf_standard')}"},
           "mmmu_pro_vision.yaml": {"path: MMMU/MMMU_Pro": f"path: {hub_folder('mmmu_pro', 'hf_vision')}"}}
    proc, out = run_copy(tmp_path, "mmmu_pro", "mmmu_pro_all_copy", mmmu_pro_rows(), hub=hub)
    check_mmmu_pro(proc, out)
    assert sum(p == "<img>" for p in parts_of(samples_of(out, "mmmu_pro_copy")["test_Art_1"])) == 3


LETTERS_10 = [chr(ord("A") + i) for i in range(10)]
TEXTS_10 = {k: f"option {k.lower()}" for k in LETTERS_10}


@pytest.mark.parametrize(("reply", "letter", "step"), [
    ("Answer: B", "B", "answer_line"),
    ("Let me think.\nAnswer: The answer is B", "B", "answer_line"),    # one capital of A-J after "Answer:"
    ("Answer: (C) Dog", "C", "letter"),                                # C and D named: on to "(C)"
    ("Answer: A\nno, Answer: J", "J", "answer_line"),                  # the last "Answer:"
    ("(A) or (B)", "B", "letter"),                                     # the last "(X)"
    ("I think B is right", "B", "letter"),                             # "I " and "B ": " B " occurs last
    ("B.", "B", "letter"),                                             # edge "." stripped: "B "
    ("C.x or D.x", "C", "letter"),                                     # "X." step: the first letter wins
    ("the answer must be option e here", "E", "option_text"),
    ("no idea", None, None),
])
def test_mmmu_pro_answer_rule(reply: str, letter: str | None, step: str | None) -> None:
    registry, path = plugin("mmmu_pro", "mmmu_pro_scoring.py")
    fns = registry.parsers.get("mmmu_pro_choice", plugins=[path]).fn.__globals__
    assert fns["pro_choice_step"](reply, LETTERS_10, TEXTS_10) == (letter, step)


def test_mmmu_pro_hub_copies_hold_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    undecoded = datasets.Image(decode=False)
    root = SAMPLE / "mmmu_pro"
    fields = [f"image_{k}" for k in range(1, 8)]
    hub = datasets.load_dataset(str(root / "hf_standard"), "standard (10 options)", split="test")
    for f in fields:
        hub = hub.cast_column(f, undecoded)
    local = read_jsonl(root / "standard.jsonl")
    assert [{k: v for k, v in r.items() if k not in fields} for r in hub] == [
        {k: v for k, v in r.items() if k not in fields} for r in local]
    for row, rec in zip(hub, local):
        assert [row[f] and row[f]["bytes"] for f in fields] == [rec[f] and (root / rec[f]).read_bytes() for f in fields]
    hub = datasets.load_dataset(str(root / "hf_vision"), "vision", split="test").cast_column("image", undecoded)
    local = read_jsonl(root / "vision.jsonl")
    assert [{k: v for k, v in r.items() if k != "image"} for r in hub] == [
        {k: v for k, v in r.items() if k != "image"} for r in local]
    assert [r["image"]["bytes"] for r in hub] == [(root / r["image"]).read_bytes() for r in local]
