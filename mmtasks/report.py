"""Printing results for people: the results table and the failure summary."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.table import Table


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def _coverage(cov: dict[str, Any] | None) -> str:
    """``coverage[task]`` as a cell: "100%", or "60.0% *" (marked) with the unit when under 100%."""
    if not cov or cov.get("total") is None:
        return "-"
    total, scored = cov["total"], cov["scored"]
    if not total:
        return "-"
    if scored == total:
        return "100%"
    return f"{100.0 * scored / total:.1f}% * ({scored}/{total} {cov.get('unit', 'documents')})"


def print_results_table(results: dict[str, Any]) -> None:
    console = Console(file=sys.stdout, width=140)
    table = Table(title=f"mmtasks results - {results['config'].get('model')}")
    for col in ("task", "metric", "value", "stderr", "all", "n", "coverage"):
        table.add_column(col, justify="left" if col in ("task", "metric") else "right")
    partial: list[str] = []
    for task, metrics in results["results"].items():
        n = results["n-samples"][task]["effective"]
        cov = results.get("coverage", {}).get(task)
        cell = _coverage(cov)
        if cell.endswith(")"):
            partial.append(f"{task}: " + ", ".join(f"{k}={v}" for k, v in cov["unscored"].items()))
        # The table shows headline metrics, their _all variant (every unit, the unscored counted as 0)
        # and counts; the other variants (_micro, _macro) stay in results.json.
        shown = [m for m in metrics if m != "alias" and not m.endswith(("_stderr", "_micro", "_macro", "_all"))
                 and isinstance(metrics[m], (int, float, type(None)))]
        for i, m in enumerate(shown):
            table.add_row(task if i == 0 else "", m, _fmt(metrics[m]), _fmt(metrics.get(f"{m}_stderr")),
                          _fmt(metrics.get(f"{m}_all")), str(n) if i == 0 else "", cell if i == 0 else "")
    for group, row in results.get("groups", {}).items():
        table.add_row(f"[bold]{group}[/bold]", "average", _fmt(row.get("average")), "", "", f"{row.get('n_tasks')} tasks", "")
    console.print(table)
    if partial:
        console.print("* coverage under 100%: the value is over the scored units only, 'all' counts the others as 0. "
                      "Not scored: " + "; ".join(partial))


def print_problems(problems: dict[str, dict[str, int]], allowed: bool = False) -> None:
    """The failure summary on stderr; ``allowed``: --allow-failures was given (exit status 0)."""
    console = Console(file=sys.stderr)
    console.print("[yellow]Some requests did not produce a scored answer (counted in results.json, shown in the samples):[/yellow]")
    for task, counts in problems.items():
        console.print(f"  {task}: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    if allowed:
        console.print("  accepted (--allow-failures): exit status 0")
    else:
        console.print("  exit status 1; pass --allow-failures to accept them")
