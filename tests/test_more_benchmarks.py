"""MMMU-Pro, MIRB, MMT-Bench (multi-image) and LLaVA-Interleave-Bench, added as task folders only.

Each runs from a copy of its folder on an include path (tasks and groups renamed ``*_copy``), in a
subprocess with the package unchanged, on the bundled samples (data/sample/<bench>), from the local
JSONL and from the Hub-style parquet copy. The model is a replay of scripted replies; every score
below is computed by hand from the sample's gold answers and the authors' rules (next to each reply).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.builders import assert_regenerates, folder_digest, sample_generators
from tests.folder_runs import read_jsonl, results_of, run_mmtasks, samples_of

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
PACKAGE_TASKS = REPO / "tasks"
BENCHES = ("mmmu_pro", "mirb", "mmt_bench_mi", "llava_interleave")


@pytest.fixture(autouse=True)
def package_unchanged():
    """Nothing a test does may touch the package's own task folders."""
    before = {b: folder_digest(PACKAGE_TASKS / b) for b in BENCHES}
    yield
    assert {b: folder_digest(PACKAGE_TASKS / b) for b in before} == before


def copy_bench(bench: str, dest_root: Path, *, replace: dict[str, dict[str, str]] | None = None) -> None:
    """Copy ``tasks/<bench>`` to ``dest_root/<bench>_copy``: every ``task: NAME`` becomes ``task: NAME_copy``
    and ``group: G`` becomes ``group: G_copy``; ``replace``: file name -> {old: new} applied to that file."""
    dest = dest_root / f"{bench}_copy"
    shutil.copytree(PACKAGE_TASKS / bench, dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "leaderboard.yaml").unlink(missing_ok=True)  # the copy's tasks are not the tab's
    for yaml_file in dest.glob("*.yaml"):
        text = yaml_file.read_text(encoding="utf-8")
        text = re.sub(r"^task: (\S+)$", r"task: \1_copy", text, flags=re.M)
        text = re.sub(r"^group: (\S+)$", r"group: \1_copy", text, flags=re.M)
        for old, new in (replace or {}).get(yaml_file.name, {}).items():
            assert old in text, (yaml_file.name, old)
            text = text.replace(old, new)
        yaml_file.write_text(text, encoding="utf-8")





def run_copy(tmp_path: Path, bench: str, target: str, rows: list[tuple[str, str, str]], *,
             hub: dict[str, dict[str, str]] | None = None) -> tuple[subprocess.CompletedProcess, Path]:
    """Run ``target`` of the copy of ``tasks/<bench>`` with ``rows`` (task, doc, reply) replayed: from the
    local sample under ``--data-dir``, or (``hub``: the per-file replacements naming the Hub-style
    folders in place of the dataset) from the parquet copy."""
    tasks = tmp_path / "tasks"
    copy_bench(bench, tasks, replace=hub)
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": t, "doc_id": d, "responses": [r]}) + "\n" for t, d, r in rows),
                    encoding="utf-8")
    out = tmp_path / "out"
    data = [] if hub else ["--data-dir", str(SAMPLE)]
    proc = run_mmtasks(["--tasks", target, "--include-path", str(tasks), *data, "--model", f"replay:{pred}",
                        "--output-path", str(out)], tmp_path)
    return proc, out


def parts_of(sample: dict) -> list[str]:
    return ["<img>" if p["type"] == "image" else p["text"] for p in sample["prompt"][-1]["content"]]


def plugin(bench: str, file: str):
    from mmtasks import registry

    path = registry.load_plugin_file(PACKAGE_TASKS / bench / file, roots=[PACKAGE_TASKS / bench])
    return registry, path


def hub_folder(bench: str, name: str) -> str:
    return json.dumps(str(SAMPLE / bench / name))


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


# --- LLaVA-Interleave-Bench ----------------------------------------------------------------

#: ROUGE-L F (rouge 1.0.1) of "The circle is red." against "the circle is red in the second image": the
#: reply's words {The, circle, is, red} (n = 4; case kept, the period splits off an empty sentence),
#: the answer's distinct words m = 7, the common subsequence circle, is, red: P = 3/4, R = 3/7
SPOT_F = 2 * (3 / 4 * 3 / 7) / (3 / 4 + 3 / 7 + 1e-8)
SAME_F = 2 * (1 * 1) / (1 + 1 + 1e-8)   # a reply equal to a one-sentence answer
#: (task, doc, reply, score 0-100)
INTERLEAVE_REPLIES = [
    ("llava_interleave_in_domain_copy", "spot_1", "The circle is red.", 100 * SPOT_F),     # open-ended: ROUGE-L
    ("llava_interleave_in_domain_copy", "nlvr2_1", "A. yes", 100.0),                      # "A. text": A
    ("llava_interleave_in_domain_copy", "qbench_1", "The second one", 0.0),               # no letter: the text, not B
    ("llava_interleave_in_domain_copy", "raven_1", "(C)", 100.0),
    ("llava_interleave_out_domain_copy", "mathverse_1", "a", 0.0),                        # the article reads as A; gold D
    ("llava_interleave_out_domain_copy", "mantis_1", "two", 100 * SAME_F),
    ("llava_interleave_multi_view_copy", "scanqa_1", "a brown table", 100 * SAME_F),
    ("llava_interleave_multi_view_copy", "nuscenes_1", "", 0.0),                          # an empty reply: 0
]


