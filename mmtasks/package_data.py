"""Where the data that ships with mmtasks lives: the benchmark folders, the model presets and the
leaderboard page's sources.

In the source tree they sit at the top level, beside the package, as the design card draws it
(``tasks/``, ``models/``, ``leaderboard/``, ``viewer/``, ``reports/``). The build backend maps each into the package
(``pyproject.toml``: ``[tool.setuptools.package-dir]``), so an installed wheel holds them at
``mmtasks/tasks/``, ``mmtasks/presets/``, ``mmtasks/leaderboard/site/``, ``mmtasks/viewer_site/`` and ``mmtasks/reports/``: one copy in the tree,
one in the wheel, nothing duplicated.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mmtasks.errors import ConfigError

_PACKAGE = Path(__file__).resolve().parent

#: name -> (path inside an installed package, path in the source tree)
_LOCATIONS: dict[str, tuple[Path, Path]] = {
    "tasks": (_PACKAGE / "tasks", _PACKAGE.parent / "tasks"),
    "presets": (_PACKAGE / "presets", _PACKAGE.parent / "models"),
    "site": (_PACKAGE / "leaderboard" / "site", _PACKAGE.parent / "leaderboard"),
    "viewer": (_PACKAGE / "viewer_site", _PACKAGE.parent / "viewer"),
    "reports": (_PACKAGE / "reports", _PACKAGE.parent / "reports"),
}


def data_dir(name: str) -> Path:
    """The folder of shipped data ``name`` (``tasks``, ``presets``, ``site``, ``viewer`` or ``reports``).

    In a source checkout (the package's parent holds ``pyproject.toml``: an editable install, a
    git worktree, ``pythonpath=.``) the top-level folder is the one; otherwise the installed one.
    The source check comes first so that a stale folder left inside the package (bytecode caches
    of the old layout) is never read instead of the tree's.
    """
    installed, source = _LOCATIONS[name]
    if (_PACKAGE.parent / "pyproject.toml").is_file() and source.is_dir():
        return source
    return installed


def page_dir(name: str, files: Sequence[str], what: str) -> Path:
    """:func:`data_dir` of a page's sources (``site``, ``viewer``), checked to hold every one of
    ``files``; ``what`` names them in the one-line error of an incomplete installation."""
    here = data_dir(name)
    if not all((here / file).is_file() for file in files):
        raise ConfigError(f"{what} ({', '.join(files)}) are not in {here}",
                          hint="the mmtasks installation is incomplete: reinstall it")
    return here
