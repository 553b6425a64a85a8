"""MMMU's answer rules, as its authors' evaluation code applies them (and MUIRBench's, which
reuses the choice rule): reimplemented here from their description, with the same results.

Source: github.com/MMMU-Benchmark/MMMU ``mmmu/utils/eval_utils.py`` (``parse_multi_choice_response``,
``parse_open_response``, ``normalize_str``, ``extract_numbers``, ``eval_multi_choice``,
``eval_open``); github.com/muirbench/MuirBench ``eval/utils/postprocess.py`` is the same choice
rule. The random letter those scripts draw when nothing matches is not drawn here: the caller
decides (see the ``choice`` parser's ``fallback``).

**Choice** (:func:`last_occurrence_choice`). The reply loses the characters ``, . ! ? ; : '`` at its two
ends (one character kind after the other, in that order; whitespace is not removed), and gets a
space added at both ends. Then the first of these that finds anything gives the candidates:

1. ``(A)``: every letter whose bracketed form appears;
2. `` A ``: every letter standing between two spaces;
3. only when the reply has more than 5 words: every option whose text (case-folded) appears in
   the reply (case-folded).

Among several candidates the one whose form occurs last (``rfind``) wins; on a tie the earlier
letter. No candidate: no answer (None).

Two parameters give the variants of this rule that other authors wrote (each off by default, so
the rule is MMMU's): ``answer_marker`` ("Answer:"): first, the text after the marker's last
occurrence (stripped) gives the letter when exactly one option letter occurs in it (anywhere, as
a substring); ``loose_letters``: step 2 takes every letter followed by a space (``A ``, not
preceded by one: "I think" names I), else every letter followed by a period (``A.``), the
winner still ranked by where `` A `` occurs last (no `` A ``: the first candidate). MMMU-Pro's
``evaluate.py`` uses both (``tasks/mmmu_pro/mmmu_pro_scoring.py``).

**Open answers** (:func:`parse_open`, :func:`open_match`). The reply, stripped, without final
periods and lower-cased, is cut at newlines (MMMU's split pattern also names ``". "`` before a
capital letter, which never matches lower-cased text). In each line the shortest text after one of
``could be``, ``so``, ``is``, ``thus``, ``therefore``, ``final``, ``answer``, ``result`` (and ``=``
in the last line) is a key answer; no key answer at all: the whole reply is. The predictions are
the key answers and every number in them; each is normalised (a number, commas removed, rounded to
2 decimals, becomes a float; other text is lower-cased, and a single character becomes
``" x"`` and ``"x "``). A gold answer (or each of a list of them) is normalised the same way; the
reply is right when a float prediction equals a float gold, or a gold string is contained in a
string prediction.
"""

from __future__ import annotations

import math
import re
from itertools import chain, compress, repeat
from operator import methodcaller
from collections.abc import Callable, Mapping, Sequence

#: the characters stripped from both ends of a reply, one after the other, in this order
_EDGE_CHARACTERS = (",", ".", "!", "?", ";", ":", "'")


def _last(candidates: Sequence[str], position: Callable[[str], int]) -> str:
    """The candidate whose form occurs last; on a tie the earlier candidate (numpy's argmax)."""
    best = candidates[0]
    for cand in candidates[1:]:
        if position(cand) > position(best):
            best = cand
    return best


def last_occurrence_choice(reply: str, letters: Sequence[str], texts: Mapping[str, str]) -> str | None:
    """The letter MMMU's ``parse_multi_choice_response`` picks, or None where it would guess.

    ``letters`` are the option letters in order; ``texts`` maps letters to their option text
    (may be empty: the option-text step then finds nothing).
    """
    return last_occurrence_choice_step(reply, letters, texts)[0]


