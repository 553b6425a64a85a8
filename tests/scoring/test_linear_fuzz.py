"""Issue 41, finding 5: every parser and splitter is linear on 1 MB of hostile input, shown by
counting steps (``tests/step_count.py``: the regex engine's own step counter and the
interpreter's loop iterations), never by a clock.

Before: a reply of 1,000,000 ``<think>x</think>`` blocks copied the rest of itself at each block
(still running at 60 s); 150,000 digits to an MMMU open question (the scientific-number pattern)
or to ``integer_set`` (the range pattern) were tried from every digit, each try reading the rest
(80,000 digits: 189 s); a Video-MME ``.srt`` line of 120,000 digits the same in the cue-time
pattern; and a run of more than 4,300 digits ended the integer parsers in a ValueError.

The shapes below (each 1 MB, a seeded random mixture of them too) go through the reasoning
splitter, every registered answer and verdict parser (built-in and the built-in tasks' plugin
parsers), MMMU's number extraction, the SubRip reader and the JSON finder. Each call must take
at most :data:`STEPS_PER_BYTE` steps per byte: a quadratic one takes millions of times more and
is stopped at the bound (it fails at once, it does not hang)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.core.reasoning import ReasoningFormat, split_text
from mmtasks.documents.video import parse_srt
from mmtasks.errors import DataError
from mmtasks.registry import parsers, verdict_parsers
from mmtasks.scoring.answer_rules import extract_numbers, parse_open
from mmtasks.scoring.json_reply import MAX_READ_PER_CHAR, last_json_object, scan_json_objects
from mmtasks.scoring.parsers import BoundParser, as_spec, integers
from mmtasks.task import Task
from tests.step_count import OverBudget, count_steps

MB = 1 << 20
#: the bound: steps (regex engine steps / 4096, plus loop iterations and calls) per input byte.
#: The linear parsers take about 1 per 200 bytes on most shapes and up to 7 per short token where
#: they handle each token in Python (ranges "1-2 ": 1.75 per byte); the quadratic ones took more
#: than 1,000 per byte (stopped at the bound, after about a minute).
STEPS_PER_BYTE = 2.0


def fill(unit: str, head: str = "", tail: str = "") -> str:
    """``head`` + ``unit`` repeated + ``tail``, 1 MB (give or take a unit)."""
    return head + unit * ((MB - len(head) - len(tail)) // len(unit)) + tail


SRT_CUE = "1\n00:00:01,000 --> 00:00:02,000\n"
ATOMS = ["<think>", "</think>", "x", "1", "1.", "e5", ",111", "-", "2-4", " ", "\n", "{\"a\":", "{", "\"", "}",
         "<b ", "<font", ">", "共", "有", "answer is ", "(A) ", "**", ":", "00:00:01,000 --> ", "\r\n\r\n", "答案是"]


def mixture(seed: int) -> str:
    """1 MB of the atoms above in a seeded random order, each repeated a random number of times."""
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < MB:
        piece = rng.choice(ATOMS) * rng.choice([1, 1, 2, 3, 50, 2_000, 30_000])
        out.append(piece)
        size += len(piece)
    return "".join(out)[:MB]


SHAPES: dict[str, str] = {
    "think-blocks": fill("<think>x</think>"),
    "open-tags": fill("<think>x"),
    "close-tags": fill("x</think>"),
    "digits": fill("1"),
    "digits-then-e": fill("1", tail="e"),
    "digits-then-comma": fill("1", tail=","),
    "decimal-then-exponent": fill("1", head="1.", tail="e5"),
    "digits-srt-time": fill("1", tail=":00:00,000 --> 00:00:01,000\nhi"),
    "thousands": fill(",111", head="1", tail="1"),
    "ranges": fill("1-2 "),
    "nested-json": fill('{"a":'),
    "open-strings": fill('{"'),
    "unclosed-tags": fill("<b "),
    "count-spaces": fill(" ", head="共", tail="x"),
    "answer-spaces": fill(" ", head="The answer is", tail="x"),
    "blank-lines": fill("\n \t"),
    "mixture-41": mixture(41),
    "mixture-42": mixture(42),
}
DOC: dict[str, Any] = {"id": "doc-1", "options": ["a", "b", "c", "d"], "answer": "A", "target": "a",
                       "question": {"ability": "IE"}, "A": "a cat", "B": "a dog"}


def _bound(name: str, registry: Any) -> BoundParser | None:
    spec = as_spec(name, registry.get(name))
    if spec.args is None:
        return BoundParser(spec)
    try:
        return BoundParser(spec, spec.args())
    except ValueError:
        return None  # needs its task's settings: run below as the built-in tasks bind it


def every_parser() -> dict[str, BoundParser]:
    """Every built-in answer and verdict parser, and every parser the built-in tasks bind."""
    out: dict[str, BoundParser] = {}
    for registry in (parsers, verdict_parsers):
        for name in registry.names():
            bound = _bound(name, registry)
            if bound is not None:
                out[f"{registry.kind}:{name}"] = bound
    tasks = TaskRegistry.discover()
    for name in tasks.task_names:
        config, file = tasks.load(name)
        task = Task(config, file)
        for bound in (task.parser, task.judge_parser):
            if bound is not None:
                out.setdefault(f"task:{bound.name}", bound)
    return out


PARSERS = every_parser()


def within_bound(call: Callable[[], Any], text: str) -> int:
    """The steps of ``call`` (a DataError is an answer: a field DOC lacks), failing past the bound."""

    def guarded() -> None:
        try:
            call()
        except DataError:
            pass

    budget = int(STEPS_PER_BYTE * len(text))
    try:
        return count_steps(guarded, budget)
    except OverBudget:
        pytest.fail(f"more than {budget} steps on {len(text):,} bytes: not linear")


def test_the_shapes_are_1_mb_and_the_parsers_are_all_there() -> None:
    assert all(MB - 32 <= len(text) <= MB for text in SHAPES.values())
    assert mixture(41) == SHAPES["mixture-41"] and mixture(41) != mixture(42)  # seeded
    names = {bound.name for bound in PARSERS.values()}
    assert {"choice", "integer", "integer_set", "open_answer", "json_object", "mmrc_answer", "mmrc_judge",
            "vlmeval_option", "realbench_retrieval_multi", "mm_mt_bench_rating"} <= names


@pytest.mark.slow  # every parser over 18 MB in all: about 90 s on one core
@pytest.mark.timeout(600)
@pytest.mark.parametrize("shape", list(SHAPES), ids=list(SHAPES))
def test_every_parser_and_splitter_is_linear_on_1_mb(shape: str) -> None:
    text = SHAPES[shape]
    for name, bound in PARSERS.items():
        try:
            within_bound(lambda: bound(text, DOC), text)
        except pytest.fail.Exception as exc:
            raise AssertionError(f"{name}: {exc}") from None
    within_bound(lambda: split_text(text, ReasoningFormat()), text)
    within_bound(lambda: split_text(text, ReasoningFormat(), starts_open=True), text)
    within_bound(lambda: parse_open(text), text)
    within_bound(lambda: extract_numbers(text), text)
    within_bound(lambda: parse_srt(SRT_CUE + text + "\n\n" + text), text)
    within_bound(lambda: last_json_object(text), text)
    assert scan_json_objects(text).read <= (MAX_READ_PER_CHAR + 1) * len(text) + 4096  # the bound, and the start that crossed it


@pytest.mark.timeout(600)
def test_a_million_reasoning_blocks_split_in_one_pass() -> None:
    """The reply of the finding: 1,000,000 ``<think>x</think>`` blocks (16 MB) and an answer."""
    text = "<think>x</think>" * 1_000_000 + "The answer is B"
    out: list[Any] = []
    within_bound(lambda: out.append(split_text(text, ReasoningFormat())), text)
    assert out[0].answer == "The answer is B" and out[0].reasoning == "\n\n".join(["x"] * 1_000_000)


# --- the same results on ordinary input (hand-worked) -------------------------------------------

def test_the_splitter_reads_ordinary_replies_as_before() -> None:
    fmt = ReasoningFormat()
    cut = split_text("<think>a</think>B<think> c </think> D", fmt)
    assert (cut.answer, cut.reasoning, cut.unclosed) == ("B D", "a\n\nc", False)
    cut = split_text("a</think>b<think>c", fmt)  # the block began in the prompt; the last never closed
    assert (cut.answer, cut.reasoning, cut.unclosed) == ("b", "a\n\nc", True)
    cut = split_text("<think>x<think>y</think>z", fmt)  # a block ends at the first closing tag
    assert (cut.answer, cut.reasoning) == ("z", "x<think>y")
    cut = split_text("plain", fmt, starts_open=True)
    assert (cut.answer, cut.reasoning, cut.unclosed) == ("", "plain", True)
    assert split_text("no tags", fmt) == split_text("no tags", fmt) and split_text("no tags", fmt).reasoning is None


def test_mmmu_numbers_are_read_as_before() -> None:
    # MMMU's extract_numbers: with commas, then scientific, then plain ones, each left to right;
    # "1.5e3" is no plain "1.5" but its "1" is (followed by "."), "1," and "234," are not
    assert extract_numbers("x = 1,234,567 or 1.5e3, -2.5 and .5; 12.34.5e3") == [
        "1,234,567", "1.5e3", "34.5e3", "567", "1", "-2.5", ".5", "12.34", "3"]
    assert extract_numbers("3e5x 7,12 1,2345") == ["3e5", "12", "2345"]
    assert parse_open("The answer is 1,500.") == [500.0, 1500.0]


#: the patterns as MMMU's ``extract_numbers`` (github.com/MMMU-Benchmark/MMMU, mmmu/utils/eval_utils.py)
#: and the integer, SubRip and tag patterns as mmtasks wrote them before (quadratic on long runs)
ORIGINAL = {
    "commas": re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b"),
    "scientific": re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d+"),
    "plain": re.compile(r"-?(?:\d+\.\d+|\.\d+|\d+\b)(?![eE][+-]?\d+)(?![,\d])"),
    "range": re.compile(r"([0-9]+)\s*(?:-|–|—|~|到|至)\s*([0-9]+)"),
    "count": re.compile(r"""(?:一共|总共|共计|合计|共)\s*有?\s*[0-9]+\s*(?:张|幅|个|处|图)?
      |(?<![0-9])[0-9]+\s+(?:images|pictures|photos|figures)\b
      |\ba\s+total\s+of\s+[0-9]+""", re.IGNORECASE | re.VERBOSE),
    "srt": re.compile(r"(\d+):(\d\d):(\d\d)[,.](\d{1,3})\s*-->\s*(\d+):(\d\d):(\d\d)[,.](\d{1,3})"),
    "tag": re.compile(r"</?(?:font|b|i|u|s)\b[^>]*>", re.IGNORECASE),
}


def test_the_linear_patterns_match_exactly_what_the_originals_matched() -> None:
    """A seeded differential check over short strings of the characters that matter: every match
    (span and groups) of the linear patterns is the original's."""
    from mmtasks.documents import video
    from mmtasks.scoring import answer_rules, parsers as parser_module

    pairs = [(ORIGINAL["commas"], answer_rules._NUMBER_WITH_COMMAS), (ORIGINAL["scientific"], answer_rules._NUMBER_SCIENTIFIC),
             (ORIGINAL["plain"], answer_rules._NUMBER_PLAIN), (ORIGINAL["range"], parser_module._RANGE),
             (ORIGINAL["count"], parser_module._COUNT), (ORIGINAL["srt"], video._SRT_TIME)]
    alphabet = ["0", "1", "7", ".", ",", "e", "E", "+", "-", " ", "x", "~", "到", "共", "有", "张", " images", ":", "00:00:01,000", " --> "]
    rng = random.Random(41)
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        for old, new in pairs:
            assert [(m.span(), m.groups()) for m in old.finditer(text)] == [(m.span(), m.groups()) for m in new.finditer(text)], (text, old.pattern)
    tags = ["<b", "<i>", "</font>", "<font ", ">", "<", "x", " ", "<u", "s>"]
    for _ in range(20_000):
        text = "".join(rng.choice(tags) for _ in range(rng.randint(1, 10)))
        assert video._untagged(text) == ORIGINAL["tag"].sub("", text), text


