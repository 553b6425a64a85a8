"""Where data lives, and keeping data paths inside their data root."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from mmtasks.errors import ConfigError, DataError


def data_root(cli_value: str | Path | None) -> Path | None:
    """``--data-dir``, else ``$MMTASKS_DATA_DIR``, else None."""
    value = cli_value or os.environ.get("MMTASKS_DATA_DIR")
    return Path(value).expanduser().resolve() if value else None


def confined(root: Path, relative: str, *, doc_id: str | None = None, field: str = "images", file: Path | None = None) -> Path:
    """Join ``relative`` to ``root``; refuse absolute paths and paths that leave ``root``
    (``..``, symlinks pointing outside)."""
    if not isinstance(relative, str) or not relative:
        raise DataError(f"expected a relative path, got {relative!r}", file=file, doc_id=doc_id, field=field)
    candidate = Path(relative)
    if candidate.is_absolute():
        raise DataError(f"path {relative!r} is absolute; data paths must stay inside the data root {root}", file=file, doc_id=doc_id, field=field)
    resolved = (root / candidate).resolve()
    root_resolved = root.resolve()
    if resolved != root_resolved and root_resolved not in resolved.parents:
        raise DataError(f"path {relative!r} leaves the data root {root}", file=file, doc_id=doc_id, field=field)
    return resolved


def inside(relative: str, *, where: str, field: str, file: Path | str | None = None) -> str:
    """``relative`` itself, if it names a place inside its folder: a task's data folder and data
    file may not be absolute nor climb out with ``..``.

    Checked on the text, not by resolving links, so a benchmark folder that is a symlink to
    another disk still works (the images inside it are confined by :func:`confined`).
    """
    windows = PureWindowsPath(relative)
    if not relative or PurePosixPath(relative).is_absolute() or windows.drive or windows.root:
        raise ConfigError(f"path {relative!r} must be relative to {where}", file=file, field=field)
    if ".." in PurePosixPath(relative.replace("\\", "/")).parts:
        raise ConfigError(f"path {relative!r} leaves {where} ('..' is not allowed)", file=file, field=field)
    return relative
