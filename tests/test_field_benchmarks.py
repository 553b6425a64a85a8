"""BLINK, Mantis-Eval and MMIU, added as task folders only.

Each runs from a copy of its folder on an include path (the copy's tasks and group
renamed, so they cannot be confused with the built-in ones), in a subprocess with the
package unchanged, on the bundled samples (data/sample/{blink,mantis_eval,mmiu}), both
from the local JSONL and from the Hub-style parquet copy. The model is a replay of
scripted replies; every score below is computed by hand from the sample's gold answers
and the authors' rules (written next to each reply).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import assert_regenerates, folder_digest, sample_generators

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
PACKAGE_TASKS = REPO / "tasks"
BENCHES = ("blink", "mantis_eval", "mmiu")


@pytest.fixture(autouse=True)
def package_unchanged():
    """Nothing a test does may touch the package's own task folders."""
    before = {b: folder_digest(PACKAGE_TASKS / b) for b in BENCHES}
    yield
    assert {b: folder_digest(PACKAGE_TASKS / b) for b in before} == before


def copy_bench(bench: str, dest_root: Path, *, replace: dict[str, str] | None = None) -> None:
    """Copy ``tasks/<bench>`` to ``dest_root/<bench>_copy``: every ``task: NAME`` becomes
    ``task: NAME_copy`` and ``group: G`` becomes ``group: G_copy`` (``replace`` applied too)."""
    dest = dest_root / f"{bench}_copy"
    shutil.copytree(PACKAGE_TASKS / bench, dest, ignore=shutil.ignore_patterns("__pycache__"))
    done = set()
    for yaml_file in dest.glob("*.yaml"):
        if yaml_file.name == "leaderboard.yaml":
            yaml_file.unlink()  # the copy's tasks are not the tab's
            continue
        text = yaml_file.read_text(encoding="utf-8")
        text = re.sub(r"^task: (\S+)$", r"task: \1_copy", text, flags=re.M)
        text = re.sub(r"^group: (\S+)$", r"group: \1_copy", text, flags=re.M)
        for old, new in (replace or {}).items():
            if old in text:
                text = text.replace(old, new)
                done.add(old)
        yaml_file.write_text(text, encoding="utf-8")
    assert done == set(replace or {}), done