def last_occurrence_choice_step(reply: str, letters: Sequence[str], texts: Mapping[str, str], *,
                                answer_marker: str | None = None,
                                loose_letters: bool = False) -> tuple[str | None, str | None]:
    """:func:`last_occurrence_choice` and the step that found the letter: ``"letter"`` (steps 1
    and 2, the letter itself), ``"option_text"`` (step 3, the option's text) or, with
    ``answer_marker``, ``"answer_line"``; (None, None). ``answer_marker`` and ``loose_letters``:
    the variants of the module docstring."""
    if answer_marker is not None:
        marker = reply.rfind(answer_marker)
        if marker != -1:
            tail = reply[marker + len(answer_marker):].strip()
            named = [k for k in letters if k in tail]
            if len(named) == 1:
                return named[0], "answer_line"
    for char in _EDGE_CHARACTERS:
        reply = reply.strip(char)
    padded = f" {reply} "
    bracketed = [k for k in letters if f"({k})" in padded]
    if bracketed:
        return _last(bracketed, lambda k: padded.rfind(f"({k})")), "letter"
    if loose_letters:
        spaced = [k for k in letters if f"{k} " in padded] or [k for k in letters if f"{k}." in padded]
    else:
        spaced = [k for k in letters if f" {k} " in padded]
    if spaced:
        return _last(spaced, lambda k: padded.rfind(f" {k} ")), "letter"
    if len(padded.split()) > 5:
        folded = padded.lower()
        named = [k for k in letters if k in texts and texts[k].lower() in folded]
        if named:
            return _last(named, lambda k: folded.rfind(texts[k].lower())), "option_text"
    return None, None


# --- open answers --------------------------------------------------------------------------

#: numbers with thousands separators, in scientific notation, and plain (MMMU's extract_numbers:
#: ``-?\b\d{1,3}(?:,\d{3})+\b``, ``-?\d+(?:\.\d+)?[eE][+-]?\d+``,
#: ``-?(?:\d+\.\d+|\.\d+|\d+\b)(?![eE][+-]?\d+)(?![,\d])``). Ours: the same matches in linear
#: time. A run of digits is tried from its first digit only (``(?<!\d)``: a match from inside the
#: run exists only when one from its start does, which is found first) and never given back
#: (possessive: what follows a run of digits is never a digit), so a reply of 150,000 digits is
#: read once instead of once per digit (the first is linear as written: it starts at a word's edge).
_NUMBER_WITH_COMMAS = re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b")
_NUMBER_SCIENTIFIC = re.compile(r"-?(?<!\d)\d++(?:\.\d++)?[eE][+-]?\d++")
_NUMBER_PLAIN = re.compile(r"-?(?:(?<!\d)\d++\.\d++|\.\d++|(?<!\d)\d++\b)(?![eE][+-]?\d)(?![,\d])")
_KEY_INDICATORS = ("could be ", "so ", "is ", "thus ", "therefore ", "final ", "answer ", "result ")
_NO_COMMAS = methodcaller("replace", ",", "")
_ANY_INDICATOR = re.compile("|".join(map(re.escape, _KEY_INDICATORS)))
_TRIVIAL = {":", ",", ".", "!", "?", ";", "'"}
_LINE_SPLIT = re.compile(r"\.\s(?=[A-Z])|\n")

#: an open answer's normalised value: a number (float) or lower-cased text
Normalized = float | str


def _as_number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def normalize(text: str) -> list[Normalized]:
    """MMMU's ``normalize_str``: a number rounded to 2 decimals, else the lower-cased text (a
    single character as ``" x"`` and ``"x "``, so that it matches only as a word's edge)."""
    text = text.strip()
    number = _as_number(text)
    if number is not None:
        return [round(number, 2)]
    text = text.lower()
    return [" " + text, text + " "] if len(text) == 1 else [text]


def extract_numbers(text: str) -> list[str]:
    """Every number in ``text``: with thousands separators, scientific, then plain ones."""
    return _NUMBER_WITH_COMMAS.findall(text) + _NUMBER_SCIENTIFIC.findall(text) + _NUMBER_PLAIN.findall(text)