def test_integer_sets_are_read_as_before_and_long_runs_are_no_numbers() -> None:
    assert integers("1, 3 and 5-7, not 10-50", 30) == [1, 3, 5, 6, 7, 10, 50]
    assert integers("2到4", 30) == [2, 3, 4]
    long = "9" * 150_000
    assert integers(long, 30) is None  # before: ValueError (more than 4,300 digits)
    assert integers(long + " 3, 4", 30) == [3, 4]
    assert integers("1234567890123456789 2", 30) == [2]  # 19 digits: no number
    assert integers("123456789012345678 2", 30) == [2, 123456789012345678]  # 18 digits: one


def test_subtitles_are_read_as_before_and_a_line_of_digits_is_text() -> None:
    srt = ('1\n00:00:01,000 --> 00:00:02,500\n<font color="white">Hello</font> <b>there</b>\n\n'
           "2\n00:01:00.5 --> 00:01:02,25\nsecond\nline\n\n3\n" + "1" * 120_000 + "\n\n"
           "4\n00:00:03,000 --> 00:00:04,000\n" + "1" * 120_000 + " <b unclosed\n")
    cues = parse_srt(srt)
    assert [(c.start, c.end) for c in cues] == [(1.0, 2.5), (60.5, 62.25), (3.0, 4.0)]
    assert [c.text for c in cues[:2]] == ["Hello there", "second line"]
    assert cues[2].text == "1" * 120_000 + " <b unclosed"
    assert parse_srt("1\n" + "1" * 20 + ":00:00,000 --> 00:00:01,000\nx\n") == []  # hours of 20 digits: no time


