"""Reading task YAML: safe loading, ``include`` of a base file, validation errors as one line."""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from mmtasks.errors import ConfigError, ConfigProblems

M = TypeVar("M", bound=BaseModel)


if TYPE_CHECKING:  # the two have one interface
    from yaml import SafeLoader as _SafeLoader
else:
    #: libyaml's safe loader when PyYAML was built with it (ten times faster), else the pure-Python one
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: the most nodes a YAML document may hold once its aliases are expanded: far above any task
#: file (a few thousand), far below an alias bomb (9 levels of 9 aliases: 387 million)
MAX_EXPANDED_NODES = 200_000


class _LoadProblem(yaml.YAMLError):
    def __init__(self, problem: str, line: int | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


class _StrictLoader(_SafeLoader):
    """libyaml's parser and composer (fast), with two checks before anything is built:
    duplicate keys in a mapping, and alias expansion bounded by :data:`MAX_EXPANDED_NODES`."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_expanded_size(node)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, Any], int] = {}
            for key, _ in node.value:
                if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                    continue
                line = key.start_mark.line + 1
                if (key.tag, key.value) in seen:
                    raise _LoadProblem(f"duplicate key {key.value!r} (first at line {seen[key.tag, key.value]})", line)
                seen[key.tag, key.value] = line
        return super().construct_mapping(node, deep)


# YAML 1.2's booleans: only true/false (any of their three spellings). YAML 1.1's yes/no/on/off
# stay strings, so an answer space written [yes, no] keeps its words (PyYAML would read it as
# [True, False]); a boolean setting given "yes" is still read as true by its typed field.
_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in _SafeLoader.yaml_implicit_resolvers.items()
}
for _first in "tTfF":
    _StrictLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                        list(_first))


def _check_expanded_size(root: yaml.Node) -> None:
    """Count the nodes of ``root`` with every alias expanded (each distinct node once, memoized)."""
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    active: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            active.discard(key)
            children = _children(node)
            total = 1 + sum(size[id(c)] for c in children)
            if total > MAX_EXPANDED_NODES:
                raise _LoadProblem(f"aliases expand to more than {MAX_EXPANDED_NODES} values (an alias bomb?)",
                                   node.start_mark.line + 1)
            size[key] = total
            continue
        if key in size:
            continue
        if key in active:
            raise _LoadProblem("an alias refers to itself", node.start_mark.line + 1)
        active.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=path) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    data = parse_yaml_text(text, file=path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("a task file must be a mapping of keys to values", file=path)
    return data


def parse_yaml_text(text: str, *, file: Path) -> Any:
    """``text`` (read from ``file``, or a part of it) parsed by the strict safe loader; problems are
    one-line errors naming ``file`` and the line."""
    path = file
    try:
        data = yaml.load(text, Loader=_StrictLoader)
    except _LoadProblem as exc:
        raise ConfigError(exc.problem, file=path, line=exc.line) from None
    except RecursionError:
        raise ConfigError("nested too deeply", file=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"malformed YAML: {problem}", file=path, line=line) from None
    return data


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def load_with_includes(path: Path, _seen: tuple[Path, ...] = (), *, roots: Sequence[Path] | None = None,
                       memo: dict[Path, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Load ``path``; an ``include: other.yaml`` key (relative to the file) is merged underneath.

    Included files must resolve (links followed) inside ``roots`` - the task folders searched
    (the built-in tasks and ``--include-path``); by default the folder of ``path`` itself.
    ``memo`` keeps each file's parsed YAML for reuse (a base included by every task of a
    benchmark is read once); the data returned must then be treated as read-only.
    """
    path = path.resolve()
    if roots is None:
        roots = (path.parent,)
    real_roots = [Path(r).resolve() for r in roots]
    if path in _seen:
        raise ConfigError("include cycle: " + " -> ".join(p.name for p in (*_seen, path)), file=path)
    if memo is None:
        data = read_yaml(path)
    else:
        if path not in memo:
            memo[path] = read_yaml(path)
        data = dict(memo[path])
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
        if not any(inc_path.is_relative_to(r) for r in real_roots):
            raise ConfigError(f"included file {inc!r} is outside the task folders (the built-in tasks and --include-path)",
                              file=path, field="include")
        if not inc_path.is_file():
            raise ConfigError(f"included file {inc!r} not found next to this file", file=path, field="include")
        merged = deep_merge(merged, load_with_includes(inc_path, (*_seen, path), roots=real_roots, memo=memo))
    return deep_merge(merged, data)


def validate(model: type[M], data: dict[str, Any], *, file: Path | str) -> M:
    """Validate ``data``; each error is one line naming the file and the key (an unknown key with
    a "did you mean" from the keys allowed at its place). Several errors are raised together
    (:class:`~mmtasks.errors.Problems`)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = [_problem(model, err, file) for err in exc.errors()]
        if len(problems) == 1:
            raise problems[0] from None
        raise ConfigProblems([(None, p) for p in problems], stage="in this file") from None


def validate_without_errors(model: type[M], data: dict[str, Any]) -> M | None:
    """``data`` validated with every top-level key that holds an error left out (an unknown key;
    a block with a bad or unknown key inside, whose defaults then apply as a whole, so that no
    half-read block makes errors of its own), or None when that is not enough (a required key in
    error, a whole-model rule). The preflight reads a task's data through this after reporting the
    file's own errors, so that ``check`` reports both at once; nothing is ever run with it."""
    import copy

    current = copy.deepcopy(data)
    for _ in range(5):
        try:
            return model.model_validate(current)
        except ValidationError as exc:
            removed = [_remove(current, err["loc"][:1]) for err in exc.errors()]
            if not any(removed):
                return None
    return None


def _remove(data: Any, loc: Sequence[Any]) -> bool:
    """Delete the key at ``loc`` (a path of keys and list indices); whether it was there."""
    if not loc:
        return False
    node = data
    for part in loc[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return False
    last = loc[-1]
    if isinstance(node, dict) and last in node:
        del node[last]
        return True
    return False


def _problem(model: type[BaseModel], err: Any, file: Path | str) -> ConfigError:
    loc = ".".join(str(p) for p in err["loc"])
    if err["type"] == "extra_forbidden":
        return ConfigError("unknown key", file=file, field=loc, hint=did_you_mean(str(err["loc"][-1]), keys_at(model, err["loc"][:-1])))
    if err["type"] == "missing":
        return ConfigError("required key is missing", file=file, field=loc)
    if err["type"] == "answer_space":  # a space's own check names the key inside it
        return ConfigError(err["ctx"]["message"], file=file, field=f"{loc}.{err['ctx']['key']}")
    return ConfigError(err["msg"], file=file, field=loc or None)


def did_you_mean(name: str, known: Sequence[str], listing: str = "known keys") -> str | None:
    """``did you mean 'x'?`` for the known name closest to ``name``, else ``listing: `` and the
    known names (None: none)."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"{listing}: " + ", ".join(known) if known else None


def keys_at(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The keys the schema allows at ``loc`` (a path of field names, list indices, dict keys)."""
    current: Any = model
    for part in loc:
        current = _step(current, part)
        if current is None:
            return []
    current = _model_in(current)
    return list(current.model_fields) if current is not None else []


def _model_in(tp: Any) -> type[BaseModel] | None:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            found = _model_in(arg)
            if found is not None:
                return found
    return None


def _step(tp: Any, part: Any) -> Any:
    """The type one step into ``tp``: a model's field, a list's item, a dict's value."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            found = _step(arg, part)
            if found is not None:
                return found
        return None
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        field = tp.model_fields.get(str(part))
        return field.annotation if field is not None else None
    if origin in (list, tuple, set, frozenset) and args and isinstance(part, int):
        return args[0]
    if origin is dict and len(args) == 2:
        return args[1]
    return None
