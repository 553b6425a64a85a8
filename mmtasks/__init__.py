"""mmtasks: an evaluation harness for multimodal models on multi-image and
multi-turn conversation benchmarks.

``mmtasks.evaluate(tasks=..., model=...)`` runs an evaluation from Python (see
:mod:`mmtasks.api`). The package's top module sits at the bottom layer, so it names
the API's module as a string and imports it on first use (as the registries do
their built-ins): ``import mmtasks`` stays cheap and imports nothing upward.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"
__all__ = ["EvaluationResult", "RunConfig", "compare", "evaluate", "__version__"]

#: public name -> the module that defines it, imported on first access
_LAZY = {
    "evaluate": "mmtasks.api",
    "EvaluationResult": "mmtasks.api",
    "RunConfig": "mmtasks.config.run_config",
    "compare": "mmtasks.comparison.runs",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mmtasks' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
