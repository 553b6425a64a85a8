"""Where data lives, and keeping data paths inside their data root."""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path, PurePosixPath, PureWindowsPath

from mmtasks.errors import ConfigError, DataError


def data_root(cli_value: str | Path | None) -> Path | None:
    """``--data-dir``, else ``$MMTASKS_DATA_DIR``, else None."""
    value = cli_value or os.environ.get("MMTASKS_DATA_DIR")
    return Path(value).expanduser().resolve() if value else None


def confined(root: Path, relative: str, *, doc_id: str | None = None, field: str = "images", file: Path | str | None = None,
             line: int | None = None) -> Path:
    """Join ``relative`` to ``root``; refuse absolute paths and paths that leave ``root``
    (``..``, symlinks pointing outside)."""
    if not isinstance(relative, str) or not relative:
        raise DataError(f"expected a relative path, got {relative!r}", file=file, line=line, doc_id=doc_id, field=field)
    if "\x00" in relative:  # the OS would refuse it with a ValueError, not a message
        raise DataError(f"path {relative!r} holds a NUL byte", file=file, line=line, doc_id=doc_id, field=field)
    candidate = Path(relative)
    if candidate.is_absolute():
        raise DataError(f"path {relative!r} is absolute; data paths must stay inside the data root {root}",
                        file=file, line=line, doc_id=doc_id, field=field)
    resolved = (root / candidate).resolve()
    root_resolved = root.resolve()
    if resolved != root_resolved and root_resolved not in resolved.parents:
        raise leaves_root(root, relative, doc_id=doc_id, field=field, file=file, line=line)
    return resolved


def leaves_root(root: Path, relative: str, *, doc_id: str | None, field: str, file: Path | str | None, line: int | None) -> DataError:
    """The refusal of a path that leads out of ``root``, naming the symlink that leads out when one does."""
    real_root = os.path.realpath(root)
    current = str(root)
    for name in relative.replace("\\", "/").split("/"):
        if name in ("", "."):
            continue
        current = os.path.join(current, name)
        if os.path.islink(current):
            real = os.path.realpath(current)
            if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
                return DataError(
                    f"path {relative!r} leaves the data root {root} through the symlink {current} -> {os.readlink(current)}",
                    file=file, line=line, doc_id=doc_id, field=field,
                    hint="symlinks out of the data root are refused: move or copy the files inside it, "
                         "or pass the folder that holds them as --data-dir")
    return DataError(f"path {relative!r} leaves the data root {root}", file=file, line=line, doc_id=doc_id, field=field)


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


class ConfinedPaths:
    """:func:`confined` for the many image paths of one data folder, without
    resolving every component of every path: each directory is resolved once,
    from its already resolved parent (a bounded cache), so a path costs one
    ``lstat`` of its last component. Gives what :func:`confined` gives.

    ``within``: a folder holding ``root`` that links under ``root`` may lead into (the Hugging Face
    cache's snapshot folder, whose files are links into the repository's ``blobs/``): a path must
    still name a place under ``root`` (its ``..`` resolved on the text), and lead nowhere outside
    ``within``. ``under``: a folder of ``root`` (``MLVU/video``) the paths must name a place in
    (on the text, ``..`` resolved), and ``under_key`` the setting that names it."""

    def __init__(self, root: Path, cache_size: int = 4096, within: Path | None = None, under: str | None = None,
                 under_key: str = "") -> None:
        self.root = root
        self._root = os.path.realpath(root)
        self._inside = self._root.rstrip(os.sep) + os.sep
        self._within = os.path.realpath(within) if within is not None else None
        self._under = under
        self._under_inside = os.path.join(self._root, *under.split("/")) + os.sep if under is not None else None
        self._under_key = under_key
        self._dirs: OrderedDict[str, str] = OrderedDict()
        self._cache_size = cache_size

    def _real(self, base: str, name: str) -> str:
        """The real path of ``name`` inside the real directory ``base``."""
        if name in ("", "."):
            return base
        if name == "..":
            return os.path.dirname(base)
        path = os.path.join(base, name)
        return os.path.realpath(path) if os.path.islink(path) else path

    def _directory(self, relative: str) -> str:
        if not relative:
            return self._root
        found = self._dirs.get(relative)
        if found is None:
            head, name = os.path.split(relative)
            found = self._real(self._directory(head) if head != relative else self._root, name)
            self._dirs[relative] = found
            if len(self._dirs) > self._cache_size:
                self._dirs.popitem(last=False)
        return found

    def __call__(self, relative: str, *, doc_id: str | None = None, field: str = "images", file: Path | str | None = None,
                 line: int | None = None) -> Path:
        if not isinstance(relative, str) or not relative or os.path.isabs(relative) or "\x00" in relative:
            return confined(self.root, relative, doc_id=doc_id, field=field, file=file, line=line)  # raises the right error
        named = os.path.normpath(os.path.join(self._root, relative))
        if self._under_inside is not None and not named.startswith(self._under_inside) and (
                named == self._root or named.startswith(self._inside)):
            raise DataError(f"path {relative!r} is outside {self._under}/, the folder the dataset's files are read from "
                            f"({self._under_key}): refused", file=file, line=line, doc_id=doc_id, field=field)
        parent, name = os.path.split(relative)
        path = self._real(self._directory(parent), name)
        if self._within is not None:
            outer = self._within.rstrip(os.sep) + os.sep
            if (named != self._root and not named.startswith(self._inside)) or (
                    path != self._within and not path.startswith(outer)):
                raise leaves_root(self.root, relative, doc_id=doc_id, field=field, file=file, line=line)
            return Path(path)
        if path != self._root and not path.startswith(self._inside):
            raise leaves_root(self.root, relative, doc_id=doc_id, field=field, file=file, line=line)
        return Path(path)
