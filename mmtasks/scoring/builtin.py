"""The built-in scoring extensions: importing this module registers the built-in answer
parsers, metrics (with the generic text metrics of :mod:`mmtasks.scoring.text_metrics`),
aggregators (``per_turn_mean``: :mod:`mmtasks.scoring.turn_aggregation`) and judge-verdict parsers (the registries of
:mod:`mmtasks.registry` import it the first time they are asked for a name)."""

from __future__ import annotations

from mmtasks.scoring import (aggregation, caption_metrics, metrics, parsers, text_metrics, turn_aggregation,  # noqa: F401  (register)
                             verdicts, vqa_metrics)
