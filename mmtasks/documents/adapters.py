"""Record adapters: turn a source's own record schema into the local format a task reads.

A task selects one with ``dataset.adapter: NAME``. Adapters are registered in
:data:`mmtasks.registry.adapters` (``@adapters.register("name")``); each receives one
raw record and returns the record in the local format. Importing this module
registers the built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Adapter = Callable[[dict[str, Any]], dict[str, Any]]

from mmtasks.documents import mmrc_hf  # noqa: E402,F401  (registers mmrc_hf)
