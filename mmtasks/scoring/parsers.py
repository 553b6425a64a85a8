"""Answer parsers: a model's reply -> the value a metric compares.

A parser is registered by name (``answer.parser`` in the task YAML) and called as

    parse(text, doc) -> value | None

``text`` is the raw reply and ``doc`` the document's record (a mapping: the
parser may read the answer's vocabulary from it, e.g. the option letters).
``None`` means "no answer found": the protocol may re-ask, and a final ``None``
is counted as ``unparsed`` and scores 0.

A parser may take typed arguments, written in the task YAML as
``answer.parser_args`` and validated when the task loads (an unknown key or a
value of the wrong type is an error naming the file and the key)::

    answer:
      parser: choice
      parser_args: {options_field: options}

Such a parser declares its arguments' pydantic model and receives the validated
instance as a third argument::

    class ChoiceArgs(ParserArgs):
        options_field: str = "options"

    @parser("choice", args=ChoiceArgs)
    def choice(text: str, doc: Mapping[str, Any], args: ChoiceArgs) -> str | None: ...

A parser without ``args`` is called as ``fn(text, doc)``, or as ``fn(text)``
when it takes a single argument (a parser that needs no document); a plain
function registered with ``mmtasks.registry.parsers.register(name)`` is one of
those. Judge-verdict parsers (``judge.parser``, see
:mod:`mmtasks.scoring.verdicts`) have the same shape, with the judge prompt's
variables in place of ``doc``.

Every built-in parser first removes the answer wrapping (see
:func:`~mmtasks.scoring.text_normalize.strip_answer_prefix`); those reading
numbers, letters or true/false also fold fullwidth forms (``３``, ``，``, ``Ｂ``)
to ASCII and prefer an explicit answer over the first number or letter: when the
reply states "the answer is ...", "final answer: ...", "答案是..." or "答案：..."
anywhere, only the text after the last such statement is read (falling back to the
whole reply when nothing parses there), see :func:`explicit_answer`. The number
parsers also skip counts ("共2张", "一共3幅", "9 images", "a total of 4"), which
state how many images there are, not which.
"""

from __future__ import annotations

import inspect
import random
import re
import unicodedata
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from mmtasks.errors import ConfigError, DataError
from mmtasks.registry import Registry
from mmtasks.registry import parsers as _parsers
from mmtasks.scoring.answer_rules import Normalized, last_occurrence_choice_step, parse_open
from mmtasks.scoring.text_normalize import nfkc, strip_answer_prefix
from mmtasks.templates import literal


#: how the metrics get a task's gold answer (see :attr:`ParserSpec.target`)
TargetRule = Literal["parsed", "raw"]


