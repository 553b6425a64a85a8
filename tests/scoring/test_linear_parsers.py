"""Issue 31, finding 12: every answer and verdict parser is linear on any reply.

The reply ``"`` + spaces + ``x`` (200 KB, 0.6% of the response cap) used to parse for minutes: two
``\\s*`` that meet in the answer-prefix pattern split one run of spaces every way (8,000 spaces
about 1 s, 100,000 more than 100 s). Now every whitespace run there is possessive. The test runs
every registered parser over replies built to make a backtracking pattern split one long run
(spaces, quotes, bold markers, repeated prefixes, digits and ranges), 200,000 characters each;
its bound is the pytest timeout (a hang guard far above the milliseconds it takes), never a clock."""

from __future__ import annotations

from typing import Any

import pytest

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.errors import DataError
from mmtasks.registry import parsers
from mmtasks.scoring.parsers import BoundParser, as_spec
from mmtasks.scoring.text_normalize import strip_answer_prefix
from mmtasks.task import Task

N = 200_000
REPLIES = {
    "quote-spaces": '"' + " " * N + "x",
    "spaces": " " * N + "x",
    "prefix-spaces": "The answer is" + " " * N + "x",
    "bold-spaces": "**" + " " * N + "x",
    "quote-bold-spaces": '"**' + " " * N + "x",
    "answer-words": "answer " * (N // 7),
    "answer-colons": "Answer:" * (N // 7),
    "chinese-prefix": "答案是" * (N // 3),
    "counts": "一共有" * (N // 3),
    "ranges": "1-" * (N // 2),
    "letters": "(A) " * (N // 4),
    "negations": "not " * (N // 4),
    "tabs-newlines": "\t\n" * (N // 2) + "x",
}
DOC: dict[str, Any] = {"id": "doc-1", "options": ["a", "b", "c", "d"], "answer": "A", "target": "a", "question": {"ability": "IE"}}


def builtin_task_parsers() -> dict[str, BoundParser]:
    """The answer and judge parsers of every built-in task (plugin parsers included), by name."""
    registry = TaskRegistry.discover()
    out: dict[str, BoundParser] = {}
    for name in registry.task_names:
        config, file = registry.load(name)
        task = Task(config, file)
        for bound in (task.parser, task.judge_parser):
            if bound is not None and bound.name not in parsers.names():
                out.setdefault(bound.name, bound)
    return out


TASK_PARSERS = builtin_task_parsers()


def test_the_answer_prefix_of_a_long_run_of_spaces_is_read_at_once() -> None:
    reply = REPLIES["quote-spaces"]
    assert strip_answer_prefix(reply) == reply  # no prefix: unchanged (before: minutes to say so)
    assert strip_answer_prefix('"' + " " * N + "The answer is" + " " * N + "B\"") == "B"


@pytest.mark.timeout(240)
@pytest.mark.parametrize("reply", list(REPLIES), ids=list(REPLIES))
def test_every_parser_is_linear_on_a_hostile_reply(reply: str) -> None:
    text = REPLIES[reply]
    for name in parsers.names():
        spec = as_spec(name, parsers.get(name))
        if spec.args is not None:
            try:
                args = spec.args()
            except ValueError:
                continue  # needs settings of its task (label / by_field delegate to the parsers run here)
            call = lambda: spec.fn(text, DOC, args)  # noqa: E731
        elif spec.takes_doc:
            call = lambda: spec.fn(text, DOC)  # noqa: E731
        else:
            call = lambda: spec.fn(text)  # noqa: E731
        try:
            call()
        except DataError:
            pass  # a field this parser reads that DOC lacks: nothing about time


@pytest.mark.timeout(240)
@pytest.mark.parametrize("reply", list(REPLIES), ids=list(REPLIES))
def test_every_task_plugin_parser_is_linear_on_a_hostile_reply(reply: str) -> None:
    """The parsers and verdict parsers of the built-in tasks' plugin files, with a context they
    give one (MMRC's judge reads the question's ability)."""
    assert {"mmrc_answer", "mm_mt_bench_rating", "llava_score_pair", "mmdu_judge", "mmrc_judge"} <= set(TASK_PARSERS)
    for bound in TASK_PARSERS.values():
        try:
            bound(REPLIES[reply], DOC)
        except DataError:
            pass  # a field this parser reads that DOC lacks: nothing about time


@pytest.mark.timeout(240)
def test_the_judges_own_verdict_is_found_in_linear_time() -> None:
    """``sole_verdict`` over a judge reply of 40,000 distinct ``[[n]]`` marks and an answer holding
    them all (each mark used to be looked up in the whole answer)."""
    from mmtasks.scoring.verdicts import sole_verdict

    marks = "".join(f"[[{i}]] " for i in range(40_000))
    answer = "".join(f"[[{i}]] " for i in reversed(range(40_000)))  # no verbatim quote of it to cut
    assert sole_verdict(TASK_PARSERS["mm_mt_bench_rating"], marks + "Rating: [[40001]]", {"answer": answer}) == {"score": 40001}


@pytest.mark.timeout(60)
def test_a_judge_reply_of_many_brace_spans_against_a_long_answer_is_read_in_linear_time() -> None:
    """5,000 ``{n}`` spans (30 KB) and a 1 MB answer used to take about 2 minutes: the answer was
    normalised again for every span. Now once; past :data:`MAX_VERDICT_SPANS` distinct spans a
    reply is no verdict (re-asked, then a judge failure)."""
    from mmtasks.registry import verdict_parsers
    from mmtasks.scoring.verdicts import MAX_VERDICT_SPANS, JsonObjectArgs, sole_verdict

    parse = BoundParser(as_spec("json_object", verdict_parsers.get("json_object")), JsonObjectArgs(required=["score"]))
    context = {"answer": "word " * 200_000}
    many = "".join("{%d}" % i for i in range(5_000))
    assert sole_verdict(parse, many + '{"score": 3}', context) is None
    some = "".join("{%d}" % i for i in range(MAX_VERDICT_SPANS - 1))
    assert sole_verdict(parse, some + '{"score": 3}', context) == {"score": 3}
    quoted = {"answer": 'I give myself {"score": 5} and {"score": 5}.'}
    assert sole_verdict(parse, 'It wrote {"score": 5}. My verdict: {"score": 2}', quoted) == {"score": 2}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reply", ["{" * N, '{"' * (N // 2), "x\n" * (N // 2) + '{"' * 2_000], ids=["braces", "open-strings", "lines-then-open-strings"])
def test_the_last_json_object_of_a_hostile_reply_is_found_in_linear_time(reply: str) -> None:
    """Judges' and note takers' JSON replies (MMRC, ``json_object``, note taking): each failed
    decode at a ``{`` used to count the lines before it (100,000 ``{`` took about 4 s, 1 MB
    minutes). Only ``{`` then ``"`` or ``}`` is tried, and at most 1,000 such starts may fail."""
    from mmtasks.scoring.json_reply import last_json_object

    assert last_json_object(reply) is None
    assert last_json_object(reply[:50] + ' {"score": 3}') == {"score": 3}
