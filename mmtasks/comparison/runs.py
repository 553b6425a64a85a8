"""Comparing two runs document by document: ``mmtasks compare RUN_A RUN_B`` and
``mmtasks.compare``.

For every task both runs scored, the documents are paired by id. The documents a run failed (a
failed request, context overflow, truncated reply, judge failure or unparsed answer: no score) are
listed by id for each side, and scored as the task's failure rule says: where results.json reports
``<metric>_all`` (every unit, the unscored counted as 0) for a metric where higher is better, a
failed document counts as 0 (wrong), so each side's figure is its results.json's ``_all`` over the
documents both runs hold; otherwise (a corpus metric, a lower-is-better one) it is left out of that
metric's pairs, and the report says so. Each metric the samples carry gets the paired difference
B - A over the paired documents (each document weighing the same), a 95% interval from a paired bootstrap over documents (over clusters where the samples name
one: a task's ``cluster:``), the minimum detectable effect at 80% power for that many documents and
the observed spread of the differences, and, for a 0/1 metric (accuracy), McNemar's exact test.
Documents only one run scored are counted, never silently dropped. A group's difference is the
mean of its tasks' headline differences (the group average is that mean), its interval from a
bootstrap stratified by task.

Runs of different task definitions (``config_hashes`` in results.json differ) or of different
documents under the same ids (their targets differ) are refused with one line: their difference
would not say which model is better.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from mmtasks.comparison.paired import (
    Interval,
    mcnemar_exact,
    minimum_detectable_effect,
    paired_bootstrap,
)
from mmtasks.documents.samples import iter_samples
from mmtasks.errors import ConfigError, DataError
from mmtasks.results.files import confined, run_folder
from mmtasks.results.schema import ResultsFile, read_results
from mmtasks.documents.samples import recorded_failure_kinds
from mmtasks.scoring.aggregation import FAILURE_KINDS

#: how a metric's comparison treats the documents a run failed: ``wrong`` (scored 0, as the
#: task's ``<metric>_all``), ``left_out`` (not paired: the task reports no ``_all`` for it, or
#: lower is better)
FailureRule = Literal["wrong", "left_out"]


class MetricComparison(BaseModel):
    """One metric of one task, B against A, on the results' scale (percent where the results are)."""

    model_config = ConfigDict(frozen=True)

    metric: str
    #: documents paired on this metric (those a run failed among them when ``failures`` is ``wrong``)
    n: int
    #: how the documents a run failed were scored (see :data:`FailureRule`)
    failures: FailureRule = "wrong"
    a: float
    b: float
    #: B - A, and its 95% paired bootstrap interval
    difference: float
    low: float
    high: float
    significant: bool
    #: the difference detectable at 80% power (two-sided 5%) for these documents and the observed
    #: spread of their differences
    minimum_detectable_effect: float
    #: for a 0/1 metric: documents only A got right, only B got right, and McNemar's exact p
    a_only: int | None = None
    b_only: int | None = None
    mcnemar_p: float | None = None


class TaskComparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    task: str
    primary: str | None
    #: documents both runs hold (paired by id), those both scored (neither failed), and those in
    #: one run only
    both: int
    scored_by_both: int
    only_a: int
    only_b: int
    #: every document each run failed (no score), by id, with why: ``request_failure``,
    #: ``context_overflow``, ``truncated``, ``judge_failure``, ``unparsed``
    failed_a: dict[str, str] = {}
    failed_b: dict[str, str] = {}
    #: clusters resampled (None: documents are independent)
    clusters: int | None = None
    metrics: list[MetricComparison]


class GroupComparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    group: str
    tasks: list[str]
    difference: float
    low: float
    high: float
    significant: bool


