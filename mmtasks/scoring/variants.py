"""Scoring variants: the same replies scored another named way beside the task's own rule.

A task's ``variants:`` (:class:`~mmtasks.config.task_config.ScoringVariant`) name other rules a
peer harness or the authors' own script uses: another parser, other metric functions, another
treatment of a reply read as nothing (the denominator), another aggregator. The task's rule stays
the headline. No request is sent for a variant:

- a variant that reads replies again (``parser``, ``metrics`` or ``unparsed``) is scored when the
  sample is (:func:`score_variants`, by a protocol that reads one answer per document:
  ``single_turn``); each sample keeps its scores under ``extra["variants"][name]`` (``metrics``,
  ``unparsed``, ``read_by``), so a samples file can be re-aggregated and compared on them;
- the variant's figures come from its aggregator (the task's unless it names one) run on the same
  samples with those scores in place (:class:`VariantView`), through the same
  :func:`~mmtasks.scoring.aggregation.aggregate` as the headline (:func:`variant_results`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, overload

from mmtasks import registry
from mmtasks.core.sample import Sample
from mmtasks.errors import ConfigError
from mmtasks.scoring.aggregation import AggregatorSpec, TaskScoring, aggregate
from mmtasks.scoring.metrics import bind_metric
from mmtasks.scoring.parsers import BoundParser, bind, is_guess, read_by

if TYPE_CHECKING:
    from mmtasks.config.task_config import ScoringVariant, TaskConfig
    from mmtasks.documents.dataset import Document

#: the protocol that reads one answer per document, which a variant that re-reads answers needs
ANSWER_PROTOCOL = "single_turn"


@dataclass(frozen=True)
class BoundVariant:
    """A scoring variant with its names resolved (at task load, before any model)."""

    config: "ScoringVariant"
    #: the variant's parser (None: the task's reading is kept)
    parser: BoundParser | None
    #: every per-sample metric function, the variant's in place of the task's where it names one
    metric_fns: dict[str, Callable[[Any, Any, dict], Any]]
    #: ``scored_wrong`` or ``unscored``
    unparsed: str
    aggregator: AggregatorSpec
    #: the text of ``matcher_prompt.prompt_file``, read byte-exact when the task links its matcher
    #: ("" when there is none)
    matcher_prefix: str = ""

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def rescores(self) -> bool:
        """Whether each sample is scored again (else only the aggregation differs)."""
        c = self.config
        return c.parser is not None or bool(c.metrics) or c.unparsed is not None or c.matcher


class _Linked(Protocol):
    """What :func:`bind_variants` reads of the task being linked (:class:`mmtasks.task.Task`,
    which imports this module: it is never imported here)."""

    @property
    def config(self) -> "TaskConfig": ...
    @property
    def file(self) -> Path: ...
    @property
    def plugins(self) -> tuple[Path, ...]: ...
    @property
    def metric_fns(self) -> Mapping[str, Callable[..., Any]]: ...
    @property
    def corpus_metrics(self) -> Mapping[str, Any]: ...
    @property
    def aggregator(self) -> AggregatorSpec: ...
    @property
    def protocol(self) -> Any: ...


def bind_variants(task: _Linked) -> tuple[BoundVariant, ...]:
    """The task's ``variants:``, each name resolved and each argument checked; a problem is a
    one-line :class:`ConfigError` naming the file and the key."""
    cfg, origin = task.config, str(task.file)
    out = []
    for i, v in enumerate(cfg.variants):
        where = f"variants[{i}]"
        parser = None
        if v.parser is not None:
            parser = bind(v.parser, v.parser_args, plugins=task.plugins, file=origin, field=where)
        elif v.parser_args:
            raise ConfigError("parser_args without a parser: name the parser they are for", file=origin,
                              field=f"{where}.parser_args")
        fns = dict(task.metric_fns)
        judged = judge_metrics(cfg)
        for name, m in v.metrics.items():
            if name not in task.metric_fns and name not in judged:
                known = ", ".join(task.metric_fns) or "none"
                given = f"; given by its judge: {', '.join(judged)}" if judged else ""
                raise ConfigError(f"{name!r} is not a per-sample metric of this task (its metrics computed by a "
                                  f"function: {known}{given})", file=origin, field=f"{where}.metrics.{name}")
            fn = registry.metrics.get(m.function, plugins=task.plugins, file=origin, field=f"{where}.metrics.{name}.function")
            if "args" in m.model_fields_set:
                fn = bind_metric(m.function, fn, m.args, file=origin, field=f"{where}.metrics.{name}.args")
            fns[name] = fn
        aggregator = task.aggregator
        if v.aggregator is not None:
            aggregator = registry.aggregators.get(v.aggregator, plugins=task.plugins, file=origin, field=f"{where}.aggregator")
            emitted = set(aggregator.emits(cfg)) | set(task.corpus_metrics)
            missing = [m.name for m in cfg.metrics if m.name not in emitted]
            if missing:
                raise ConfigError(f"aggregator {v.aggregator!r} does not report the task's metric(s) {', '.join(missing)}",
                                  file=origin, field=f"{where}.aggregator")
        if v.matcher and cfg.answer.matcher is None:  # (a matcher_prompt needs matcher: true: the config checks it)
            raise ConfigError("matcher: true asks the task's answer matcher, and the task has none (answer.matcher)",
                              file=origin, field=f"{where}.matcher")
        bound = BoundVariant(config=v, parser=parser, metric_fns=fns,
                             unparsed=v.unparsed or cfg.answer.unparsed, aggregator=aggregator)
        if bound.rescores and task.protocol.name != ANSWER_PROTOCOL:
            raise ConfigError(f"a variant that reads the replies again (parser, metrics, unparsed) needs the "
                              f"{ANSWER_PROTOCOL} protocol, not {task.protocol.name!r}", file=origin, field=where,
                              hint="give this protocol's variant an aggregator only")
        out.append(bound)
    return tuple(out)


def judge_metrics(cfg: "TaskConfig") -> list[str]:
    """The task's metrics its judge's verdict gives (no function of their own, named by
    ``judge.metrics`` or, when it names none, any): a variant may compute one by a function, as a
    peer reads by rule what the task's judge decides (its score then stands beside the verdict's)."""
    if cfg.judge is None:
        return []
    named = cfg.judge.metrics
    return [m.name for m in cfg.metrics if not m.function and (named is None or m.name in named)]


def score_answer(fns: Mapping[str, Callable[[Any, Any, Any], Any]], parsed: Any, target: Any, record: Mapping[str, Any],
                 unparsed: str) -> dict[str, float | None]:
    """Every metric of one reading: None on each when it read nothing and such a reply is ``unscored``."""
    if parsed is None and unparsed == "unscored":
        return {name: None for name in fns}
    return {name: fn(parsed, target, record) for name, fn in fns.items()}


def variant_reading(variant: BoundVariant, sample: Sample, doc: "Document", parsed: Any) -> Any:
    """What ``variant`` reads in ``sample``'s last reply (the task's ``parsed`` when it keeps the
    task's reading)."""
    if variant.parser is None:
        return parsed
    text = sample.responses[-1] or "" if sample.responses else ""
    return variant.parser(text, doc.record)


