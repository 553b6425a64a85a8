"""MUIRBench from a copy of its folder on an include path (local and Hub layout), scored by hand from
the sample and scripted replies; the random baseline's letters; its Hub copy holds the local records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.folder_copies import (SAMPLE, copy_task_folder, read_jsonl, results_of,
                                 run_mmtasks, samples_of)
from tests.folder_runs import package_unchanged



@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("muirbench"):
        yield


# --- MUIRBench ------------------------------------------------------------------------

#: doc -> (reply, parsed letter or None by the strict first-letter rule); the gold letters are the sample's answers
MUIR_REPLIES = {
    "muir_sample_1": ("B", "B"),                                  # gold B: right
    "muir_sample_2": ("(D) None of the choices provided", "D"),   # gold D: right
    "muir_sample_3": ("A", "A"),                                  # gold C
    "muir_sample_4": ("The answer is D.", "D"),                   # gold D: right
    "muir_sample_5": ("C", "C"),                                  # gold B
    "muir_sample_6": ("I am not sure.", None),                    # only A-C exist: unparsed
    "muir_sample_7": ("F", "F"),                                  # 6 options, F is valid; gold C
    "muir_sample_8": ("C", "C"),                                  # gold C: right
    "muir_sample_9": ("E", None),                                 # only A-D exist: unparsed
}
#: the authors' rule (muirbench's default) finds the same letters; where it finds none it guesses
#: random.Random("42:<idx>").choice(letters): muir_sample_6 (A-C) -> "C" (gold A), muir_sample_9
#: (A-D) -> "A" (gold B), both wrong
MUIR_GUESSES = {"muir_sample_6": "C", "muir_sample_9": "A"}


def muir_predictions(path: Path, task: str) -> Path:
    path.write_text("".join(json.dumps({"task": task, "doc_id": d, "responses": [r]}) + "\n"
                            for d, (r, _) in MUIR_REPLIES.items()), encoding="utf-8")
    return path


def check_muir_results(out: Path, task: str, *, strict: bool = False) -> None:
    results = results_of(out)
    res = results["results"][task]
    # right: 1, 2, 4, 8 of 9 (the two guesses of the authors' rule are wrong)
    assert res["acc"] == pytest.approx(100 * 4 / 9)
    if strict:
        assert results["problems"][task] == {"request_failures": 0, "unparsed": 2, "judge_failures": 0}
        assert results["coverage"][task]["scored"] == 9 and "guessed" not in results["coverage"][task]  # unparsed: scored 0
    else:
        assert results["problems"][task] == {"request_failures": 0, "unparsed": 0, "judge_failures": 0, "guessed": 2}
        assert results["coverage"][task]["scored"] == 9 and results["coverage"][task]["guessed"] == 2
    # the peers' readings (variants, the same replies): lmms-eval a leading "X." or the whole reply equal
    # to the letter: 1 and 8 right ("(D) None ..." and "The answer is D." are not); VLMEvalKit's can_infer:
    # 1, 8, 2 (the option text "None of the choices provided") and 4 (a lone D in the last words)
    variants = results["variants"][task]
    assert variants["lmms_eval"]["metrics"]["acc"] == pytest.approx(100 * 2 / 9)
    assert variants["vlmevalkit"]["metrics"]["acc"] == pytest.approx(100 * 4 / 9)
    breakdowns = results["breakdowns"][task]
    by_task = {label: row["acc"] for label, row in breakdowns["task"].items()}
    assert by_task == pytest.approx({"Counting": 100.0, "Visual Retrieval": 0.0, "Ordering": 100.0,
                                     "Difference Spotting": 0.0, "Image-Text Matching": 0.0,
                                     "Attribute Similarity": 0.0, "Scene Understanding": 100.0,
                                     "Cartoon Understanding": 0.0})
    by_relation = {label: (row["acc"], row["n"]) for label, row in breakdowns["image_relation"].items()}
    assert by_relation == {"Independent": (pytest.approx(200 / 3), 3), "Partial-Similarity": (0.0, 2),
                           "Temporal": (100.0, 1), "Complementary": (0.0, 1), "Multiview": (100.0, 1),
                           "Narrative": (0.0, 1)}
    assert {label: row["n"] for label, row in breakdowns["n_options"].items()} == {"3": 1, "4": 4, "5": 3, "6": 1}
    samples = {s["doc_id"]: s for s in samples_of(out, task)}
    expected = {d: p for d, (_, p) in MUIR_REPLIES.items()}
    assert {d: s["parsed"] for d, s in samples.items()} == (expected if strict else {**expected, **MUIR_GUESSES})
    assert {d for d, s in samples.items() if s["guessed"]} == (set() if strict else set(MUIR_GUESSES))


def test_muirbench_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    task = copy_task_folder("muirbench", tasks)
    out = tmp_path / "out"
    strict = f"{task.removesuffix('_copy')}_strict_copy"
    predictions = muir_predictions(tmp_path / 'pred.jsonl', task)
    predictions.write_text(predictions.read_text(encoding="utf-8") + predictions.read_text(encoding="utf-8").replace(
        f'"task": "{task}"', f'"task": "{strict}"'), encoding="utf-8")
    proc = run_mmtasks(["--tasks", f"{task},{strict}", "--include-path", str(tasks), "--data-dir", str(SAMPLE),
                        "--model", f"replay:{predictions}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr  # 2 guessed (muirbench), 2 unparsed (muirbench_strict): problems
    assert "guessed=2" in proc.stderr and "unparsed=2" in proc.stderr
    check_muir_results(out, task)
    check_muir_results(out, strict, strict=True)
    # the official prompt, the images where the record's <image> markers are
    samples = {s["doc_id"]: s for s in samples_of(out, task)}
    parts = samples["muir_sample_3"]["prompt"][-1]["content"]
    kinds = ["img" if p["type"] == "image" else p["text"] for p in parts]
    assert kinds == ["Question: Which image shows the same shape in the same colour as ", "img",
                     "?\nChoices:\n(A) ", "img", "\n(B) ", "img", "\n(C) ", "img",
                     "\n(D) None of the choices provided\n"
                     "Hint: Please provide the correct option letter, such as A, B, C, D, directly.\nAnswer:"]
    first = samples["muir_sample_5"]["prompt"][-1]["content"]  # no marker: the images come first
    assert [p["type"] for p in first] == ["image"] * 4 + ["text"]
    assert first[-1]["text"].startswith("Question: Which image is different from the other three?\nChoices:\n(A) ")
    assert "(E) None of the choices provided\n" in first[-1]["text"]


def test_muirbench_from_the_hub_layout(tmp_path: Path) -> None:
    """The same YAML reads the Hugging Face dataset; here its ``path`` names the Hub-style
    sample folder (parquet, embedded images) instead of MUIRBENCH/MUIRBENCH."""
    tasks = tmp_path / "tasks"
    hub = json.dumps(str(SAMPLE / "muirbench" / "hf"))
    task = copy_task_folder("muirbench", tasks, replace={"path: MUIRBENCH/MUIRBENCH": f"path: {hub}"})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", task, "--include-path", str(tasks),  # no --data-dir: the hf source
                        "--model", f"replay:{muir_predictions(tmp_path / 'pred.jsonl', task)}",
                        "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr
    check_muir_results(out, task)
    samples = {s["doc_id"]: s for s in samples_of(out, task)}
    assert sum(p["type"] == "image" for p in samples["muir_sample_3"]["prompt"][-1]["content"]) == 4


def test_muirbench_random_baseline_answers_with_the_documents_letters(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "muirbench", "--data-dir", str(SAMPLE), "--model", "random",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    records = {r["idx"]: r for r in read_jsonl(SAMPLE / "muirbench" / "muirbench.jsonl")}
    for s in samples_of(out, "muirbench"):
        letters = [chr(ord("A") + i) for i in range(len(records[s["doc_id"]]["options"]))]
        assert s["parsed"] in letters




def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    local = read_jsonl(SAMPLE / "muirbench" / "muirbench.jsonl")
    hub = datasets.load_dataset(str(SAMPLE / "muirbench" / "hf"), split="test")
    hub = hub.cast_column("image_list", [datasets.Image(decode=False)])
    assert len(hub) == len(local)
    for rec, row in zip(local, hub):
        assert {k: v for k, v in row.items() if k != "image_list"} == {k: v for k, v in rec.items() if k != "image_list"}
        paths = rec["image_list"] if isinstance(rec["image_list"], list) else [rec["image_list"]]
        images = row["image_list"] if isinstance(row["image_list"], list) else [row["image_list"]]
        assert [img["bytes"] for img in images] == [(SAMPLE / "muirbench" / p).read_bytes() for p in paths]
