"""MMRC's six abilities, written once: their codes, metric names, other names (for the Hub
adapter) and the verdict fields the judge must give for each (with what the ``random``
judge draws)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Ability:
    code: str
    """As the record and the YAML write it (``IE``)."""
    metric: str
    """Its metric in results.json (``ie``)."""
    names: tuple[str, ...]
    """Other names a release may use for it (lower case), for the Hub adapter."""
    verdict: dict[str, Any]
    """The fields the judge's verdict must hold for a question of this ability, with what the
    ``random`` judge draws for each (``[low, high]``, a bound may name an earlier field;
    ``bool``; ``image_subset``)."""


#: The one list of MMRC's abilities, in the paper's column order.
ABILITIES: dict[str, Ability] = {a.code: a for a in (
    Ability("IE", "ie", ("information extraction",), {"score": [0, 5], "model_items": [0, 4], "matched_items": [0, "model_items"]}),
    Ability("CR", "cr", ("cross-turn reasoning", "cross turn reasoning", "multi-turn reasoning"), {"score": [0, 5]}),
    Ability("IU", "iu", ("information update",), {"score": [0, 5]}),
    Ability("IM", "im", ("image management",), {"score": [0, 5], "named_images": "image_subset"}),
    Ability("MR", "mr", ("memory recall", "long-term memory recall"), {"score": [0, 5]}),
    Ability("AR", "ar", ("answer refusal",), {"score": [0, 5], "refused": "bool"}),
)}
ABILITY_METRICS: dict[str, str] = {code: a.metric for code, a in ABILITIES.items()}
PRECISION_METRICS = ("ep", "imp", "rp")
METRICS = (*ABILITY_METRICS.values(), "overall", *PRECISION_METRICS, "exact_match")