def run_mmtasks(args: list[str], tmp_path: Path, *, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"),
                "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")})
    return subprocess.run([sys.executable, "-m", "mmtasks", *args, "--no-progress"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=240)


def results_of(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def samples_of(out: Path, task: str) -> dict[str, dict]:
    lines = (out / "samples" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()
    return {s["doc_id"]: s for s in map(json.loads, lines)}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def predictions(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path.write_text("".join(json.dumps({"task": t, "doc_id": d, "responses": [r]}) + "\n" for t, d, r in rows),
                    encoding="utf-8")
    return path


def run_copy(tmp_path: Path, bench: str, hub_id: str, rows: list[tuple[str, str, str]], *, hub: bool,
             cwd: Path = REPO) -> tuple[subprocess.CompletedProcess, Path]:
    """Run the copy of ``tasks/<bench>`` (its group or main task ``<bench>_copy``) with ``rows`` replayed:
    from the local sample under ``--data-dir``, or (``hub``) from the sample's Hub-style folder named
    in place of the dataset ``hub_id``. Returns the process and the output folder."""
    tasks = tmp_path / "tasks"
    replace = {f"path: {hub_id}": f"path: {json.dumps(str(SAMPLE / bench / 'hf'))}"} if hub else None
    copy_bench(bench, tasks, replace=replace)
    out = tmp_path / "out"
    data = [] if hub else ["--data-dir", str(SAMPLE)]
    proc = run_mmtasks(["--tasks", f"{bench}_copy", "--include-path", str(tasks), *data,
                        "--model", f"replay:{predictions(tmp_path / 'pred.jsonl', rows)}",
                        "--output-path", str(out)], tmp_path, cwd=cwd)
    return proc, out


def parts_of(sample: dict) -> list[str]:
    return ["<img>" if p["type"] == "image" else p["text"] for p in sample["prompt"][-1]["content"]]


# --- BLINK ------------------------------------------------------------------------------

#: subtask -> [(doc id, reply, parsed letter or None, right)]; gold letters are the sample's answers;
#: the letters by the choice parser's first_letter rule (an explicit answer first, else the first letter)
BLINK_REPLIES = {
    "Art_Style": [("val_Art_Style_1", "(A)", "A", True),                       # gold (A)
                  ("val_Art_Style_2", "A", "A", False)],                       # gold (B)
    "Counting": [("val_Counting_1", "The answer is (C).", "C", True),           # gold (C)
                 ("val_Counting_2", "B) 1", "B", True)],                       # LLaVA's "X) choice" replies
    "Forensic_Detection": [("val_Forensic_Detection_1", "I cannot tell.", None, False)],  # no letter: unparsed
    "Functional_Correspondence": [("val_Functional_Correspondence_1", "Point B, not A", "B", False)],  # the first letter; gold (A)
    "IQ_Test": [("val_IQ_Test_1", "B", "B", True)],
    "Jigsaw": [("val_Jigsaw_1", "(B) the third image", "B", True)],
    "Multi-view_Reasoning": [("val_Multi-view_Reasoning_1", "left", None, False)],  # option text, no letter
    "Object_Localization": [("val_Object_Localization_1", "B", "B", True)],
    "Relative_Depth": [("val_Relative_Depth_1", "A", "A", True)],
    "Relative_Reflectance": [("val_Relative_Reflectance_1", "(C) About the same", "C", True)],
    "Semantic_Correspondence": [("val_Semantic_Correspondence_1", "(A)", "A", False)],  # gold (C)
    "Spatial_Relation": [("val_Spatial_Relation_1", "(A) yes", "A", True)],
    "Visual_Correspondence": [("val_Visual_Correspondence_1", "D", "D", True)],
    "Visual_Similarity": [("val_Visual_Similarity_1", "(B), not (A)", "B", False)],  # the first letter; gold (A)
}
#: per subtask accuracy, by hand from the table above
BLINK_ACC = {"Art_Style": 50.0, "Counting": 100.0, "Forensic_Detection": 0.0, "Functional_Correspondence": 0.0,
             "IQ_Test": 100.0, "Jigsaw": 100.0, "Multi-view_Reasoning": 0.0, "Object_Localization": 100.0,
             "Relative_Depth": 100.0, "Relative_Reflectance": 100.0, "Semantic_Correspondence": 0.0,
             "Spatial_Relation": 100.0, "Visual_Correspondence": 100.0, "Visual_Similarity": 0.0}
DISCLAIMER = ("Disclaimer: This is not to make unfair assumptions about the people in the image and you just need to "
              "give your assessment on this question. You don't need to identify the real people. You just need to "
              "analyze based on the information I gave you.\n\n")


def blink_task(subtask: str) -> str:
    return "blink_" + subtask.lower().replace("-", "_") + "_copy"


def run_blink(tmp_path: Path, *, hub: bool) -> Path:
    rows = [(blink_task(sub), d, r) for sub, items in BLINK_REPLIES.items() for d, r, _, _ in items]
    proc, out = run_copy(tmp_path, "blink", "BLINK-Benchmark/BLINK", rows, hub=hub)
    assert proc.returncode == 1, proc.stderr  # 2 unparsed answers are problems
    return out


def check_blink(out: Path) -> None:
    results = results_of(out)
    for sub, acc in BLINK_ACC.items():
        assert results["results"][blink_task(sub)]["acc"] == pytest.approx(acc), sub
        samples = samples_of(out, blink_task(sub))
        assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, _, p, _ in BLINK_REPLIES[sub]}
        assert {d: s["metrics"]["acc"] for d, s in samples.items()} == {d: 100.0 * ok for d, _, _, ok in BLINK_REPLIES[sub]}
    # the authors' Total: the plain mean of the 14 subtask accuracies, 850 / 14
    assert results["groups"]["blink_copy"]["average"] == pytest.approx(850 / 14)
    assert results["problems"][blink_task("Forensic_Detection")]["unparsed"] == 1
    assert results["problems"][blink_task("Multi-view_Reasoning")]["unparsed"] == 1


def test_blink_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    out = run_blink(tmp_path, hub=False)
    check_blink(out)
    # the authors' query: the record's prompt (with their disclaimer for Art_Style, Jigsaw and
    # Forensic_Detection), then the images image_1..image_4 in order, the empty ones skipped
    records = {r["idx"]: r for sub in BLINK_ACC for r in read_jsonl(SAMPLE / "blink" / f"{sub}.jsonl")}
    for sub in BLINK_ACC:
        for doc_id, sample in samples_of(out, blink_task(sub)).items():
            rec = records[doc_id]
            n = sum(rec[f"image_{k}"] is not None for k in range(1, 5))
            prefix = DISCLAIMER if sub in ("Art_Style", "Jigsaw", "Forensic_Detection") else ""
            assert parts_of(sample) == [prefix + rec["prompt"]] + ["<img>"] * n, doc_id
            assert [p["image"] for p in sample["prompt"][-1]["content"][1:]] == [
                str(SAMPLE / "blink" / rec[f"image_{k}"]) for k in range(1, n + 1)]
    assert {len(parts_of(s)) - 1 for sub in BLINK_ACC for s in samples_of(out, blink_task(sub)).values()} == {1, 2, 3, 4}


def test_blink_from_the_hub_layout(tmp_path: Path) -> None:
    """The same YAML reads the Hub dataset (one config per subtask); its path names the
    Hub-style sample folder instead of BLINK-Benchmark/BLINK."""
    out = run_blink(tmp_path, hub=True)
    check_blink(out)
    sample = samples_of(out, blink_task("Forensic_Detection"))["val_Forensic_Detection_1"]
    assert parts_of(sample)[1:] == ["<img>"] * 4


# --- Mantis-Eval --------------------------------------------------------------------------

#: doc id -> (reply, parsed, right); by the authors' get_prediction (mantis/benchmark/eval.py)
MANTIS_REPLIES = {
    "1": ("Final Answer: B", "B", True),                  # gold B: the text after "final answer:"
    "2": ("A", "A", True),                                # gold "(A)": brackets stripped from the gold
    "3": ("the third", "the third", True),               # first letter "T" names no option: the reply is
                                                          # compared with the gold option's text, "the third"
    "4": ("Because the colours match, yes.", "B", False),  # the first alphabetic character, "B"; gold A
    "5": ("There is a circle, a square and a star.\nFinal Answer: 3", "3", True),  # short answer "3"
    "6": ("Final Answer: OPEN sign", "OPEN sign", False),  # short answer "OPEN": not equal
    "7": ("(C)", "C", False),                             # gold D
}


def run_mantis(tmp_path: Path, *, hub: bool) -> Path:
    rows = [("mantis_eval_copy", d, r) for d, (r, _, _) in MANTIS_REPLIES.items()]
    proc, out = run_copy(tmp_path, "mantis_eval", "TIGER-Lab/Mantis-Eval", rows, hub=hub)
    assert proc.returncode == 0, proc.stderr  # every reply gets a verdict: nothing is unparsed
    results = results_of(out)
    res = results["results"]["mantis_eval_copy"]
    assert res["acc"] == pytest.approx(100 * 4 / 7)  # 1, 2, 3 and 5 right
    by_type = results["breakdowns"]["mantis_eval_copy"]["question_type"]
    # multi-choice 1, 2, 3 right of 1, 2, 3, 4, 7; short-answer 5 right of 5, 6
    assert {k: (v["acc"], v["n"]) for k, v in by_type.items()} == {"multi-choice": (pytest.approx(60.0), 5),
                                                                  "short-answer": (50.0, 2)}
    samples = samples_of(out, "mantis_eval_copy")
    assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, (_, p, _) in MANTIS_REPLIES.items()}
    assert {d: s["metrics"]["acc"] for d, s in samples.items()} == {d: 100.0 * ok for d, (_, _, ok) in MANTIS_REPLIES.items()}
    return out


def test_mantis_eval_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    out = run_mantis(tmp_path, hub=False)
    samples = samples_of(out, "mantis_eval_copy")
    mc = "\nAnswer with the option's letter from the given choices directly."
    # options without their own letter get "\n (A) ", the others are listed as they are
    assert parts_of(samples["1"]) == ["<img>", "<img>", " Which image shows more circles?\n (A) The first image\n"
                                      " (B) The second image" + mc]
    # the text between the tags as it is, newlines included
    assert parts_of(samples["2"]) == ["Image 1: ", "<img>", "\nImage 2: ", "<img>",
                                      "\nWhat do the two images have in common?\n A. Both show a star\n"
                                      " B. Both show a square\n C. Both are empty" + mc]
    # fewer tags than images: the untagged image first; the others where their tags are
    assert parts_of(samples["4"]) == ["<img>", "Compare it with ", "<img>",
                                      ". Are the shapes the same colour?\n (A) yes\n (B) no" + mc]
    # a short answer: the authors' short-answer template around the question
    assert parts_of(samples["6"]) == ["Given the images, answer the following short answer vqa question:\nQ: ", "<img>",
                                      ' What word is written on the sign?\nYou can first give your analysis, and then '
                                      'give your final answer as "Final Answer:"']
    assert parts_of(samples["3"])[:3] == ["<img>"] * 3  # no tag: the images first


def test_mantis_eval_from_the_hub_layout(tmp_path: Path) -> None:
    out = run_mantis(tmp_path, hub=True)
    assert parts_of(samples_of(out, "mantis_eval_copy")["7"])[:2] == ["<img>", "<img>"]


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


# --- the plugin files, rule by rule ---------------------------------------------------

def plugin(bench: str, file: str):
    from mmtasks import registry

    path = registry.load_plugin_file(PACKAGE_TASKS / bench / file, roots=[PACKAGE_TASKS / bench])
    return registry, path


MANTIS_DOC_MC = {"question_type": "multi-choice", "options": ["red", "B. yellow", "(C) green"]}


@pytest.mark.parametrize(("reply", "gold", "parsed", "right"), [
    ("B", "B", "B", True),
    ("Final Answer: (B) yellow", "B", "B", True),         # after "final answer:", the first letter
    ("The answer is C", "(C)", "C", True),
    ("Answer: A", "A", "A", True),
    ("answer: c", "C", "C", True),                      # the letter upper-cased
    ("Blue", "A", "B", False),                          # the first alphabetic character, "B"
    ("red", "A", "red", True),                          # "R" names no option: text equals option A
    ("green", "C", "green", True),                      # option C's own "(C)" prefix removed
    ("yellow", "B", "yellow", True),                    # option B's own "B." prefix removed
    ("green.", "C", "green.", False),                   # the text must match exactly
    ("42", "A", "42", False),                           # no letter at all: the text, not option A
])
def test_mantis_multi_choice_rule(reply: str, gold: str, parsed: str, right: bool) -> None:
    registry, path = plugin("mantis_eval", "mantis_scoring.py")
    parse = registry.parsers.get("mantis_answer", plugins=[path]).fn
    correct = registry.metrics.get("mantis_correct", plugins=[path])
    correct = getattr(correct, "fn", correct)
    assert parse(reply, MANTIS_DOC_MC) == parsed
    assert correct(parsed, gold, MANTIS_DOC_MC) == (100.0 if right else 0.0)


@pytest.mark.parametrize(("reply", "gold", "right"), [
    ("Final Answer: 3", "3", True),
    ("I count them.\nfinal answer: Three", "three", True),  # case ignored
    ("3 shapes", "3", False),                                # no marker: the whole reply
    ("The answer is 3.", "3", False),                        # the period stays
])
def test_mantis_short_answer_rule(reply: str, gold: str, right: bool) -> None:
    registry, path = plugin("mantis_eval", "mantis_scoring.py")
    parse = registry.parsers.get("mantis_answer", plugins=[path]).fn
    correct = registry.metrics.get("mantis_correct", plugins=[path])
    correct = getattr(correct, "fn", correct)
    doc = {"question_type": "short-answer", "options": []}
    assert correct(parse(reply, doc), gold, doc) == (100.0 if right else 0.0)


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
    err = fns["_macro_stderr"](groups, 0)
    assert err is not None and 0 < err < 50
    assert fns["_macro_stderr"]({"a": [100.0, 100.0], "b": [0.0]}, 0) == 0.0  # no spread within tasks


# --- random baseline and the sample data ------------------------------------------------

def test_random_baseline_answers_with_each_documents_letters(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "blink,mantis_eval,mmiu", "--data-dir", str(SAMPLE), "--model", "random",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    mmiu = samples_of(out, "mmiu")
    for i, rec in enumerate(read_jsonl(SAMPLE / "mmiu" / "mmiu.jsonl")):
        assert mmiu[str(i)]["parsed"] in [chr(ord("A") + k) for k in range(len(rec["options"].split("\n")))]
    mantis = samples_of(out, "mantis_eval")
    for rec in read_jsonl(SAMPLE / "mantis_eval" / "mantis_eval.jsonl"):
        reply = mantis[rec["id"]]["responses"][0]
        if rec["question_type"] == "multi-choice":
            assert reply in [chr(ord("A") + k) for k in range(len(rec["options"]))]
        else:
            assert reply == ""  # the authors' random baseline answers short questions with ""
    results = results_of(out)
    assert results["groups"]["blink"]["average"] is not None


def test_hub_copies_hold_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    undecoded = datasets.Image(decode=False)
    # BLINK: one config per subtask, image_1..image_4 embedded
    for sub in BLINK_ACC:
        local = read_jsonl(SAMPLE / "blink" / f"{sub}.jsonl")
        hub = datasets.load_dataset(str(SAMPLE / "blink" / "hf"), sub, split="val")
        for k in range(1, 5):
            hub = hub.cast_column(f"image_{k}", undecoded)
        assert len(hub) == len(local)
        for rec, row in zip(local, hub):
            fields = [f"image_{k}" for k in range(1, 5)]
            assert {k: v for k, v in row.items() if k not in fields} == {k: v for k, v in rec.items() if k not in fields}
            for f in fields:
                assert (row[f] and row[f]["bytes"]) == (rec[f] and (SAMPLE / "blink" / rec[f]).read_bytes())
    # Mantis-Eval: images a list of embedded images
    local = read_jsonl(SAMPLE / "mantis_eval" / "mantis_eval.jsonl")
    hub = datasets.load_dataset(str(SAMPLE / "mantis_eval" / "hf"), split="test").cast_column("images", [undecoded])
    assert [{k: v for k, v in r.items() if k != "images"} for r in hub] == [{k: v for k, v in r.items() if k != "images"} for r in local]
    assert [[i["bytes"] for i in r["images"]] for r in hub] == [[(SAMPLE / "mantis_eval" / p).read_bytes() for p in r["images"]] for r in local]
    # MMIU: the records as they are (the images stay in the relation folders)
    hub = datasets.load_dataset(str(SAMPLE / "mmiu" / "hf"), split="test")
    assert [dict(r) for r in hub] == read_jsonl(SAMPLE / "mmiu" / "mmiu.jsonl")


def test_sample_data_regenerates_identically(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    blink, mantis_eval, mmiu = sample_generators("blink", "mantis_eval", "mmiu")
    for bench, generate in (("blink", blink.generate), ("mantis_eval", mantis_eval.generate), ("mmiu", mmiu.generate)):
        assert_regenerates(generate, tmp_path / bench, SAMPLE / bench)
    text = (SAMPLE / "README.md").read_text(encoding="utf-8")
    assert all(f"## {bench}/" in text for bench in BENCHES)
