"""RealBench's own answer reading (a plugin file of the RealBench tasks: ``plugins: [realbench.py]``).

- ``realbench_retrieval_single`` / ``realbench_retrieval_multi``: the generic
  ``integer`` / ``integer_set`` parsers, after image numbers written in Chinese
  ("图三", "第十二张") are turned into digits.
- ``realbench_unanswerable`` (parser) and ``realbench_unanswerable_acc``
  (metric): the unanswerable subset (paper Appendix D) is answered correctly
  when the reply contains "No relevant content mentioned" (any case) or
  "未提及相关内容", the refusal the prompt asks for; ``realbench_unanswerable_exact``:
  when the reply is exactly that phrase (its wrapping removed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mmtasks.scoring.metrics import metric, score
from mmtasks.scoring.parsers import drop_counts, first_integer, integers, parser, read_answer
from mmtasks.scoring.text_normalize import collapse_whitespace, nfkc, strip_answer_prefix

# --- image numbers -------------------------------------------------------

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4,
              "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_NUMBER = "[零〇一二两三四五六七八九十]{1,3}"
#: A Chinese numeral used as an image number: "图三", "第十二张".
_CN_IMAGE_NUMBER = re.compile(rf"(?<=[第图])({_CN_NUMBER})")
#: a range "2-4" spans at most this many numbers
_MAX_RANGE = 30


def _cn_to_int(numeral: str) -> int | None:
    """一..九十九 (also "十", "十三", "二十", "两"); None for other shapes."""
    if "十" not in numeral:
        return _CN_DIGITS[numeral] if len(numeral) == 1 else None
    tens, _, ones = numeral.partition("十")
    if len(tens) > 1 or len(ones) > 1 or "十" in ones:
        return None
    value = (_CN_DIGITS[tens] if tens else 1) * 10 + (_CN_DIGITS[ones] if ones else 0)
    return value or None


def arabize(text: str) -> str:
    """Fold fullwidth forms and write image numbers given in Chinese as digits."""

    def repl(match: re.Match[str]) -> str:
        value = _cn_to_int(match.group(1))
        return match.group(1) if value is None else str(value)

    return _CN_IMAGE_NUMBER.sub(repl, nfkc(text))


@parser("realbench_retrieval_single")
def retrieval_single(text: str, doc: Mapping[str, Any] | None = None) -> int | None:
    """The first integer of the explicit answer, else of the reply, counts skipped ("Image 3",
    "图3", "第三张", "３"; "There are 9 images; the answer is image 3" -> 3)."""
    return read_answer(text, lambda t: first_integer(drop_counts(arabize(t))))


@parser("realbench_retrieval_multi")
def retrieval_multi(text: str, doc: Mapping[str, Any] | None = None) -> list[int] | None:
    """All image numbers in the answer, sorted and without repeats.

    Reads "1, 3", "1，3", "图1和图3", "Image 2, Image 5", "图一、图三"; a
    range "2-4" (also "2~4", "2到4") stands for 2, 3, 4 when it spans at most
    30 numbers. The explicit answer ("答案是图1和图3") is read when there is one, and counts are
    skipped ("图1和图3，共2张" -> [1, 3]; see :func:`~mmtasks.scoring.parsers.drop_counts`).
    """
    return read_answer(text, lambda t: integers(drop_counts(arabize(t)), _MAX_RANGE))


# --- unanswerable ----------------------------------------------------------

#: The phrases that mark a refusal in RealBench's unanswerable subset, already
#: in the parser's folded form.
UNANSWERABLE_PHRASES = ("no relevant content mentioned", "未提及相关内容")


@parser("realbench_unanswerable")
def unanswerable(text: str, doc: Mapping[str, Any] | None = None) -> str:
    """The answer folded for phrase matching: NFKC, case-folded, single spaces."""
    return collapse_whitespace(nfkc(strip_answer_prefix(text))).casefold()


@metric("realbench_unanswerable_exact")
def unanswerable_exact(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float:
    """Correct iff the whole answer (unwrapped, folded, final punctuation removed) is exactly
    "No relevant content mentioned" or "未提及相关内容"."""
    if parsed is None:
        return 0.0
    answer = unanswerable(parsed).rstrip(" .。!！")
    return score(answer in UNANSWERABLE_PHRASES)


@metric("realbench_unanswerable_acc")
def unanswerable_acc(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float:
    """Correct iff the answer contains "No relevant content mentioned" (any case) or "未提及相关内容"."""
    if parsed is None:
        return 0.0
    answer = unanswerable(parsed)
    return score(any(phrase in answer for phrase in UNANSWERABLE_PHRASES))
