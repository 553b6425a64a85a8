"""MM-MT-Bench (a plugin file of the mm_mt_bench task: ``plugins: [mm_mt_bench.py]``): the
record adapter, the judge's ``[[rating]]`` parser and the official aggregate.

Reference: mistralai/mistral-evals ``eval/tasks/mm_mt_bench.py`` (commit d61811f).

- ``mm_mt_bench`` (adapter): a row's ``conversation`` (a JSON string of
  ``{"role", "content"}`` messages; content is a string or a list of
  ``{"type": "image"}`` / ``{"type": "text", "text"}`` chunks) becomes the
  ``conversations`` list the ``multi_turn`` protocol reads, an image chunk
  becoming the task's image marker; the decoded messages are kept as
  ``messages`` for the judge prompt, which the YAML builds from them exactly as
  ``MultimodalLLMJudge._get_judge_prompt`` does.
- ``mm_mt_bench_rating`` (verdict parser): ``BRACKET_SCORE_RE``,
  ``\\[\\[(\\d+\\.?\\d*)\\]\\]``, its first match read with ``ast.literal_eval``
  (``get_score``); no match is not a verdict. Ours: the parser declares ``[[n]]`` as its
  verdict mark, so a mark that quotes the model's answer is cut from the judge's reply before
  the first is taken (``sole_verdict``; the official code would take the answer's own rating,
  see the folder's README.md).
- ``mm_mt_bench`` (aggregator): ``per_turn_mean`` (``score``: the mean over
  every judged turn, the official ``micro_average_score``) plus
  ``macro_average_score``, which ``aggregate_metrics`` computes as the mean of
  the per-category means and the per-turn-position means taken together.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.errors import DataError
from mmtasks.registry import adapters
from mmtasks.scoring.aggregation import TaskResult, aggregator
from mmtasks.scoring.turn_aggregation import per_turn_mean
from mmtasks.scoring.verdicts import verdict_parser

if TYPE_CHECKING:
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring

#: the marker the adapter writes where an image chunk was (protocol_args.image_token in the YAML)
IMAGE_MARKER = "<|mm_mt_bench_image|>"
#: mistral-evals' BRACKET_SCORE_RE
BRACKET_SCORE_RE = re.compile(r"\[\[(\d+\.?\d*)\]\]")


def _chunk_text(chunk: Any, where: str) -> str:
    if isinstance(chunk, str):
        return chunk
    if isinstance(chunk, dict) and chunk.get("type") == "image":
        return IMAGE_MARKER
    if isinstance(chunk, dict) and chunk.get("type") == "text" and isinstance(chunk.get("text"), str):
        return chunk["text"]
    raise DataError(f"expected a text or image chunk, got {str(chunk)[:80]!r}", field=where)


def _content_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_chunk_text(c, f"{where}[{i}]") for i, c in enumerate(content))
    raise DataError(f"expected a string or a list of chunks, got {type(content).__name__}", field=where)


@adapters.register("mm_mt_bench")
def mm_mt_bench_record(record: dict[str, Any]) -> dict[str, Any]:
    """The Hub row (or its local JSONL copy) -> ``conversations`` + ``messages`` (see the module docstring)."""
    raw = record.get("conversation")
    if isinstance(raw, str):
        try:
            messages = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DataError(f"conversation is not JSON ({exc.msg})", field="conversation") from None
    else:
        messages = raw
    if not isinstance(messages, list) or not messages or len(messages) % 2:
        raise DataError("expected a JSON list of alternating user/assistant messages, ending with an answer",
                        field="conversation")
    conversations = []
    for i, message in enumerate(messages):
        role = "user" if i % 2 == 0 else "assistant"
        if not isinstance(message, dict) or message.get("role") != role:
            raise DataError(f"message {i} should have role {role!r}", field=f"conversation[{i}]")
        conversations.append({"from": role, "value": _content_text(message.get("content"), f"conversation[{i}].content")})
    return {**record, "conversations": conversations, "messages": messages}


def _rating_space(context: Any) -> dict[str, Any]:
    """A valid verdict for the ``random`` judge: "Rating: [[n]]", n from 1 to 10."""
    return {"kind": "choice", "choices": [f"Rating: [[{n}]]" for n in range(1, 11)]}


@verdict_parser("mm_mt_bench_rating", space=_rating_space, marks=BRACKET_SCORE_RE)
def mm_mt_bench_rating(text: str, context: Any) -> dict[str, float] | None:
    """``get_score``: the first ``[[n]]`` of the reply, read as a Python number."""
    match = BRACKET_SCORE_RE.search(text)
    if match is None:
        return None
    try:
        value = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):  # "[[07]]": literal_eval refuses leading zeros (the official code raises)
        return None
    return {"score": value}


@aggregator("mm_mt_bench", emits=lambda config: ("score", "macro_average_score"))
def aggregate_mm_mt_bench(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    result = per_turn_mean(task, samples, seed)
    rows = [*result.breakdowns.get("category", {}).values(), *result.breakdowns.get("turn", {}).values()]
    means = [row["score"] for row in rows if row.get("score") is not None]
    result.metrics["macro_average_score"] = sum(means) / len(means) if means else None
    for variant in ("stderr", "all", "micro", "macro"):
        result.metrics.pop(f"macro_average_score_{variant}", None)
    for table in result.breakdowns.values():
        for row in table.values():
            row.pop("macro_average_score", None)
    result.higher_is_better["macro_average_score"] = True
    return result