def score_variants(variants: Sequence[BoundVariant], sample: Sample, doc: "Document", parsed: Any, target: Any,
                   readings: Mapping[str, Any] | None = None, calls: Mapping[str, dict[str, Any]] | None = None) -> None:
    """Score ``sample``'s last reply (read as ``parsed`` by the task) the way of each of the task's
    ``variants`` that reads replies again, into ``sample.extra["variants"]``; a failed request is
    never scored. ``readings``: a variant's reading already made (by the answer matcher, for a
    variant with ``matcher: true``), by name; ``calls``: the record of a variant's own matcher call
    (``matcher_prompt``), kept as its ``matcher``."""
    variants = [v for v in variants if v.rescores]
    if not variants or sample.failures:
        return
    out: dict[str, Any] = {}
    for v in variants:
        reading = readings[v.name] if readings and v.name in readings else variant_reading(v, sample, doc, parsed)
        out[v.name] = {"metrics": score_answer(v.metric_fns, reading, target, doc.record, v.unparsed),
                       "read_by": read_by(reading), "unparsed": int(reading is None), "guessed": int(is_guess(reading))}
        if calls and v.name in calls:
            out[v.name]["matcher"] = calls[v.name]
    sample.extra["variants"] = out


def as_variant(sample: Sample, name: str) -> Sample:
    """``sample`` as variant ``name`` scored it (itself where the variant kept no scores of its own:
    a failed request, or a variant that only aggregates differently)."""
    own = (sample.extra.get("variants") or {}).get(name)
    if not isinstance(own, dict) or not isinstance(own.get("metrics"), dict):
        return sample
    return replace(sample, metrics=dict(own["metrics"]), read_by=own.get("read_by"),
                   unparsed=int(own.get("unparsed", 0)), guessed=int(own.get("guessed", 0)))


class VariantView(Sequence[Sample]):
    """``samples`` with variant ``name``'s scores in place (read lazily: a samples file stays on disk)."""

    def __init__(self, samples: Sequence[Sample], name: str) -> None:
        self.samples = samples
        self.name = name

    def __len__(self) -> int:
        return len(self.samples)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> list[Sample]: ...

    def __getitem__(self, index: int | slice) -> Sample | list[Sample]:
        if isinstance(index, slice):
            return [as_variant(s, self.name) for s in self.samples[index]]
        return as_variant(self.samples[index], self.name)

    def __iter__(self) -> Iterator[Sample]:
        for sample in self.samples:
            yield as_variant(sample, self.name)


def variant_results(task: TaskScoring, variants: Sequence[BoundVariant], samples: Sequence[Sample], seed: int,
                    excluded: dict[str, int] | None = None) -> dict[str, dict[str, Any]]:
    """results.json's ``variants[task]``: per variant of the task's ``variants``, its description
    and source, and the metrics, breakdowns and coverage its aggregator gives on the samples it scored."""
    out: dict[str, dict[str, Any]] = {}
    for v in variants:
        result = aggregate(task, v.aggregator, VariantView(samples, v.name), seed, excluded=excluded)
        out[v.name] = {"description": v.config.description, "source": v.config.source,
                       "metrics": result.metrics, "breakdowns": result.breakdowns, "coverage": result.coverage}
    return out


__all__ = ["BoundVariant", "VariantView", "as_variant", "bind_variants", "judge_metrics", "score_answer", "score_variants", "variant_reading",
           "variant_results"]
