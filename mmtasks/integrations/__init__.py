"""mmtasks inside other tools' loops: the ``transformers`` Trainer callback
(:class:`~mmtasks.integrations.trainer.MMTasksCallback`, imported on first use: transformers is an extra)."""

from __future__ import annotations

from typing import Any

__all__ = ["MMTasksCallback"]


def __getattr__(name: str) -> Any:
    if name == "MMTasksCallback":
        from mmtasks.integrations.trainer import MMTasksCallback

        return MMTasksCallback
    raise AttributeError(name)
