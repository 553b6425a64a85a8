"""Writing the static site: the page's assets plus the data in two forms.

- ``leaderboard.json``: the published, versioned data; the page fetches it when served over http(s).
- ``leaderboard.js``: the same data as ``window.LEADERBOARD = {...};``, loaded by a script tag,
  because browsers block ``fetch`` of ``file://`` URLs; this makes the page work opened from disk.
"""

from __future__ import annotations

import json
import shutil
from mmtasks.package_data import data_dir
from pathlib import Path

from mmtasks.errors import ConfigError
from mmtasks.leaderboard.schema import Leaderboard

#: the page's source files: ``leaderboard/`` in the tree, package data ``mmtasks/leaderboard/site/`` in the wheel
ASSETS = ("index.html", "app.js", "style.css")
DATA_JSON = "leaderboard.json"
DATA_JS = "leaderboard.js"


def asset_dir() -> Path:
    """Where the page's source lives: ``leaderboard/`` in the tree, ``mmtasks/leaderboard/site/`` installed."""
    here = data_dir("site")
    if not all((here / name).is_file() for name in ASSETS):
        raise ConfigError(
            f"the leaderboard page's files ({', '.join(ASSETS)}) are not in {here}",
            hint="the mmtasks installation is incomplete: reinstall it",
        )
    return here


def leaderboard_json(board: Leaderboard) -> str:
    return json.dumps(board.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"


def leaderboard_js(board: Leaderboard) -> str:
    """The data as a script; ``<``, ``>``, ``&`` escaped so no string can close a tag around it."""
    data = json.dumps(board.model_dump(mode="json"), ensure_ascii=True, separators=(",", ":"))
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"window.LEADERBOARD = {data};\n"


def write_site(board: Leaderboard, out: Path) -> list[Path]:
    """Copy the page into ``out`` and write the data next to it; returns the files written."""
    source = asset_dir()
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in ASSETS:
        target = out / name
        if not (target.exists() and target.resolve() == (source / name).resolve()):
            shutil.copyfile(source / name, target)
        written.append(target)
    (out / DATA_JSON).write_text(leaderboard_json(board), encoding="utf-8")
    (out / DATA_JS).write_text(leaderboard_js(board), encoding="utf-8")
    return written + [out / DATA_JSON, out / DATA_JS]
