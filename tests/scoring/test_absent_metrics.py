"""No silent number (issue 40, item 9): a metric that no sample produced is null (or absent),
never 0, and every reader copes with it. The category-macro shape (``tests/shapes/category_macro``)
is the README's aggregator recipe: ``per_sample_mean`` for the generic means, then the mean of the
category means of ``rouge_l`` as ``rouge_l_macro``; it sets no ``rouge_l_macro_all``. Before,
``per_sample_mean`` wrote that as 0.0 at 100% coverage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.report import results_table_lines

SHAPE = (Path(__file__).resolve().parents[2] / "tests") / "shapes" / "category_macro"
TASK = "category_macro"


def _run(out: Path, replies: str, *extra: str) -> dict:
    code = main(["--tasks", TASK, "--no-progress", "--include-path", str(SHAPE / "tasks"), "--data-dir",
                 str(SHAPE / "data"), "--model", f"replay:{SHAPE / replies}", "--output-path", str(out), *extra])
    assert code == 0
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "answered", tmp_path / "failed"


def test_a_metric_no_sample_produced_is_null(runs: tuple[Path, Path]) -> None:
    answered, failed = runs
    metrics = _run(answered, "replies.jsonl")["results"][TASK]
    # rouge_l_char: q1 "red"/"red" 100, q2 "red"/"blue" (LCS "e": P 1/3, R 1/4, F 2/7) 28.57, q3 100, q4 100
    assert metrics["rouge_l"] == pytest.approx((300 + 200 / 7) / 4)
    assert metrics["rouge_l_all"] == pytest.approx(metrics["rouge_l"])  # every document scored
    # colour (100 + 200/7 + 100) / 3, animal 100: their mean
    assert metrics["rouge_l_macro"] == pytest.approx(((200 + 200 / 7) / 3 + 100) / 2)
    assert metrics["rouge_l_macro_all"] is None and metrics["rouge_l_macro_stderr"] is None  # before: 0.0
    # every request failed: the documents counted as 0 over all of them, as for any metric
    metrics = _run(failed, "replies_failed.jsonl", "--allow-failures")["results"][TASK]
    assert metrics["rouge_l"] is None and metrics["rouge_l_macro"] is None
    assert metrics["rouge_l_all"] == 0.0 and metrics["rouge_l_macro_all"] == 0.0


def test_every_reader_copes_with_null(runs: tuple[Path, Path], tmp_path: Path) -> None:
    answered, failed = runs
    results = _run(answered, "replies.jsonl")
    _run(failed, "replies_failed.jsonl", "--allow-failures")
    table = "\n".join(results_table_lines(json.loads((failed / "results.json").read_text())))
    assert "rouge_l_macro" in table and "rouge_l_macro_all          0.00" in table
    assert main(["compare", str(answered), str(failed)]) == 0
    view = tmp_path / "view"
    assert main(["view", str(answered), str(failed), "--out", str(view)]) == 0
    text = (view / "index.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index(",") + 1:text.rstrip().rindex(")")])
    shown = index["tasks"][0]["runs"][0]["metrics"]
    assert "rouge_l_macro_all" not in shown and shown["rouge_l_macro"] == pytest.approx(results["results"][TASK]["rouge_l_macro"])
    site = tmp_path / "board"
    assert main(["leaderboard", "build", str(answered), str(failed), "--out", str(site),
                 "--include-path", str(SHAPE / "tasks")]) == 0
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    bench = next(b for b in board["benchmarks"] if b["id"] == TASK)
    cells = {e["model"].split("/")[-1]: e["values"] for e in bench["entries"]}
    assert cells["replay:replies.jsonl"]["macro_all"]["value"] is None
    assert "is null" in cells["replay:replies.jsonl"]["macro_all"]["missing"]
    assert cells["replay:replies_failed.jsonl"]["macro"]["value"] is None
    assert cells["replay:replies_failed.jsonl"]["macro_all"]["value"] == 0.0
