"""Printing results for people: the results table and the failure summary.

The table is compact, in the spirit of lm-evaluation-harness's: plain text that fits
80 columns (long names are shortened with an ellipsis, never wrapped), one row per
scored metric under its task (a multi-turn task's headline also per turn), problem rows
(failed requests, truncated replies, unparsed answers, judge failures) only when they are
not zero, the records the task's record policy excluded, kept as text or scored wrong by
reason (``excluded: output missing  3``), the share of replies that hit the token limit when
some did, the reasoning's mean length when the model reasoned, and one row per group. A group the run
covered only partly is shown as "3 of 8 tasks": the mean of the tasks that ran, not
the benchmark's score.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

from mmtasks.errors import printable
from mmtasks.results.schema import RECORD_TREATMENTS

#: how the table names the record policy's treatments (results.json's keys)
_TREATMENT_LABELS = {"excluded": "excluded", "kept_as_text": "kept as text", "scored_wrong": "scored wrong"}

#: the table never needs more columns than this
WIDTH = 80
_NUM_COLS = (("Value", 8), ("Stderr", 8), ("N", 9))


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def _fit(text: str, width: int) -> str:
    """``text`` in ``width`` characters, its control characters escaped (names come from files)."""
    text = printable(text)
    return text if len(text) <= width else text[: max(0, width - 1)] + "\u2026"


def format_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _shown_metrics(results: dict[str, Any], task: str) -> list[str]:
    """The task's scored metrics (those with a direction in ``higher_is_better``), headline first."""
    metrics = results["results"][task]
    scored = list(results.get("higher_is_better", {}).get(task, {}))
    if not scored:  # an older results.json: every plain numeric entry that is not a variant or a count
        problems = set(results.get("problems", {}).get(task, {})) | {"unparsed", "failures"}
        scored = [m for m in metrics if m != "alias" and m not in problems
                  and not m.endswith(("_stderr", "_micro", "_macro", "_all"))
                  and isinstance(metrics[m], (int, float, type(None))) and not isinstance(metrics[m], bool)]
    primary = None
    for metric in results.get("configs", {}).get(task, {}).get("metrics", []):
        if metric.get("primary"):
            primary = metric.get("name")
    ordered = ([primary] if primary is not None and primary in scored else []) + [m for m in scored if m != primary]
    return [m for m in ordered if m in metrics]


def _n(results: dict[str, Any], task: str) -> str:
    counts = results.get("n-samples", {}).get(task, {})
    effective, original = counts.get("effective"), counts.get("original")
    if effective is None:
        return ""
    return str(effective) if original in (None, effective) else f"{effective}/{original}"


def _turn_rows(results: dict[str, Any], task: str) -> list[tuple[str, str, str, str]]:
    """A multi-turn task's headline metric per turn (its ``turn`` breakdown), one row a turn."""
    by_turn = results.get("breakdowns", {}).get(task, {}).get("turn")
    shown = _shown_metrics(results, task)
    if not isinstance(by_turn, dict) or not by_turn or not shown:
        return []
    metric = shown[0]
    return [(f"  {metric} turn {label}", _fmt(row.get(metric)), "", _fmt(row.get("n")) if "n" in row else "")
            for label, row in by_turn.items() if isinstance(row, dict)]


def _reply_rows(replies: dict[str, Any] | None) -> list[tuple[str, str, str, str]]:
    """How the task's replies ended: the share that hit the token limit (when any did), and the
    reasoning's mean length (when the model reasoned)."""
    if not isinstance(replies, dict) or not replies.get("n"):
        return []
    rows = []
    n, at_limit = replies["n"], (replies.get("finish_reasons") or {}).get("length", 0)
    if at_limit:
        rows.append(("  ! replies at the token limit", f"{100.0 * at_limit / n:.1f}%", "", f"{at_limit}/{n}"))
    reasoning = replies.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("n"):
        rows.append((f"  reasoning, mean {reasoning.get('unit', 'characters')}", f"{reasoning.get('mean', 0):.0f}", "",
                     f"{reasoning['n']}/{n}"))
    return rows