class Comparison(BaseModel):
    """``mmtasks compare``'s report (also its ``--json``)."""

    model_config = ConfigDict(frozen=True)

    run_a: str
    run_b: str
    tasks: list[TaskComparison]
    groups: list[GroupComparison]
    #: tasks only one run has
    only_in_a: list[str]
    only_in_b: list[str]
    #: what may make the difference about something else than the models: tasks whose data
    #: revisions differ between the runs (``run_card.data``), one line each
    warnings: list[str] = []


def _label(run: Path, results: ResultsFile) -> str:
    name = getattr(results.config, "run_name", None)
    return str(name) if name else run.name


def read_samples(run: Path, task: str, variant: str | None = None) -> dict[str, dict[str, Any]]:
    """doc_id -> its sample record of ``task`` in ``run``: ``metrics`` (each metric's mean over the
    document's samples that have a value: its ``--repeats``), ``target``, ``cluster``, ``samples``
    (each sample's finite metric values and why it has no score, None when it failed nothing) and
    ``failed`` (why the document has no score: a sample of it failed with no value at all; None
    when none did). Read from the file ``samples/<task>.jsonl`` inside the run's folder (a link
    leading out of it is refused, as a received run's files are). ``variant``: the metrics that
    scoring variant gave each sample (``extra.variants``; a sample it kept none for: the task's own)."""
    file = run / "samples" / f"{task}.jsonl"
    if not file.is_file():
        raise DataError(f"task {task!r} has no samples file: compare needs each document's scores", file=file)
    confined(file, run)
    out: dict[str, dict[str, Any]] = {}
    for line in iter_samples(file, need=("metrics",)):
        row = line.data
        doc = str(row["doc_id"])
        record = out.setdefault(doc, {"metrics": {}, "target": row.get("target"), "cluster": row.get("cluster"),
                                      "samples": [], "failed": None})
        metrics = row["metrics"]
        if variant is not None and isinstance(row.get("extra"), dict):
            own = (row["extra"].get("variants") or {}).get(variant)
            if isinstance(own, dict) and isinstance(own.get("metrics"), dict):
                metrics = own["metrics"]
                row = {**row, "unparsed": own.get("unparsed", 0)}  # read as nothing by the variant
        values = {name: number for name, value in metrics.items() if (number := _number(value)) is not None}
        reason = _unscored_reason(row)
        record["samples"].append((values, reason))
        if reason is not None and not values and record["failed"] is None:
            record["failed"] = reason
    for record in out.values():
        record["metrics"] = {name: value for name in {n for values, _ in record["samples"] for n in values}
                             if (value := _value(record, name, "left_out")) is not None}
    return out


def _unscored_reason(row: dict[str, Any]) -> str | None:
    """Why a sample record may lack scores, as results.json's coverage counts it: its failed
    requests' kind, else a judge failure, else an unparsed answer; None when it had none."""
    failures = row.get("failures")
    if isinstance(failures, list) and failures:
        kinds = {kind.value for kind in recorded_failure_kinds(row)}
        return next((k for k in FAILURE_KINDS if k in kinds), "request_failure")
    for field, reason in (("judge_failures", "judge_failure"), ("unparsed", "unparsed")):
        count = row.get(field)
        if isinstance(count, (int, float)) and not isinstance(count, bool) and count > 0:
            return reason
    return None


def _value(record: dict[str, Any], metric: str, failures: FailureRule) -> float | None:
    """A document's value of ``metric``: the mean over its samples (``--repeats``) that have one;
    with ``failures="wrong"`` a sample that failed without a value of it counts as 0, as the task's
    ``<metric>_all`` counts it. None when no sample counts."""
    total, count = 0.0, 0
    for values, reason in record["samples"]:
        if metric in values:
            total += values[metric]
            count += 1
        elif failures == "wrong" and reason is not None:
            count += 1
    return total / count if count else None


def _reported(results: ResultsFile, task: str, variant: str | None) -> dict[str, Any]:
    """The task's metrics in results.json, or those of its scoring ``variant`` where it has one."""
    if variant is not None and variant in results.variants.get(task, {}):
        return dict(results.variants[task][variant].metrics)
    return dict(results.results[task].values)


