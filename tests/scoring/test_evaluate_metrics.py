"""Hugging Face ``evaluate`` metrics named in YAML (``function: evaluate:...``): a local metric
script in the task folder, scored per sample and over the corpus, on ``single_turn`` and on
``multi_turn``; offline with nothing cached, a Hub metric fails at load with one line.

Each run is a subprocess with its own ``HF_HOME`` (evaluate copies a loaded script into its
modules cache there) and the Hub offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

pytest.importorskip("evaluate")

REPO = Path(__file__).resolve().parents[2]

#: a tiny evaluate metric: the share of the references' characters that occur in the prediction;
#: per pair for "mean", summed over every pair for "corpus" (so the two differ when lengths do)
METRIC_SCRIPT = '''\
import datasets
import evaluate


class CharRecall(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="share of reference characters found in the prediction",
            citation="", inputs_description="predictions, references: strings",
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Value("string")}))

    def _compute(self, predictions, references, ignore=""):
        found = total = 0
        for p, r in zip(predictions, references):
            chars = [c for c in r if c not in ignore]
            found += sum(1 for c in chars if c in p)
            total += len(chars)
        return {"char_recall": found / total, "pairs": len(references)}
'''

QA = [("q1", "abcd", "abxy"), ("q2", "ab", "ab"), ("q3", "abcdefgh", "zzzzzzzh")]  # id, answer, reply

SINGLE = """\
task: eval_qa
dataset: {local: {dir: qa, file: qa.jsonl}, images_field: null}
prompt: {user: "{{ doc.question }}"}
target: "{{ doc.answer }}"
metrics:
  - {name: char_recall, function: "evaluate:./char_recall.py", report_factor: 100, primary: true}
  - {name: char_recall_corpus, function: "evaluate:./char_recall.py", aggregation: corpus, report_factor: 100, key: char_recall}
  - {name: pairs, function: "evaluate:./char_recall.py", aggregation: corpus, key: pairs}
"""

MULTI = """\
task: eval_dialogue
dataset: {local: {dir: dialogues, file: dialogues.jsonl}, images_field: null}
protocol: multi_turn
metrics:
  - {name: char_recall, function: "evaluate:./char_recall.py", args: {ignore: "b"}}
  - {name: char_recall_corpus, function: "evaluate:./char_recall.py", aggregation: corpus, args: {ignore: "b"}}
"""
#: one dialogue, two turns: (question, reference, reply)
TURNS = [("t1", "abc", "a"), ("t2", "bbbbbd", "d")]


def write(tmp_path: Path, single: str = SINGLE) -> Path:
    tasks = tmp_path / "tasks" / "evalbench"
    tasks.mkdir(parents=True)
    (tasks / "char_recall.py").write_text(METRIC_SCRIPT, encoding="utf-8")
    (tasks / "eval_qa.yaml").write_text(single, encoding="utf-8")
    (tasks / "eval_dialogue.yaml").write_text(MULTI, encoding="utf-8")
    (tmp_path / "data" / "qa").mkdir(parents=True)
    (tmp_path / "data" / "qa" / "qa.jsonl").write_text(
        "".join(json.dumps({"id": i, "question": f"question {i}", "answer": a}) + "\n" for i, a, _ in QA))
    (tmp_path / "data" / "dialogues").mkdir(parents=True)
    conv = [m for q, ref, _ in TURNS for m in ({"from": "user", "value": q}, {"from": "assistant", "value": ref})]
    (tmp_path / "data" / "dialogues" / "dialogues.jsonl").write_text(json.dumps({"id": "d1", "conversations": conv}) + "\n")
    predictions = [{"task": "eval_qa", "doc_id": i, "responses": [r]} for i, _, r in QA]
    predictions.append({"task": "eval_dialogue", "doc_id": "d1", "responses": [r for _, _, r in TURNS]})
    (tmp_path / "pred.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
    return tmp_path / "tasks"


def run_mmtasks(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_", "HF_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf-home"),
                "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"})
    return subprocess.run([sys.executable, "-m", "mmtasks", *args, "--no-progress"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def test_a_local_metric_script_per_sample_and_over_the_corpus(tmp_path: Path) -> None:
    tasks = write(tmp_path)
    out = tmp_path / "out"
    proc = run_mmtasks(tmp_path, "--tasks", "eval_qa,eval_dialogue", "--include-path", str(tasks),
                       "--data-dir", str(tmp_path / "data"), "--model", f"replay:{tmp_path / 'pred.jsonl'}",
                       "--output-path", str(out))
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    qa = results["results"]["eval_qa"]
    # per pair: "abcd" in "abxy": a, b -> 2/4; "ab" in "ab": 2/2; "abcdefgh" in "zzzzzzzh": h -> 1/8
    assert qa["char_recall"] == pytest.approx(100 * float((Fraction(2, 4) + 1 + Fraction(1, 8)) / 3))
    # corpus: (2 + 2 + 1) / (4 + 2 + 8) = 5/14
    assert qa["char_recall_corpus"] == pytest.approx(100 * 5 / 14)
    assert qa["pairs"] == 3.0  # one compute over the 3 pairs
    assert qa["char_recall_corpus_stderr"] is None and qa["char_recall_corpus_all"] == pytest.approx(100 * 5 / 14)
    assert results["coverage"]["eval_qa"]["scored"] == 3
    dialogue = results["results"]["eval_dialogue"]
    # "b" ignored (args): turn 1 "ac" in "a": 1/2; turn 2 "d" in "d": 1/1 -> mean 3/4; corpus 2/3
    assert dialogue["char_recall"] == pytest.approx(0.75)
    assert dialogue["char_recall_corpus"] == pytest.approx(2 / 3)
    assert results["coverage"]["eval_dialogue"] == {"unit": "turns", "scored": 2, "total": 2, "percent": 100.0, "unscored": {}}
    assert results["configs"]["eval_qa"]["metrics"][1]["aggregation"] == "corpus"


def test_offline_with_nothing_cached_a_hub_metric_fails_at_load(tmp_path: Path) -> None:
    tasks = write(tmp_path, SINGLE.replace('"evaluate:./char_recall.py", report_factor', '"evaluate:meteor", report_factor'))
    proc = run_mmtasks(tmp_path, "--tasks", "eval_qa", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data"),
                       "--model", f"replay:{tmp_path / 'pred.jsonl'}", "--output-path", str(tmp_path / "out"))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "eval_qa.yaml" in lines[0] and "field 'metrics[0].function'" in lines[0]
    assert "cannot load evaluate metric 'meteor'" in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("function", "message"), [
    ("evaluate:../../outside.py", "is not inside the task's folder"),
    ("evaluate:./missing.py", "does not exist"),
    ("evaluate:./eval_qa.yaml", "is not a .py file"),
    ("evaluate:", "needs a metric name or a metric script path"),
])
def test_script_paths_are_confined_to_the_task_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     function: str, message: str) -> None:
    from mmtasks.cli import main

    (tmp_path / "outside.py").write_text(METRIC_SCRIPT)
    tasks = write(tmp_path, SINGLE.replace('"evaluate:./char_recall.py", report_factor', f'"{function}", report_factor'))
    code = main(["--tasks", "eval_qa", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data"),
                 "--model", f"replay:{tmp_path / 'pred.jsonl'}", "--output-path", str(tmp_path / "out"), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "eval_qa.yaml" in err and "field 'metrics[0].function'" in err and message in err
