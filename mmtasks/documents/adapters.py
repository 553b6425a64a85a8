"""Record adapters: turn a source's own record schema into the local format a task reads.

A task selects one with ``dataset.adapter: NAME``. Adapters are registered by
name; each receives one raw record and returns the record in the local format.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from mmtasks.errors import ConfigError

Adapter = Callable[[dict[str, Any]], dict[str, Any]]
_ADAPTERS: dict[str, Adapter] = {}


def adapter(name: str) -> Callable[[Adapter], Adapter]:
    def deco(fn: Adapter) -> Adapter:
        _ADAPTERS[name] = fn
        return fn

    return deco


def get_adapter(name: str) -> Adapter:
    # Built-in adapters live next to the benchmarks they serve.
    from mmtasks.documents import mmrc_hf  # noqa: F401

    try:
        return _ADAPTERS[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_ADAPTERS), n=1)
        raise ConfigError(f"unknown dataset adapter {name!r}", field="dataset.adapter",
                          hint=f"did you mean {close[0]!r}?" if close else f"known: {', '.join(sorted(_ADAPTERS)) or 'none'}") from None