def key_answers(reply: str) -> list[str]:
    """The tails of the reply's lines that follow an answer indicator (see the module doc)."""
    text = reply.strip().strip(".").lower()
    lines = _LINE_SPLIT.split(text)
    found: list[str] = []
    # only the lines holding an indicator are looked at (picked in C: a reply of a million blank
    # lines is not a million loops); the last line may hold "=" only
    last = len(lines) - 1
    candidates = [(index, lines[index]) for index in compress(range(len(lines)), map(_ANY_INDICATOR.search, lines))]
    if lines and "=" in lines[last] and (not candidates or candidates[-1][0] != last):
        candidates.append((last, lines[last]))
    for index, line in candidates:
        indicators = _KEY_INDICATORS + (("=",) if index == last else ())
        shortest: str | None = None
        for indicator in indicators:
            if indicator in line:
                tail = line.split(indicator)[-1].strip()
                if not shortest or len(tail) < len(shortest):
                    shortest = tail
        if shortest and shortest.strip() not in _TRIVIAL:
            found.append(shortest)
    return found or [text]


def _order(value: Normalized) -> tuple[int, float, str]:
    return (0, value, "") if isinstance(value, float) else (1, 0.0, value)


#: an infinite number among the predictions, spelled as text (JSON has no infinity; samples hold
#: the predictions): no text prediction can be spelled so, since a text that reads as a number is
#: one (``float("inf")``), and :func:`open_match` compares them as the numbers they are
INFINITIES = {"inf": math.inf, "-inf": -math.inf}


def _json_safe(value: Normalized) -> Normalized | None:
    """``value`` as it can be stored: an infinity as ``"inf"``/``"-inf"``; NaN as None (dropped:
    the authors' ``nan in [nan]`` is false for two parses, so a NaN never matches)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def parse_open(reply: str) -> list[Normalized]:
    """The normalised predictions of an open answer, without repeats, numbers first (MMMU's
    ``parse_open_response`` returns them as an unordered set; the order changes no score).
    An infinity ("infinity", "inf": ``float`` reads them, as the authors' ``check_is_number``
    does) is kept, spelled ``"inf"``/``"-inf"`` (:data:`INFINITIES`); "nan" is left out."""
    keys = key_answers(reply)
    values = {safe for item in keys for v in normalize(item) if (safe := _json_safe(v)) is not None}
    # the numbers in the keys, each normalised as normalize() does (a number: commas removed,
    # rounded to 2 decimals), in C: a reply of a million numbers is not a million Python calls
    numbers = dict.fromkeys(chain.from_iterable(map(extract_numbers, keys)))
    rounded = set(map(round, map(float, map(_NO_COMMAS, numbers)), repeat(2)))
    for infinity, spelled in ((math.inf, "inf"), (-math.inf, "-inf")):  # digits never read as NaN
        if infinity in rounded:
            rounded.discard(infinity)
            values.add(spelled)
    floats = sorted(rounded.union(v for v in values if isinstance(v, float)))
    return [*floats, *sorted(v for v in values if isinstance(v, str))]


def _as_prediction_number(pred: Normalized) -> float | None:
    """A prediction's number: a float, or an infinity spelled as :data:`INFINITIES` does."""
    if isinstance(pred, float):
        return pred
    return INFINITIES.get(pred)


def open_match(gold: str | Sequence[str], predictions: Sequence[Normalized]) -> bool:
    """MMMU's ``eval_open``: a float prediction equal to a float gold, or a gold string inside a
    string prediction. ``gold`` is one answer or a list of accepted answers."""
    golds = [gold] if isinstance(gold, str) else list(gold)
    accepted = [v for g in golds for v in normalize(str(g))]
    for pred in predictions:
        number = _as_prediction_number(pred)
        if number is not None:  # the authors' float branch: equal to a gold number (inf == inf)
            if number in accepted:
                return True
        elif isinstance(pred, str) and any(isinstance(ans, str) and ans in pred for ans in accepted):
            return True
    return False
