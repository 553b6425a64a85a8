"""The pairwise shape's plugin: the judge's verdict read from the model's side, and MT-Bench's
rule across the two orders as a group aggregator.

- ``pair_verdict`` (verdict parser): ``[[A]]``, ``[[B]]`` or ``[[C]]`` (a tie), the marks of
  MT-Bench's pairwise judge prompts, read as ``{"model": 1, "baseline": 0, "tie": 0}`` (and so
  on) from ``parser_args.model``, the position the task shows the model's answer in.
- ``pairwise_swap`` (group aggregator): each question judged in both orders; FastChat's
  ``fastchat/llm_judge/show_result.py`` (``display_result_pairwise``, commit 02d4581) counts a
  win or a loss only when the two orders agree, and a tie when either order says tie or they
  disagree; questions where either order has no verdict are left out, as its "error" rows are.
  ``win_rate``, ``loss_rate`` and ``win_rate_adjusted`` (a tie counts half a win) are its
  figures, here in percent (ours), beside ``tie_rate``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from mmtasks.plugin import GroupMember, GroupScore, ParserArgs, group_aggregator, verdict_parser

MARK = re.compile(r"\[\[([ABC])\]\]")


class PairArgs(ParserArgs):
    model: Literal["A", "B"]
    """The position the task shows the model's answer in (the baseline's is the other)."""


def _space(context: Any, args: PairArgs) -> dict[str, Any]:
    return {"kind": "choice", "choices": ["[[A]]", "[[B]]", "[[C]]"]}


@verdict_parser("pair_verdict", args=PairArgs, space=_space, marks=MARK)
def pair_verdict(text: str, context: Any, args: PairArgs) -> dict[str, int] | None:
    match = MARK.search(text)
    if match is None:
        return None
    winner = "tie" if match.group(1) == "C" else "model" if match.group(1) == args.model else "baseline"
    return {name: int(name == winner) for name in ("model", "baseline", "tie")}


def _winners(member: GroupMember) -> dict[str, str | None]:
    """Document -> who the judge preferred in this member's order (None: no verdict)."""
    out: dict[str, str | None] = {}
    for sample in member.samples:
        verdict = sample.extra.get("verdict") if not sample.failures else None
        out[sample.doc_id] = next((k for k, v in verdict.items() if v == 1), None) if verdict else None
    return out


@group_aggregator("pairwise_swap")
def pairwise_swap(group: str, members: Mapping[str, GroupMember], seed: int) -> GroupScore:
    first, second = (_winners(m) for m in members.values())
    win = loss = tie = disagreed = left_out = 0
    for doc_id, g1 in first.items():
        g2 = second.get(doc_id)
        if g1 is None or g2 is None:
            left_out += 1
        elif g1 == "tie" or g1 != g2:
            tie += 1
            disagreed += int(g1 != g2)
        elif g1 == "model":
            win += 1
        else:
            loss += 1
    n = win + loss + tie
    rate = (lambda k: 100.0 * k / n) if n else (lambda k: None)
    return GroupScore(metrics={"win_rate": rate(win), "loss_rate": rate(loss), "tie_rate": rate(tie),
                               "win_rate_adjusted": rate(win + 0.5 * tie)},
                      counts={"questions": n, "wins": win, "losses": loss, "ties": tie, "orders_disagree": disagreed,
                              "left_out": left_out})
