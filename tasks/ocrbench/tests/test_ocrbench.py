"""OCRBench from its folder: a replay of hand-written replies on the sample to hand-computed sums, the
random baseline, the Hub layout; and the conformance of our scoring with the authors' evaluation
block (OCRBench/scripts/GPT4V.py, verbatim in reference/) and lmms-eval's (the lmms_eval variant) on
tricky replies."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import shutil
import textwrap
import types
from pathlib import Path

import pytest

from tests.folder_copies import SAMPLE, copy_task_folder, predictions_by_task, read_jsonl, results_of, run_mmtasks, samples_of
from tests.folder_runs import package_unchanged

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference"


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("ocrbench"):
        yield


def run_replay(tmp_path: Path, data_dir: Path, replies: dict[str, str]) -> dict:
    predictions = predictions_by_task(tmp_path / "predictions.jsonl", {"ocrbench": replies})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "ocrbench", "--data-dir", str(data_dir), "--model", f"replay:{predictions}",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    return results_of(out)


# --- the sample, replies written by hand --------------------------------------------

#: document (the sample's row) -> reply; the comment says how the authors' rule reads it
SAMPLE_REPLIES = {
    "0": "The word is open.",        # IIIT5K "OPEN": lower-cased, contained -> right
    "1": "COFEE",                    # WordArt "coffee": misspelt -> wrong
    "2": "4021 7730",                # ORAND "40217730": spaces count outside HME100k -> wrong
    "3": "Line\n42",                 # textVQA ["42", "bus 42"]: "line 42" holds "42" -> right
    "4": "\uff19\uff10 EUR",         # docVQA ["90 EUR", "90"]: fullwidth digits -> wrong (lmms-eval: right)
    "5": "The date is 01/05/2024.",  # SROIE -> right
    "6": "$x^{2} + 1$",              # HME100k "x ^ { 2 } + 1": spaces removed on both sides -> right
}


def test_replay_of_the_sample_gives_the_hand_computed_sums(tmp_path: Path) -> None:
    results = run_replay(tmp_path, SAMPLE, SAMPLE_REPLIES)
    res = results["results"]["ocrbench"]
    # right: 0, 3, 5, 6 -> 4 of 7
    assert res["final_score"] == 4
    assert (res["text_recognition"], res["scene_text_vqa"], res["doc_vqa"], res["kie"], res["hmer"]) == (1, 1, 0, 1, 1)
    assert res["correct"] == pytest.approx(400 / 7)
    # lmms-eval folds the fullwidth digits of reply 4: 5 of 7
    variant = results["variants"]["ocrbench"]["lmms_eval"]["metrics"]
    assert variant["final_score"] == 5 and variant["doc_vqa"] == 1
    assert variant["correct"] == pytest.approx(500 / 7)
    assert results["results"]["ocrbench"]["correct_stderr"] is not None


def test_random_baseline_on_the_sample(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "ocrbench", "--data-dir", str(SAMPLE), "--model", "random", "--judge", "random",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    res = results_of(out)["results"]["ocrbench"]
    samples = samples_of(out, "ocrbench")
    assert len(samples) == 7
    # the sums are counts of the samples scored right
    assert res["final_score"] == sum(1 for s in samples if s["metrics"]["correct"] == 100.0)
    # the prompt: the question, then the image (the authors' GPT4V.py)
    for s, rec in zip(samples, read_jsonl(SAMPLE / "ocrbench" / "ocrbench.jsonl")):
        content = s["prompt"][-1]["content"]
        assert [p["type"] for p in content] == ["text", "image"] and content[0]["text"] == rec["question"]


def test_from_the_hub_layout(tmp_path: Path) -> None:
    """The same YAML reads the Hub schema (path pointed at the Hub-style sample folder instead of
    echo840/OCRBench): the image embedded, the answers a list."""
    tasks = tmp_path / "tasks"
    hub = json.dumps(str(SAMPLE / "ocrbench" / "hf"))
    task = copy_task_folder("ocrbench", tasks, replace={"path: echo840/OCRBench": f"path: {hub}"})
    predictions = predictions_by_task(tmp_path / "p.jsonl", {task: SAMPLE_REPLIES})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", task, "--include-path", str(tasks), "--model", f"replay:{predictions}",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert results_of(out)["results"][task]["final_score"] == 4


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    local = read_jsonl(SAMPLE / "ocrbench" / "ocrbench.jsonl")
    hub = datasets.load_dataset(str(SAMPLE / "ocrbench" / "hf"), split="test")
    assert hub.features["answer"].feature.dtype == "string"
    hub = hub.cast_column("image", datasets.Image(decode=False))
    assert len(hub) == len(local)
    for rec, row in zip(local, hub):
        assert {k: v for k, v in row.items() if k != "image"} == {k: v for k, v in rec.items() if k != "image"}
        assert row["image"]["bytes"] == (SAMPLE / "ocrbench" / rec["image"]).read_bytes()


# --- conformance with the authors' code and lmms-eval's -------------------------------

#: (dataset, question_type, answers, reply): tricky replies for the containment rule
TRICKY: list[tuple[str, str, list[str], str]] = [
    ("IIIT5K", "Regular Text Recognition", ["OPEN"], "It says REOPENED"),             # substring inside a word
    ("svt", "Irregular Text Recognition", ["hotel"], "  \nHOTEL\n"),                  # case, surrounding space
    ("WordArt", "Artistic Text Recognition", ["coffee"], "cof fee"),                   # a space inside
    ("IAM", "Handwriting Recognition", ["New\nYork"], "new york"),                     # newline in the answer
    ("ORAND", "Digit String Recognition", ["40217730"], "4021\n7730"),                # digits split by a newline
    ("NonSemanticText", "Non-Semantic Text Recognition", ["xqzt"], ""),              # empty reply
    ("textVQA", "Scene Text-centric VQA", ["bus 42", "42"], "Line forty-two (42)."),  # the second answer
    ("STVQA", "Scene Text-centric VQA", ["ÉCOLE"], "école"),                         # non-ASCII case
    ("docVQA", "Doc-oriented VQA", ["90 EUR"], "\uff19\uff10 EUR"),                   # fullwidth digits
    ("infographicVQA", "Doc-oriented VQA", ["90 EUR"], "90\u3000EUR"),                # ideographic space
    ("ChartQA", "Doc-oriented VQA", ["ＡＢＣ"], "abc"),                               # fullwidth answer
    ("SROIE", "Key Information Extraction", ["01/05/2024"], "date: 01 / 05 / 2024"),  # spaces outside HME100k
    ("FUNSD", "Key Information Extraction", ["Fresh Mart"], "FRESH MART LTD"),
    ("HME100k", "Handwritten Mathematical Expression Recognition", ["x ^ { 2 } + 1"], "$x^{2}+1$"),
    ("HME100k", "Handwritten Mathematical Expression Recognition", ["X ^ { 2 }"], "x^{2}"),         # case kept
    ("HME100k", "Handwritten Mathematical Expression Recognition", ["x ^ { 2 }"], "x^\n{2}"),       # newline
    ("HME100k", "Handwritten Mathematical Expression Recognition", ["x ^ { 2 }"], "x^\t{2}"),       # a tab stays
    ("HME100k", "Handwritten Mathematical Expression Recognition", ["\uff41 + b"], "\uff41+b"),     # no folding
]


def authors_evaluation(data: list[dict]) -> tuple[list[int], dict[str, int]]:
    """The evaluation block of the authors' GPT4V.py, run verbatim on ``data`` (their record keys:
    type, dataset_name, answers, predict): each record's result and the sums it prints."""
    source = (REFERENCE / "multimodalocr_gpt4v.py").read_text(encoding="utf-8")
    scores = source[source.index("OCRBench_score = {"):source.index('\nif __name__ == "__main__":')]
    start = source.index('    for i in range(len(data)):\n        data_type = data[i]["type"]')
    block = textwrap.dedent(source[start:])
    namespace: dict = {"data": data, "os": __import__("os"), "save_json": lambda json_list, save_path: None,
                       "args": types.SimpleNamespace(output_path=".", model="m")}
    exec(compile(scores, "multimodalocr_gpt4v.py", "exec"), namespace)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, "multimodalocr_gpt4v.py", "exec"), namespace)
    sums = {name: int(value) for name, value in re.findall(r"^(.+?)\(Total \d+\): ?(\d+)$", printed.getvalue(), re.MULTILINE)}
    return [d["result"] for d in data], sums