def check_interleave(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    res = results["results"]
    # one question per category here: each task's overall is the mean of its questions
    in_domain = (100 * SPOT_F + 100 + 0 + 100) / 4
    out_domain = multi_view = 100 * SAME_F / 2
    assert res["llava_interleave_in_domain_copy"]["acc"] == pytest.approx(in_domain)
    assert res["llava_interleave_out_domain_copy"]["acc"] == pytest.approx(out_domain)
    assert res["llava_interleave_multi_view_copy"]["acc"] == pytest.approx(multi_view)
    assert results["groups"]["llava_interleave_copy"]["average"] == pytest.approx((in_domain + out_domain + multi_view) / 3)
    for task in {r[0] for r in INTERLEAVE_REPLIES}:
        samples = samples_of(out, task)
        expected = {d: score for t, d, _, score in INTERLEAVE_REPLIES if t == task}
        assert {d: s["metrics"]["acc"] for d, s in samples.items()} == pytest.approx(expected)


def interleave_rows() -> list[tuple[str, str, str]]:
    return [(t, d, r) for t, d, r, _ in INTERLEAVE_REPLIES]


def test_llava_interleave_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "llava_interleave", "llava_interleave_copy", interleave_rows())
    check_interleave(proc, out)
    samples = samples_of(out, "llava_interleave_in_domain_copy")
    assert parts_of(samples["nlvr2_1"]) == ["<img>", "<img>", "Is this statement true: both images show a star?\n"
                                            "A. yes\nB. no\nYour answer is:"]
    # a multi-view record's prompt is its conversations, as lmms-eval's doc_to_text_conversation has it
    view = samples_of(out, "llava_interleave_multi_view_copy")["scanqa_1"]
    assert parts_of(view) == ['[{"from": "human", "value": "', "<img>", "<img>", 'What stands in the middle of the room?"}]']


def test_llava_interleave_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hf, hf_view = hub_folder("llava_interleave", "hf"), hub_folder("llava_interleave", "hf_multi_view")
    old = "path: lmms-lab-encoder/LLaVA-NeXT-Interleave-Bench"
    hub = {"llava_interleave_in_domain.yaml": {old: f"path: {hf}"}, "llava_interleave_out_domain.yaml": {old: f"path: {hf}"},
           "llava_interleave_multi_view.yaml": {old: f"path: {hf_view}"}}
    proc, out = run_copy(tmp_path, "llava_interleave", "llava_interleave_copy", interleave_rows(), hub=hub)
    check_interleave(proc, out)


@pytest.mark.parametrize(("reply", "read"), [
    ("B. the second", "B"),
    ("b. the second", "B"),                        # any case
    ("The answer is (b)", "B"),                    # the first standalone letter
    ("a cat", "A"),                                # the article too
    ("It is the second", "it is the second"),      # no letter: the processed text
    ("yes, the first.", "yes the first"),          # ", " removes the commas; the period goes
])
def test_interleave_multi_choice_reading(reply: str, read: str) -> None:
    registry, path = plugin("llava_interleave", "interleave_scoring.py")
    parse = registry.parsers.get("interleave_answer", plugins=[path]).fn
    assert parse(reply, {"question_type": "multi-choice"}) == read


@pytest.mark.parametrize(("hyp", "ref", "f"), [
    ("a cat sat", "a cat sat", SAME_F),
    ("the cat the cat", "the cat", SAME_F),                                # words counted as a set
    ("cat. a", "a cat", 2 * (1 * 1) / (2 + 1e-8)),                         # sentences: "cat", "a": both words in the union
    ("dog", "a cat", 0.0),
    ("...", "a cat", 0.0),                                                 # no sentence (the package raises)
])
def test_interleave_rouge_l(hyp: str, ref: str, f: float) -> None:
    registry, path = plugin("llava_interleave", "interleave_scoring.py")
    fns = registry.metrics.get("interleave_score", plugins=[path])
    fns = getattr(fns, "fn", fns).__globals__
    assert fns["rouge_l_f"](hyp, ref) == pytest.approx(f)


def test_interleave_adapter_dumps_a_conversation_list() -> None:
    registry, path = plugin("llava_interleave", "interleave_scoring.py")
    adapt = registry.adapters.get("interleave_conversation", plugins=[path])
    conv = [{"from": "human", "value": "<image>Where?"}]
    assert adapt({"conversations": conv})["prompt_text"] == '[{"from": "human", "value": "<image>Where?"}]'
    assert adapt({"conversations": "as is"})["prompt_text"] == "as is"
    assert adapt({"question": "Q?"})["prompt_text"] == "Q?"


# --- the sample data --------------------------------------------------------------------------

def test_sample_data_regenerates_identically(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    for bench, module in zip(BENCHES, sample_generators(*BENCHES)):
        assert_regenerates(module.generate, tmp_path / bench, SAMPLE / bench)
    text = (SAMPLE / "README.md").read_text(encoding="utf-8")
    assert all(f"## {bench}/" in text for bench in BENCHES)
