"""The random baseline answers with each document's own letters (the authors' random baselines of
BLINK, Mantis-Eval and MMIU), and "" for a short-answer question as Mantis-Eval's does."""

from __future__ import annotations

from pathlib import Path

from tests.folder_runs import SAMPLE, read_jsonl, results_of, run_mmtasks, samples_of


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
