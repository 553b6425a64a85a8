"""A task's record policy (``dataset.record_policy``): the records its dataset holds that its
authors exclude, keep an image tag of as text, or score as wrong are counted by reason in
results.json (``problems``, ``coverage``), the printed table and the viewer, and none of them is a
failure of the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mmtasks.api import EvaluationResult
from mmtasks.config.run_config import RunConfig
from mmtasks.leaderboard import schema as lb_schema
from mmtasks.report import results_table_lines
from mmtasks.results.schema import Coverage, parse_results
from mmtasks.view.records import FAILURE_KINDS, failure_kinds
from tests.leaderboard.test_leaderboard import browser  # noqa: F401  (the fixture: system Chromium through playwright)


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


# --- the policy, end to end on local data -------------------------------------------------

TASK = """\
task: policy_task
dataset:
  local: {dir: d, file: recs.jsonl}
  images_field: images
  required_fields: {id: str, question: str, answer: str, options: list}
  record_policy: RULES
prompt:
  image_tags: {pattern: '<image (\\d+)>'}
  user: "{{ doc.question }}"
target: "{{ doc.answer }}"
answer: {parser: choice, parser_args: {options_field: options}, space: {kind: choice, choices: '{{ doc.options | tojson }}'}}
metrics: [{name: acc, function: choice_acc}]
"""

RULES = """
    - {problem: missing_field, field: answer, treat: exclude, reason: answer missing}
    - {problem: image_tag_unmatched, treat: keep_as_text, reason: tag beyond its images}
    - {problem: target_outside_space, treat: score_wrong, reason: answer beyond the options}"""


def write_task(tmp_path: Path, rules: str) -> tuple[Path, Path]:
    from tests.builders import write_image

    tasks, data = tmp_path / "tasks", tmp_path / "data" / "d"
    tasks.mkdir()
    data.mkdir(parents=True)
    (tasks / "policy_task.yaml").write_text(TASK.replace("RULES", rules))
    write_image(data / "a.png")
    recs = [
        {"id": 7, "question": "Is <image 1> red? (A) yes (B) no", "answer": "A", "options": ["yes", "no"], "images": ["a.png"]},
        {"id": 8, "question": "Like <image 2>? (A) yes (B) no", "answer": "B", "options": ["yes", "no"], "images": ["a.png"]},
        {"id": 9, "question": "Is <image 1> blue?", "answer": None, "options": ["yes", "no"], "images": ["a.png"]},
        {"id": 10, "question": "Is <image 1> big?", "answer": "D", "options": ["yes", "no"], "images": ["a.png"]},
    ]
    (data / "recs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return tasks, tmp_path / "data"


def test_each_treatment_is_applied_and_counted(tmp_path: Path, capsys) -> None:
    from mmtasks.cli import main

    tasks, data = write_task(tmp_path, RULES)
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "policy_task", "doc_id": d, "responses": [r]}) + "\n"
                            for d, r in (("7", "A"), ("8", "A"), ("10", "A"))))
    out = tmp_path / "out"
    code = main(["--tasks", "policy_task", "--include-path", str(tasks), "--data-dir", str(data),
                 "--model", f"replay:{pred}", "--output-path", str(out), "--no-cache", "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    # 7 right; 8 wrong (gold B), its <image 2> kept as text; 9 excluded; 10 scored wrong (its reply "A" would not matter)
    assert results["results"]["policy_task"]["acc"] == pytest.approx(100 / 3)
    assert results["coverage"]["policy_task"] == {
        "unit": "documents", "scored": 3, "total": 3, "percent": 100.0, "unscored": {},
        "excluded": {"answer missing": 1}, "kept_as_text": {"tag beyond its images": 1},
        "scored_wrong": {"answer beyond the options": 1}}
    assert {k: v for k, v in results["problems"]["policy_task"].items() if v} == {
        "excluded": 1, "kept_as_text": 1, "scored_wrong": 1}
    assert "excluded: answer missing" in printed and "scored wrong: answer beyond the options" in printed
    samples = [json.loads(line) for line in (out / "samples" / "policy_task.jsonl").read_text().splitlines()]
    assert [s["doc_id"] for s in samples] == ["7", "8", "10"]  # the integer ids, as text
    # the untagged image first (untagged: first), then the text with the tag kept
    assert [p.get("text") for p in samples[1]["prompt"][-1]["content"]] == [None, "Like <image 2>? (A) yes (B) no"]
    assert samples[2]["metrics"] == {"acc": 0.0} and samples[2]["irregular"] == {"scored_wrong": "answer beyond the options"}
    # `mmtasks check` says what the policy does, before any run
    assert main(["check", "--tasks", "policy_task", "--include-path", str(tasks), "--data-dir", str(data)]) == 0
    checked = capsys.readouterr().out
    assert "checked 3 documents of 1 task" in checked
    line = next(line for line in checked.splitlines() if "policy_task (its record policy)" in line)
    for part in ("excluded: answer missing 1", "kept as text: tag beyond its images 1", "scored wrong: answer beyond the options 1"):
        assert part in line


def test_without_a_policy_each_is_a_preflight_error(tmp_path: Path, capsys) -> None:
    from mmtasks.cli import main

    tasks, data = write_task(tmp_path, "[]")
    code = main(["check", "--tasks", "policy_task", "--include-path", str(tasks), "--data-dir", str(data)])
    err = capsys.readouterr().err
    assert code == 2
    assert "document '8', field 'prompt.user': image tag '<image 2>' names image 2, but the document has 1 image" in err
    assert "document '9', field 'answer': expected str, got NoneType" in err
    assert "document '10', field 'target': target 'D' is outside the answer space" in err


@pytest.mark.parametrize(("rule", "message"), [
    ("{problem: image_tag_unmatched, treat: exclude, reason: x}", "a image_tag_unmatched record can be treated as: keep_as_text"),
    ("{problem: missing_field, treat: exclude, reason: x}", "field names the field of a missing_field rule"),
    ("{problem: missing_feld, field: a, treat: exclude, reason: x}", "record_policy"),
])
def test_a_policy_that_does_not_fit_is_one_line_at_load(tmp_path: Path, capsys, rule: str, message: str) -> None:
    from mmtasks.cli import main

    tasks, data = write_task(tmp_path, f"[{rule}]")
    code = main(["check", "--tasks", "policy_task", "--include-path", str(tasks), "--data-dir", str(data)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


_CHECK = """
import sys
import mmtasks.preflight as pf
pf.PARALLEL_FROM = 4
workers = int(sys.argv[1])
assert pf._workers(pf.load_tasks(["policy_task"], [sys.argv[2]])[0], pf.data_root(sys.argv[3]), None, workers)[0] == workers
scan = pf.preflight(["policy_task"], include_paths=[sys.argv[2]], data_dir=sys.argv[3], workers=workers).scans["policy_task"]
print(scan.count, scan.total, sorted((t, sorted(r.items())) for t, r in scan.treated.items()))
"""


def test_the_check_in_several_processes_counts_what_one_counts(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    tasks, data = write_task(tmp_path, RULES)
    repo = Path(__file__).resolve().parents[2]

    def check(workers: int) -> str:
        out = subprocess.run([sys.executable, "-c", _CHECK, str(workers), str(tasks), str(data)], capture_output=True,
                             text=True, cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert check(1) == check(3) == ("3 4 [('excluded', [('answer missing', 1)]), ('kept_as_text', [('tag beyond its images', 1)]), "
                                    "('scored_wrong', [('answer beyond the options', 1)])]")


def test_the_viewer_shows_the_counts_and_each_records_treatment(tmp_path: Path, browser) -> None:  # noqa: F811
    from mmtasks.cli import main
    from mmtasks.view.records import load_view_run
    from mmtasks.view.site import build_view

    tasks, data = write_task(tmp_path, RULES)
    out = tmp_path / "out"
    assert main(["--tasks", "policy_task", "--include-path", str(tasks), "--data-dir", str(data), "--model", "random",
                 "--output-path", str(out), "--no-cache", "--no-progress", "--allow-failures"]) == 0
    site = tmp_path / "view"
    build_view([load_view_run(out)], site)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((site / "index.html").as_uri() + "#t=0")
    page.wait_for_selector("#docs tbody tr")
    header = page.locator("p.problems").text_content()
    for part in ("excluded: answer missing 1", "kept as text: tag beyond its images 1",
                 "scored wrong: answer beyond the options 1"):
        assert part in header
    assert page.locator("#docs tbody tr").count() == 3  # the excluded record has no row
    page.locator("#filter-kind").select_option(value="scored_wrong")
    assert page.locator("#docs tbody td.doc-id").all_text_contents() == ["10"]
    page.goto((site / "index.html").as_uri() + "#t=0&d=1")
    page.wait_for_selector(".problems-list")
    assert "tag beyond its images (the task's record policy)" in page.locator(".problems-list").text_content()
    assert not errors, errors
