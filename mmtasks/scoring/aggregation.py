"""Turning a task's samples into its results: metric means with bootstrap
standard errors, breakdowns, and the problems counted once for every task.

Aggregators are registered by name (``aggregator:`` in the task YAML) with
``@aggregator(name, emits=...)``; ``emits(config)`` says which metrics the
aggregator can report for a task, and the YAML ``metrics:`` are checked against
it when the task loads. The default, ``per_sample_mean``, averages each
per-sample metric: those of the metric functions and, for a judged task, the
verdict fields named in ``judge.metrics``.

Whatever the aggregator, :func:`aggregate` keeps only the declared metrics (and
their ``_stderr``/``_all``/``_micro``/``_macro`` variants) and counts the
problems from the samples with :func:`count_problems`.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from mmtasks.core.reasoning import TRUNCATED
from mmtasks.core.request import FailureKind
from mmtasks.registry import aggregators as _aggregators
from mmtasks.scoring.bootstrap import bootstrap_ratio_stderr, bootstrap_stderr

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.hf_evaluate import EvaluateMetric
    from mmtasks.scoring.metrics import CorpusFunction

#: a metric computed once over the task's (answer, reference) pairs: an ``evaluate:`` metric or a
#: corpus metric function (``corpus_bleu``, ``cider_d``)
CorpusMetric: TypeAlias = "EvaluateMetric | CorpusFunction"


@dataclass(frozen=True)
class TaskScoring:
    """What an aggregator gets of its task (never the :class:`~mmtasks.task.Task`): the task's
    name, its validated config (``metrics``, ``judge``, ``cluster``, ``breakdowns`` ...) and its
    corpus metrics by name (computed by :func:`aggregate` itself, whatever the aggregator)."""

    name: str
    config: "TaskConfig"
    corpus_metrics: "Mapping[str, CorpusMetric]" = field(default_factory=dict)


@dataclass
class TaskResult:
    """What results.json holds for one task."""

    #: metric name -> value: the task's declared metrics and their variants (``<metric>_stderr``,
    #: ``_all``, ``_micro``, ``_macro``) only; never a counter
    metrics: dict[str, float | int | None] = field(default_factory=dict)
    breakdowns: dict[str, dict[str, dict[str, float | int | None]]] = field(default_factory=dict)
    #: results.json's coverage[task] when the aggregator reports it: unit, scored, total,
    #: unscored by kind (validated by mmtasks.results.schema.Coverage when results.json is built)
    coverage: dict[str, Any] | None = None
    higher_is_better: dict[str, bool | None] = field(default_factory=dict)
    n_samples: int = 0
    #: counted problems (see :func:`count_problems`): request failures, unparsed answers, judge
    #: failures. Any of them makes the run exit 1 (unless --allow-failures).
    problems: dict[str, int] = field(default_factory=dict)
    #: other counts an aggregator reports beside ``n_samples`` (judged turns, questions ...);
    #: results.json shows them under ``n-samples``
    counts: dict[str, int] = field(default_factory=dict)


#: ``(task, samples, seed) -> TaskResult``: ``task`` a :class:`TaskScoring`; samples may be a file
#: read back one at a time
AggregatorFn = Callable[[TaskScoring, Sequence["Sample"], int], TaskResult]

#: the suffixes of a metric's variants that an aggregator may report beside it
VARIANTS = ("stderr", "all", "micro", "macro")
#: the problems every task reports, counted from its samples (``context_overflow`` and
#: ``truncated`` are added when there are any: those failures are not in ``request_failures``)
PROBLEMS = ("request_failures", "unparsed", "judge_failures")
#: how a backend starts the error of a request whose prompt does not fit the model's context
CONTEXT_OVERFLOW = "context_overflow"
#: failed requests of their own kind, by the word their error starts with: the prompt did not fit
#: (``context_overflow:``), or the reply left no answer after its reasoning (``truncated:``,
#: :mod:`mmtasks.core.reasoning`)
FAILURE_KINDS = (CONTEXT_OVERFLOW, TRUNCATED)


def failure_kind(error: str | None) -> str:
    """The kind an error's text names (:meth:`FailureKind.of_error`): for a failure recorded
    without its kind (a run folder of an older version); a new one carries it (``Reply.kind``,
    ``Sample.failure_kinds``, a turn record's ``failure_kind``)."""
    return FailureKind.of_error(error).value


def turn_failure_kind(record: Mapping[str, Any]) -> str:
    """The kind of a failed turn of ``multi_turn``'s records: as recorded, else read from its error."""
    kind = record.get("failure_kind")
    if isinstance(kind, str) and kind in {k.value for k in FailureKind}:
        return kind
    return failure_kind(record.get("error"))


def sample_failure_kind(sample: "Sample") -> str | None:
    """Why a sample's requests failed (None: none failed): ``context_overflow`` or ``truncated``
    when one of its failures is (in that order), else ``request_failure``."""
    if not sample.failures:
        return None
    kinds = {k.value for k in sample.kinds()}
    return next((k for k in FAILURE_KINDS if k in kinds), "request_failure")


def unscored_counts() -> dict[str, int]:
    """Zero counts of every reason a unit may have no score (``coverage[task].unscored``)."""
    return {"request_failure": 0, **dict.fromkeys(FAILURE_KINDS, 0), "judge_failure": 0, "unparsed": 0}


@dataclass(frozen=True)
class AggregatorSpec:
    """A registered aggregator: its function and the metrics it can emit for a task config."""

    name: str
    fn: AggregatorFn
    #: the metric names this aggregator emits for a task (the YAML ``metrics:`` must be among them)
    emits: Callable[["TaskConfig"], Collection[str]]


def aggregator(name: str, *, emits: Callable[["TaskConfig"], Collection[str]]) -> Callable[[AggregatorFn], AggregatorFn]:
    """Register ``fn(task, samples, seed) -> TaskResult`` as the aggregator ``name``."""

    def deco(fn: AggregatorFn) -> AggregatorFn:
        _aggregators.register(name, AggregatorSpec(name=name, fn=fn, emits=emits))
        return fn

    return deco


def count_problems(samples: Iterable["Sample"]) -> dict[str, int]:
    """The problems of a task, counted from its samples the same way for every protocol and
    aggregator: failed requests (``Sample.failures``, one entry per failed model or note-taker
    request), answers left unparsed after re-asking (``Sample.unparsed``: 0/1 for one answer, a
    count for several), and judge calls that gave no verdict (``Sample.judge_failures``); and, when there
    are any, ``guessed``: answers replaced by a random guess (``Sample.guessed``: scored, but
    not the model's)."""
    out = dict.fromkeys(PROBLEMS, 0)
    own = dict.fromkeys(FAILURE_KINDS, 0)
    guessed = 0
    for s in samples:
        for kind in (k.value for k in s.kinds()):
            if kind in own:
                own[kind] += 1
            else:
                out["request_failures"] += 1
        out["unparsed"] += int(s.unparsed)
        out["judge_failures"] += int(s.judge_failures)
        guessed += int(s.guessed)
    out.update({kind: n for kind, n in own.items() if n})
    if guessed:
        out["guessed"] = guessed
    return out


def coverage(unit: str, total: int, unscored: dict[str, int], unexplained: int = 0,
             guessed: int = 0, unparsed: int = 0) -> dict[str, Any] | None:
    """``coverage[task]`` of results.json: how many ``unit`` (documents, turns, questions) have a
    score, and why the others do not (``request_failure``, ``judge_failure`` ...); when there are
    any, how many of the scored ones are random guesses (``guessed``) and how many are replies no
    rule read, scored as wrong (``unparsed``), apart from the answers read. None when some units
    are unscored for no counted reason (a ``--predict-only`` run leaves the judge's unasked)."""
    if unexplained:
        return None
    kinds = {k: v for k, v in unscored.items() if v}
    out: dict[str, Any] = {"unit": unit, "scored": total - sum(kinds.values()), "total": total, "unscored": kinds}  # percent: filled by the schema
    if guessed:
        out["guessed"] = guessed  # scored, but random guesses: coverage shows how many
    if unparsed:
        out["unparsed"] = unparsed  # scored as wrong, but no answer was read: counted apart
    return out


def add_corpus_pair(sample: "Sample", parsed: Any, reference: Any) -> None:
    """Keep one scored answer and its reference for the task's corpus metrics
    (``metrics[].aggregation: corpus``); an unparsed answer is kept as ``""``."""
    corpus = sample.extra.setdefault("corpus", {"predictions": [], "references": []})
    corpus["predictions"].append("" if parsed is None else parsed)
    corpus["references"].append(reference)


def corpus_pairs(sample: "Sample") -> tuple[list[Any], list[Any]]:
    """The (answers, references) a sample kept for corpus metrics (see :func:`add_corpus_pair`)."""
    corpus = sample.extra.get("corpus") or {}
    return list(corpus.get("predictions", [])), list(corpus.get("references", []))


def _corpus_metrics(task: TaskScoring, samples: Sequence["Sample"], result: TaskResult) -> None:
    """Compute the task's corpus metrics once over every kept pair (and per breakdown group).

    No bootstrap stderr (None: each resample would recompute the metric); ``_all`` equals the
    value when every unit was scored and is None otherwise (a corpus score has no "count the
    missing ones as 0")."""
    predictions: list[Any] = []
    references: list[Any] = []
    groups: dict[tuple[str, str], tuple[list[Any], list[Any]]] = {}
    for s in samples:
        p, r = corpus_pairs(s)
        predictions += p
        references += r
        for name, label in s.breakdown.items():
            gp, gr = groups.setdefault((name, label), ([], []))
            gp += p
            gr += r
    cov = result.coverage
    complete = cov is not None and cov.get("scored") == cov.get("total")
    for m in task.config.metrics:
        metric = task.corpus_metrics.get(m.name)
        if metric is None:
            continue
        value = metric.compute(predictions, references)
        result.metrics[m.name] = value
        result.metrics[f"{m.name}_stderr"] = None
        result.metrics[f"{m.name}_all"] = value if complete else None
        for variant in ("micro", "macro"):
            result.metrics.pop(f"{m.name}_{variant}", None)
        result.higher_is_better[m.name] = m.higher_is_better
        for (name, label), (gp, gr) in groups.items():
            row = result.breakdowns.get(name, {}).get(label)
            if row is not None:
                row[m.name] = metric.compute(gp, gr)


def count_treated(samples: Iterable["Sample"], excluded: dict[str, int] | None = None) -> dict[str, dict[str, int]]:
    """The records the task's record policy treated, by treatment and reason: ``excluded`` (the
    loader's count: those records have no sample), ``kept_as_text`` and ``scored_wrong`` (from
    each sample's ``irregular``). Only the treatments with a count are given."""
    out: dict[str, dict[str, int]] = {}
    if excluded:
        out["excluded"] = {reason: n for reason, n in excluded.items() if n}
    for s in samples:
        for treatment, reason in (s.irregular or {}).items():
            by_reason = out.setdefault(treatment, {})
            by_reason[reason] = by_reason.get(reason, 0) + 1
    return {k: v for k, v in out.items() if v}


def aggregate(task: TaskScoring, spec: AggregatorSpec, samples: Sequence["Sample"], seed: int,
              excluded: dict[str, int] | None = None) -> TaskResult:
    """Run ``spec`` on ``samples``; compute the corpus metrics (whatever the aggregator); keep the
    task's declared metrics (and their variants) only, and count the problems generically
    (:func:`count_problems`), whatever the aggregator reported; add the records the task's record
    policy treated (``excluded``: reason -> records the loader left out; the others from the
    samples) to the problems and, by reason, to the coverage."""
    result = spec.fn(task, samples, seed)
    if task.corpus_metrics:
        _corpus_metrics(task, samples, result)
    declared = [m.name for m in task.config.metrics]
    wanted = {*declared, *(f"{m}_{v}" for m in declared for v in VARIANTS)}
    result.metrics = {k: v for k, v in result.metrics.items() if k in wanted}
    result.higher_is_better = {k: v for k, v in result.higher_is_better.items() if k in declared}
    result.problems = count_problems(samples)
    if task.config.cluster and "clusters" not in result.counts:
        # a protocol's own aggregator (turns of dialogues) already resamples its clusters; the
        # count is recorded the same for every task that declares one
        result.counts["clusters"] = len({s.cluster or s.doc_id for s in samples})
    treated = count_treated(samples, excluded)
    for treatment, by_reason in treated.items():
        result.problems[treatment] = sum(by_reason.values())
        if result.coverage is not None:
            result.coverage[treatment] = by_reason
    return result


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def values_by_label(samples: Iterable["Sample"], metric: str, breakdown: str, *,
                    unscored: float | None = None) -> dict[str, list[float]]:
    """``metric``'s values regrouped by each sample's label under ``breakdown`` (``""`` for a
    sample without one), the groups in the order their first sample comes. A sample without a
    value of ``metric`` is left out, or counted as ``unscored`` when that is given (0.0: the
    ``_all`` variants). What a benchmark's headline regroups: the mean of its task, subset or
    category means (:func:`mean_of_means`) instead of the mean over questions."""
    groups: dict[str, list[float]] = {}
    for s in samples:
        value = s.metrics.get(metric)
        if value is not None:
            groups.setdefault(s.breakdown.get(breakdown, ""), []).append(float(value))
        elif unscored is not None:
            groups.setdefault(s.breakdown.get(breakdown, ""), []).append(unscored)
    return groups


def mean_of_means(groups: Mapping[str, Sequence[float]]) -> float | None:
    """The mean of the groups' means, in the groups' order; an empty group is left out, and
    None when no group has a value."""
    return mean([sum(v) / len(v) for v in groups.values() if v])


def mean_and_stderr(values: Sequence[float], seed: int) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    return sum(values) / len(values), bootstrap_stderr(list(values), seed=seed)


class _Values:
    """A group's per-metric values in sample order (8 bytes a value) and its member count."""

    def __init__(self, metric_names: Sequence[str]) -> None:
        self.n = 0
        self.values = {m: array("d") for m in metric_names}

    def add(self, sample: "Sample", get: Callable[["Sample", str], float | None]) -> None:
        self.n += 1
        for m, values in self.values.items():
            v = get(sample, m)
            if v is not None:
                values.append(v)


def _metric(sample: "Sample", name: str) -> float | None:
    return sample.metrics.get(name)


def _add_to_groups(groups: dict[str, dict[str, _Values]], sample: "Sample", metric_names: Sequence[str], get: Callable[["Sample", str], float | None]) -> None:
    for name, label in sample.breakdown.items():
        by_label = groups.setdefault(name, {})
        group = by_label.get(label)
        if group is None:
            group = by_label[label] = _Values(metric_names)
        group.add(sample, get)


def _table(groups: dict[str, dict[str, _Values]], metric_names: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, by_label in groups.items():
        table: dict[str, dict[str, Any]] = {}
        for label in sorted(by_label, key=label_sort_key):
            group = by_label[label]
            row: dict[str, Any] = {m: mean(group.values[m]) for m in metric_names}
            row["n"] = group.n
            table[label] = row
        out[name] = table
    return out


def breakdown_table(samples: Iterable["Sample"], metric_names: Sequence[str], value: Callable[["Sample", str], float | None] | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """breakdown name -> group label -> {metric: mean, n: count}, in one pass over ``samples``."""
    groups: dict[str, dict[str, _Values]] = {}
    for s in samples:
        _add_to_groups(groups, s, metric_names, value or _metric)
    return _table(groups, metric_names)


def label_sort_key(label: str) -> tuple[int, float, str]:
    """Numeric labels and buckets ("1-6", "[4,6)") in numeric order, then the rest alphabetically."""
    head = label.strip("[(").split("-")[0].split(",")[0]
    try:
        return (0, float(head), label)
    except ValueError:
        return (1, 0.0, label)


def function_and_judge_metrics(config: "TaskConfig") -> list[str]:
    """The metrics ``per_sample_mean`` and ``per_turn_mean`` report: those computed by a metric
    function, and the judge's verdict fields named in ``judge.metrics``."""
    names = [m.name for m in config.metrics if m.function]
    if config.judge is not None and config.judge.metrics:
        names += [n for n in config.judge.metrics if n not in names]
    return names


@aggregator("per_sample_mean", emits=function_and_judge_metrics)
def per_sample_mean(task: TaskScoring, samples: Sequence["Sample"], seed: int) -> TaskResult:
    """Means of each metric with bootstrap stderr, ``_all`` (over every document, those without
    a score counted as 0) and breakdowns, in one pass over ``samples`` (which may be read back from
    disk as they come). A declared metric that no sample has (one the task's own aggregator
    computes from the others) is null with its variants, never 0; its ``_all`` is 0.0 only when
    no document was answered (every one a counted failure)."""
    names = [m.name for m in task.config.metrics]
    overall = _Values(names)
    groups: dict[str, dict[str, _Values]] = {}
    unscored = unscored_counts()
    unexplained = guessed = unparsed = 0
    #: metric -> cluster (the task's ``cluster:``, else the document: its ``--repeats`` are one) ->
    #: (sum, count) of its scored samples
    clustered: dict[str, dict[str, list[float]]] = {m: {} for m in names}
    for s in samples:
        overall.add(s, _metric)
        for m in names:
            v = _metric(s, m)
            if v is not None:
                cell = clustered[m].setdefault(s.cluster or s.doc_id, [0.0, 0.0])
                cell[0] += v
                cell[1] += 1
        guessed += int(s.guessed)
        _add_to_groups(groups, s, names, _metric)
        kind = sample_failure_kind(s)
        if kind is not None:
            unscored[kind] += 1
        elif names and all(_metric(s, m) is None for m in names) and not corpus_pairs(s)[0]:  # a document without a score
            if s.judge_failures:
                unscored["judge_failure"] += 1
            elif s.unparsed:
                unscored["unparsed"] += 1
            else:
                unexplained += 1
        elif s.unparsed:  # scored (as wrong), though no answer was read in the reply
            unparsed += 1
    result = TaskResult(n_samples=overall.n)
    result.coverage = coverage("documents", overall.n, unscored, unexplained, guessed, unparsed) if names else None
    if task.config.cluster:
        result.counts["clusters"] = len({c for cells in clustered.values() for c in cells})
    for metric in task.config.metrics:
        values = overall.values[metric.name]
        avg, err = mean_and_stderr(values, seed)
        cells = list(clustered[metric.name].values())
        if values and (task.config.cluster or len(cells) < len(values)):
            # whole clusters resampled: documents of one cluster (questions about one video) and
            # the repeats of one document are not independent draws
            err = bootstrap_ratio_stderr([c[0] for c in cells], [c[1] for c in cells], seed=seed)
        result.metrics[metric.name] = avg
        result.metrics[f"{metric.name}_stderr"] = err
        result.higher_is_better[metric.name] = metric.higher_is_better
        # every document in the data, those without a score (failed requests ...) counted as 0,
        # beside the headline over the scored ones; a metric no sample produced (one a task's own
        # aggregator computes) has none: null, never 0 - unless no document was answered at all
        answered = overall.n - sum(unscored.values())
        result.metrics[f"{metric.name}_all"] = (sum(values) / overall.n if values or (overall.n and not answered)
                                                else None)
    result.breakdowns = _table(groups, names)
    return result