def _failure_rule(ra: ResultsFile, rb: ResultsFile, task: str, metric: str, variant: str | None = None) -> FailureRule:
    """``wrong`` when both runs report ``<metric>_all`` as a number (the task, or the scoring
    ``variant`` compared, counts its unscored units as 0) and higher is better for the metric, else
    ``left_out``."""
    for results in (ra, rb):
        if _number(_reported(results, task, variant).get(f"{metric}_all")) is None:
            return "left_out"
        if results.higher_is_better.get(task, {}).get(metric, True) is not True:  # lower is better, or no direction
            return "left_out"
    return "wrong"


def _failed(samples: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {doc: samples[doc]["failed"] for doc in sorted(samples, key=lambda d: (len(d), d))
            if samples[doc]["failed"] is not None}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _primary(results: ResultsFile, task: str) -> str | None:
    """The task's headline metric: the one its config marks primary, else its first."""
    declared = [m for m in results.configs.get(task, {}).get("metrics", []) if isinstance(m, dict) and m.get("name")]
    for m in declared:
        if m.get("primary"):
            return str(m["name"])
    if declared:
        return str(declared[0]["name"])
    for key in results.results[task].values:
        if not key.endswith(("_stderr", "_all", "_micro", "_macro")):
            return key
    return None


def _scale(results: ResultsFile, task: str, metric: str, samples: dict[str, dict[str, Any]],
           variant: str | None = None) -> float:
    """What one unit of the per-document values of ``metric`` is in the results' units: 100 when
    results.json reports the metric in percent of them (0/1 right-or-wrong per document, 0-100 in
    the table), else 1. The reported number is the task's ``<metric>_all`` when results.json has
    that key (the mean over every document, on the results' scale), else ``<metric>``; the values
    are those of ``samples`` (run A's documents; for ``_all``, a document the run failed counts
    as 0, as ``_all`` counts it). In order:

    1. no reported number (absent, null, not finite) or no per-document value: 1;
    2. the values' mean is 0 (no ratio to read; every value 0, say): 100 when they all lie in
       [0, 1] and the reported number is above 1 (a mean of them on their own scale cannot
       be), else 1;
    3. else 100 when the reported number is 100 times the values' mean, within 1, else 1.
    """
    values = _reported(results, task, variant)
    over_all = f"{metric}_all" in values
    reported = _number(values[f"{metric}_all"] if over_all else values.get(metric))
    # _all counts a failed document as 0: its values are read the same way
    per_document = [v for s in samples.values()
                    if (v := _number(_value(s, metric, "wrong") if over_all and "samples" in s
                                     else s["metrics"].get(metric))) is not None]
    if reported is None or not per_document:
        return 1.0
    mean = sum(per_document) / len(per_document)
    if mean == 0:
        return 100.0 if reported > 1 and all(0 <= v <= 1 for v in per_document) else 1.0
    return 100.0 if abs(reported / mean - 100.0) < 1.0 else 1.0


def _refuse_different(task: str, ra: ResultsFile, rb: ResultsFile, sa: dict[str, dict[str, Any]],
                      sb: dict[str, dict[str, Any]]) -> None:
    ha, hb = ra.config_hashes.get(task), rb.config_hashes.get(task)
    if ha is None or hb is None:
        same = {k: v for k, v in ra.configs.get(task, {}).items() if k != "plugins"} == \
               {k: v for k, v in rb.configs.get(task, {}).items() if k != "plugins"}
    else:
        same = ha == hb
    if not same:
        raise ConfigError(f"task {task!r} ran with different task configs in the two runs (config_hashes "
                          f"{ha or '-'} and {hb or '-'}): their scores are not comparable", field="compare",
                          hint="compare runs of the same task definition, or pass --tasks to leave this one out")
    for doc in sorted(set(sa) & set(sb)):
        if json.dumps(sa[doc]["target"], sort_keys=True) != json.dumps(sb[doc]["target"], sort_keys=True):
            raise ConfigError(f"task {task!r}: document {doc!r} has a different target in the two runs: they ran "
                              "different documents under the same ids", field="compare",
                              hint="compare runs of the same data (dataset revision, --data-dir)")


def compare_task(task: str, ra: ResultsFile, rb: ResultsFile, sa: dict[str, dict[str, Any]],
                 sb: dict[str, dict[str, Any]], *, seed: int = 0,
                 variant: str | None = None) -> tuple[TaskComparison, dict[str, list[float]]]:
    """One task's comparison, and the per-document differences of each metric (for its groups)."""
    _refuse_different(task, ra, rb, sa, sb)
    common = sorted(set(sa) & set(sb), key=lambda d: (len(d), d))
    names = sorted({m for doc in common for m in sa[doc]["metrics"]} & {m for doc in common for m in sb[doc]["metrics"]})
    failed_a, failed_b = _failed(sa), _failed(sb)
    primary = _primary(ra, task)
    if primary in names:
        names.remove(primary)
        names.insert(0, primary)
    rows: list[MetricComparison] = []
    diffs_of: dict[str, list[float]] = {}
    clustered = [doc for doc in common if sa[doc]["cluster"] is not None]
    n_clusters: int | None = None
    for metric in names:
        rule = _failure_rule(ra, rb, task, metric, variant)
        pairs = [(doc, x, y) for doc in common
                 if (x := _value(sa[doc], metric, rule)) is not None and (y := _value(sb[doc], metric, rule)) is not None]
        if not pairs:
            continue
        scale = _scale(ra, task, metric, sa, variant)
        diffs = [(y - x) * scale for _, x, y in pairs]
        clusters = [str(sa[doc]["cluster"]) for doc, _, _ in pairs] if len(clustered) == len(common) else None
        interval: Interval = paired_bootstrap(diffs, clusters, seed=seed)
        if clusters is not None:
            n_clusters = interval.units
        spread = _paired_stderr(diffs, clusters)
        row: dict[str, Any] = {
            "metric": metric, "n": len(pairs), "failures": rule, "a": sum(x for _, x, _ in pairs) / len(pairs) * scale,
            "b": sum(y for _, _, y in pairs) / len(pairs) * scale, "difference": interval.mean,
            "low": interval.low, "high": interval.high,
            # a right/wrong metric is decided by McNemar's exact test (below), others by the interval
            "significant": interval.significant,
            "minimum_detectable_effect": minimum_detectable_effect(spread),
        }
        seen = {x for _, x, _ in pairs} | {y for _, _, y in pairs}
        if seen <= {0.0, 1.0} or seen <= {0.0, 100.0}:  # a right/wrong metric: McNemar
            a_only = sum(1 for _, x, y in pairs if x > y)
            b_only = sum(1 for _, x, y in pairs if y > x)
            p = mcnemar_exact(a_only, b_only)
            row.update(a_only=a_only, b_only=b_only, mcnemar_p=p, significant=p < 0.05)
        rows.append(MetricComparison(**row))
        diffs_of[metric] = diffs
    scored = sum(1 for doc in common if doc not in failed_a and doc not in failed_b)
    return TaskComparison(task=task, primary=primary, both=len(common), scored_by_both=scored,
                          only_a=len(set(sa) - set(sb)), only_b=len(set(sb) - set(sa)), failed_a=failed_a,
                          failed_b=failed_b, clusters=n_clusters, metrics=rows), diffs_of


def _paired_stderr(diffs: Sequence[float], clusters: Sequence[str] | None) -> float:
    from mmtasks.comparison.paired import cluster_robust_stderr

    n = len(diffs)
    if clusters is not None:
        return cluster_robust_stderr(diffs, clusters)
    if n < 2:
        return 0.0
    mean = sum(diffs) / n
    return math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)


