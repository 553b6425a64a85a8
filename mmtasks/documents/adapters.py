"""Record adapters: turn a source's own record schema into the local format a task reads.

A task selects one with ``dataset.adapter: NAME``. Adapters are registered in
:data:`mmtasks.registry.adapters` (``@adapters.register("name")``); each receives one
raw record and returns the record in the local format. Benchmarks register
theirs in plugin files of their task folders (MMRC: ``mmrc`` and ``mmrc_hf``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Adapter = Callable[[dict[str, Any]], dict[str, Any]]
