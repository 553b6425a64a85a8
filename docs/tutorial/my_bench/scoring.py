"""The tutorial's plugin: one metric the YAML vocabulary does not have."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mmtasks.plugin import metric


@metric("image_distance")
def image_distance(parsed: int | None, target: Any, doc: Mapping[str, Any]) -> float | None:
    """How many images away from the red one the answer points (0: right). None: no answer read."""
    return None if parsed is None else float(abs(parsed - int(target)))
