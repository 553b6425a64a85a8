"""What a scheduler counts: waves, and requests sent, served from the cache and failed, per target."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mmtasks.core.request import Reply, Request


@dataclass
class SchedulerStats:
    #: rounds of requests: the wave scheduler's waves; without a barrier, the rounds on the
    #: deepest chain (equal to the wave count when every dialogue is live at once)
    waves: int = 0
    sent: dict[str, int] = field(default_factory=dict)
    cached: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)

    def add(self, bucket: dict[str, int], target: str, n: int = 1) -> None:
        bucket[target] = bucket.get(target, 0) + n


@dataclass
class ReplyCounts:
    """Per task, how the model's replies ended and how long their reasoning was (``on_reply``
    watcher; the judge's and note taker's replies are not counted). Plain integer sums, so that
    the ranks of a data parallel run add up (:func:`mmtasks.distributed.merge_stats`)."""

    #: task -> counter -> value (``n``, ``finish:<reason>``, ``with_reasoning``, ``reasoning_chars``,
    #: ``reasoning_tokens``, ``tokens_known``; ``tokens:<target>:<kind>``: the tokens the backend
    #: reported for the replies of each target (model, judge, matcher, note taker), a cached reply's
    #: as reported when it was received (so a resumed run counts what an uninterrupted one does),
    #: and ``tokens:<target>:replies``, how many replies reported some)
    tasks: dict[str, dict[str, int]] = field(default_factory=dict)

    def __call__(self, request: "Request", reply: "Reply") -> None:
        counts = reply.tokens()
        if counts:
            row = self.tasks.setdefault(request.task, {})
            for kind, value in (*counts.items(), ("replies", 1)):
                key = f"tokens:{request.target}:{kind}"
                row[key] = row.get(key, 0) + value
        if request.target != "model":
            return
        if not reply.ok and reply.finish_reason is None and reply.reasoning is None:
            return  # a failed request: no reply came back (counted in problems)
        row = self.tasks.setdefault(request.task, {})
        row["n"] = row.get("n", 0) + 1
        key = f"finish:{reply.finish_reason or 'unknown'}"
        row[key] = row.get(key, 0) + 1
        if reply.reasoning:
            row["with_reasoning"] = row.get("with_reasoning", 0) + 1
            row["reasoning_chars"] = row.get("reasoning_chars", 0) + len(reply.reasoning)
            if reply.reasoning_tokens is not None:
                row["reasoning_tokens"] = row.get("reasoning_tokens", 0) + reply.reasoning_tokens
                row["tokens_known"] = row.get("tokens_known", 0) + 1

    def to_json(self) -> dict[str, dict[str, int]]:
        return {task: dict(row) for task, row in self.tasks.items()}


def reply_summary(row: dict[str, int]) -> dict[str, Any]:
    """results.json's ``replies[task]`` from a task's :class:`ReplyCounts` row: replies, finish
    reasons, the mean reasoning length in tokens where the backend counted every reasoning's
    tokens, else in characters, and the tokens each component's backend reported."""
    finish = {k.removeprefix("finish:"): v for k, v in sorted(row.items()) if k.startswith("finish:")}
    out: dict[str, Any] = {"n": row.get("n", 0), "finish_reasons": finish}
    tokens: dict[str, dict[str, int]] = {}
    for key, value in sorted(row.items()):
        if key.startswith("tokens:"):
            _, target, kind = key.split(":", 2)
            tokens.setdefault(target, {})[kind] = value
    if tokens:
        out["tokens"] = tokens
    with_reasoning = row.get("with_reasoning", 0)
    if with_reasoning:
        in_tokens = with_reasoning == row.get("tokens_known", 0)
        total = row.get("reasoning_tokens", 0) if in_tokens else row.get("reasoning_chars", 0)
        out["reasoning"] = {"n": with_reasoning, "unit": "tokens" if in_tokens else "characters",
                            "mean": total / with_reasoning, "total": total}
    return out
