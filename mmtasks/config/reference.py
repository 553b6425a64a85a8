"""The task-key reference page (``docs/task-keys.md``), written from the config models themselves.

Every key of a task YAML is a field of :class:`~mmtasks.config.task_config.TaskConfig` or of a
model nested in it; the page lists each with its type, its default and its docstring, so it
cannot say anything the code does not. ``scripts/make_task_keys.py`` writes it, and a test fails
when the page in the repository is not what this module writes now.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from mmtasks.config.task_config import TaskConfig

#: the page's path in the repository
PAGE = "docs/task-keys.md"

_HEADER = """\
# Task keys

Every key a task YAML file may hold, with its type, its default and what it does. An unknown key
is a load error naming the file and the key, with a "did you mean". String values are Jinja
templates where the description says so (``{{ doc.field }}``: see [vocabulary.md](vocabulary.md)
for the parsers, metrics, protocols and aggregators they name).

This page is generated from the config models (`mmtasks/config/task_config.py`,
`mmtasks/core/request.py`) by `scripts/make_task_keys.py`; a test fails when it is stale.
Do not edit it by hand.
"""


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation names (inside ``X | None``, ``list[X]``, ``dict[str, X]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _models_in(arg)


def _type_name(annotation: Any) -> str:
    """A type as a reader writes it: ``str | None``, ``list[str]``, ``GenerationConfig``."""
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            return f"list[{_type_name(args[0])}]"
        return f"{name}[{', '.join('...' if a is Ellipsis else _type_name(a) for a in args)}]"
    if annotation is Any:
        return "any"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        value = field.default_factory()
    else:
        value = field.default
    if value is PydanticUndefined:
        return ""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, tuple):
        value = list(value)
    text = json.dumps(value, ensure_ascii=False)
    return f"`{text}`" if len(text) <= 60 else "(see the section)"


def _bounds(field: Any) -> str:
    """The field's range (``ge``/``gt``/``le``/``lt``, finite numbers only) as words."""
    words = {"ge": "at least", "gt": "more than", "le": "at most", "lt": "less than"}
    parts = [f"{words[name]} {getattr(m, name)}" for m in field.metadata for name in words if hasattr(m, name)]
    lengths = [(m.min_length, "characters at least") for m in field.metadata if getattr(m, "min_length", None)]
    parts += [f"{n} {what}" for n, what in lengths]
    return ("Range: " + ", ".join(parts) + ".") if parts else ""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _models() -> list[type[BaseModel]]:
    """TaskConfig and every model nested in it, in the order a reader meets them."""
    order: list[type[BaseModel]] = []
    pending: list[type[BaseModel]] = [TaskConfig]
    while pending:
        model = pending.pop(0)
        if model in order:
            continue
        order.append(model)
        for field in model.model_fields.values():
            pending.extend(m for m in _models_in(field.annotation) if m not in order)
    return order


def task_keys_markdown() -> str:
    """The whole page."""
    out = [_HEADER]
    for model in _models():
        title = "TaskConfig: the top level of a task file" if model is TaskConfig else model.__name__
        out.append(f'<a id="{model.__name__.lower()}"></a>\n\n## {title}\n')
        doc = " ".join((model.__doc__ or "").split())
        if doc:
            out.append(doc + "\n")
        out.append("| key | type | default | description |\n| --- | --- | --- | --- |")
        for name, field in model.model_fields.items():
            description = " ".join(p for p in (field.description or "", _bounds(field)) if p)
            out.append(f"| `{field.alias or name}` | {_cell(_type_name(field.annotation))} | {_cell(_default(field))} | "
                       f"{_cell(description)} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
