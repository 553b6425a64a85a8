"""``mmtasks tasks`` and ``mmtasks models`` (read-only: they create nothing)."""

from __future__ import annotations

import argparse
import shutil
import textwrap

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.errors import MmtasksError, printable
from mmtasks.models.base import backend_names
from mmtasks.models.presets import load_presets


#: the widest the task-name column gets; longer names push the rest of their own row right
NAME_COLUMN = 32


def _fit(text: str, width: int) -> str:
    text = printable(text)
    return text if len(text) <= width else text[: max(0, width - 1)] + "\u2026"


def _detectable_effects(reg: TaskRegistry, args: argparse.Namespace) -> dict[str, str]:
    """``--verbose``: per task, its documents in the data folder and the minimum detectable effect
    of a right/wrong headline at its widest spread (p = 0.5: 50 points per document), for two
    models with independent errors, two-sided 5%, 80% power: 2.80 * sqrt(2) * 50 / sqrt(n).
    Without a data folder, says how to get the count. Reads the records only (no model)."""
    import math

    from mmtasks.comparison.paired import minimum_detectable_effect
    from mmtasks.documents.paths import data_root
    from mmtasks.preflight import load_tasks

    root = data_root(getattr(args, "data_dir", None))
    out: dict[str, str] = {}
    if root is None:
        for name in reg.task_names:
            out[name] = "minimum detectable effect: give --data-dir to count the documents"
        return out
    for name in reg.task_names:
        try:
            (task,), _ = load_tasks([name], args.include_path)
            n = sum(1 for _ in task.documents(root, None))
        except MmtasksError as exc:
            out[name] = f"minimum detectable effect: documents not counted ({exc.render()})"
            continue
        if n < 2:
            out[name] = f"{n} document(s) in {root}: too few to detect a difference"
            continue
        mde = minimum_detectable_effect(math.sqrt(2) * 50.0 / math.sqrt(n))
        out[name] = (f"{n} documents in {root}: a right/wrong score detects a difference of {mde:.1f} points "
                     "at 80% power (its widest spread, independent errors; mmtasks compare gives the paired one)")
    return out


def list_tasks(args: argparse.Namespace) -> int:
    """Each task with its primary metric and judge (the task's default judge model, or
    "judge" when it needs one but names none), then its description; then the groups."""
    reg = TaskRegistry.discover(args.include_path)
    width = max(60, min(shutil.get_terminal_size((80, 24)).columns, 120))
    detectable = _detectable_effects(reg, args) if getattr(args, "verbose", False) else {}
    rows: list[tuple[str, str, str, str]] = []
    for name in reg.task_names:
        try:
            config, _ = reg.load(name)
        except MmtasksError as exc:
            rows.append((name, "?", "?", f"cannot be loaded: {exc}"))
            continue
        judge = "-"
        if config.judge is not None:
            judge = config.judge.default_model or "needs --judge"
        rows.append((name, config.primary_metric or "-", judge, config.description))
    # a few long subtask names (MMMU's 44 characters) widen only their own rows, not every row's
    name_w = min(NAME_COLUMN, max([len("task")] + [len(r[0]) for r in rows]))
    metric_w = max([len("metric")] + [len(r[1]) for r in rows])
    print(_fit(f"{'task':<{name_w}}  {'metric':<{metric_w}}  judge", width))
    described: dict[str, str] = {}
    for name, metric, judge, description in rows:
        print(_fit(f"{name:<{name_w}}  {metric:<{metric_w}}  {judge}", width))
        if description in described:  # subtasks sharing their benchmark's description
            print(printable(f"    (as {described[description]})"))
            if name in detectable:
                print("    " + printable(detectable[name]))
            continue
        described.setdefault(description, name)
        for line in textwrap.wrap(" ".join(description.split()), width - 4):
            print("    " + printable(line))  # descriptions come from task YAML
        if name in detectable:
            for line in textwrap.wrap(detectable[name], width - 4):
                print("    " + printable(line))
    print()
    print("groups:")
    for group, members in reg.groups.items():
        print(textwrap.fill(", ".join(members), width, initial_indent=f"  {group}: ", subsequent_indent="    "))
    if reg.reports:
        print()
        print("reports (a model card's table as one --tasks name; reports/, docs/users/reports.md):")
        known = {*reg.task_names, *reg.groups}
        for name, report in reg.reports.items():
            present, missing = report.split(known)
            print(textwrap.fill(printable(f"{report.title} ({report.source.url}): runs {', '.join(present) or 'nothing yet'}"
                                          + (f"; not in mmtasks yet: {', '.join(r.row for r in missing)}" if missing else "")),
                                width, initial_indent=f"  {name}: ", subsequent_indent="    "))
    for path, message in reg.broken_files.items():
        print(printable(f"warning: skipped {message}"))
    return 0


def list_models(args: argparse.Namespace) -> int:
    print("Backends: " + ", ".join(backend_names()))
    print("Presets:")
    for name, preset in load_presets().items():
        print(printable(f"  {name:24s} {preset.backend}:{preset.weights}  {preset.description}"))
        line = "runs on: " + ", ".join(preset.runs_on())
        if preset.unsupported:
            line += "; not on: " + ", ".join(sorted(preset.unsupported))
        print(printable(f"  {'':24s} {line}"))
        for mode_name, mode in preset.modes.items():  # a card's protocols: --model NAME@MODE
            print(printable(f"  {'':24s} @{mode_name}: {mode.description or 'a protocol'} ({mode.source})"))
    return 0
