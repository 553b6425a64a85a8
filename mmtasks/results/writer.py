"""The one writer of every file mmtasks writes: results.json, samples, the run record, the
leaderboard (data and page), the figures and the judge agreement report.

Every file is created exclusively (``O_EXCL``), never through a symlink (``O_NOFOLLOW``), with
the mode the umask gives, written whole and fsynced under a temporary name in the same folder,
and only then renamed over the old one (:func:`atomic_open`, :func:`atomic_write_bytes`). A link
planted at the final name is replaced, never written through; a failed write (a full disk)
removes the temporary file, leaves the previous version as it was, and is one line saying so
(:class:`OutputError`).

A set of files that belong together (``leaderboard.json`` + ``leaderboard.js`` + the page) is
switched as one (:func:`write_file_set`). Plain files cannot be renamed together in one system
call, so "as one" means:

1. every file of the new set is written whole into a fresh staging folder
   ``OUT/.mmtasks-stage-<random>/`` (a failure or a signal here leaves every old file in place);
2. the switch is committed by one atomic rename: ``OUT/.mmtasks-switch.json`` names the staging
   folder and its files (from here on the new set is the one that will be in place);
3. the files are renamed into ``OUT`` one by one, then the record and the staging folder are
   removed. SIGTERM, SIGINT and SIGHUP arriving during steps 2-3 (a few renames) are held
   and delivered once the switch is complete, so a signal never leaves files of two builds;
4. a process killed outright (``kill -9``, power loss) between 2 and 3 leaves the record: the next
   writer of ``OUT`` finishes that switch first (:func:`finish_interrupted_switch`), and staging
   folders without a record (a build killed while writing) are removed.

Two writers of one folder take turns (an OS lock on the folder itself).

Every folder a command writes as a whole (a view, a leaderboard, the figures) is *claimed*
(:func:`claim_folder`): ``OUT/.mmtasks-output.json``, written by mmtasks and switched with the
set, names the command that wrote it, the files of its set and its own data folders. A folder
that holds other files and no such marker is refused, naming them; one claimed by another
command is refused too. The claim holds the folder's lock from the first write to the last, so
two writers of one folder take turns for the whole build, and a switch removes only the data
folders and files that the marker lists (the previous set's, and those of a build killed
before its switch), never anything else in the folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

from mmtasks.errors import MmtasksError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

#: the record that commits a switch of a set of files (see the module docstring)
SWITCH_RECORD = ".mmtasks-switch.json"
STAGE_PREFIX = ".mmtasks-stage-"
#: mmtasks's claim on an output folder (see :func:`claim_folder`)
CLAIM_MARKER = ".mmtasks-output.json"
_TEMPORARY_NAME = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")
_STAGE_NAME = re.compile(r"\.mmtasks-stage-[0-9a-f]{12}")
#: signals held during a switch (delivered when it is complete)
_HELD_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))


class OutputError(MmtasksError):
    """The output folder cannot be used (in use, another run's, not a folder) or written (disk full)."""


def write_failed(path: Path, exc: OSError, kept: str) -> OutputError:
    """One line for a failed write: what failed, why, and what was kept."""
    return OutputError(f"cannot write {path}: {exc.strerror or exc}; kept: {kept}",
                       hint="free space or fix the folder, then run the same command again")


def _kept(path: Path) -> str:
    return f"the previous {path.name}, unchanged" if os.path.lexists(path) else "nothing written"


def create_exclusive(path: Path, binary: bool = True, *, buffered: bool = True) -> IO[Any]:
    """A new file at ``path``, opened for writing: refused if anything (a file, a symlink) is
    already there (``O_EXCL``), never following a link (``O_NOFOLLOW``), mode from the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666)
    if binary:
        return os.fdopen(fd, "wb", buffering=-1 if buffered else 0)  # -1: open's default buffer
    return os.fdopen(fd, "w", encoding="utf-8")


def unlink_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: some file systems refuse)."""
    try:
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _new_temporary(folder: Path, name: str, binary: bool) -> tuple[Path, IO[Any]]:
    while True:
        tmp = folder / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return tmp, create_exclusive(tmp, binary=binary)
        except FileExistsError:
            continue


@contextlib.contextmanager
def atomic_open(path: Path, mode: str = "w") -> Iterator[IO[Any]]:
    """A file that appears at ``path`` whole when the block ends (fsynced, then renamed over the
    old one), or not at all: readers never see half of it, and a failure keeps the old file.
    The temporary file is created exclusively and never through a link; the final file has
    the mode the umask gives (like any file the user creates)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_failed(path, exc, "nothing written") from None
    try:
        tmp, fh = _new_temporary(path.parent, path.name, "b" in mode)
    except OSError as exc:
        raise write_failed(path, exc, _kept(path)) from None
    try:
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        unlink_quietly(tmp)
        raise write_failed(path, exc, _kept(path)) from None
    except BaseException:
        unlink_quietly(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half of it."""
    with atomic_open(path) as fh:
        fh.write(text)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half of it."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


# --- sets of files switched as one ------------------------------------------------------------

#: what a file of a set is made from: its bytes, or a function writing them to a binary file
Content = bytes | Callable[[IO[bytes]], None]


@contextlib.contextmanager
def held_signals() -> Iterator[None]:
    """Hold SIGTERM, SIGINT and SIGHUP for the block and deliver them (to the handlers in place
    before it) once it ends. Only the main thread can install handlers; elsewhere the block
    runs unprotected (an interrupted switch is then finished by the next writer)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    previous = {}
    try:
        for sig in _HELD_SIGNALS:
            previous[sig] = signal.signal(sig, hold)
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(pending):
            signal.raise_signal(sig)


@contextlib.contextmanager
def _folder_lock(folder: Path, kept: str) -> Iterator[None]:
    """An OS lock on the folder itself (no lock file left among the published files)."""
    try:
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError as exc:
        raise write_failed(folder, exc, kept) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _plain_name(name: object) -> str:
    if not isinstance(name, str) or not name or name in (".", "..") or any(c in name for c in "/\\\x00"):
        raise ValueError(f"not a plain file name: {name!r}")
    return name


def _remove_stage(stage: Path) -> None:
    """Remove a staging folder: only the plain files in it, then the folder (a link planted at
    its name is removed, never followed)."""
    if stage.is_symlink() or not stage.is_dir():
        unlink_quietly(stage)
        return
    for entry in os.scandir(stage):
        if entry.is_file(follow_symlinks=False) or entry.is_symlink():
            unlink_quietly(Path(entry.path))
    with contextlib.suppress(OSError):
        stage.rmdir()


def _read_record(folder: Path) -> tuple[Path, list[str]] | None:
    record = folder / SWITCH_RECORD
    try:
        fd = os.open(record, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        unlink_quietly(record)  # a link or worse planted there: not ours
        return None
    with os.fdopen(fd, "rb") as fh:
        raw = fh.read(1 << 20)
    try:
        data = json.loads(raw)
        stage = data["stage"]
        if not isinstance(stage, str) or not _STAGE_NAME.fullmatch(stage):
            raise ValueError(stage)
        names = [_plain_name(n) for n in data["files"]]
    except (ValueError, KeyError, TypeError, RecursionError):
        unlink_quietly(record)  # cut short before the commit's rename cannot happen; anything else is not ours
        return None
    return folder / stage, names


def _switch(folder: Path, stage: Path, names: Sequence[str]) -> None:
    """Rename the staged files into ``folder`` (those still in the stage), then drop the record and the stage."""
    for name in names:
        staged = stage / name
        if os.path.lexists(staged):
            os.replace(staged, folder / name)
    _fsync_folder(folder)
    unlink_quietly(folder / SWITCH_RECORD)
    _remove_stage(stage)


def finish_interrupted_switch(folder: Path) -> bool:
    """Finish a switch of ``folder`` that a killed process committed but did not complete, and
    remove staging folders of builds killed before their commit. True when a switch was finished."""
    finished = False
    found = _read_record(folder)
    if found is not None:
        stage, names = found
        with held_signals():
            _switch(folder, stage, names)
        finished = True
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(folder):
            if entry.name.startswith(STAGE_PREFIX):
                _remove_stage(Path(entry.path))
    return finished


def _switch_set(folder: Path, files: Mapping[str, Content], names: Sequence[str], what: str) -> None:
    """Stage ``files``, commit the switch and rename them into ``folder`` (the caller holds the lock)."""
    kept = f"every file of the previous {what}, unchanged"
    finish_interrupted_switch(folder)
    for name in names:
        if (folder / name).is_dir() and not (folder / name).is_symlink():
            raise OutputError(f"cannot write {folder / name}: a folder is in the way; kept: {kept}", file=folder / name)
    stage = folder / f"{STAGE_PREFIX}{secrets.token_hex(6)}"
    try:
        os.mkdir(stage, 0o777)
    except OSError as exc:
        raise write_failed(stage, exc, kept) from None
    try:
        for name, content in files.items():
            path = stage / name
            try:
                with create_exclusive(path) as fh:
                    if isinstance(content, bytes):
                        fh.write(content)
                    else:
                        content(fh)
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise write_failed(folder / name, exc, kept) from None
        _fsync_folder(stage)
        record = json.dumps({"stage": stage.name, "files": list(names)}).encode()
        with held_signals():
            try:
                atomic_write_bytes(folder / SWITCH_RECORD, record)
            except OutputError as exc:
                raise OutputError(f"cannot switch to the new {what}: {exc.message}", file=folder) from None
            try:
                _switch(folder, stage, names)
            except OSError as exc:
                raise OutputError(f"cannot switch to the new {what} in {folder}: {exc.strerror or exc}; "
                                  "the switch is recorded and the next build into this folder finishes it",
                                  file=folder) from None
    finally:
        if not os.path.lexists(folder / SWITCH_RECORD):
            _remove_stage(stage)


def _internal(name: str) -> bool:
    """The writer's own bookkeeping in a folder (marker, switch record, stages, temporary files)."""
    return (name in (CLAIM_MARKER, SWITCH_RECORD) or name.startswith(STAGE_PREFIX)
            or _TEMPORARY_NAME.fullmatch(name) is not None)


def _read_marker(folder: Path) -> dict[str, Any] | None:
    """The claim marker's content; None when there is none. One that is not mmtasks's (a link,
    not JSON, names that are not plain) is an :class:`OutputError`: the folder is not claimed."""
    path = folder / CLAIM_MARKER
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(f"not mmtasks's marker ({exc.strerror or exc}): refusing to write into the folder",
                          file=path) from None
    with os.fdopen(fd, "rb") as fh:
        raw = fh.read(1 << 20)
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
            raise ValueError("no kind")
        for key in ("files", "data"):
            data[key] = [_plain_name(n) for n in data.get(key) or []]
    except (ValueError, TypeError, RecursionError):
        raise OutputError("not mmtasks's marker: refusing to write into the folder", file=path,
                          hint="choose a new or empty folder") from None
    return data


def _marker_bytes(kind: str, files: Sequence[str], data: Sequence[str]) -> bytes:
    return (json.dumps({"writer": "mmtasks", "kind": kind, "files": list(files), "data": list(data)}, indent=1)
            + "\n").encode()


def _remove_own(path: Path) -> None:
    """Remove a file or folder the claim lists as its own (a link is removed, never followed)."""
    if path.is_symlink() or not path.is_dir():
        unlink_quietly(path)
        return
    shutil.rmtree(path, ignore_errors=True)


@dataclass
class FolderClaim:
    """An output folder claimed by one command (:func:`claim_folder`), held under its lock."""

    folder: Path
    kind: str
    what: str
    #: the previous set's files and data folders (and data folders of builds killed before their switch)
    files: list[str] = field(default_factory=list)
    data: list[str] = field(default_factory=list)

    def data_folder(self, name: str) -> Path:
        """A new data folder of the set, recorded in the marker before anything is written into
        it, so that a build killed while writing leaves a folder the next switch removes."""
        _plain_name(name)
        if name not in self.data:
            self.data.append(name)
        atomic_write_bytes(self.folder / CLAIM_MARKER, _marker_bytes(self.kind, self.files, self.data))
        path = self.folder / name
        try:
            path.mkdir(exist_ok=True)
        except OSError as exc:
            raise write_failed(path, exc, f"the previous {self.what}, unchanged") from None
        return path

    def switch(self, files: Mapping[str, Content], *, data: Sequence[str] = ()) -> list[Path]:
        """Switch ``files`` into the folder as one set with the marker (last), then remove what
        the previous set had and this one does not: only files and folders the marker listed."""
        names = [_plain_name(name) for name in files]
        if CLAIM_MARKER in names:
            raise ValueError(f"{CLAIM_MARKER} is the writer's own")
        keep = [_plain_name(name) for name in data]
        content: dict[str, Content] = dict(files)
        content[CLAIM_MARKER] = _marker_bytes(self.kind, names, keep)
        _switch_set(self.folder, content, [*names, CLAIM_MARKER], self.what)
        for old in [*self.files, *self.data]:
            if old not in names and old not in keep:
                _remove_own(self.folder / old)
        self.files, self.data = names, keep
        return [self.folder / name for name in names]


def _foreign(folder: Path, allowed: Sequence[str]) -> list[str]:
    """Entries of a folder without a marker that are not the writer's: not its bookkeeping, not an
    ``allowed`` folder, not a folder claimed by mmtasks itself (a view inside a leaderboard)."""
    out: list[str] = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if _internal(entry.name):
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and (entry.name in allowed or os.path.lexists(Path(entry.path) / CLAIM_MARKER)):
            continue
        out.append(entry.name + ("/" if is_dir else ""))
    return out


@contextlib.contextmanager
def claim_folder(folder: Path, kind: str, *, what: str | None = None,
                 allowed: Sequence[str] = ()) -> Iterator[FolderClaim]:
    """Claim ``folder`` for the set of files of one command (``kind``: ``view``, ``leaderboard``,
    ``figures``) and hold its lock for the block. The folder must be new, empty, hold only
    ``allowed`` folders and claimed sub-folders, or carry this kind's marker; anything else is an
    :class:`OutputError` naming what is there, and nothing is written."""
    what = what or kind
    if folder.is_symlink() or (os.path.lexists(folder) and not folder.is_dir()):
        raise OutputError(f"not a folder: refusing to write the {what} there", file=folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_failed(folder, exc, "nothing written") from None
    with _folder_lock(folder, f"every file of the previous {what}, unchanged"):
        finish_interrupted_switch(folder)
        marker = _read_marker(folder)
        if marker is None:
            foreign = _foreign(folder, allowed)
            if foreign:
                shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
                raise OutputError(f"holds files that mmtasks did not write ({shown}): "
                                  f"refusing to write the {what} into it", file=folder,
                                  hint=f"choose a new or empty folder; a folder mmtasks wrote carries {CLAIM_MARKER} "
                                  "and is rebuilt in place (one written before the marker existed: remove it and "
                                  "build again)")
            yield FolderClaim(folder, kind, what)
            return
        if marker["kind"] != kind:
            raise OutputError(f"holds the {marker['kind']} mmtasks wrote there: refusing to write the {what} into it",
                              file=folder, hint="choose a new or empty folder")
        yield FolderClaim(folder, kind, what, files=list(marker["files"]), data=list(marker["data"]))


def write_file_set(folder: Path, files: Mapping[str, Content], *, what: str = "files", kind: str | None = None,
                   allowed: Sequence[str] = ()) -> list[Path]:
    """Write ``files`` (name -> content) into the claimed ``folder`` switched as one (see the
    module docstring), in the mapping's order; returns the paths written. A failure keeps every
    previous file and is one :class:`OutputError` line; ``what`` names the set in it."""
    with claim_folder(folder, kind or what, what=what, allowed=allowed) as claim:
        return claim.switch(files)
