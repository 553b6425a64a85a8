"""Writing the static site: the page's assets plus the data in two forms.

- ``leaderboard.json``: the published, versioned data; the page fetches it when served over http(s).
- ``leaderboard.js``: the same data as ``window.LEADERBOARD = {...};``, loaded by a script tag,
  because browsers block ``fetch`` of ``file://`` URLs; this makes the page work opened from disk.

The data and the page are one set of files, switched as one by :func:`mmtasks.results.writer.write_file_set`
(written whole into a staging folder, then renamed into place with signals held): a build that
fails or is stopped leaves the previous board whole, never a ``leaderboard.json`` of one build
beside a ``leaderboard.js`` of another, and a link planted at one of the names is replaced, never
written through.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mmtasks.leaderboard.build import VIEWS_DIR
from mmtasks.leaderboard.schema import Leaderboard
from mmtasks.package_data import page_dir
from mmtasks.results.writer import Content, write_file_set

#: the page's source files: ``leaderboard/`` in the tree, package data ``mmtasks/leaderboard/site/`` in the wheel
ASSETS = ("index.html", "app.js", "style.css")
DATA_JSON = "leaderboard.json"
DATA_JS = "leaderboard.js"


def asset_dir() -> Path:
    """Where the page's source lives: ``leaderboard/`` in the tree, ``mmtasks/leaderboard/site/`` installed."""
    return page_dir("site", ASSETS, "the leaderboard page's files")


def leaderboard_json(board: Leaderboard) -> str:
    """The data as JSON; a non-finite number (never read in: results.json's numbers are checked)
    is an error here, never ``Infinity`` in a file that would then not be JSON."""
    return json.dumps(board.model_dump(mode="json"), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def script_json(data: Any) -> str:
    """``data`` as compact ASCII JSON fit to stand in a script: ``<``, ``>``, ``&`` escaped so no
    string can close a tag around it; a non-finite number is an error (the leaderboard's and the
    run viewer's data files both go through here)."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def leaderboard_js(board: Leaderboard) -> str:
    """The data as a script (:func:`script_json`)."""
    return f"window.LEADERBOARD = {script_json(board.model_dump(mode='json'))};\n"


def write_site(board: Leaderboard, out: Path) -> list[Path]:
    """Write the data and the page into ``out`` as one set (see the module docstring); returns the
    files written. The data comes first, so a page is never newer than its data."""
    source = asset_dir()
    files: dict[str, Content] = {
        DATA_JSON: leaderboard_json(board).encode("utf-8"),
        DATA_JS: leaderboard_js(board).encode("utf-8"),
    }
    for name in reversed(ASSETS):  # the page last: index.html loads app.js and style.css
        files[name] = (source / name).read_bytes()
    return write_file_set(out, files, what="leaderboard", kind="leaderboard", allowed=(VIEWS_DIR,))
