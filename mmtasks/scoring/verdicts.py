"""The built-in judge-verdict parsers (``judge.parser`` in the task YAML), registered in
:data:`mmtasks.registry.verdict_parsers`.

A verdict parser turns a judge's reply text into the verdict's fields (``None``: the
reply is not a verdict, and the judge is re-asked). Importing this module imports
the modules that define the built-in ones.
"""

from __future__ import annotations

from mmtasks.scoring import mmdu, mmrc_parsers  # noqa: F401  (their decorators register mmdu_judge, mmrc_judge)
