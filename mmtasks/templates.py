"""Prompt templates: Jinja in a sandboxed environment with strict undefined variables.

Templates place images with ``{{ image(i) }}`` (0-based index into the
document's images); rendering returns the text with sentinels that
:func:`split_on_images` turns into interleaved text and image parts.

A judge prompt that frames the model's text with delimiters passes that text through the
``escape_delimiters`` filter (:func:`escape_delimiters`), so that the text cannot close its frame
or open another: ``{{ response | escape_delimiters("<answer>", "</answer>") }}``.
"""

from __future__ import annotations

import ast
import contextvars
import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any, TypeVar

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from mmtasks.errors import TemplateError

_SENTINEL = "\x00IMG:{}\x00"
_VIDEO_SENTINEL = "\x00VID:{}:{}\x00"
_SENTINEL_RE = re.compile("\x00(?:IMG:(\\d+)|VID:(\\d+):(-?\\d+))\x00")
#: what a NUL inside a value becomes in rendered text, so that no record text can hold the image marker
_NUL_ESCAPE = "\ufffd"

#: one rendering's bounds: characters out, loop iterations, seconds (a prompt is a few thousand
#: characters and a few hundred iterations; a hostile template hits a bound, not the machine)
MAX_RENDER_CHARS = 4_000_000
MAX_RENDER_ITERATIONS = 1_000_000
MAX_RENDER_SECONDS = 5.0


class _ImageRef(str):
    """What ``image(i)`` returns: the only text allowed to carry the image marker."""


def _image(i: Any) -> _ImageRef:
    return _ImageRef(_SENTINEL.format(int(i)))


def _video(i: Any) -> _ImageRef:
    """``video(i)``: every sampled frame of the document's i-th video, in order (a native-video
    backend gets them as one video)."""
    return _ImageRef(_VIDEO_SENTINEL.format(int(i), -1))


def _frame(i: Any, k: Any) -> _ImageRef:
    """``frame(i, k)``: the k-th sampled frame of the i-th video, alone (with text beside it, e.g.
    its timestamp, the frames go as images to every backend)."""
    if int(k) < 0:
        raise ValueError(f"frame({i}, {k}): the frame number must be 0 or more")
    return _ImageRef(_VIDEO_SENTINEL.format(int(i), int(k)))


def _finalize(value: Any) -> str:
    """Every ``{{ ... }}`` output: values (record text, model answers) have their NULs escaped,
    so only ``image(i)`` can place an image."""
    if type(value) is _ImageRef:
        return value
    text = value if isinstance(value, str) else str(value)
    return text.replace("\x00", _NUL_ESCAPE) if "\x00" in text else text


class _Budget:
    """The bounds of one rendering (per thread: see :data:`_budget`)."""

    def __init__(self) -> None:
        self.deadline = time.monotonic() + MAX_RENDER_SECONDS
        self.iterations = 0

    def tick(self) -> None:
        self.iterations += 1
        if self.iterations > MAX_RENDER_ITERATIONS:
            raise _TooBig(f"template loops ran more than {MAX_RENDER_ITERATIONS} iterations")
        if self.iterations & 1023 == 0 and time.monotonic() > self.deadline:
            raise _TooBig(f"template rendering took more than {MAX_RENDER_SECONDS:g} s")


class _TooBig(Exception):
    pass


_budget: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("mmtasks_template_budget", default=None)


def _bounded(iterable: Any) -> Iterator[Any]:
    """Wraps the iterable of every ``{% for %}`` loop: each item counts against the rendering's budget."""
    budget = _budget.get()
    for item in iterable:
        if budget is not None:
            budget.tick()
        yield item


class _Environment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        """``'x' * 10**9`` and ``9 ** 9 ** 9`` are refused before they are computed."""
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_RENDER_CHARS:
                    raise _TooBig(f"template builds a value longer than {MAX_RENDER_CHARS}")
        if (operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1
                and right * math.log2(abs(left)) > 100_000):
            raise _TooBig("template computes a power too large")
        return super().call_binop(context, operator, left, right)


#: what the bracket characters of a delimiter found in quoted text become (visible, and no bracket)
_DEFUSED = str.maketrans({"<": "&lt;", ">": "&gt;", "[": "(", "]": ")", "{": "(", "}": ")"})
_BRACKETS = frozenset("<>[]{}")
_APOSTROPHES = "'\u2019\u2018`"


