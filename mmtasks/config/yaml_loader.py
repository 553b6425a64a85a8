"""Reading task YAML: safe loading, ``include`` of a base file, validation errors as one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from mmtasks.errors import ConfigError

M = TypeVar("M", bound=BaseModel)

#: libyaml's safe loader when PyYAML was built with it (about 10x faster), else the pure-Python one
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=path) from None
    try:
        data = yaml.load(text, Loader=_SafeLoader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"malformed YAML: {problem}", file=path, line=line) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("a task file must be a mapping of keys to values", file=path)
    return data


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def load_with_includes(path: Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Load ``path``; an ``include: other.yaml`` key (relative to the file) is merged underneath."""
    path = path.resolve()
    if path in _seen:
        raise ConfigError("include cycle: " + " -> ".join(p.name for p in (*_seen, path)), file=path)
    data = read_yaml(path)
    includes = data.pop("include", None)
    if includes is None:
        return data
    if isinstance(includes, str):
        includes = [includes]
    if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
        raise ConfigError("include must be a file name or a list of file names", file=path, field="include")
    merged: dict[str, Any] = {}
    for inc in includes:
        inc_path = (path.parent / inc).resolve()
        if not inc_path.is_file():
            raise ConfigError(f"included file {inc!r} not found next to this file", file=path, field="include")
        merged = deep_merge(merged, load_with_includes(inc_path, (*_seen, path)))
    return deep_merge(merged, data)


def validate(model: type[M], data: dict[str, Any], *, file: Path | str) -> M:
    """Validate ``data``; the first error becomes one line naming the file and the key."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            raise ConfigError("unknown key", file=file, field=loc) from None
        if err["type"] == "missing":
            raise ConfigError("required key is missing", file=file, field=loc) from None
        raise ConfigError(err["msg"], file=file, field=loc or None) from None
