"""mmtasks: an evaluation harness for multimodal models on multi-image and
multi-turn conversation benchmarks.

``mmtasks.evaluate(tasks=..., model=...)`` runs an evaluation from Python (see
:mod:`mmtasks.api`); it is imported on first use, so ``import mmtasks`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["EvaluationResult", "RunConfig", "evaluate", "__version__"]

if TYPE_CHECKING:
    from mmtasks.api import EvaluationResult, evaluate
    from mmtasks.config.run_config import RunConfig


def __getattr__(name: str) -> Any:
    if name in ("evaluate", "EvaluationResult"):
        from mmtasks import api

        return getattr(api, name)
    if name == "RunConfig":
        from mmtasks.config.run_config import RunConfig

        return RunConfig
    raise AttributeError(f"module 'mmtasks' has no attribute {name!r}")