@lru_cache(maxsize=256)
def _delimiter_pattern(delimiters: tuple[str, ...]) -> re.Pattern[str]:
    """Every spelling of ``delimiters``: any case, any whitespace (none included) between their
    tokens, any number where they hold a number (``[Turn 1]`` finds ``[ turn 12 ]``), any apostrophe."""
    alternatives = []
    for delimiter in delimiters:
        if not isinstance(delimiter, str) or not _BRACKETS.intersection(delimiter):
            raise ValueError(f"escape_delimiters: {delimiter!r} holds no bracket (<>, [], {{}}) to escape")
        parts = []
        for token in re.findall(r"\d+|[^\W\d_]+|_|[^\w\s]", delimiter):
            if token.isdigit():
                parts.append(r"\d+")
            elif token in _APOSTROPHES:
                parts.append(f"[{_APOSTROPHES}]")
            else:
                parts.append(re.escape(token))
        alternatives.append(r"\s*".join(parts))
    return re.compile("|".join(f"(?:{a})" for a in sorted(alternatives, key=len, reverse=True)), re.IGNORECASE)


def escape_delimiters(value: Any, *delimiters: str) -> str:
    """The ``escape_delimiters`` filter: ``value`` (the model's text) with every spelling of the
    given delimiters defused - their brackets turned into ``&lt;``/``&gt;`` and parentheses - so
    the text inside a prompt's frame can neither close it nor open another frame of the prompt,
    whatever its case or spacing (``</ANSWER>``, ``</answer >``, ``< / answer>``)."""
    text = value if isinstance(value, str) else str(value)
    if not delimiters:
        raise ValueError("escape_delimiters needs the delimiters to escape, e.g. escape_delimiters('<answer>', '</answer>')")
    return _delimiter_pattern(tuple(delimiters)).sub(lambda m: m.group(0).translate(_DEFUSED), text)


#: the longest string the ``literal`` filter reads
MAX_LITERAL_CHARS = 100_000


def literal(value: Any) -> Any:
    """The ``literal`` filter: a string holding a Python literal (a list, a number, a string ...)
    as that value (``ast.literal_eval``); MMMU's options are a string holding a list:
    ``{% for option in doc.options | literal %}``. Anything else is returned as it is. The
    ``choice`` parser reads options written as a string with it too."""
    if not isinstance(value, str):
        return value
    if len(value) > MAX_LITERAL_CHARS:
        raise ValueError(f"literal: the string is longer than {MAX_LITERAL_CHARS} characters")
    try:
        return ast.literal_eval(value.strip())
    except (SyntaxError, MemoryError, RecursionError):
        raise ValueError(f"literal: not a Python literal: {value[:80]!r}") from None


@lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    env = _Environment(
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        finalize=_finalize,
    )
    env.globals["image"] = _image
    env.globals["video"] = _video
    env.globals["frame"] = _frame
    env.filters["escape_delimiters"] = escape_delimiters
    env.filters["literal"] = literal
    env.globals["__mmtasks_bounded"] = _bounded
    return env


@lru_cache(maxsize=512)
def compile_template(source: str, origin: str = "<template>") -> jinja2.Template:
    env = environment()
    try:
        tree = env.parse(source)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Call(nodes.Name("__mmtasks_bounded", "load"), [loop.iter], [], None, None, lineno=loop.lineno)
        return env.template_class.from_code(env, env.compile(tree), env.make_globals(None), None)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"template syntax error: {exc.message} (template line {exc.lineno})", file=origin) from None


_DOC_FIELD = re.compile(r"\{\{\s*doc\.([A-Za-z_]\w*)\s*(\|\s*length\s*)?\}\}")


@lru_cache(maxsize=512)
def doc_field(source: str) -> tuple[str, bool] | None:
    """For ``{{ doc.NAME }}`` and ``{{ doc.NAME | length }}`` (breakdown values): the field
    name and whether its length is asked; None for any other template."""
    m = _DOC_FIELD.fullmatch(source)
    if m is None or hasattr(dict, m.group(1)):  # doc.items & co. are dict methods for Jinja
        return None
    return m.group(1), m.group(2) is not None


def _render_doc_field(name: str, length: bool, doc: dict[str, Any]) -> str:
    """What Jinja renders for :func:`doc_field` templates, without building a Jinja context."""
    if name not in doc:
        raise jinja2.UndefinedError(f"'dict object' has no attribute '{name}'")
    value = doc[name]
    return str(len(value)) if length else _finalize(value)