class ParserArgs(BaseModel):
    """Base of a parser's arguments (``answer.parser_args``): unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class ParserSpec:
    """A registered parser: its function and the model of its arguments (None: it takes none)."""

    name: str
    fn: Callable[..., Any]
    args: type[ParserArgs] | None = None
    #: what a valid reply looks like, for the ``random`` baseline: ``space(context) -> answer
    #: space`` (see ``answer.space``), or ``space(context, args)`` for a parser with arguments
    #: (``json_object``'s fields and ranges). A verdict parser gives one so that a task need not
    #: restate its verdict's fields in ``judge.space`` (``context``: the judge prompt's variables);
    #: an answer parser, for a task that declares no ``answer.space`` (``context``: the document's
    #: record; ``choice``: its options). None (or a space returned as None): it declares nothing.
    space: Callable[..., dict[str, Any] | None] | None = None
    #: whether ``fn`` takes the document (a parser without arguments may be ``fn(text)``)
    takes_doc: bool = True
    #: a verdict parser whose verdict has no braces: the pattern of the inline mark a verdict is
    #: written as (MM-MT-Bench's ``[[n]]``), so quotes of the answer's marks can be told from the
    #: judge's own (see :func:`mmtasks.scoring.verdicts.sole_verdict`)
    marks: "re.Pattern[str] | None" = None
    #: how the metrics get the gold answer: ``parsed``, as this parser reads it (the rule ``check``
    #: applies to every target: a refusal phrase the parser reads as ``refuse`` is scored as a
    #: refusal), or ``raw``, as the dataset writes it (a parser whose reading is no answer value,
    #: ``open_answer``'s candidates, or a benchmark's own code that compares the gold as written)
    target: TargetRule = "parsed"


def parser(name: str, *, args: type[ParserArgs] | None = None, registry: Registry[Any] = _parsers,
           space: Callable[..., dict[str, Any] | None] | None = None,
           marks: "re.Pattern[str] | None" = None,
           target: "TargetRule" = "parsed") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn(text, doc)`` (or ``fn(text, doc, args)`` with ``args``) as the parser ``name``;
    ``target``: how the metrics get the gold answer (see :attr:`ParserSpec.target`)."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        registry.register(name, ParserSpec(name=name, fn=fn, args=args, space=space, marks=marks, target=target,
                                           takes_doc=args is not None or _positional(fn) >= 2))
        return fn

    return deco


@dataclass(frozen=True)
class BoundParser:
    """A parser with its validated arguments: ``bound(text, doc) -> value | None``."""

    spec: ParserSpec
    args: ParserArgs | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    def space(self, context: Mapping[str, Any]) -> dict[str, Any] | None:
        """What a valid reply looks like, as the parser declares it (None: it declares nothing)."""
        if self.spec.space is None:
            return None
        if self.spec.args is not None and _positional(self.spec.space) >= 2:
            return self.spec.space(context, self.args)
        return self.spec.space(context)

    def __call__(self, text: str, doc: Mapping[str, Any]) -> Any:
        if self.spec.args is not None:
            return self.spec.fn(text, doc, self.args)
        return self.spec.fn(text, doc) if self.spec.takes_doc else self.spec.fn(text)

    def target_rule(self, doc: Mapping[str, Any]) -> TargetRule:
        """How the metrics get this document's gold answer: the rule of the parser that reads its
        replies (``by_field``: the one its field picks)."""
        pick = getattr(self.args, "parser_for", None)
        if callable(pick):
            chosen = pick(doc)
            if isinstance(chosen, BoundParser):
                return chosen.target_rule(doc)
        return self.spec.target


def as_spec(name: str, obj: Any) -> ParserSpec:
    """A registry entry as a :class:`ParserSpec` (a bare function is a parser without arguments)."""
    if isinstance(obj, ParserSpec):
        return obj
    if callable(obj):
        return ParserSpec(name=name, fn=obj, takes_doc=_positional(obj) >= 2)
    raise TypeError(f"parser {name!r} is registered as {type(obj).__name__}, not a function")


def bind(name: str, parser_args: Mapping[str, Any] | None, *, registry: Registry[Any] = _parsers,
         plugins: Collection[Path] = (), file: str | Path | None = None, field: str = "answer") -> BoundParser:
    """Resolve parser ``name`` and validate its arguments; errors name ``file`` and ``field.parser(_args)``.

    ``field`` is the YAML block the parser is named in (``answer`` or ``judge``).
    """
    spec = as_spec(name, registry.get(name, plugins=plugins, file=file, field=f"{field}.parser"))
    given = dict(parser_args or {})
    if spec.args is None:
        if given:
            raise ConfigError(f"parser {name!r} takes no arguments", file=file, field=f"{field}.parser_args.{next(iter(given))}")
        return BoundParser(spec)
    try:
        return BoundParser(spec, spec.args.model_validate(given))
    except ConfigError as exc:  # a nested parser's (by_field): name this file
        raise ConfigError(exc.message, file=exc.file or file, field=exc.field, hint=exc.hint) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in (f"{field}.parser_args", *err["loc"]))
        if err["type"] == "extra_forbidden":
            from mmtasks.config.yaml_loader import did_you_mean, keys_at

            hint = did_you_mean(str(err["loc"][-1]), keys_at(spec.args, err["loc"][:-1]))
            raise ConfigError(f"unknown key for parser {name!r}", file=file, field=loc, hint=hint) from None
        raise ConfigError(err["msg"], file=file, field=loc) from None


def _positional(fn: Callable[..., Any]) -> int:
    """How many positional arguments ``fn`` accepts (a large number for ``*args``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 99
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _doc_error(doc: Mapping[str, Any], field: str, message: str) -> DataError:
    return DataError(message, doc_id=str(doc["id"]) if "id" in doc else None, field=field)


# --- explicit answers ----------------------------------------------------

#: "the answer is", "the final answer:", "the correct answer would be", "the correct option is",
#: "答案是", "答案为", "答案：", "正确答案是" anywhere in a reply (after NFKC: ASCII colons).
_EXPLICIT = re.compile(
    r"""(?:\b(?:(?:final|correct|right)\s+)?answer\s*(?:is\b|would\s+be\b|should\s+be\b|:)
        |\b(?:correct|right)\s+(?:option|choice)\s+is\b
        |答案\s*(?:应该是|应为|是|为|:))""",
    re.IGNORECASE | re.VERBOSE,
)


def explicit_answer(text: str) -> str | None:
    """What follows the reply's last explicit answer statement, unwrapped; None when there is none.

    ``text`` is already NFKC-folded. "A. 2,3,1 is wrong; the answer is C" -> "C";
    "There are 9 images; the answer is image 3" -> "image 3".
    """
    last = None
    for last in _EXPLICIT.finditer(text):
        pass
    if last is None:
        return None
    return strip_answer_prefix(text[last.end():].lstrip(" \t*_:：\"'“‘「"))


def read_answer(text: str, parse: Callable[[str], Any]) -> Any:
    """``parse`` applied to the explicit answer of ``text`` when there is one and it parses,
    else to the whole (unwrapped, NFKC-folded) reply."""
    clean = nfkc(strip_answer_prefix(text))
    tail = explicit_answer(clean)
    if tail:
        value = parse(tail)
        if value is not None:
            return value
    return parse(clean)


# --- numbers -------------------------------------------------------------

#: Counts, which say how many images there are rather than which: "共2张", "一共 3 幅", "总共有4个",
#: "9 images", "2 pictures", "a total of 4". Removed before numbers are read.
_COUNT = re.compile(
    r"""(?:一共|总共|共计|合计|共)\s*+(?:有\s*+)?[0-9]++\s*+(?:张|幅|个|处|图)?
      |(?<![0-9])[0-9]++\s++(?:images|pictures|photos|figures)\b
      |\ba\s+total\s+of\s+[0-9]+""",
    re.IGNORECASE | re.VERBOSE,
)


def drop_counts(text: str) -> str:
    """``text`` without the counts of :data:`_COUNT` ("图1和图3，共2张" -> "图1和图3， ")."""
    return _COUNT.sub(" ", text)


#: the longest run of digits read as a number (ours): a longer one names no image, option or
#: count, and Python refuses to convert one of more than 4,300 digits (a reply of 150,000 digits
#: would end in a ValueError); such a run is not a number to these parsers
MAX_DIGITS = 18
#: a run of at most :data:`MAX_DIGITS` digits (not part of a longer run), tried from its first
#: digit only (linear on any reply)
_INTEGER = re.compile(rf"(?<![0-9])[0-9]{{1,{MAX_DIGITS}}}+(?![0-9])")
#: "2-4", "2~4", "2到4", "2至4": a range of numbers (each a run of at most :data:`MAX_DIGITS`
#: digits, tried from its first digit only)
_RANGE = re.compile(rf"(?<![0-9])([0-9]{{1,{MAX_DIGITS}}}+)(?![0-9])\s*+(?:-|–|—|~|到|至)\s*+([0-9]{{1,{MAX_DIGITS}}}+)(?![0-9])")


def first_integer(text: str) -> int | None:
    """The first run of digits of ``text`` (already unwrapped and folded) of at most
    :data:`MAX_DIGITS` digits, or None."""
    match = _INTEGER.search(text)
    return int(match.group()) if match else None


def integers(text: str, max_range: int) -> list[int] | None:
    """Every number of ``text``, sorted, without repeats; a range "2-4" (also "2~4", "2到4",
    "2至4") stands for 2, 3, 4 when it spans at most ``max_range`` numbers (0: no ranges)."""
    numbers: set[int] = set()

    def expand(match: re.Match[str]) -> str:
        low, high = int(match.group(1)), int(match.group(2))
        if low < high <= low + max_range:
            numbers.update(range(low, high + 1))
            return " "
        return match.group()

    rest = _RANGE.sub(expand, text) if max_range > 0 else text
    numbers.update(map(int, _INTEGER.findall(rest)))
    return sorted(numbers) if numbers else None


@parser("integer")
def integer(text: str, doc: Mapping[str, Any]) -> int | None:
    """The first integer of the explicit answer, else of the reply, counts skipped ("Image 3" -> 3,
    "３" -> 3, "There are 9 images; the answer is image 3" -> 3)."""
    return read_answer(text, lambda t: first_integer(drop_counts(t)))


class IntegerSetArgs(ParserArgs):
    max_range: int = 30
    """A range "a-b" stands for every number from a to b when b - a is at most this (0: never)."""


@parser("integer_set", args=IntegerSetArgs)
def integer_set(text: str, doc: Mapping[str, Any], args: IntegerSetArgs) -> list[int] | None:
    """All integers of the explicit answer, else of the reply, sorted and without repeats, counts
    skipped ("1, 3", "１，３", "2-4", "图1和图3，共2张" -> [1, 3])."""
    return read_answer(text, lambda t: integers(drop_counts(t), args.max_range))


# --- letters -------------------------------------------------------------


class ChoiceArgs(ParserArgs):
    options_field: str = "options"
    """The record field holding the options: a mapping letter -> option (its keys are the
    letters), a list (lettered A, B, C ... in order), or a string holding such a list as a Python
    or JSON literal (MMMU's ``"['1', '2']"``)."""
    letters: list[str] | None = None
    """Fixed option labels, for records that do not list their options (``options_field`` is
    then not read): single letters (``[A, B, C]``) or word labels (``[True, False]``,
    ``[yes, no]``, ``[left, right, both]``), see :func:`choose_label`."""
    rule: Literal["first_letter", "mmmu"] = "first_letter"
    """``first_letter``: the first standalone option letter (ours; see :func:`choose_letter`).
    ``mmmu``: MMMU's ``parse_multi_choice_response`` (MUIRBench's too): "(A)", then " A ", then
    the option text for replies over 5 words; the last occurrence wins (see
    :mod:`mmtasks.scoring.answer_rules`)."""
    fallback: Literal["none", "random"] = "none"
    """When the rule finds no letter: ``none``, the reply is unparsed (re-asked ``answer.retries``
    times, then counted and scored 0); ``random``, a seeded random letter of the document's own,
    as the MMMU and MUIRBench scripts draw one, counted as ``guessed`` in ``problems``."""
    seed: int = 42
    """The random fallback's seed (42: ``random.seed(42)`` of the MMMU and MUIRBench scripts)."""
    id_field: str = "id"
    """The record field that names the document in the random fallback's seed."""

    @field_validator("letters", mode="before")
    @classmethod
    def _labels(cls, v: Any) -> Any:
        return None if v is None else label_list(v, "letters")


class Guess(str):
    """A letter drawn at random because the reply named none (``fallback: random``): scored as
    an answer, counted as ``guessed`` (see :func:`is_guess`)."""


def is_guess(value: Any) -> bool:
    """Whether a parsed answer is a random guess (:class:`Guess`)."""
    return isinstance(value, Guess)


class OptionText(str):
    """A letter read from the text of its option, not from the letter itself (MMMU's rule, step
    3: "... so it is a cat" names the option "a cat"): scored as an answer, recorded as read by
    ``option_text``."""


class Matched(str):
    """An option the LLM answer matcher read in a reply no rule could read (``answer.matcher``)."""


#: how an answer was read (``Sample.read_by``): by the parser's rule from a letter or label, from
#: an option's text, by the LLM answer matcher, or drawn at random (a guess); None: not read
READ_BY = ("rule", "option_text", "matcher", "random")


def read_by(value: Any) -> str | None:
    """How a parsed answer was read (see :data:`READ_BY`); None for no answer."""
    if value is None:
        return None
    if isinstance(value, Guess):
        return "random"
    if isinstance(value, OptionText):
        return "option_text"
    if isinstance(value, Matched):
        return "matcher"
    return "rule"


def literal_options(doc: Mapping[str, Any], field: str, text: str) -> list[Any]:
    """A string holding a list, as a Python literal (``"['a', 'b']"``) or JSON, as that list."""
    try:
        value = literal(text)
    except (ValueError, TypeError):  # no literal, or one too long (see templates.literal)
        value = None
    if not isinstance(value, list):
        raise _doc_error(doc, field, f"expected the options as a list, or a string holding one, got {text!r}"[:200])
    return value


def _options(doc: Mapping[str, Any], field: str) -> Any:
    """The options field of a document, a string holding a list read as that list."""
    options = doc.get(field)
    return literal_options(doc, field, options) if isinstance(options, str) else options


def option_texts(doc: Mapping[str, Any], field: str) -> dict[str, str]:
    """The options of a document, letter -> option text (see :class:`ChoiceArgs.options_field`)."""
    options = _options(doc, field)
    letters = _letters(doc, field, options)
    values = list(options.values()) if isinstance(options, Mapping) else list(options)
    return {k: "" if v is None else str(v) for k, v in zip(letters, values)}


def option_letters(doc: Mapping[str, Any], field: str) -> list[str]:
    """The option letters of a document: the keys of a mapping, or A, B, C ... for a list (or a
    string holding one)."""
    return _letters(doc, field, _options(doc, field))


def _letters(doc: Mapping[str, Any], field: str, options: Any) -> list[str]:
    """The option letters of ``options``, the document's options field already read."""
    if isinstance(options, Mapping) and options:
        try:
            return label_list(list(options), "option keys")
        except ValueError as exc:
            raise _doc_error(doc, field, str(exc)) from None
    if isinstance(options, (list, tuple)) and 0 < len(options) <= 26:
        return [chr(ord("A") + i) for i in range(len(options))]
    raise _doc_error(doc, field, f"expected the options (a mapping letter -> option, or a list of at most 26), got {options!r}"[:200])


def is_letter(label: str) -> bool:
    """Whether an option label is a single letter (read by :func:`choose_letter`'s rule)."""
    return len(label) == 1 and label.isalpha()


def label_list(values: Any, what: str) -> list[str]:
    """Option labels as written: a non-empty list of distinct, non-empty labels. A single letter
    is upper-cased (``a`` -> ``A``); a word is kept as written; a YAML boolean is the word it
    was written as in Python's spelling (``True``), a number its digits. Two labels that read
    the same (``Yes`` and ``yes``, once :func:`label_key` folds them) are an error."""
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError(f"{what} must be a non-empty list of labels (letters or words), got {values!r}"[:200])
    labels: list[str] = []
    for value in values:
        if isinstance(value, (dict, list, tuple)) or value is None:
            raise ValueError(f"{what}: a label must be a letter or a word, got {value!r}"[:200])
        label = str(value).strip()
        if not label_key(label):
            raise ValueError(f"{what}: a label must have a letter or digit, got {value!r}"[:200])
        labels.append(label.upper() if is_letter(label) else label)
    keys = [label_key(k) for k in labels]
    repeated = sorted({k for k, key in zip(labels, keys) if keys.count(key) > 1})
    if repeated:
        raise ValueError(f"{what}: {', '.join(repeated)} read the same (case, emphasis and punctuation are ignored)")
    return labels


#: markdown emphasis and code marks, removed wherever they are ("**False**", "`yes`", "~~no~~")
_EMPHASIS = re.compile(r"[*`~]+")


def _edge_stripped(text: str) -> str:
    """``text`` without whitespace and punctuation (Unicode category P: ``. , ! ? " ( ) # _ -``
    and their CJK forms) at its two ends."""
    start, end = 0, len(text)
    while start < end and (text[start].isspace() or unicodedata.category(text[start]).startswith("P")):
        start += 1
    while end > start and (text[end - 1].isspace() or unicodedata.category(text[end - 1]).startswith("P")):
        end -= 1
    return text[start:end]


def label_key(text: str) -> str:
    """How a label or a reply is compared: NFKC-folded, case-folded, markdown emphasis removed,
    whitespace runs made one space, punctuation and whitespace stripped from both ends
    (``"**FALSE**."`` -> ``"false"``)."""
    return _edge_stripped(" ".join(_EMPHASIS.sub("", nfkc(text)).casefold().split()))


def leading_label(text: str, labels: Collection[str]) -> str | None:
    """The label ``text`` is, or begins with as a whole word, compared by :func:`label_key`
    ("True", "**false**", "Yes. The left image ..."; the longest label when several fit);
    None when it begins with none ("The statement is true" begins with no label)."""
    key = label_key(text)
    best: str | None = None
    best_len = -1
    for label in labels:
        lk = label_key(label)
        if key == lk or (key.startswith(lk) and not key[len(lk)].isalnum()):
            if len(lk) > best_len:
                best, best_len = label, len(lk)
    return best


def onto_labels(value: Any, labels: Collection[str]) -> Any:
    """A parser's answer read onto a declared text space: a string is the label it folds to
    (:func:`label_key`; ``"true"`` -> ``"True"``), keeping how it was read (a guess stays a
    guess), or None when it is none of them (unparsed); other values (numbers, lists, None)
    are returned as they are."""
    if not isinstance(value, str) or value in labels:
        return value
    key = label_key(value)
    for label in labels:
        if label_key(label) == key:
            return type(value)(label) if isinstance(value, (Guess, OptionText, Matched)) else label
    return None


def read_label(text: str, labels: Collection[str]) -> str | None:
    """The label of the declared space that the reply states: the explicit answer's leading label
    when the reply has an explicit answer ("... so the answer is: **False**"), else the reply's
    own leading label (see :func:`leading_label`: a leading statement wins over the explanation
    after it, "True\n\nThe left image shows ..." is True). None: the reply is outside the
    space (unparsed), never a wrong answer."""
    return read_answer(text, lambda t: leading_label(t, labels))


def choose_label(text: str, labels: Collection[str]) -> str | None:
    """:func:`choose_letter` for labels that are words as well as letters: the first standalone
    label of the explicit answer, else of the whole reply. A word label matches in any case and
    inside markdown emphasis ("**FALSE**"), not inside a longer word ("yesterday" is no
    "yes"); a single letter keeps the letter rule (capital, standalone). At the same place the
    longest label wins."""

    def find(clean: str) -> str | None:
        plain = _EMPHASIS.sub("", clean)
        best: tuple[int, int, str] | None = None
        for label in labels:
            if is_letter(label):
                pattern = re.compile(rf"(?<![A-Za-z]){re.escape(label)}(?![A-Za-z])")
            else:
                words = r"\s+".join(re.escape(w) for w in nfkc(label).split())
                pattern = re.compile(rf"(?<!\w){words}(?!\w)", re.IGNORECASE)
            match = pattern.search(plain)
            if match and (best is None or (match.start(), -len(label)) < (best[0], best[1])):
                best = (match.start(), -len(label), label)
        if best is not None:
            return best[2]
        letters = [k for k in labels if is_letter(k)]
        return choose_letter(plain, letters) if letters and len(plain.strip()) <= 3 else None

    return read_answer(text, find)


def choose_letter(text: str, letters: Collection[str]) -> str | None:
    """The first standalone capital letter of ``letters`` in the explicit answer of ``text``
    (see :func:`read_answer`), else in the whole reply, or None.

    Standalone: not touching another Latin letter ("B", "(B)", "B.", "选B", "B选项";
    not the "A" of "Answer" or "Apple"). Lowercase letters count only when the whole
    reply is that letter ("b", "(c)"): inside a sentence a lowercase "a" is almost
    always the article.
    """
    pattern = "".join(re.escape(k) for k in letters)

    def find(clean: str) -> str | None:
        match = re.search(rf"(?<![A-Za-z])([{pattern}])(?![A-Za-z])", clean)
        if match:
            return match.group(1)
        lone = re.match(rf"^[(\[]?\s*([{pattern.lower()}])\s*[)\].、:]?$", clean.strip())
        return lone.group(1).upper() if lone else None

    return read_answer(text, find)


def random_letter(doc: Mapping[str, Any], letters: list[str], args: ChoiceArgs) -> Guess:
    """A letter of ``letters`` drawn by ``random.Random`` seeded with ``"<seed>:<document id>"``:
    the same letter for the same document and seed in every run and scheduling order."""
    if args.id_field not in doc:
        raise _doc_error(doc, args.id_field, "the random fallback names documents by this field "
                         "(answer.parser_args.id_field), which the record lacks")
    return Guess(random.Random(f"{args.seed}:{doc[args.id_field]}").choice(letters))


def _choice_space(doc: Mapping[str, Any], args: ChoiceArgs) -> dict[str, Any]:
    """A ``choice`` task's answer space when it declares none: the document's own options."""
    return {"kind": "choice", "choices": list(args.letters or option_letters(doc, args.options_field))}


@parser("choice", args=ChoiceArgs, space=_choice_space)
def choice(text: str, doc: Mapping[str, Any], args: ChoiceArgs) -> str | None:
    """The chosen option letter (or word label), among the document's own (any number of
    options), by ``rule``; with ``fallback: random`` a seeded guess when the rule finds none."""
    if args.rule == "mmmu":
        texts = {} if args.letters else option_texts(doc, args.options_field)
        letters = args.letters or list(texts)
        letter, step = last_occurrence_choice_step(text, letters, texts)
        found = OptionText(letter) if letter is not None and step == "option_text" else letter
    else:
        letters = args.letters or option_letters(doc, args.options_field)
        found = choose_letter(text, letters) if all(is_letter(k) for k in letters) else choose_label(text, letters)
    if found is None and args.fallback == "random":
        return random_letter(doc, letters, args)
    return found


# --- true / false --------------------------------------------------------

_TF = re.compile(r"(?<![A-Za-z])(true|false|yes|no|incorrect|correct|wrong)(?![A-Za-z])|(不正确|不对|不是|正确|错误|对|错|是|否)",
                 re.IGNORECASE)
_TF_VALUE = {"true": "true", "yes": "true", "correct": "true", "正确": "true", "对": "true", "是": "true",
             "false": "false", "no": "false", "incorrect": "false", "wrong": "false",
             "不正确": "false", "不对": "false", "不是": "false", "错误": "false", "错": "false", "否": "false"}
#: "not" / "n't" right before the word flips it: "not true" is false, "isn't wrong" is true.
_NEGATED = re.compile(r"(?:\bnot|n't)\s*$", re.IGNORECASE)
_FLIP = {"true": "false", "false": "true"}


def true_false(text: str) -> str | None:
    """``"true"`` / ``"false"`` from the first true/false word of the explicit answer, else of the
    reply (yes/no, correct/wrong, 对/错, 是/否 too); a "not" before it flips it ("not true" ->
    false). None: no such word."""

    def find(clean: str) -> str | None:
        match = _TF.search(clean)
        if match is None:
            return None
        value = _TF_VALUE[(match.group(1) or match.group(2)).lower()]
        return _FLIP[value] if _NEGATED.search(clean[:match.start()]) else value

    return read_answer(text, find)


@parser("true_false")
def true_false_answer(text: str, doc: Mapping[str, Any]) -> str | None:
    """``"true"`` or ``"false"`` (see :func:`true_false`); None: unparsed."""
    return true_false(text)


# --- text ----------------------------------------------------------------


@parser("text")
def text_answer(text: str, doc: Mapping[str, Any]) -> str:
    """The answer text without its wrapping ("" when nothing is left); never unparsed."""
    return strip_answer_prefix(text)


@parser("verbatim")
def verbatim_answer(text: str, doc: Mapping[str, Any]) -> str:
    """The reply as the model wrote it, surrounding whitespace stripped; never unparsed. For
    captions and other free text scored by a metric with its own tokenizer (``bleu``,
    ``corpus_bleu``, ``cider_d``): the metric treats the answer's punctuation as it treats the
    references' (``text`` drops a final period, which the references keep)."""
    return text.strip()


@parser("raw")
def raw_answer(text: str, doc: Mapping[str, Any]) -> str:
    """The reply exactly as the model returned it, whitespace included; never unparsed. For
    metrics whose reference code reads the reply untouched (``anls`` divides by its length as
    given, ``relaxed_accuracy`` compares it as it is)."""
    return text



# --- labels of a declared space -------------------------------------------------


class LabelArgs(ParserArgs):
    labels: list[str] | None = None
    """The space's labels (``[True, False]``, ``[yes, no]``, ``[left, right, both]``); a task whose
    ``answer.space`` is a list of choices read by the default ``text`` parser gets them from there."""
    labels_field: str | None = None
    """Or the record field holding each document's labels: a list, a mapping (its keys), or a
    string holding a list."""

    @field_validator("labels", mode="before")
    @classmethod
    def _labels(cls, v: Any) -> Any:
        return None if v is None else label_list(v, "labels")

    @model_validator(mode="after")
    def _one_source(self) -> "LabelArgs":
        if (self.labels is None) == (self.labels_field is None):
            raise ValueError("give labels (a list) or labels_field (a record field), one of them")
        return self


def document_labels(doc: Mapping[str, Any], args: LabelArgs) -> list[str]:
    """The labels a document is answered with (see :class:`LabelArgs`)."""
    if args.labels is not None:
        return args.labels
    assert args.labels_field is not None
    values = _options(doc, args.labels_field)
    if isinstance(values, Mapping):
        values = list(values)
    try:
        return label_list(values, args.labels_field)
    except ValueError as exc:
        raise _doc_error(doc, args.labels_field, str(exc)) from None


def _label_space(doc: Mapping[str, Any], args: LabelArgs) -> dict[str, Any]:
    """A ``label`` task's answer space when it declares none: the document's labels."""
    return {"kind": "choice", "choices": document_labels(doc, args)}


@parser("label", args=LabelArgs, space=_label_space)
def label_answer(text: str, doc: Mapping[str, Any], args: LabelArgs) -> str | None:
    """The label of the space the reply states, in the space's spelling (``"true"``, ``"FALSE"``,
    ``"**False**"``, ``"True\n\nThe left image ..."`` onto ``[True, False]``: True, False,
    False, True); None (unparsed) for a reply outside the space. See :func:`read_label`."""
    return read_label(text, document_labels(doc, args))


# --- open answers ------------------------------------------------------------


@parser("open_answer", target="raw")
def open_answer(text: str, doc: Mapping[str, Any]) -> list[Normalized]:
    """MMMU's ``parse_open_response``: the normalised candidate answers of a free-form reply (key
    answers after "is", "so", "=" ..., and the numbers in them); never unparsed. Scored by the
    metric ``open_answer_acc`` (see :mod:`mmtasks.scoring.answer_rules`)."""
    return parse_open(text)


# --- one parser per kind of document ----------------------------------------------


class ParserChoice(ParserArgs):
    parser: str
    """A built-in (or installed package's) parser."""
    parser_args: dict[str, Any] = Field(default_factory=dict)
    """Its arguments, validated against its own schema."""


def case_key(value: Any) -> str:
    """How ``by_field`` matches a field's value with its cases: its text, except that a boolean
    (a JSON ``true``, a YAML key ``true``) and the strings ``true``/``false`` in any case are
    ``"true"``/``"false"``, so ``cases: {true: ..., false: ...}`` matches a boolean field."""
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return text.lower() if text.lower() in ("true", "false") else text


class ByFieldArgs(ParserArgs):
    field: str
    """The record field whose value picks the parser (MMMU: ``question_type``)."""
    cases: dict[str, ParserChoice]
    """Field value -> the parser for documents with that value. The value's text is matched; a
    boolean field matches the keys ``true``/``false`` (in any case, quoted or not)."""
    default: ParserChoice | None = None
    """The parser for any other value (None: another value is a data error)."""
    _bound: dict[str, BoundParser] = PrivateAttr(default_factory=dict)
    _default: BoundParser | None = PrivateAttr(default=None)

    @field_validator("cases", mode="before")
    @classmethod
    def _case_keys(cls, v: Any) -> Any:
        # a YAML key true/false arrives as a boolean; 1 or 2.5 as a number: each is its text
        if not isinstance(v, Mapping):
            return v
        keys = [case_key(k) for k in v]
        clash = next((k for k in keys if keys.count(k) > 1), None)
        if clash is not None:
            raise ValueError(f"two cases match the value {clash!r} (true/false are matched in any case)")
        return {case_key(k): case for k, case in v.items()}

    @model_validator(mode="after")
    def _bind(self) -> "ByFieldArgs":
        for key, case in self.cases.items():
            self._bound[key] = bind(case.parser, case.parser_args, field=f"answer.parser_args.cases.{key}")
        if self.default is not None:
            self._default = bind(self.default.parser, self.default.parser_args, field="answer.parser_args.default")
        return self

    def parser_for(self, doc: Mapping[str, Any]) -> BoundParser:
        value = doc.get(self.field)
        bound = self._bound.get(case_key(value)) if value is not None else None
        if bound is None:
            bound = self._default
        if bound is None:
            raise _doc_error(doc, self.field, f"no parser for {value!r} (answer.parser_args.cases names "
                             f"{', '.join(sorted(self.cases))}; add a case or a default)")
        return bound


def _by_field_space(doc: Mapping[str, Any], args: ByFieldArgs) -> dict[str, Any] | None:
    """The answer space of the parser the document's field picks (None: it declares none)."""
    return args.parser_for(doc).space(doc)


@parser("by_field", args=ByFieldArgs, space=_by_field_space)
def by_field(text: str, doc: Mapping[str, Any], args: ByFieldArgs) -> Any:
    """The answer as parsed by the parser the document's ``field`` picks (MMMU: ``choice`` for
    ``multiple-choice`` questions, ``open_answer`` for the others)."""
    return args.parser_for(doc)(text, doc)
