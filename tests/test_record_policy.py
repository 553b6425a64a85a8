"""A task's record policy (``dataset.record_policy``): the records its dataset holds that its
authors exclude, keep an image tag of as text, or score as wrong are counted by reason in
results.json (``problems``, ``coverage``), the printed table and the viewer, and none of them is a
failure of the run."""

from __future__ import annotations

from typing import Any

from mmtasks.api import EvaluationResult
from mmtasks.config.run_config import RunConfig
from mmtasks.leaderboard import schema as lb_schema
from mmtasks.report import results_table_lines
from mmtasks.results.schema import Coverage, parse_results
from mmtasks.view.records import FAILURE_KINDS, failure_kinds


def results_with_treated() -> dict[str, Any]:
    """A results.json of one task: 10 records in the data, 3 excluded (output missing), 7
    evaluated, 1 of them scored wrong (target outside the options), 2 kept a tag as text."""
    return {
        "results": {"t": {"alias": "t", "acc": 50.0, "acc_stderr": 1.0}},
        "problems": {"t": {"request_failures": 0, "unparsed": 0, "judge_failures": 0,
                           "excluded": 3, "kept_as_text": 2, "scored_wrong": 1}},
        "coverage": {"t": {"unit": "documents", "scored": 7, "total": 7, "unscored": {},
                           "excluded": {"output missing": 3},
                           "kept_as_text": {"image tag beyond the record's images": 2},
                           "scored_wrong": {"target outside the options": 1}}},
        "n-samples": {"t": {"original": 10, "effective": 7}},
        "higher_is_better": {"t": {"acc": True}},
        "config": {"model": "random"},
        "date": 1764600000.0,
    }


def test_results_json_holds_the_treated_records_by_reason() -> None:
    parsed = parse_results(results_with_treated())
    cov = parsed.coverage["t"]
    assert cov.excluded == {"output missing": 3} and cov.scored_wrong == {"target outside the options": 1}
    assert cov.percent == 100.0  # the excluded records are not among total
    dumped = Coverage(scored=1, total=1).model_dump()
    assert "excluded" not in dumped and "kept_as_text" not in dumped  # absent when there are none
    # the leaderboard's Coverage takes what results.json's holds
    lb = lb_schema.Coverage(**cov.model_dump())  # one definition
    assert lb.excluded == {"output missing": 3} and lb.kept_as_text == {"image tag beyond the record's images": 2}


def test_the_table_shows_each_reason_and_the_run_does_not_fail() -> None:
    data = results_with_treated()
    lines = results_table_lines(data)
    rows = {line.split("  ")[1].strip(): line.split()[-1] for line in lines if line.startswith("  ") and "  " in line[2:]}
    assert rows["excluded: output missing"] == "3"
    assert rows["kept as text: image tag beyond the record's images"] == "2"
    assert rows["scored wrong: target outside the options"] == "1"
    assert not any("! excluded" in line or "! scored" in line for line in lines)
    # without coverage (a predict-only run), the totals
    del data["coverage"]
    lines = results_table_lines(data)
    assert any(line.split() == ["excluded", "3"] for line in lines)
    result = EvaluationResult(results_with_treated(), {}, RunConfig.build(tasks="t", model="random"))
    assert result.problems == {}  # the exit status stays 0: not failures of the run


def test_the_viewer_filters_by_treatment() -> None:
    sample = {"doc_id": "a", "irregular": {"kept_as_text": "image tag beyond the record's images"}}
    assert failure_kinds(sample) == 1 << FAILURE_KINDS.index("kept_as_text")
    assert failure_kinds({"doc_id": "b", "irregular": {"scored_wrong": "x"}}) == 1 << FAILURE_KINDS.index("scored_wrong")
