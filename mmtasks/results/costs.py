"""Tokens and cost of a run: per task and per component (model, judge, matcher, note taker).

:class:`TokenLedger` watches every reply (the scheduler's ``on_reply``): it adds the tokens the
backend counted and, for a priced component (:mod:`mmtasks.models.prices`), the reply's cost.
Its counters are plain nested numbers, so that the ranks of a data parallel run add up
(:func:`mmtasks.distributed.merge_stats`). :func:`cost_summary` turns them into results.json's
``cost``: a component without a price, or with replies whose tokens were not counted, has a null
cost and a note saying why, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mmtasks.errors import MmtasksError
from mmtasks.models.prices import PriceRow, PriceTable, unpriced_note

if TYPE_CHECKING:
    from mmtasks.core.request import Reply, Request
    from mmtasks.models.base import ModelSpec

#: the token kinds a reply records (``Reply.tokens()``'s keys)
TOKEN_KINDS = ("prompt", "completion", "reasoning", "cached")

#: exit code of a run stopped by ``--max-cost`` (the CLI's others: 1 failures, 2 user errors, 130 Ctrl-C)
MAX_COST_EXIT = 3


class MaxCostReached(MmtasksError):
    """``--max-cost`` was reached: the run stopped before sending more (its replies are cached)."""

    exit_code = MAX_COST_EXIT


@dataclass(frozen=True)
class Priced:
    """A component's model and its price row (None: no price known, ``note`` says why)."""

    spec: str
    row: PriceRow | None
    note: str | None = None
    #: its requests go through the provider's batch API (the row's batch factor applies)
    batch: bool = False


def priced(spec: "ModelSpec", table: PriceTable, batch: bool = False) -> Priced:
    row = table.find(spec.backend, spec.name)
    return Priced(spec=spec.display, row=row, note=None if row is not None else unpriced_note(spec.backend, spec.name),
                  batch=batch)


@dataclass
class TokenLedger:
    """Tokens and cost of every reply, per task and component, and what this run spent."""

    table: PriceTable
    #: component -> its price
    prices: dict[str, Priced]
    #: task -> component -> counter -> number: ``replies``, ``from_cache``, ``without_counts`` (replies
    #: whose backend reported no tokens), the token kinds, ``usd`` (every priced reply), ``usd_sent``
    #: (the replies this run sent, not the cache's)
    tasks: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: USD this run sent requests for (replies from the cache cost nothing again)
    spent: float = 0.0

    def __call__(self, request: "Request", reply: "Reply") -> None:
        counts = reply.tokens()
        if not reply.ok and counts is None:
            return  # a failed request: no reply came back (counted in problems)
        row = self.tasks.setdefault(request.task, {}).setdefault(request.target, {})
        row["replies"] = row.get("replies", 0) + 1
        if reply.cached:
            row["from_cache"] = row.get("from_cache", 0) + 1
        if counts is None or "prompt" not in counts or "completion" not in counts:
            row["without_counts"] = row.get("without_counts", 0) + 1
        for kind, n in (counts or {}).items():
            row[kind] = row.get(kind, 0) + n
        price = self.prices.get(request.target)
        if price is None or price.row is None or counts is None or "prompt" not in counts or "completion" not in counts:
            return
        usd = self.table.cost(price.row, prompt=counts["prompt"], completion=counts["completion"],
                              cached=counts.get("cached", 0), batch=price.batch)
        row["usd"] = row.get("usd", 0.0) + usd
        if not reply.cached:
            row["usd_sent"] = row.get("usd_sent", 0.0) + usd
            self.spent += usd

    def to_json(self) -> dict[str, dict[str, dict[str, float]]]:
        return {task: {target: dict(row) for target, row in targets.items()} for task, targets in self.tasks.items()}


def token_totals(ledger: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, dict[str, dict[str, int]]]:
    """results.json's ``tokens``: task -> component -> replies, from_cache, without_counts and the
    token kinds (the ledger's counters less its dollars)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for task, targets in ledger.items():
        out[task] = {target: {k: int(v) for k, v in row.items() if not k.startswith("usd")}
                     for target, row in targets.items()}
    return out


def _round(usd: float) -> float:
    return round(usd, 6)


def cost_summary(ledger: Mapping[str, Mapping[str, Mapping[str, float]]], prices: Mapping[str, Priced],
                 table: PriceTable) -> dict[str, Any]:
    """results.json's ``cost``: the total and what this run sent, per task and per component, in the
    table's currency; null where a component has no price or some replies no token counts."""
    notes: list[str] = []
    known: dict[str, bool] = {}
    for target, price in prices.items():
        used = [row for targets in ledger.values() for t, row in targets.items() if t == target]
        missing = sum(int(row.get("without_counts", 0)) for row in used)
        if not used:
            continue
        if price.row is None:
            notes.append(f"{target}: {price.note}")
            known[target] = False
        elif missing:
            notes.append(f"{target}: {missing} replies without token counts from the backend (cost null)")
            known[target] = False
        else:
            known[target] = True

    def total(rows: Mapping[str, Mapping[str, float]], key: str) -> float | None:
        if not rows or any(not known.get(t, False) for t in rows):
            return None
        return _round(sum(row.get(key, 0.0) for row in rows.values()))

    tasks: dict[str, Any] = {}
    for task, targets in ledger.items():
        tasks[task] = {"total": total(targets, "usd"), "sent": total(targets, "usd_sent"),
                       "components": {t: (_round(row.get("usd", 0.0)) if known.get(t) else None)
                                      for t, row in targets.items()}}
    components: dict[str, Any] = {}
    for target, price in prices.items():
        rows = {task: targets[target] for task, targets in ledger.items() if target in targets}
        if not rows:
            continue
        components[target] = {
            "model": price.spec, "batch": price.batch,
            "price": price.row.record() if price.row is not None else None,
            "total": _round(sum(r.get("usd", 0.0) for r in rows.values())) if known.get(target) else None,
            "sent": _round(sum(r.get("usd_sent", 0.0) for r in rows.values())) if known.get(target) else None,
        }
    every = {target: {"usd": c["total"] or 0.0, "usd_sent": c["sent"] or 0.0} for target, c in components.items()}
    whole = total(every, "usd") if all(known.get(t, False) for t in components) else None
    sent = total(every, "usd_sent") if whole is not None else None
    return {"currency": table.currency, "total": whole, "sent": sent, "tasks": tasks, "components": components,
            "notes": notes}


def this_runs_share(tokens: dict[str, dict[str, dict[str, int]]], cost: dict[str, Any]) -> dict[str, Any]:
    """Take out of results.json's ``tokens`` and ``cost`` what depends on this run rather than on its
    replies (which came from the cache, what this run paid for) and return it for ``run_stats``
    (``tokens_from_cache``, ``cost_sent``): a resumed run's results then equal an uninterrupted
    run's, as everything outside ``run_stats`` must."""
    from_cache = {task: {target: row.pop("from_cache") for target, row in targets.items() if "from_cache" in row}
                  for task, targets in tokens.items()}
    sent = {"total": cost.pop("sent", None),
            "tasks": {task: row.pop("sent", None) for task, row in cost.get("tasks", {}).items()},
            "components": {target: row.pop("sent", None) for target, row in cost.get("components", {}).items()}}
    return {"tokens_from_cache": {task: rows for task, rows in from_cache.items() if rows}, "cost_sent": sent}