def results_table_lines(results: dict[str, Any]) -> list[str]:
    """The results table as lines of at most :data:`WIDTH` characters."""
    rows: list[tuple[str, str, str, str]] = []  # name, value, stderr, n
    any_partial = False
    for task, metrics in results["results"].items():
        rows.append((task, "", "", _n(results, task)))
        cov = results.get("coverage", {}).get(task)
        partial_cov = bool(cov) and cov.get("scored") != cov.get("total")
        any_partial = any_partial or partial_cov
        for m in _shown_metrics(results, task):
            rows.append((f"  {m}", _fmt(metrics.get(m)), _fmt(metrics.get(f"{m}_stderr")), ""))
            if partial_cov and f"{m}_all" in metrics:  # every unit, the unscored counted as 0
                rows.append((f"  {m}_all", _fmt(metrics.get(f"{m}_all")), "", ""))
            matcher = results.get("matcher", {}).get(task)
            if matcher and m in (matcher.get("without_matcher") or {}):  # the rule's readings alone
                rows.append((f"  {m} without matcher", _fmt(matcher["without_matcher"][m]), "", ""))
            for name, variant in (results.get("variants", {}).get(task) or {}).items():  # the same replies, scored another way
                vm = variant.get("metrics") or {}
                if m in vm:
                    vcov = variant.get("coverage") or {}
                    n = f"{vcov.get('scored')}/{vcov.get('total')}" if vcov.get("scored") != vcov.get("total") else ""
                    rows.append((f"  {m} [{name}]", _fmt(vm.get(m)), _fmt(vm.get(f"{m}_stderr")), n))
        matcher = results.get("matcher", {}).get(task)
        if matcher:
            read = matcher.get("read_by") or {}
            rows.append(("  read by matcher", str(read.get("matcher", 0)), "", f"{matcher.get('asked', 0)} asked"))
        if cov:
            percent = cov.get("percent")
            if percent is None and cov.get("total"):
                percent = 100.0 * cov["scored"] / cov["total"]
            rows.append((f"  {'! ' if partial_cov else ''}coverage ({cov.get('unit', 'documents')})",
                         "-" if percent is None else f"{percent:.1f}%", "", f"{cov.get('scored')}/{cov.get('total')}"))
        rows += _turn_rows(results, task)
        by_reason = set()
        for treatment in RECORD_TREATMENTS:  # the record policy's counts, by reason (coverage holds them)
            reasons = (cov or {}).get(treatment) or {}
            if isinstance(reasons, dict) and reasons:
                by_reason.add(treatment)
                for reason, count in reasons.items():
                    rows.append((f"  {_TREATMENT_LABELS[treatment]}: {reason}", str(count), "", ""))
        for problem, count in results.get("problems", {}).get(task, {}).items():
            if count and problem not in by_reason:
                mark = "" if problem in RECORD_TREATMENTS else "! "
                label = _TREATMENT_LABELS.get(problem, problem)
                rows.append((f"  {mark}{label}", str(count), "", ""))
        rows += _reply_rows(results.get("replies", {}).get(task))
    groups = results.get("groups", {})
    partial = False
    if groups:
        rows.append(("", "", "", ""))
        for group, row in groups.items():
            ran = int(row.get("n_tasks") or 0)
            total = ran + len(row.get("missing_tasks") or [])
            if total > ran:
                partial = True
                label, n = f"{group} (partial mean)", f"{ran} of {total}"
            else:
                label, n = f"{group} (mean)", f"{ran} task{'s' if ran != 1 else ''}"
            rows.append((label, _fmt(row.get("average")), "", n))
            for metric, value in (row.get("metrics") or {}).items():  # its group aggregator's figures
                rows.append((f"  {metric}", _fmt(value), "", ""))
            for name, value in (row.get("variants") or {}).items():
                rows.append((f"  {group} [{name}]", _fmt(value), "", ""))
    num_width = sum(w + 1 for _, w in _NUM_COLS)
    name_width = min(max([len("Task / metric")] + [len(r[0]) for r in rows]), WIDTH - num_width)
    header = f"{'Task / metric':<{name_width}}" + "".join(f" {title:>{w}}" for title, w in _NUM_COLS)
    model = results.get("config", {}).get("model")
    judge = results.get("config", {}).get("judge")
    matcher_model = results.get("config", {}).get("matcher")
    title = (f"mmtasks results: {model}" + (f" (judge {judge})" if judge else "")
             + (f" (matcher {matcher_model})" if matcher_model else ""))
    lines = [_fit(title, WIDTH), "-" * len(header), header, "-" * len(header)]
    for name, value, stderr, n in rows:
        cells = (value, stderr, n)
        line = f"{_fit(name, name_width):<{name_width}}" + "".join(
            f" {_fit(c, w):>{w}}" for c, (_, w) in zip(cells, _NUM_COLS))
        lines.append(line.rstrip())
    lines.append("-" * len(header))
    if partial:
        lines.append(_fit("partial mean: only some of the group's tasks ran; not the benchmark's score", WIDTH))
    if results.get("variants"):
        lines.append(_fit("[name]: the same replies scored the way of the task's variant name (see results.json variants)", WIDTH))
    if any_partial:
        lines.append(_fit("! coverage under 100%: values are over the scored units; _all counts the rest as 0", WIDTH))
    if any((r or {}).get("finish_reasons", {}).get("length") for r in results.get("replies", {}).values()):
        lines.append(_fit("! replies at the token limit: more room with --gen-kwargs max_new_tokens=N", WIDTH))
    stats = results.get("run_stats", {})
    footer = []
    elapsed = stats.get("total_evaluation_time_s")
    if isinstance(elapsed, (int, float)):
        footer.append(f"total evaluation time {format_duration(elapsed)}")
    sent = sum((stats.get("sent") or {}).values())
    cached = sum((stats.get("cached") or {}).values())
    if sent or cached:
        footer.append(f"{sent} requests sent, {cached} replies from the cache")
    if footer:
        lines.append(_fit("; ".join(footer), WIDTH))
    lines.extend(_fit(line, WIDTH) for line in token_lines(results))
    if cached:
        # a cached reply answers for the model as it was when cached: say how much of the run that is
        share = 100.0 * cached / (sent + cached)
        lines.append(_fit(f"{cached} of {sent + cached} replies ({share:.0f}%) came from the response cache "
                          "(--no-cache asks again)", WIDTH))
    return lines


