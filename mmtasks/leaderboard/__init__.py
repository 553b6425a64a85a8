"""The static leaderboard: runs' ``results.json`` -> ``leaderboard.json`` + a static site + figures.

- :mod:`.results` reads and validates one run's ``results.json``.
- :mod:`.sections` reads each benchmark folder's ``leaderboard.yaml`` (its tab: columns, charts,
  the paper's reference rows), found in every task folder the task registry knows.
- :mod:`.schema` is the versioned ``leaderboard.json`` schema (pydantic).
- :mod:`.build` turns runs (and the papers' numbers) into a :class:`~.schema.Leaderboard`.
- :mod:`.site` writes the static site; :mod:`.plot` writes matplotlib figures.
- :mod:`.cli` is ``mmtasks leaderboard build|plot|schema``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mmtasks.leaderboard.build import build_leaderboard
    from mmtasks.leaderboard.schema import SCHEMA_VERSION, Leaderboard

__all__ = ["SCHEMA_VERSION", "Leaderboard", "build_leaderboard"]


def __getattr__(name: str) -> Any:
    # On first use: `mmtasks run` imports mmtasks.leaderboard.cli (for its subcommand's flags)
    # and must not pay for building leaderboards (~200 ms of imports).
    if name == "build_leaderboard":
        from mmtasks.leaderboard.build import build_leaderboard

        return build_leaderboard
    if name in ("SCHEMA_VERSION", "Leaderboard"):
        from mmtasks.leaderboard import schema

        return getattr(schema, name)
    raise AttributeError(f"module 'mmtasks.leaderboard' has no attribute {name!r}")