def render(source: str, variables: dict[str, Any], *, origin: str = "<template>", doc_id: str | None = None, field: str | None = None) -> str:
    """Render ``source`` with ``variables``; undefined variables are errors naming the field."""
    simple = doc_field(source)
    if simple is not None and isinstance(variables.get("doc"), dict):
        try:
            return _render_doc_field(*simple, variables["doc"])
        except jinja2.UndefinedError as exc:
            raise TemplateError(f"undefined template variable: {exc.message}", file=origin, doc_id=doc_id, field=field) from None
        except TypeError as exc:
            raise TemplateError(f"template failed: {exc}", file=origin, doc_id=doc_id, field=field) from None
    template = compile_template(source, origin)
    token = _budget.set(_Budget())
    try:
        out: list[str] = []
        size = 0
        for chunk in template.generate(**variables):
            size += len(chunk)
            if size > MAX_RENDER_CHARS:
                raise _TooBig(f"template output is longer than {MAX_RENDER_CHARS} characters")
            out.append(chunk)
        return "".join(out)
    except _TooBig as exc:
        raise TemplateError(f"template is too costly: {exc}", file=origin, doc_id=doc_id, field=field) from None
    except (MemoryError, RecursionError, OverflowError) as exc:
        raise TemplateError(f"template is too costly: {type(exc).__name__}", file=origin, doc_id=doc_id, field=field) from None
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"undefined template variable: {exc.message}", file=origin, doc_id=doc_id, field=field) from None
    except jinja2.exceptions.SecurityError as exc:
        raise TemplateError(f"template does something unsafe: {exc}", file=origin, doc_id=doc_id, field=field) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError) as exc:
        raise TemplateError(f"template failed: {exc}", file=origin, doc_id=doc_id, field=field) from None
    finally:
        _budget.reset(token)


def split_on_images(text: str) -> list[Any]:
    """Split rendered text into text pieces, image indices and ``(video, frame)`` pairs (frame -1:
    all the video's frames). Text is kept as written, whitespace beside an image included; only
    empty pieces are left out."""
    out: list[Any] = []
    pos = 0
    for m in _SENTINEL_RE.finditer(text):
        if m.start() > pos:
            out.append(text[pos : m.start()])
        out.append(int(m.group(1)) if m.group(1) is not None else (int(m.group(2)), int(m.group(3))))
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


class TagError(ValueError):
    """A tag that names no image of the document."""


#: what besides text a list of prompt pieces holds (image indices, boxed pieces), passed through as it is
_Piece = TypeVar("_Piece")


def split_on_tags(pieces: Sequence[str | _Piece], pattern: Any, n_images: int, base: int = 1,
                  unmatched: Callable[[str], None] | None = None) -> list[str | int | _Piece]:
    """Replace each match of ``pattern`` in the text pieces by the image it names.

    With a capture group the group is the image's number (``base``: the first image's);
    without one the k-th match is the k-th image. A tag naming an image the document does not
    have raises :class:`TagError`; with ``unmatched``, it is kept as text instead and
    ``unmatched(tag)`` is called. Image indices already in ``pieces`` are kept. A task's pattern
    (:func:`mmtasks.config.task_regex.compile_task_pattern`) runs under its time bound
    (:class:`~mmtasks.config.task_regex.PatternTimeout`).
    """
    from mmtasks.config import task_regex

    out: list[str | int | _Piece] = []
    k = 0
    kept = False
    for piece in pieces:
        if not isinstance(piece, str):
            out.append(piece)
            continue
        pos = 0
        matches = task_regex.finditer(pattern, piece) if isinstance(pattern, task_regex.Pattern) else pattern.finditer(piece)
        for m in matches:
            if m.start() > pos:
                out.append(piece[pos : m.start()])
            if pattern.groups:
                try:
                    index = int(m.group(1)) - base
                except (TypeError, ValueError):
                    raise TagError(f"image tag {m.group()!r} does not give a number") from None
            else:
                index = k
            k += 1
            if not 0 <= index < n_images and unmatched is not None:
                unmatched(m.group())  # the tag stays in the text
                kept = True
                out.append(m.group())
                pos = m.end()
                continue
            if not 0 <= index < n_images:
                raise TagError(f"image tag {m.group()!r} names image {index + base if pattern.groups else index + 1}, "
                               f"but the document has {n_images} image{'' if n_images == 1 else 's'}")
            out.append(index)
            pos = m.end()
        if pos < len(piece):
            out.append(piece[pos:])
    if not kept:
        return out
    merged: list[str | int | _Piece] = []  # a kept tag and the text around it are one text piece
    for part in out:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] = merged[-1] + part
        else:
            merged.append(part)
    return merged