def _usd(value: float | None, currency: str) -> str:
    return "unknown" if value is None else f"{currency} {value:.4f}"


def token_lines(results: dict[str, Any]) -> list[str]:
    """The run's tokens per component (summed over its tasks) and its cost, under the table."""
    per: dict[str, dict[str, int]] = {}
    for targets in (results.get("tokens") or {}).values():
        for target, row in targets.items():
            into = per.setdefault(target, {})
            for kind, n in row.items():
                into[kind] = into.get(kind, 0) + n
    parts = []
    for target, row in per.items():
        if row.get("replies", 0) == row.get("without_counts", 0):
            continue
        text = f"{target} {row.get('prompt', 0):,} in / {row.get('completion', 0):,} out"
        if row.get("reasoning"):
            text += f" ({row['reasoning']:,} reasoning)"
        if row.get("cached"):
            text += f", {row['cached']:,} cached"
        parts.append(text)
    lines = [f"tokens: {'; '.join(parts)}"] if parts else []
    cost = results.get("cost") or {}
    components = cost.get("components") or {}
    if components:
        currency = cost.get("currency", "USD")
        each = ", ".join(f"{t} {_usd(c.get('total'), currency)}" for t, c in components.items())
        line = f"cost: {_usd(cost.get('total'), currency)} ({each})"
        sent = ((results.get("run_stats") or {}).get("cost_sent") or {}).get("total")
        if sent is not None and sent != cost.get("total"):
            line += f"; sent by this run {_usd(sent, currency)}"
        lines.append(line)
        lines.extend(f"  {note}" for note in cost.get("notes") or [] if cost.get("total") is None)
    return lines


def print_results_table(results: dict[str, Any], file: TextIO | None = None) -> None:
    out = file or sys.stdout
    for line in results_table_lines(results):
        print(line, file=out)


def print_problems(problems: dict[str, dict[str, int]], allowed: bool = False, file: TextIO | None = None) -> None:
    """The failure summary on stderr; ``allowed``: --allow-failures was given (exit status 0)."""
    out = file or sys.stderr
    print("Some requests did not produce a scored answer (counted in results.json, shown in the samples):", file=out)
    for task, counts in problems.items():
        print(f"  {task}: " + ", ".join(f"{k}={v}" for k, v in counts.items()), file=out)
    if allowed:
        print("  accepted (--allow-failures): exit status 0", file=out)
    else:
        print("  exit status 1; pass --allow-failures to accept them", file=out)


__all__: Sequence[str] = ("format_duration", "print_problems", "print_results_table", "results_table_lines")
