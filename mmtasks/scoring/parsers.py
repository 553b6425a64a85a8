"""Answer parsers, registered by name for task YAML (``answer.parser``).

Every parser first removes the answer wrapping (see
:func:`~mmtasks.scoring.text_normalize.strip_answer_prefix`). Parsers that read
numbers or letters also fold fullwidth forms (``３``, ``，``, ``Ｂ``) to ASCII.
``None`` means "no answer found"; the runner may re-ask, and a final ``None``
scores 0.
"""

from __future__ import annotations

import re

from mmtasks.registry import parsers
from mmtasks.scoring.text_normalize import collapse_whitespace, nfkc, strip_answer_prefix

# --- numbers -------------------------------------------------------------

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4,
              "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_NUMBER = "[零〇一二两三四五六七八九十]{1,3}"
#: A Chinese numeral used as an image number: "图三", "第十二张".
_CN_IMAGE_NUMBER = re.compile(rf"(?<=[第图])({_CN_NUMBER})")
_INTEGER = re.compile(r"[0-9]+")
#: "2-4", "2~4", "2到4", "2至4": a range of image numbers.
_RANGE = re.compile(r"([0-9]+)\s*(?:-|–|—|~|到|至)\s*([0-9]+)")
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


def _arabize(text: str) -> str:
    """Fold fullwidth forms and write image numbers given in Chinese as digits."""

    def repl(match: re.Match[str]) -> str:
        value = _cn_to_int(match.group(1))
        return match.group(1) if value is None else str(value)

    return _CN_IMAGE_NUMBER.sub(repl, nfkc(text))


@parsers.register("realbench_retrieval_single")
def retrieval_single(text: str) -> int | None:
    """The first integer of the answer ("Image 3", "图3", "第三张", "３")."""
    match = _INTEGER.search(_arabize(strip_answer_prefix(text)))
    return int(match.group()) if match else None


@parsers.register("realbench_retrieval_multi")
def retrieval_multi(text: str) -> list[int] | None:
    """All image numbers in the answer, sorted and without repeats.

    Reads "1, 3", "1，3", "图1和图3", "Image 2, Image 5", "图一、图三"; a
    range "2-4" (also "2~4", "2到4") stands for 2, 3, 4 when it spans at most
    30 numbers.
    """
    clean = _arabize(strip_answer_prefix(text))
    numbers: set[int] = set()

    def expand(match: re.Match[str]) -> str:
        low, high = int(match.group(1)), int(match.group(2))
        if low < high <= low + _MAX_RANGE:
            numbers.update(range(low, high + 1))
            return " "
        return match.group()

    rest = _RANGE.sub(expand, clean)
    numbers.update(int(n) for n in _INTEGER.findall(rest))
    return sorted(numbers) if numbers else None


# --- letters -------------------------------------------------------------

#: An uppercase A-D not touching another Latin letter: "B", "(B)", "B.", "选B",
#: "B选项"; not the "A" of "Answer" or "Apple".
_STANDALONE_CHOICE = re.compile(r"(?<![A-Za-z])([A-D])(?![A-Za-z])")
#: A reply that is nothing but one lowercase letter: "b", "(c)", "d.".
_LONE_LOWERCASE = re.compile(r"^[(\[]?\s*([a-d])\s*[)\].、:]?$")


@parsers.register("realbench_choice")
def choice(text: str) -> str | None:
    """The first standalone capital letter A-D, or None.

    Lowercase letters count only when the whole reply is that letter ("b",
    "(c)"): inside a sentence a lowercase "a" is almost always the article.
    """
    clean = nfkc(strip_answer_prefix(text))
    match = _STANDALONE_CHOICE.search(clean)
    if match:
        return match.group(1)
    lone = _LONE_LOWERCASE.match(clean.strip())
    return lone.group(1).upper() if lone else None


# --- text ----------------------------------------------------------------


@parsers.register("realbench_text")
def text_answer(text: str) -> str:
    """The answer text without its wrapping ("" when nothing is left)."""
    return strip_answer_prefix(text)


@parsers.register("realbench_unanswerable")
def unanswerable(text: str) -> str:
    """The answer folded for phrase matching: NFKC, case-folded, single spaces."""
    return collapse_whitespace(nfkc(strip_answer_prefix(text))).casefold()
