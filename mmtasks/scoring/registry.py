"""Registries of answer parsers and per-sample metrics, referenced by name from task YAML.

A parser turns a raw reply into the value a metric compares (``None`` when the
reply cannot be parsed, which may trigger a re-ask). A metric compares the
parsed answer with the target and returns a per-sample score on the task's
reporting scale (0-100 for RealBench).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from typing import Any

from mmtasks.errors import ConfigError

Parser = Callable[[str], Any]
#: metric(parsed, target, doc) -> float | None (None: not applicable to this sample)
Metric = Callable[[Any, Any, dict], "float | None"]

_PARSERS: dict[str, Parser] = {}
_METRICS: dict[str, Metric] = {}


def parser(name: str) -> Callable[[Parser], Parser]:
    def deco(fn: Parser) -> Parser:
        _PARSERS[name] = fn
        return fn

    return deco


def metric(name: str) -> Callable[[Metric], Metric]:
    def deco(fn: Metric) -> Metric:
        _METRICS[name] = fn
        return fn

    return deco


def _load_builtins() -> None:
    # Importing registers the built-in parsers and metrics.
    from mmtasks.scoring import parsers, metrics  # noqa: F401
    from mmtasks.scoring import mmrc_parsers  # noqa: F401

    # Judge-based benchmarks register their judge-reply parsers in their own modules.
    for name in ("mmdu", "mmrc"):
        try:
            importlib.import_module(f"mmtasks.scoring.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"mmtasks.scoring.{name}":
                raise


def get_parser(name: str, *, file: str | None = None) -> Parser:
    _load_builtins()
    try:
        return _PARSERS[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_PARSERS), n=1)
        raise ConfigError(
            f"unknown parser {name!r}", file=file, field="answer.parser",
            hint=f"did you mean {close[0]!r}?" if close else f"known: {', '.join(sorted(_PARSERS))}",
        ) from None


def get_metric(name: str, *, file: str | None = None) -> Metric:
    _load_builtins()
    try:
        return _METRICS[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_METRICS), n=1)
        raise ConfigError(
            f"unknown metric function {name!r}", file=file, field="metrics",
            hint=f"did you mean {close[0]!r}?" if close else f"known: {', '.join(sorted(_METRICS))}",
        ) from None
