"""Runs (+ the papers' numbers) -> the :class:`~mmtasks.leaderboard.schema.Leaderboard` model.

Its tabs are the benchmark folders' leaderboard sections (:mod:`.sections`): one tab per
``leaderboard.yaml`` found in the task folders, with that file's columns, charts and paper rows.

An entry is one model configuration - model spec, model args and strategy - on one
benchmark. When several runs hold the same task for the same configuration, the run
with the newest ``date`` wins for that task (on equal dates, the one given last);
an entry may therefore combine tasks from several runs, each listed in ``Entry.runs``.

A task scored by the chance-level ``random`` judge makes its own entry (never merged
with the same model's real judgements), marked ``chance_judge`` and never ranked:
such entries come after every ranked entry.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mmtasks import __version__
from mmtasks.leaderboard.paper import paper_entries
from mmtasks.leaderboard.results import Run, iso_utc, load_run
from mmtasks.leaderboard.schema import (
    Benchmark,
    Cell,
    Chart,
    Column,
    Coverage,
    Entry,
    Leaderboard,
    NSamples,
    RunRef,
    Variant,
)
from mmtasks.leaderboard.sections import Section, auto_section, discover_sections
from mmtasks.leaderboard.significance import mark_ties, section_mde

#: the folder of a published leaderboard that holds the runs' views (``OUT/views/<run>/``)
VIEWS_DIR = "views"


def load_runs(paths: Iterable[Path]) -> list[Run]:
    return [load_run(Path(path)) for path in paths]


def build_leaderboard(
    runs: Sequence[Run],
    *,
    include_paper: bool = True,
    sections: Sequence[Section] | None = None,
    include_paths: Sequence[str | Path] = (),
    now: float | None = None,
    views: Mapping[str, str] | None = None,
) -> Leaderboard:
    """One tab per section that has a row (a run of one of its tasks, or a paper row);
    ``sections`` default to those of every task folder the task registry knows (built-in,
    installed packages', ``include_paths``). ``views``: run name -> relative link to its
    viewer, for the runs whose view is published beside the leaderboard (:func:`published_views`)."""
    if sections is None:
        sections = discover_sections(include_paths)
    extra = auto_section(_unplaced(runs, sections))
    sections = [*sections, extra] if extra is not None else list(sections)
    benchmarks = []
    for bench in sections:
        table = bench.papers if include_paper else None
        measured, task_runs = _run_entries(bench, runs, views or {})
        measured = mark_ties(bench, measured, task_runs)
        # ranked runs, the papers' rows, then the rows that are never ranked (chance-level judge)
        entries = [e for e in measured if e.ranked]
        if table is not None:
            entries += paper_entries(bench)
        entries += [e for e in measured if not e.ranked]
        if not entries:
            continue  # nothing to show: no run of its tasks, no paper rows
        benchmarks.append(
            Benchmark(
                id=bench.id,
                title=bench.title,
                description=bench.description,
                category=bench.category,
                headline=bench.headline,
                columns=[column.model_copy() for column in bench.columns],
                charts=[_chart_with_buckets(chart.chart(), entries, chart.bucket_order) for chart in bench.charts],
                citation=table.cite() if table is not None else None,
                variants=_variants(bench, task_runs),
                minimum_detectable_effect=section_mde(bench, measured, task_runs),
                entries=entries,
            )
        )
    return Leaderboard(
        generated_at=iso_utc(time.time() if now is None else now),
        mmtasks_version=__version__,
        benchmarks=benchmarks,
    )


def _unplaced(runs: Sequence[Run], sections: Sequence[Section]) -> dict[str, tuple[str, dict, float]]:
    """The runs' tasks that no section names, with a metric to show (:func:`auto_section`): task ->
    (its primary metric, its config, the largest value of it a run has)."""
    known = {task for bench in sections for task in bench.tasks}
    out: dict[str, tuple[str, dict, float]] = {}
    for run in runs:
        results = run.results
        for task in results.results:
            if task in known:
                continue
            metric = primary_metric(results.configs.get(task) or {}, results.higher_is_better.get(task) or {},
                                    results.metrics(task))
            if metric is None:
                continue
            value = results.metrics(task).get(metric, 0.0)
            previous = out.get(task)
            largest = max(value, previous[2]) if previous is not None and previous[0] == metric else value
            if previous is None or previous[0] == metric:
                out[task] = (metric, results.configs.get(task) or {}, largest)
    return out


def primary_metric(config: dict, higher_is_better: Mapping[str, bool | None], metrics: Mapping[str, float]) -> str | None:
    """A task's primary metric as a run recorded it: the config's ``primary``, else its first
    metric, else the first scored metric (``higher_is_better``); None when it has no value."""
    declared = [m.get("name") for m in config.get("metrics") or [] if isinstance(m, dict)]
    primary = next((m.get("name") for m in config.get("metrics") or [] if isinstance(m, dict) and m.get("primary")), None)
    for name in (primary, *declared, *higher_is_better):
        if isinstance(name, str) and name in metrics:
            return name
    return None


def unused_tasks(runs: Sequence[Run], sections: Sequence[Section] | None = None) -> dict[str, list[str]]:
    """Run name -> its tasks that feed no column of a benchmark's ``leaderboard.yaml`` (shown in the
    automatic "Other tasks" tab, :func:`~mmtasks.leaderboard.sections.auto_section`; reported)."""
    if sections is None:
        sections = discover_sections()
    known = {task for bench in sections for task in bench.tasks}
    unused = {run.name: sorted(set(run.results.results) - known) for run in runs}
    return {name: tasks for name, tasks in unused.items() if tasks}


# --- entries from runs ---------------------------------------------------------------


def run_identity(run: Run, task: str | None = None) -> str:
    """What makes two runs the same leaderboard row: model spec, model args, strategy and
    evaluation setting (image mode, history, probes, limit, the protocol's changes, the system
    instruction's whole text); for ``task``, also whether its
    scores come from the chance-level ``random`` judge."""
    config = run.results.config
    identity: dict[str, object] = {"model": config.model, "model_args": config.model_args, "variant": config.variant()}
    if config.run_name:
        identity["run_name"] = config.run_name
    if config.system_instruction is not None:  # the whole text (the variant's label shows its start and a hash)
        identity["system_instruction"] = config.system_instruction
    if task is not None and run.results.chance_judged(task):
        identity["chance_judge"] = True
    return json.dumps(identity, sort_keys=True, default=str)


def published_views(out: Path, runs: Sequence[Run]) -> dict[str, str]:
    """Run name -> ``views/<name>/index.html`` for each run whose view sits in ``out/views/<name>/``
    (written by ``mmtasks view RUN --out OUT/views/<name>``)."""
    found: dict[str, str] = {}
    for run in runs:
        page = out / VIEWS_DIR / run.name / "index.html"
        if page.is_file() and not page.is_symlink():
            found[run.name] = f"{VIEWS_DIR}/{run.name}/index.html"
    return found


def _run_entries(bench: Section, runs: Sequence[Run], views: Mapping[str, str]) -> tuple[list[Entry], dict[str, dict[str, Run]]]:
    """The section's run rows, sorted (ranked first, by headline), and each row's runs: entry id ->
    task -> the run it takes that task from."""
    # identity -> task -> winning run; dicts keep first-seen order of identities
    winners: dict[str, dict[str, Run]] = {}
    for run in runs:
        for task in bench.tasks:
            if task not in run.results.results:
                continue
            chosen = winners.setdefault(run_identity(run, task), {})
            current = chosen.get(task)
            if current is None or run.results.date >= current.results.date:
                chosen[task] = run
    entries = [_run_entry(bench, identity, task_runs, views) for identity, task_runs in winners.items()]
    by_id = {entry.id: task_runs for entry, task_runs in zip(entries, winners.values())}
    headline = bench.headline
    entries.sort(key=lambda e: (not e.ranked, e.values[headline].value is None, -(e.values[headline].value or 0.0)))
    return entries, by_id


def _run_entry(bench: Section, identity: str, task_runs: dict[str, Run], views: Mapping[str, str]) -> Entry:
    newest = max(task_runs.values(), key=lambda run: run.results.date)
    config = newest.results.config
    coverage = {
        task: record
        for task, run in task_runs.items()
        if (record := run.results.coverage.get(task)) is not None
    }
    values: dict[str, Cell] = {}
    for column in bench.columns:
        if column.task is not None:
            values[column.key] = _cell(column, task_runs.get(column.task))
    for column in bench.columns:
        if column.mean_of:
            parts = [bench.column(key).task for key in column.mean_of]
            values[column.key] = _mean_cell(column, values, [coverage.get(t) if t else None for t in parts])
    chance = any(run.results.chance_judged(task) for task, run in task_runs.items())
    officials = {task: official for task, run in task_runs.items() if (official := official_judge(run, task))}
    return Entry(
        id="run-" + hashlib.sha1(identity.encode("utf-8")).hexdigest()[:12],
        source="run",
        ranked=not chance,
        chance_judge=chance,
        official_judge=not any(_other_judge(run, task) for task, run in task_runs.items()),
        official_judges=officials,
        model_id="run-" + hashlib.sha1(run_identity(newest).encode("utf-8")).hexdigest()[:12],
        official_protocol=all(run.results.config.official_protocol for run in task_runs.values()),
        model=config.display_name,
        run_name=config.run_name,
        model_spec=config.public_model,
        model_args=config.model_args,
        strategy=config.strategy,
        judge=config.public_judge,
        judge_args=config.judge_args if isinstance(config.judge_args, dict) else {"args": config.judge_args},
        mmtasks_version=config.mmtasks_version,
        date=newest.iso_date,
        values=values,
        variants=_variant_cells(bench, task_runs, coverage),
        metrics={task: run.results.metrics(task) for task, run in task_runs.items()},
        problems={task: dict(run.results.problems[task]) for task, run in task_runs.items()
                  if task in run.results.problems},
        coverage=coverage,
        n_samples={
            task: NSamples(original=counts.original, effective=counts.effective)
            for task, run in task_runs.items()
            if (counts := run.results.n_samples.get(task)) is not None
        },
        task_versions={task: run.results.versions[task] for task, run in task_runs.items() if task in run.results.versions},
        breakdowns={
            task: _numeric_breakdowns(run, task) for task, run in task_runs.items() if task in run.results.breakdowns
        },
        runs=_run_refs(task_runs, views),
    )


def official_judge(run: Run, task: str) -> str | None:
    """The official judge ``task`` declares (its config's ``judge.default_model``), when the run
    judged it and the task declares one."""
    judge = (run.results.configs.get(task) or {}).get("judge")
    official = judge.get("default_model") if isinstance(judge, dict) else None
    return official if isinstance(official, str) and official and run.results.judged(task) else None


def _other_judge(run: Run, task: str) -> bool:
    """Whether ``task`` was judged by a judge other than its official one (the chance-level
    ``random`` judge aside: it is marked as such)."""
    official = official_judge(run, task)
    judge = run.results.config.judge
    return (official is not None and judge is not None and not run.results.chance_judged(task)
            and judge.strip() != official.strip())


def _variants(bench: Section, task_runs: Mapping[str, Mapping[str, Run]]) -> list[Variant]:
    """The scoring variants the section's runs have, by name (description and source from the
    newest run that has it), with the section's tasks that declare it."""
    newest: dict[str, tuple[float, str, str | None]] = {}  # name -> (date, description, source)
    tasks: dict[str, set[str]] = {}
    for runs in task_runs.values():
        for task, run in runs.items():
            for name, record in run.results.variants.get(task, {}).items():
                tasks.setdefault(name, set()).add(task)
                if name not in newest or run.results.date >= newest[name][0]:
                    newest[name] = (run.results.date, record.description, record.source)
    return [Variant(name=name, description=newest[name][1], source=newest[name][2],
                    tasks=[t for t in bench.tasks if t in tasks[name]]) for name in sorted(newest)]


def _variant_cells(bench: Section, task_runs: Mapping[str, Run], coverage: Mapping[str, Coverage]) -> dict[str, dict[str, Cell]]:
    """Variant -> column key -> cell, for the columns each variant of the row's runs scores."""
    names = sorted({name for task, run in task_runs.items() for name in run.results.variants.get(task, {})})
    out: dict[str, dict[str, Cell]] = {}
    for name in names:
        cells: dict[str, Cell] = {}
        scored = dict(coverage)  # the variant's own coverage where it has one (it may score fewer)
        for column in bench.columns:
            run = task_runs.get(column.task) if column.task is not None else None
            if run is None or column.task is None or column.metric is None:
                continue
            record = run.results.variants.get(column.task, {}).get(name)
            metrics = run.results.variant_metrics(column.task, name)
            if record is None or column.metric not in metrics:
                continue
            n_record = run.results.n_samples.get(column.task)
            if record.coverage is not None:
                scored[column.task] = record.coverage
            cells[column.key] = Cell(
                value=metrics[column.metric], stderr=metrics.get(f"{column.metric}_stderr"),
                n=record.coverage.scored if record.coverage is not None else (n_record.effective if n_record else None),
                coverage=record.coverage.percent if record.coverage is not None else None)
        for column in bench.columns:
            if column.mean_of and all(key in cells for key in column.mean_of):
                parts = [bench.column(key).task for key in column.mean_of]
                cells[column.key] = _mean_cell(column, cells, [scored.get(t) if t else None for t in parts])
        if cells:
            out[name] = cells
    return out


def _cell(column: Column, run: Run | None) -> Cell:
    assert column.task is not None and column.metric is not None
    if run is None:
        return Cell(missing=f"{column.task} is in no run of this model")
    metrics = run.results.metrics(column.task)
    if column.metric not in metrics:
        record = run.results.results.get(column.task)
        if record is not None and column.metric in record.values:  # null: no sample produced a value
            return Cell(missing=f"run {run.name}'s {column.metric!r} for {column.task} is null (no value was produced)")
        return Cell(missing=f"run {run.name} has no {column.metric!r} for {column.task}")
    n_record = run.results.n_samples.get(column.task)
    coverage = run.results.coverage.get(column.task)
    return Cell(
        value=metrics[column.metric],
        stderr=metrics.get(f"{column.metric}_stderr"),
        n=n_record.effective if n_record is not None else None,
        coverage=coverage.percent if coverage is not None else None,
    )


def _mean_cell(column: Column, values: dict[str, Cell], coverage: Sequence[Coverage | None]) -> Cell:
    parts = [values[key] for key in column.mean_of]
    absent = [key for key, cell in zip(column.mean_of, parts) if cell.value is None]
    if absent:
        return Cell(missing=f"needs all of {len(parts)} columns; missing: {', '.join(absent)}")
    mean = sum(cell.value for cell in parts if cell.value is not None) / len(parts)
    # independent subtasks: se(mean) = sqrt(sum se_i^2) / k
    errors = [cell.stderr for cell in parts]
    stderr = math.sqrt(sum(e * e for e in errors if e is not None)) / len(parts) if None not in errors else None
    counts = [cell.n for cell in parts]
    n = sum(c for c in counts if c is not None) if None not in counts else None
    total = sum(c.total for c in coverage if c is not None)
    percent = (100.0 * sum(c.scored for c in coverage if c is not None) / total
               if total and None not in coverage else None)
    return Cell(value=round(mean, 6), stderr=round(stderr, 6) if stderr is not None else None, n=n,
                coverage=round(percent, 6) if percent is not None else None)


def _numeric_breakdowns(run: Run, task: str) -> dict[str, dict[str, dict[str, float]]]:
    return {
        dimension: {
            bucket: {name: float(v) for name, v in values.items() if v is not None and math.isfinite(v)}
            for bucket, values in buckets.items()
        }
        for dimension, buckets in run.results.breakdowns[task].items()
    }


def _card_fields(run: Run, tasks: list[str]) -> dict[str, Any]:
    """A run's card (results.json's ``run_card``) as a RunRef holds it; nothing for a run without one."""
    card = run.results.run_card
    if card is None:
        return {}
    data = card.data_labels()
    return {"model_revision": card.model_label(), "data_revisions": {t: data[t] for t in tasks if t in data},
            "software": {k: v for k, v in card.versions.items() if v}, "hardware": card.hardware_label()}


def _run_refs(task_runs: dict[str, Run], views: Mapping[str, str]) -> list[RunRef]:
    by_run: dict[int, tuple[Run, list[str]]] = {}
    for task, run in task_runs.items():
        by_run.setdefault(id(run), (run, []))[1].append(task)
    refs = [
        RunRef(
            run=run.name,
            date=run.iso_date,
            tasks=tasks,
            git_hash=run.results.git_hash,
            mmtasks_version=run.results.config.mmtasks_version,
            **_card_fields(run, tasks),
            judge=run.results.config.public_judge,
            view=views.get(run.name),
        )
        for run, tasks in by_run.values()
    ]
    return sorted(refs, key=lambda ref: ref.date, reverse=True)


# --- charts -------------------------------------------------------------------------------


def _chart_with_buckets(chart: Chart, entries: Sequence[Entry], first: Sequence[str] = ()) -> Chart:
    """The chart with the buckets found in the entries: those of ``first`` in its order, then
    the others in natural order."""
    tasks = {option.task for option in chart.options}
    buckets: set[str] = set()
    for entry in entries:
        for task in tasks:
            buckets.update(entry.breakdowns.get(task, {}).get(chart.dimension, {}))
    ordered = [b for b in first if b in buckets] + sorted(buckets.difference(first), key=natural_key)
    return chart.model_copy(update={"buckets": ordered})


def natural_key(label: str) -> tuple[float, str]:
    """Order bucket labels by their first number: "1-6" < "7-9" < "10-18", "[4,6)" < "[6,9)"."""
    match = re.search(r"-?\d+(?:\.\d+)?", label)
    return (float(match.group()) if match else math.inf, label)
