"""Prompt templates: Jinja in a sandboxed environment with strict undefined variables.

Templates place images with ``{{ image(i) }}`` (0-based index into the
document's images); rendering returns the text with sentinels that
:func:`split_on_images` turns into interleaved text and image parts.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from mmtasks.errors import TemplateError

_SENTINEL = "\x00IMG:{}\x00"
_SENTINEL_RE = re.compile("\x00IMG:(\\d+)\x00")


@lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.globals["image"] = lambda i: _SENTINEL.format(int(i))
    return env


@lru_cache(maxsize=512)
def compile_template(source: str, origin: str = "<template>") -> jinja2.Template:
    try:
        return environment().from_string(source)
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
    return str(len(value)) if length else str(value)


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
    try:
        return template.render(**variables)
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"undefined template variable: {exc.message}", file=origin, doc_id=doc_id, field=field) from None
    except jinja2.exceptions.SecurityError as exc:
        raise TemplateError(f"template does something unsafe: {exc}", file=origin, doc_id=doc_id, field=field) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        raise TemplateError(f"template failed: {exc}", file=origin, doc_id=doc_id, field=field) from None


def split_on_images(text: str) -> list[str | int]:
    """Split rendered text into text pieces and image indices, dropping empty text pieces."""
    out: list[str | int] = []
    pos = 0
    for m in _SENTINEL_RE.finditer(text):
        if m.start() > pos:
            out.append(text[pos : m.start()])
        out.append(int(m.group(1)))
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return [p for p in out if not (isinstance(p, str) and not p.strip())]
