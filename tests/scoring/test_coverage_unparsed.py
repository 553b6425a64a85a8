"""Coverage counts unparsed answers apart (issue 40, "frictions"): a reply no rule read is scored
as wrong (0), and ``coverage[task].unparsed`` says how many of the scored units those are, beside
the answers read; before, coverage counted them as scored answers without a word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.report import results_table_lines
from mmtasks.results.schema import Coverage

SHAPE = (Path(__file__).resolve().parents[2] / "tests") / "shapes" / "nlvr2_true_false"


def test_an_unparsed_reply_is_scored_wrong_and_counted_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert main(["--tasks", "nlvr2_true_false", "--no-progress", "--include-path", str(SHAPE / "tasks"), "--data-dir",
                 str(SHAPE / "data"), "--model", f"replay:{SHAPE / 'replies.jsonl'}", "--output-path", str(out),
                 "--allow-failures"]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    # n8 "The statement is ..." names no label: unparsed, scored 0 (7 / 8 = 87.5), one of the 8 scored
    assert results["results"]["nlvr2_true_false"]["acc"] == 87.5
    assert results["coverage"]["nlvr2_true_false"] == {"unit": "documents", "scored": 8, "total": 8, "percent": 100.0,
                                                       "unscored": {}, "unparsed": 1}
    assert any(line.split() == ["!", "unparsed", "1"] for line in results_table_lines(results))
    assert main(["view", str(out), "--out", str(tmp_path / "view")]) == 0


def test_the_schema_keeps_the_count_and_leaves_out_a_zero() -> None:
    cov = Coverage.model_validate({"unit": "turns", "scored": 5, "total": 6, "unscored": {"request_failure": 1},
                                   "unparsed": 2})
    assert cov.unparsed == 2 and cov.model_dump()["unparsed"] == 2
    assert "unparsed" not in Coverage.model_validate({"scored": 1, "total": 1}).model_dump()