def _original_parse_open(reply: str) -> list[Any]:
    """``parse_open`` as mmtasks wrote it before it was made linear (every line and number in
    Python): the reference the linear one must agree with."""
    from mmtasks.scoring import answer_rules as ar

    text = reply.strip().strip(".").lower()
    lines = ar._LINE_SPLIT.split(text)
    keys: list[str] = []
    for index, line in enumerate(lines):
        indicators = ar._KEY_INDICATORS + (("=",) if index == len(lines) - 1 else ())
        shortest: str | None = None
        for indicator in indicators:
            if indicator in line:
                tail = line.split(indicator)[-1].strip()
                if not shortest or len(tail) < len(shortest):
                    shortest = tail
        if shortest and shortest.strip() not in ar._TRIVIAL:
            keys.append(shortest)
    keys = keys or [text]
    raw = keys + [n for key in keys for n in ar.extract_numbers(key)]
    values = {safe for item in raw for v in ar.normalize(item) if (safe := ar._json_safe(v)) is not None}
    return sorted(values, key=ar._order)


def test_mmmu_open_answers_are_parsed_as_before() -> None:
    """A seeded differential check of ``parse_open`` (key answers picked in C, numbers normalised
    in C, infinities spelled) against the line-by-line original, over short replies."""
    atoms = ["so ", "is ", "=", "\n", " ", "x", "1", "2,000", ". ", "A", "answer ", "could be ", "1e999", "-1e999",
             "nan", "inf", "0.005", "3.14159", ".5", "-", "e5", "Therefore ", "result "]
    rng = random.Random(41)
    for _ in range(20_000):
        reply = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 10)))
        assert parse_open(reply) == _original_parse_open(reply), reply