def lmms_eval_module(tmp_path: Path) -> types.ModuleType:
    """A fresh copy of lmms-eval's utils.py (its score dictionary is module state that each
    aggregation adds to)."""
    spec = importlib.util.spec_from_file_location(f"lmms_eval_ocrbench_{tmp_path.name}", REFERENCE / "lmms_eval_ocrbench_utils.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.SUBMISSION_DIR = str(tmp_path)
    return module


def write_tricky_data(root: Path) -> None:
    folder = root / "ocrbench"
    (folder / "images").mkdir(parents=True)
    shutil.copy(SAMPLE / "ocrbench" / "images" / "00.jpg", folder / "images" / "00.jpg")
    with (folder / "ocrbench.jsonl").open("w", encoding="utf-8") as f:
        for dataset, qtype, answers, _ in TRICKY:
            f.write(json.dumps({"dataset": dataset, "question": "what is written in the image?", "question_type": qtype,
                                "answer": answers, "image": "images/00.jpg"}) + "\n")


def test_our_scoring_equals_the_authors_and_lmms_evals_on_tricky_replies(tmp_path: Path) -> None:
    data = [{"type": qtype, "dataset_name": dataset, "answers": list(answers), "predict": reply}
            for dataset, qtype, answers, reply in TRICKY]
    theirs, their_sums = authors_evaluation(data)
    lmms = lmms_eval_module(tmp_path)
    lmms_results = [lmms.ocrbench_process_results({"answer": list(answers), "dataset": dataset, "question_type": qtype},
                                                  [reply])["ocrbench_accuracy"]
                    for dataset, qtype, answers, reply in TRICKY]
    lmms_final = lmms.ocrbench_aggregate_accuracy(lmms_results, None)

    write_tricky_data(tmp_path / "data")
    results = run_replay(tmp_path, tmp_path / "data", {str(k): reply for k, (*_, reply) in enumerate(TRICKY)})
    samples = sorted(samples_of(tmp_path / "out", "ocrbench"), key=lambda s: int(s["doc_id"]))
    ours = [int(s["metrics"]["correct"] == 100.0) for s in samples]
    ours_lmms = [int(s["extra"]["variants"]["lmms_eval"]["metrics"]["correct"] == 100.0) for s in samples]

    assert ours == theirs
    assert ours_lmms == [r["score"] for r in lmms_results]
    # what the cases exercise: written out by hand
    assert theirs == [1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1, 0, 1]
    assert ours_lmms == [1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 0, 1]

    res = results["results"]["ocrbench"]
    assert res["final_score"] == their_sums["Final Score"] == 9
    assert res["text_recognition"] == their_sums["Text Recognition"] == 3
    assert res["scene_text_vqa"] == their_sums["Scene Text-centric VQA"] == 2
    assert res["doc_vqa"] == their_sums["Doc-oriented VQA"] == 0
    assert res["kie"] == their_sums["Key Information Extraction"] == 1
    assert res["hmer"] == their_sums["Handwritten Mathematical Expression Recognition"] == 3
    variant = results["variants"]["ocrbench"]["lmms_eval"]["metrics"]
    # lmms-eval returns the final score over 1000
    assert variant["final_score"] == round(lmms_final * 1000) == 12


def test_lmms_eval_task_variant_asks_and_scores_as_lmms_eval(tmp_path: Path) -> None:
    """ocrbench_lmms_eval: the image first, then lmms-eval's ocrbench_doc_to_text (the question
    stripped), 128 tokens; the sample's replies scored with its rule (reply 4's fullwidth digits read)."""
    lmms = lmms_eval_module(tmp_path)
    predictions = predictions_by_task(tmp_path / "predictions.jsonl", {"ocrbench_lmms_eval": SAMPLE_REPLIES})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "ocrbench_lmms_eval", "--data-dir", str(SAMPLE), "--model", f"replay:{predictions}",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    res = results["results"]["ocrbench_lmms_eval"]
    assert res["final_score"] == 5 and res["doc_vqa"] == 1
    assert results["configs"]["ocrbench_lmms_eval"]["generation"]["max_new_tokens"] == 128
    samples = sorted(samples_of(out, "ocrbench_lmms_eval"), key=lambda s: int(s["doc_id"]))
    for s, rec in zip(samples, read_jsonl(SAMPLE / "ocrbench" / "ocrbench.jsonl")):
        content = s["prompt"][-1]["content"]
        assert [p["type"] for p in content] == ["image", "text"]
        assert content[1]["text"] == lmms.ocrbench_doc_to_text({**rec, "question": " " + rec["question"] + "\n"}, {})
    scored = [lmms.ocrbench_process_results({**rec, "answer": rec["answer"]}, [SAMPLE_REPLIES[str(k)]])["ocrbench_accuracy"]
              for k, rec in enumerate(read_jsonl(SAMPLE / "ocrbench" / "ocrbench.jsonl"))]
    assert [int(s["metrics"]["correct"] == 100.0) for s in samples] == [r["score"] for r in scored]
    assert round(lmms.ocrbench_aggregate_accuracy(scored, None) * 1000) == res["final_score"]


def test_every_task_of_the_folder_has_a_column_in_its_tab() -> None:
    """A run of any of the folder's tasks (the peer variant too) lands on its tab, not on the
    automatic 'Other tasks' one."""
    import yaml

    from mmtasks.leaderboard.sections import load_section

    folder = Path(__file__).resolve().parents[1]
    tasks = {doc["task"] for f in folder.glob("*.yaml") if f.name != "leaderboard.yaml"
             for doc in [yaml.safe_load(f.read_text(encoding="utf-8"))] if isinstance(doc, dict) and "task" in doc}
    assert "ocrbench_lmms_eval" in tasks
    assert tasks <= set(load_section(folder / "leaderboard.yaml").tasks)