def _group_rows(ra: ResultsFile, rb: ResultsFile, per_task: dict[str, tuple[str | None, list[float]]],
                seed: int, variant: str | None = None) -> Iterator[GroupComparison]:
    from mmtasks.comparison.paired import stratified_bootstrap

    for group, ga in sorted(ra.groups.items()):
        gb = rb.groups.get(group)
        # a group whose average both runs report (every member run and scored), of several tasks
        if gb is None or ga.average is None or gb.average is None or len(ga.tasks) < 2:
            continue
        if variant is not None and (ga.variants.get(variant) is None or gb.variants.get(variant) is None):
            continue  # not a variant every member declares
        members = [t for t in ga.tasks if t in gb.tasks and t in per_task and per_task[t][1]]
        if len(members) != len(ga.tasks):
            continue
        strata = [per_task[t][1] for t in members]
        interval = stratified_bootstrap(strata, seed=seed)
        yield GroupComparison(group=group, tasks=members, difference=interval.mean, low=interval.low,
                              high=interval.high,
                              # one document of a task says nothing about that task's spread
                              significant=interval.significant and all(len(s) >= 2 for s in strata))


def compare(run_a: str | Path, run_b: str | Path, *, tasks: Sequence[str] | None = None, seed: int = 0,
            variant: str | None = None) -> Comparison:
    """Compare two runs (folders holding results.json and samples/) document by document; with
    ``variant``, on the scores of that scoring variant, for the tasks both runs scored with it."""
    da, db = run_folder(Path(run_a)), run_folder(Path(run_b))
    ra, rb = read_results(da / "results.json"), read_results(db / "results.json")
    names = [t for t in ra.results if t in rb.results and (tasks is None or t in tasks)]
    if variant is not None:
        names = [t for t in names if variant in ra.variants.get(t, {}) and variant in rb.variants.get(t, {})]
        if not names:
            known = sorted({v for run in (ra, rb) for by_task in run.variants.values() for v in by_task})
            raise ConfigError(f"no task of both runs has a scoring variant {variant!r}", field="--variant",
                              hint=f"variants in these runs: {', '.join(known)}" if known else "these runs have no scoring variants")
    if tasks is not None:
        unknown = [t for t in tasks if t not in ra.results or t not in rb.results]
        if unknown:
            raise ConfigError(f"not in both runs: {', '.join(unknown)}", field="--tasks")
    if not names:
        raise ConfigError("the two runs have no task in common", field="compare")
    out: list[TaskComparison] = []
    per_task: dict[str, tuple[str | None, list[float]]] = {}
    for task in names:
        row, diffs = compare_task(task, ra, rb, read_samples(da, task, variant), read_samples(db, task, variant),
                                  seed=seed, variant=variant)
        out.append(row)
        per_task[task] = (row.primary, diffs.get(row.primary or "", []))
    return Comparison(run_a=_label(da, ra), run_b=_label(db, rb), tasks=out, groups=list(_group_rows(ra, rb, per_task, seed, variant)),
                      only_in_a=sorted(set(ra.results) - set(rb.results)), only_in_b=sorted(set(rb.results) - set(ra.results)),
                      warnings=data_warnings(names, ra, rb))


def data_warnings(tasks: Sequence[str], ra: ResultsFile, rb: ResultsFile) -> list[str]:
    """One line per task whose two runs read different data revisions (a Hub commit or a local
    content hash, ``run_card.data``): their documents may differ beyond what the paired ids show.
    Runs without a run card, or a revision unknown on either side, give none."""
    out = []
    for task in tasks:
        a = ra.run_card.data.get(task) if ra.run_card is not None else None
        b = rb.run_card.data.get(task) if rb.run_card is not None else None
        if a is None or b is None or a.key is None or b.key is None:
            continue
        if (a.source, a.repo, a.key) != (b.source, b.repo, b.key):
            out.append(f"task {task!r} read different data revisions: A {a.repo or a.file or a.source}@{a.key[:12]}, "
                       f"B {b.repo or b.file or b.source}@{b.key[:12]}")
    return out
