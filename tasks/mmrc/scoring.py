"""The ``mmrc`` aggregator: per-ability judge scores, overall, EP / IMP / RP, exact match and the
length / category / updates breakdowns, from the question records that ``replay_probe``
writes (``Sample.extra["questions"]``). See mmrc.py for the definitions."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.scoring.aggregation import (TaskResult, aggregator, coverage, label_sort_key, mean, mean_and_stderr,
                                         sample_failure_kind, unscored_counts)

from .abilities import ABILITY_METRICS, METRICS

if TYPE_CHECKING:
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring


def question_values(rec: dict[str, Any]) -> dict[str, float]:
    """The metric values one question contributes (only those that apply and were scored)."""
    out: dict[str, float] = {}
    em = (rec.get("metrics") or {}).get("exact_match")
    if em is not None:
        out["exact_match"] = float(em)
    verdict = rec.get("verdict")
    if verdict is None:
        return out
    ability = rec["ability"]
    out[ABILITY_METRICS[ability]] = float(verdict["score"])
    if ability == "IE":
        stated = verdict["model_items"]
        out["ep"] = verdict["matched_items"] / stated if stated > 0 else 0.0
    elif ability == "IM" and rec.get("images"):
        gold = set(rec["images"])
        out["imp"] = len(gold & set(verdict["named_images"])) / len(gold)
    elif ability == "AR" and rec.get("refuse") is not False:  # paper §3.1: AR expects a refusal unless told otherwise
        out["rp"] = 100.0 if verdict["refused"] else 0.0
    return out


def question_values_all(rec: dict[str, Any]) -> dict[str, float]:
    """The values one question contributes to the ``_all`` variants: every metric that applies to
    the question, 0 when it has no score (unanswered, judge failure, not judged)."""
    scored = question_values(rec)
    ability = rec["ability"]
    applies = [ABILITY_METRICS[ability]]
    if ability == "IE":
        applies.append("ep")
    elif ability == "IM" and rec.get("images"):
        applies.append("imp")
    elif _expects_refusal(rec):
        applies.append("rp")
    if rec.get("format") == "tf" or (rec.get("format") == "choice" and rec.get("options")):
        applies.append("exact_match")
    return {m: scored.get(m, 0.0) for m in applies}


def _expects_refusal(rec: dict[str, Any]) -> bool:
    return rec.get("ability") == "AR" and rec.get("refuse") is not False


def overall_of(ability_means: dict[str, float | None]) -> float | None:
    """Mean of the six ability means; None when any ability is unscored."""
    values = [ability_means.get(m) for m in ABILITY_METRICS.values()]
    if any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None) / len(values)


def collect(records: Iterable[dict[str, Any]]) -> dict[str, list[float]]:
    values: dict[str, list[float]] = {}
    for rec in records:
        for name, v in question_values(rec).items():
            values.setdefault(name, []).append(v)
    return values


def _means(values: dict[str, list[float]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {m: mean(values.get(m, [])) for m in METRICS if m != "overall"}
    out["overall"] = overall_of(out)
    return out


def _records(samples: Sequence["Sample"]) -> list[tuple["Sample", dict[str, Any]]]:
    return [(s, rec) for s in samples for rec in s.extra.get("questions", [])]


def _breakdowns(pairs: list[tuple["Sample", dict[str, Any]]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per-conversation breakdowns (``length`` buckets, ``category``) and IU by ``updates``."""
    groups: dict[str, dict[str, list[tuple["Sample", dict[str, Any]]]]] = {}
    for s, rec in pairs:
        for name, label in s.breakdown.items():
            groups.setdefault(name, {}).setdefault(label, []).append((s, rec))
        if rec["ability"] == "IU" and rec.get("updates") is not None:
            groups.setdefault("updates", {}).setdefault(str(rec["updates"]), []).append((s, rec))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, by_label in groups.items():
        table: dict[str, dict[str, Any]] = {}
        for label in sorted(by_label, key=label_sort_key):
            members = by_label[label]
            means = _means(collect(rec for _, rec in members))
            if name == "updates":
                row: dict[str, Any] = {"iu": means["iu"]}
            else:
                row = {m: means[m] for m in (*ABILITY_METRICS.values(), "overall")}
                row["n_conversations"] = len({id(s) for s, _ in members})
            row["n"] = len(members)
            table[label] = row
        out[name] = table
    return out


@aggregator("mmrc", emits=lambda config: METRICS)
def mmrc(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    pairs = _records(samples)
    records = [rec for _, rec in pairs]
    values = collect(records)
    result = TaskResult(n_samples=len(samples))
    stderrs: dict[str, float | None] = {}
    for m in METRICS:
        if m == "overall":
            continue
        result.metrics[m], stderrs[m] = mean_and_stderr(values.get(m, []), seed)
    result.metrics["overall"] = overall_of(result.metrics)  # type: ignore[arg-type]
    # Standard error of a mean of six means, from theirs (treated as independent).
    ability_se = [stderrs[m] for m in ABILITY_METRICS.values()]
    stderrs["overall"] = (math.sqrt(sum(se * se for se in ability_se if se is not None)) / len(ability_se)
                          if result.metrics["overall"] is not None else None)
    for m in METRICS:
        result.metrics[f"{m}_stderr"] = stderrs[m]
        result.higher_is_better[m] = True
    # _all: over every question in the data, those without a score counted as 0 (the headline,
    # as the paper defines it, is over the scored questions).
    values_all: dict[str, list[float]] = {}
    for rec in records:
        for name, v in question_values_all(rec).items():
            values_all.setdefault(name, []).append(v)
    means_all = _means(values_all)
    for m in METRICS:
        result.metrics[f"{m}_all"] = means_all[m]
    unscored = {k: v for k, v in unscored_counts().items() if k != "unparsed"}
    for sample, rec in pairs:
        if rec.get("response") is None:
            unscored[sample_failure_kind(sample) or "request_failure"] += 1
        elif rec.get("judge_failed"):
            unscored["judge_failure"] += 1
    unjudged = sum(1 for rec in records if rec.get("response") is not None and rec.get("verdict") is None and not rec.get("judge_failed"))
    result.coverage = coverage("questions", len(records), unscored, unexplained=unjudged)
    result.counts = {
        "n_questions": len(records),
        "scored_questions": sum(1 for rec in records if rec.get("verdict") is not None),
        "unanswered_questions": sum(1 for rec in records if rec.get("response") is None),
        "note_unparsed": sum(int(s.extra.get("note_unparsed", 0)) for s in samples),
        # RP is never silently null: how many AR questions expect a refusal, and how many of them
        # were judged (rp is null exactly when the second is 0; coverage says why the rest were not).
        "rp_questions": sum(1 for rec in records if _expects_refusal(rec)),
        "rp_scored": sum(1 for rec in records if _expects_refusal(rec) and rec.get("verdict") is not None),
    }
    result.breakdowns = _breakdowns(pairs)
    return result
