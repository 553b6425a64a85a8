"""``mmtasks judge agreement``: statistics against values worked out by hand, pairing of
verdicts across runs, and the command end to end on two real runs of the sample data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mmtasks.agreement import compare_runs
from mmtasks.agreement.stats import agreement, kendall, pearson, spearman, weighted_kappa
from mmtasks.agreement.verdicts import pair, read_verdicts
from mmtasks.cli import main

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample"

# x = 1..5, y = 2,1,4,3,5 (two adjacent swaps). Deviations from the mean 3:
# dx = -2,-1,0,1,2; dy = -1,-2,1,0,2; sum dx*dy = 2+2+0+0+4 = 8; sum dx^2 = sum dy^2 = 10 -> r = 0.8.
# The values are their own ranks, so Spearman's rho = 0.8 too.
# Kendall: of 10 pairs, (1,2) and (3,4) are discordant, 8 concordant -> tau = (8-2)/10 = 0.6.
# Quadratic kappa on categories 1..5 (k=5): four disagreements of 1 step, weight 1/16 each:
# observed = 4/16/5 = 0.05; expected with uniform marginals = sum_ij (i-j)^2 / (25*16) = 100/400 = 0.25
# -> kappa = 1 - 0.05/0.25 = 0.8. Linear weights |i-j|/4: observed 4*(1/4)/5 = 0.2,
# expected 40/(25*4) = 0.4 -> 0.5.
X = np.array([1, 2, 3, 4, 5], dtype=float)
Y = np.array([2, 1, 4, 3, 5], dtype=float)


def test_statistics_by_hand() -> None:
    assert pearson(X, Y) == pytest.approx(0.8)
    assert spearman(X, Y) == pytest.approx(0.8)
    assert kendall(X, Y) == pytest.approx(0.6)
    assert weighted_kappa(X, Y) == pytest.approx(0.8)
    assert weighted_kappa(X, Y, "linear") == pytest.approx(0.5)


def test_kendall_tau_b_with_ties() -> None:
    # x = 1,1,2,3; y = 1,2,2,3: 6 pairs, 4 concordant, 0 discordant, one tie in x, one in y:
    # tau-b = (4 - 0) / sqrt((6 - 1) * (6 - 1)) = 0.8
    assert kendall(np.array([1, 1, 2, 3.]), np.array([1, 2, 2, 3.])) == pytest.approx(0.8)


def test_perfect_and_undefined_agreement() -> None:
    same = agreement([1, 2, 3, 3, 5], [1, 2, 3, 3, 5], n_resamples=200)
    assert same.pearson.value == pytest.approx(1.0) and same.kappa is not None and same.kappa.value == pytest.approx(1.0)
    # a constant rater: no correlation is defined, and none is invented
    flat = agreement([3, 3, 3], [1, 2, 3], n_resamples=50)
    assert flat.pearson.value is None and flat.spearman.value is None and flat.kendall.value is None
    # kappa only on integer scales
    assert agreement([0.5, 1.5, 2.0], [1.0, 1.5, 2.5], n_resamples=10).kappa is None


def test_bootstrap_interval_is_deterministic_and_brackets_the_estimate() -> None:
    a, b = list(X) * 10, list(Y) * 10
    first, second = agreement(a, b, n_resamples=300), agreement(a, b, n_resamples=300)
    assert first == second and first.n_pairs == 50
    for est in (first.pearson, first.spearman, first.kendall, first.kappa):
        assert est is not None and est.low is not None and est.high is not None
        assert est.low <= est.value <= est.high
        assert est.high - est.low < 0.5


def _run(folder: Path, samples: list[dict]) -> Path:
    (folder / "samples").mkdir(parents=True)
    with (folder / "samples" / "bench.jsonl").open("w") as fh:
        for s in samples:
            fh.write(json.dumps(s) + "\n")
    return folder


def _sample(doc: str, verdicts: list[dict | None], group: str | None = None) -> dict:
    judge = [{"turn": k + 1, "fields": v, **({"group": group} if group else {})} for k, v in enumerate(verdicts)]
    return {"task": "bench", "doc_id": doc, "judge": judge}


def test_pairing_skips_failures_and_unshared_items(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", [
        _sample("d1", [{"score": 1}, {"score": 2}, {"score": 3}]),
        _sample("d2", [{"score": 4}, {"score": 5, "refused": True}]),
        _sample("d3", [{"score": 9}]),                      # only in run A
    ])
    b = _run(tmp_path / "b", [
        _sample("d1", [{"score": 2}, {"score": 1}, None]),  # judge failure on turn 3
        _sample("d2", [{"score": 3}, {"score": 5, "refused": False}]),
    ])
    pairs = {p.quantity: p for p in pair(read_verdicts(a), read_verdicts(b))}
    assert pairs["score"].a == [1, 2, 4, 5] and pairs["score"].b == [2, 1, 3, 5]
    assert pairs["refused"].a == [1.0] and pairs["refused"].b == [0.0]
    report = compare_runs(a, b, n_resamples=50)
    assert (report.n_items, report.only_a, report.only_b) == (4, 2, 0)   # d1 turn 3 failed in B, d3 absent


def test_groups_name_the_quantities(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", [_sample("d1", [{"score": 1}, {"score": 2}], group="IE")])
    b = _run(tmp_path / "b", [_sample("d1", [{"score": 1}, {"score": 3}], group="IE")])
    assert [p.quantity for p in pair(read_verdicts(a), read_verdicts(b))] == ["IE.score"]


def test_cli_on_hand_made_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    a = _run(tmp_path / "a", [_sample("d", [{"overall": float(v)} for v in X])])
    b = _run(tmp_path / "b", [_sample("d", [{"overall": float(v)} for v in Y])])
    out = tmp_path / "report.json"
    # the report's path is printed as given: relative, so the 80-column check below does not
    # depend on how long pytest's temporary folder is (longer under pytest-xdist)
    monkeypatch.chdir(tmp_path)
    assert main(["judge", "agreement", str(a), str(b), "--json", out.name, "--resamples", "100"]) == 0
    text = capsys.readouterr().out
    assert "bench overall (n=5, mean 3.00 vs 3.00)" in text
    assert all(len(line) <= 80 for line in text.splitlines() if not line.startswith("judge agreement:"))
    report = json.loads(out.read_text())
    row = report["quantities"][0]["agreement"]
    assert row["pearson"]["value"] == pytest.approx(0.8) and row["kendall"]["value"] == pytest.approx(0.6)
    assert row["kappa"]["value"] == pytest.approx(0.8) and row["n_pairs"] == 5


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge", "agreement", str(tmp_path / "nope"), str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nope" in err
    assert main(["judge"]) == 2


@pytest.mark.slow
def test_two_judges_on_the_sample_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two chance-level judges (different seeds) over the same replayed answers: every judged turn pairs up."""
    first, second = tmp_path / "judge1", tmp_path / "judge2"
    common = ["--data-dir", str(SAMPLE), "--no-cache", "--no-progress", "--allow-failures"]
    assert main(["--tasks", "mmdu", "--model", "random", "--judge", "random", "--seed", "1", "--output-path", str(first), *common]) == 0
    assert main(["--tasks", "mmdu", "--model", f"replay:{first}", "--judge", "random", "--seed", "2",
                 "--output-path", str(second), *common]) == 0
    capsys.readouterr()
    report = compare_runs(first, second, n_resamples=50)
    judged = sum(1 for line in (first / "samples" / "mmdu.jsonl").read_text().splitlines()
                 for entry in json.loads(line)["judge"] if entry["fields"] is not None)
    assert report.n_items == judged > 0 and report.only_a == report.only_b == 0
    assert {q.quantity for q in report.quantities} >= {"overall", "creativity"}
    assert all(q.agreement.n_pairs == judged for q in report.quantities)
