"""Deciding between two models (issue 30): McNemar's exact test, the paired bootstrap, the
cluster-robust standard error, and ``mmtasks compare`` on two replayed runs, with hand-computed
values; and its refusals."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import mmtasks
from mmtasks.cli import main
from mmtasks.comparison.runs import _failure_rule, _scale
from mmtasks.comparison.paired import (
    MAX_EXACT_DISCORDANT,
    cluster_robust_stderr,
    half_binomial_tail,
    mcnemar_exact,
    minimum_detectable_effect,
    paired_bootstrap,
    stratified_bootstrap,
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
#: data/sample/mantis_eval: doc id -> (a right answer, a wrong one)
MANTIS = {"1": ("B", "A"), "2": ("A", "B"), "3": ("C", "A"), "4": ("A", "B"), "5": ("3", "7"), "6": ("OPEN", "shut"),
          "7": ("D", "A")}


def _results(**values: float | None) -> Any:
    """What ``_scale`` reads of results.json: ``results[task].values``."""
    return SimpleNamespace(results={"t": SimpleNamespace(values=values)})


def _docs(*values: float | None) -> dict[str, dict]:
    return {str(i): {"metrics": {} if v is None else {"acc": v}} for i, v in enumerate(values)}


@pytest.mark.parametrize(("direction", "rule"), [(True, "wrong"), (False, "left_out"), (None, "left_out")])
def test_failed_documents_count_as_wrong_only_where_higher_is_better(direction: bool | None, rule: str) -> None:
    """A failed document counted as 0 (``<metric>_all``) is a wrong answer only where higher is
    better; a metric with no direction (POPE's yes ratio, ``higher_is_better: null``) leaves it out,
    as a lower-is-better one does (before: counted as 0, a "no" that the model never said)."""
    run = SimpleNamespace(results={"t": SimpleNamespace(values={"yes_ratio": 50.0, "yes_ratio_all": 40.0})},
                          variants={}, higher_is_better={"t": {"yes_ratio": direction}})
    assert _failure_rule(run, run, "t", "yes_ratio") == rule  # type: ignore[arg-type]


@pytest.mark.parametrize(("reported", "values", "scale"), [
    # rule 1: no reported number, or no per-document value
    ({}, (1.0, 0.0), 1.0),
    ({"acc": None}, (1.0, 0.0), 1.0),
    ({"acc": 50.0, "acc_all": None}, (1.0, 0.0), 1.0),  # _all is there but null: it is the one read
    ({"acc": 50.0}, (), 1.0),
    ({"acc": 50.0}, (None, None), 1.0),
    # rule 2: the values' mean is 0
    ({"acc": 37.5}, (0.0, 0.0), 100.0),  # zeros on a 0-1 scale, reported above 1: percent
    ({"acc": 0.0}, (0.0, 0.0), 1.0),
    ({"acc": 0.5}, (0.0, 0.0), 1.0),
    ({"acc": 37.5}, (1.0, -1.0), 1.0),  # mean 0 of values outside [0, 1] (before: ZeroDivisionError)
    # rule 3: the ratio of the reported number to the values' mean
    ({"acc": 50.0}, (1.0, 0.0), 100.0),  # 0/1 accuracy reported in percent
    ({"acc": 50.0, "acc_all": 33.5}, (1.0, 0.0, None), 1.0),  # _all read first: 33.5 / 0.5 = 67
    ({"acc": 75.0, "acc_all": 50.0}, (1.0, 0.0), 100.0),  # _all read first: 50 / 0.5 = 100
    ({"acc": 50.4}, (1.0, 0.0), 100.0),  # 100.8 is within 1 of 100 ...
    ({"acc": 50.6}, (1.0, 0.0), 1.0),  # ... 101.2 is not
    ({"acc": 50.0}, (100.0, 0.0), 1.0),  # already in percent
    ({"acc": 3.5}, (3.0, 4.0), 1.0),  # a score on its own scale
])
def test_scale_of_the_per_document_values(reported: dict, values: tuple, scale: float) -> None:
    assert _scale(_results(**reported), "t", "acc", _docs(*values)) == scale


def test_scale_reads_failed_documents_as_acc_all_counts_them() -> None:
    # right, wrong and two failed documents, 0/1 per document: acc_all is 25.0 (1 of 4, failures
    # as 0), acc 50.0 (1 of the 2 scored). Before: acc_all against the scored documents' mean
    # (0.5) was 50, not 100, and a run that failed documents was compared on the 0-1 scale
    docs = {"1": {"metrics": {"acc": 1.0}, "samples": [({"acc": 1.0}, None)]},
            "2": {"metrics": {"acc": 0.0}, "samples": [({"acc": 0.0}, None)]},
            "3": {"metrics": {}, "samples": [({}, "request_failure")]},
            "4": {"metrics": {}, "samples": [({}, "context_overflow")]}}
    assert _scale(_results(acc=50.0, acc_all=25.0), "t", "acc", docs) == 100.0
    assert _scale(_results(acc=50.0), "t", "acc", docs) == 100.0  # no _all: the scored documents' mean


def test_mcnemar_exact_by_hand() -> None:
    # 1 vs 9 discordant: 2 * (C(10,0) + C(10,1)) / 2^10 = 22/1024
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    # 1 vs 4: 2 * (1 + 5) / 32 = 0.375
    assert mcnemar_exact(1, 4) == pytest.approx(0.375)
    # a tie: 2 * (1 + 6 + 15 + 20) / 64 > 1, capped
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    # 0 vs 6: 2 / 64
    assert mcnemar_exact(0, 6) == pytest.approx(1 / 32)



def _exact_tail(n: int, k: int) -> float:
    """P(X <= k), X ~ Binomial(n, 1/2), in integers (the reference for the float sum): each
    coefficient from the one above it, C(n, i - 1) = C(n, i) i / (n - i + 1), exactly."""
    coefficient = total = math.comb(n, k)
    for i in range(k, 0, -1):
        coefficient = coefficient * i // (n - i + 1)
        total += coefficient
    return total / 2**n


@pytest.mark.parametrize(("n", "k"), [
    (20_000, 10_000),  # the case: every document discordant, split evenly (before: 74 s)
    (20_000, 9_800),
    (30_000, 14_000),
    (10**6, 5 * 10**5),
    (10**6, 499_000),
    (10**9, 5 * 10**8),
])
def test_mcnemar_on_many_discordant_pairs_evaluates_a_bounded_number_of_terms(n: int, k: int) -> None:
    # issue 41, finding 4: the tail was k + 1 big-integer binomials (20,000 discordant pairs: 74 s,
    # and the leaderboard's tie marks use it too). Bounded by counting terms, not by a clock: the
    # sum stops once the rest cannot change it, at most 5 sqrt(n) + 64 terms (the tail's terms
    # fall like a normal density of spread sqrt(n)/2)
    tail = half_binomial_tail(n, k)
    assert tail.terms <= 5 * math.isqrt(n) + 64, tail
    assert 0.0 <= tail.p <= 1.0
    a_only, b_only = k, n - k
    assert mcnemar_exact(a_only, b_only) == min(1.0, 2 * tail.p)


def test_mcnemar_past_the_exact_range_agrees_with_the_integer_sum() -> None:
    # up to MAX_EXACT_DISCORDANT discordant pairs the tail is the integer sum itself; past it, the
    # float sum agrees with that sum to 1e-12 (relative), in the middle and far out in the tail
    # (where the tail underflows, both are 0.0)
    assert half_binomial_tail(MAX_EXACT_DISCORDANT, 400).p == _exact_tail(MAX_EXACT_DISCORDANT, 400)
    for n, k in [(MAX_EXACT_DISCORDANT + 1, 500), (2_001, 1_000), (3_000, 1_430), (3_000, 1_200), (4_000, 100),
                 (5_000, 0), (5_000, 2_500)]:
        assert half_binomial_tail(n, k).p == pytest.approx(_exact_tail(n, k), rel=1e-12, abs=0), (n, k)
    for n, k in [(20_000, 10_000), (30_000, 14_800)]:  # the sizes (the integer sum: a few tenths of a second)
        assert half_binomial_tail(n, k).p == pytest.approx(_exact_tail(n, k), rel=1e-12, abs=0), (n, k)


def test_paired_bootstrap_interval_on_a_fixed_set() -> None:
    # two documents, differences 0 and 1: a resample's mean is 0, 0.5 or 1 (1/4, 1/2, 1/4), so the
    # 2.5th and 97.5th percentiles of 2000 seeded resamples are exactly 0 and 1
    interval = paired_bootstrap([0.0, 1.0], seed=0)
    assert (interval.mean, interval.low, interval.high, interval.units) == (0.5, 0.0, 1.0, 2)
    assert not interval.significant
    # every difference +2: every resample's mean is 2
    assert paired_bootstrap([2.0] * 5).low == paired_bootstrap([2.0] * 5).high == 2.0
    assert paired_bootstrap([2.0] * 5).significant
    # one document says nothing about the spread
    assert not paired_bootstrap([5.0]).significant
    # seeded: the same draws every time
    assert paired_bootstrap([0.1, -0.3, 0.7, 0.2], seed=3) == paired_bootstrap([0.1, -0.3, 0.7, 0.2], seed=3)
    # clusters are resampled whole: two clusters {+1, +1} and {0}: means 1, 2/3, 0 -> [0, 1]
    clustered = paired_bootstrap([1.0, 1.0, 0.0], ["x", "x", "y"], seed=0)
    assert (clustered.low, clustered.high, clustered.units) == (0.0, 1.0, 2)
    # a group: the mean of its tasks' mean differences
    assert stratified_bootstrap([[1.0, 1.0], [0.0, 2.0, 4.0]]).mean == 1.5


def test_clustered_stderr_doubles_on_perfectly_clustered_data() -> None:
    # 3 clusters of 3 identical values: the cluster-robust variance is (Gk-1)/(G-1) = 8/2 = 4 times
    # the independent one, so the standard error doubles
    values = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    clusters = ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    independent = statistics.stdev(values) / math.sqrt(len(values))
    assert cluster_robust_stderr(values, clusters) == pytest.approx(2 * independent)
    # by hand: mean 2/3; cluster deviations 1, -2, 1; sqrt(3/2 * 6) / 9 = 1/3
    assert cluster_robust_stderr(values, clusters) == pytest.approx(1 / 3)
    # one value per cluster: sqrt(n/(n-1) * sum (y-m)^2) / n = the independent standard error
    assert cluster_robust_stderr(values, [str(i) for i in range(9)]) == pytest.approx(independent)


def test_minimum_detectable_effect() -> None:
    # (1.959964 + 0.841621) standard errors at 5% two-sided and 80% power
    assert minimum_detectable_effect(1.0) == pytest.approx(2.801585, abs=1e-6)
    assert minimum_detectable_effect(0.5, power=0.5) == pytest.approx(1.959964 * 0.5, abs=1e-6)


def _replayed(tmp_path: Path, name: str, right: set[str]) -> Path:
    predictions = tmp_path / f"{name}.jsonl"
    predictions.write_text("".join(json.dumps({"task": "mantis_eval", "doc_id": doc,
                                               "responses": [MANTIS[doc][0 if doc in right else 1]]}) + "\n"
                                   for doc in MANTIS))
    out = tmp_path / name
    assert main(["--tasks", "mantis_eval", "--model", f"replay:{predictions}", "--data-dir", str(SAMPLE),
                 "--output-path", str(out), "--no-cache", "--no-progress", "--run-name", name]) == 0
    return out


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    # A is right on 1-3, B on 2-7: A alone on doc 1, B alone on 4-7
    return _replayed(tmp_path, "model-a", {"1", "2", "3"}), _replayed(tmp_path, "model-b", {"2", "3", "4", "5", "6", "7"})


def test_compare_two_replayed_runs_by_hand(two_runs: tuple[Path, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_runs
    report = mmtasks.compare(a, b)
    (task,) = report.tasks
    assert (task.task, task.both, task.only_a, task.only_b) == ("mantis_eval", 7, 0, 0)
    (acc,) = task.metrics
    assert acc.a == pytest.approx(300 / 7) and acc.b == pytest.approx(600 / 7)
    assert acc.difference == pytest.approx(300 / 7)
    assert (acc.a_only, acc.b_only) == (1, 4)
    assert acc.mcnemar_p == pytest.approx(0.375) and not acc.significant
    # differences: -100 once, +100 four times, 0 twice: sd 400/sqrt(7) ... the MDE is 2.80 standard errors
    diffs = [-100.0, 0.0, 0.0, 100.0, 100.0, 100.0, 100.0]
    assert acc.minimum_detectable_effect == pytest.approx(2.801585 * statistics.stdev(diffs) / math.sqrt(7), rel=1e-6)
    assert acc.low <= acc.difference <= acc.high
    # the CLI says the same, and writes the JSON
    out = tmp_path / "compare.json"
    assert main(["compare", str(a), str(b), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "mantis_eval: 7 documents in both runs, 7 scored by both; 0 only in A, 0 only in B" in text
    assert "McNemar p=0.375 (1 vs 4 discordant)" in text and "not significant" in text
    assert json.loads(out.read_text())["tasks"][0]["metrics"][0]["b_only"] == 4
    # documents only one run scored are counted
    shorter = tmp_path / "model-b-short"
    assert main(["--tasks", "mantis_eval", "--model", f"replay:{tmp_path / 'model-b.jsonl'}", "--data-dir", str(SAMPLE),
                 "--output-path", str(shorter), "--no-cache", "--no-progress", "--limit", "5"]) == 0
    partial = mmtasks.compare(a, shorter).tasks[0]
    assert (partial.both, partial.only_a, partial.only_b) == (5, 2, 0)


def _replayed_failing(tmp_path: Path, name: str, right: set[str], failed: set[str]) -> Path:
    """A replayed run whose requests for ``failed`` had failed (as a server's 400 would)."""
    predictions = tmp_path / f"{name}.jsonl"
    predictions.write_text("".join(json.dumps({"task": "mantis_eval", "doc_id": doc, "responses": [
        None if doc in failed else MANTIS[doc][0 if doc in right else 1]]}) + "\n" for doc in MANTIS))
    out = tmp_path / name
    assert main(["--tasks", "mantis_eval", "--model", f"replay:{predictions}", "--data-dir", str(SAMPLE),
                 "--output-path", str(out), "--no-cache", "--no-progress", "--run-name", name,
                 "--allow-failures"]) == 0
    return out


def test_compare_states_each_sides_failed_documents_and_scores_them_as_wrong(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 41, finding 1: A right on 1-3; B's requests for 1-3 failed, B right on 4 only. Before:
    # "7 documents scored by both", A at 0.00 (its results.json: 42.86), B's failures invisible
    a = _replayed(tmp_path, "model-a", {"1", "2", "3"})
    b = _replayed_failing(tmp_path, "model-b", {"4"}, failed={"1", "2", "3"})
    results_a = json.loads((a / "results.json").read_text())["results"]["mantis_eval"]
    results_b = json.loads((b / "results.json").read_text())["results"]["mantis_eval"]
    assert results_a["acc_all"] == pytest.approx(300 / 7) and results_b["acc_all"] == pytest.approx(100 / 7)
    task = mmtasks.compare(a, b).tasks[0]
    assert (task.both, task.scored_by_both, task.only_a, task.only_b) == (7, 4, 0, 0)
    assert task.failed_a == {} and task.failed_b == {"1": "request_failure", "2": "request_failure",
                                                     "3": "request_failure"}
    (acc,) = task.metrics
    # the task's failure rule (acc_all: unscored documents count as 0): B's failures are wrong, so
    # each side's figure is its results.json's acc_all, over all 7 documents
    assert acc.failures == "wrong" and acc.n == 7
    assert acc.a == pytest.approx(results_a["acc_all"]) and acc.b == pytest.approx(results_b["acc_all"])
    # discordant: A alone right on 1-3 (B failed them), B alone right on 4: 2 * (1 + 4) / 16
    assert (acc.a_only, acc.b_only) == (3, 1) and acc.mcnemar_p == pytest.approx(10 / 16)
    # the reverse order says the same of A
    reverse = mmtasks.compare(b, a).tasks[0]
    assert reverse.failed_a == task.failed_b and reverse.failed_b == {}
    # on the results' scale (percent) too when A is the side that failed: its acc_all (14.29) is
    # 100 times its documents' mean with the failed ones as 0 (before: read as 0.14 and 0.43)
    assert reverse.metrics[0].a == pytest.approx(100 / 7) and reverse.metrics[0].b == pytest.approx(300 / 7)
    assert main(["compare", str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert "mantis_eval: 7 documents in both runs, 4 scored by both; 0 only in A, 0 only in B" in text
    assert "B failed 3 documents (request_failure 3): 1, 2, 3" in text
    assert "A  42.86  B  14.29" in text and "failed documents counted as wrong (acc_all)" in text


def _edit(run: Path, change) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((run / "results.json").read_text())
    change(data)
    (run / "results.json").write_text(json.dumps(data))


def test_compare_refuses_runs_of_different_task_configs(two_runs: tuple[Path, Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_runs
    _edit(b, lambda d: d["config_hashes"].update(mantis_eval="0123456789abcdef"))
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "task 'mantis_eval' ran with different task configs" in err[0], err
    # older runs without hashes: their configs are compared
    _edit(b, lambda d: (d.pop("config_hashes"), d["configs"]["mantis_eval"].update(description="another")))
    _edit(a, lambda d: d.pop("config_hashes"))
    assert main(["compare", str(a), str(b)]) == 2
    assert "different task configs" in capsys.readouterr().err


def test_compare_refuses_different_documents_under_the_same_ids(two_runs: tuple[Path, Path],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_runs
    samples = b / "samples" / "mantis_eval.jsonl"
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    rows[2]["target"] = "Z"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["compare", str(a), str(b)]) == 2
    assert "document '3' has a different target in the two runs" in capsys.readouterr().err


# --- the leaderboard marks rows that are not significantly apart -------------------------------

from tests.leaderboard.test_leaderboard import browser  # noqa: E402,F401  (the headless Chromium fixture)


@pytest.fixture
def three_runs(tmp_path: Path) -> list[Path]:
    # all right (100), right on 2-7 (85.7), none right (0): the top two differ on one document
    # (McNemar p = 1: tied), the next two on six, all one way (p = 2/64: apart)
    return [_replayed(tmp_path, "model-all", set(MANTIS)), _replayed(tmp_path, "model-most", set(MANTIS) - {"1"}),
            _replayed(tmp_path, "model-none", set())]


def test_leaderboard_marks_tied_rows(three_runs: list[Path], tmp_path: Path, browser) -> None:  # noqa: F811
    from mmtasks.leaderboard.build import build_leaderboard, load_runs
    from mmtasks.leaderboard.site import write_site

    board = build_leaderboard(load_runs(three_runs), include_paper=False)
    (bench,) = [b for b in board.benchmarks if b.id == "mantis_eval"]
    rows = [e for e in bench.entries if e.source == "run"]
    assert [e.model for e in rows] == ["model-all", "model-most", "model-none"]
    top, middle, last = rows
    assert top.tie is not None and top.tie.tied and top.tie.below == middle.id
    assert top.tie.mcnemar_p == pytest.approx(1.0) and top.tie.difference == pytest.approx(100 / 7)
    assert middle.tie is not None and not middle.tie.tied and middle.tie.mcnemar_p == pytest.approx(2 / 64)
    assert last.tie is None
    # 2.80 * sqrt(2) * the median positive stderr of the rows: only model-most has one
    stderr = json.loads((three_runs[1] / "results.json").read_text())["results"]["mantis_eval"]["acc_stderr"]
    assert stderr > 0 and bench.minimum_detectable_effect == pytest.approx(2.801585 * math.sqrt(2) * stderr, rel=1e-6)
    data = board.model_dump(mode="json")
    assert data["benchmarks"][[b["id"] for b in data["benchmarks"]].index("mantis_eval")]["entries"][0]["tie"]["tied"]

    site = tmp_path / "site"
    write_site(board, site)
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.goto((site / "index.html").as_uri() + "#mantis_eval")
    page.wait_for_selector("#board-mantis_eval tbody tr")
    badges = page.locator("#board-mantis_eval .badge-tie")
    assert badges.count() == 1
    assert badges.first.text_content() == "\u2248 model-most"
    title = badges.first.get_attribute("title") or ""
    assert "Tied with model-most: difference +14.29" in title and "over 7 documents" in title and "McNemar p=1.0" in title
    row = page.locator(f'#board-mantis_eval tr[data-entry="{top.id}"]')
    assert row.locator(".badge-tie").count() == 1
    assert "not reliably detectable" in (page.locator(".mde").text_content() or "")
    shot = tmp_path / "leaderboard-ties.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 0
    assert not problems, problems
    page.close()


def test_tasks_verbose_gives_each_tasks_minimum_detectable_effect(capsys: pytest.CaptureFixture[str]) -> None:
    # 7 Mantis-Eval documents: 2.801585 * sqrt(2) * 50 / sqrt(7) = 74.9 points
    assert main(["tasks", "--verbose", "--data-dir", str(SAMPLE)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"7 documents in {SAMPLE.resolve()}: a right/wrong score detects a difference of 74.9 points at 80% power" in out
    assert main(["tasks", "--verbose"]) == 0
    assert "minimum detectable effect: give --data-dir to count the documents" in capsys.readouterr().out
