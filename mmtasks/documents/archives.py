"""Zip archives of videos, read member by member into a folder they cannot escape.

A dataset's videos on the Hub are often zip files (Video-MME's ``videos_chunked_XX.zip``,
MVBench's ``video/<source>.zip``), far larger than what one run needs. A zip's central directory
sits at its end, so each archive is opened as a seekable file (a local file, or a remote one read
by HTTP range requests: :mod:`mmtasks.documents.hub_files`) and only its directory is read; every
member's name is checked then (an absolute path, a ``..`` part, a drive letter, a symbolic link or
any other non-regular file is refused, naming the archive and the member, and nothing of that
archive is ever extracted), and the names are kept as an index (member -> archive) on disk beside
the extracted files, keyed by the archive's identity (its blob id and size), so a later run reads
no directory again. :meth:`Extractor.ensure` extracts a member only when a document needs it (the
preflight's video check, before the decode): its bytes alone are read, written beside its place
and renamed into it, after a free-space check; a lock file keeps two processes from extracting
into the same folder at once.
"""

from __future__ import annotations

import bisect
import json
import os
import shutil
import stat
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from mmtasks.errors import DataError

#: the folder (inside the destination) holding one index per archive (and strip)
INDEX = ".mmtasks-index"
_CHUNK = 32 << 20  # one read of a member (a range request when the archive is remote)
#: the setting that moves the extraction folder (mmtasks.documents.hub_files)
ARCHIVES_HINT = "MMTASKS_ARCHIVES_DIR"
_FORMAT = 2  # 2: members carry their CRC-32 (what extracted files are known by)


@dataclass(frozen=True)
class Archive:
    """A zip file to read: ``name`` as the task names it (its path in the Hub repository),
    ``strip`` a leading folder removed from its members' paths, ``key`` what identifies its bytes
    (an index made for another key is made again), ``opener`` a seekable binary file of it (local,
    or remote through range requests), ``errors`` what its reads raise besides OSError (a remote
    file's network errors)."""

    name: str
    strip: str | None
    key: str
    opener: Callable[[], IO[bytes]] = field(compare=False, repr=False)
    errors: tuple[type[BaseException], ...] = field(default=(), compare=False, repr=False)
    #: what to do about a damaged archive, said where it is read from (asked when the error is made:
    #: a Hub archive read by range requests is nowhere on this machine; one downloaded whole is in
    #: the Hugging Face cache; a local one is a file of the user's)
    replace_hint: Callable[[], str] = field(default=lambda: "replace the archive file: it is damaged",
                                            compare=False, repr=False)

    @property
    def read_errors(self) -> tuple[type[BaseException], ...]:
        """What reading it raises: OSError and :attr:`errors`."""
        return (OSError, *self.errors)


@dataclass(frozen=True)
class Member:
    """An indexed member: its ``archive`` (position in the extractor's list), its name in the zip,
    its uncompressed size and CRC-32."""

    archive: int
    name: str
    size: int
    crc: int = 0

    @property
    def content(self) -> str:
        """What identifies the member's bytes whatever archive or commit holds it: name, size, CRC."""
        return f"{self.crc:08x}:{self.size}:{self.name}"


def _refused(archive: Archive, member: str, why: str) -> DataError:
    return DataError(f"archive member {member!r} {why}: refused, nothing of the archive extracted",
                     file=archive.name, field="dataset.video_archives",
                     hint=f"the archive is not the dataset's own or was tampered with; {archive.replace_hint()}")


def _corrupt(archive: Archive, exc: Exception) -> DataError:
    return DataError(f"corrupt or unreadable zip archive ({type(exc).__name__}: {str(exc)[:160]})", file=archive.name,
                     field="dataset.video_archives", hint=archive.replace_hint())


def member_target(archive: Archive, info: zipfile.ZipInfo) -> PurePosixPath | None:
    """Where a member goes, relative to the destination (None: a folder entry); raises
    :class:`DataError` for a member that would land outside it or is not a regular file."""
    raw = info.filename
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        raise _refused(archive, raw, "is a symbolic link")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise _refused(archive, raw, "is not a regular file or folder")
    name = raw.replace("\\", "/")  # some Windows tools write backslashes
    parts = name.split("/")
    if "\x00" in name or name.startswith("/") or (len(parts[0]) == 2 and parts[0][1] == ":") or ".." in parts:
        raise _refused(archive, raw, "escapes the extraction folder")
    parts = [p for p in parts if p not in ("", ".")]
    if archive.strip is not None:
        head = archive.strip.split("/")
        if parts[:len(head)] == head:
            parts = parts[len(head):]
    if not parts or info.is_dir() or kind == stat.S_IFDIR:
        return None
    return PurePosixPath(*parts)


def _index_file(dest: Path, archive: Archive) -> Path:
    strip = "" if archive.strip is None else "@" + archive.strip.replace("/", "__")
    return dest / INDEX / (archive.name.replace("/", "__") + strip + ".json")


def cached_index(dest: Path, archive: Archive) -> list[tuple[str, str, int, int]] | None:
    """The archive's index read before (target, member, size, CRC), or None (none yet, or made for other bytes)."""
    try:
        data = json.loads(_index_file(dest, archive).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("key") != archive.key:
        return None
    return [(str(t), str(m), int(s), int(c)) for t, m, s, c in data["members"]]


def write_atomically(path: Path, text: str) -> None:
    """``text`` into ``path`` through a hidden partial file beside it, renamed into place; the
    partial file is removed on every failure (a full disk, an interrupt): nothing is left behind."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except BaseException:
        _remove(partial)
        raise


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass  # what cannot be removed is left to `mmtasks cache prune`


def _zip(archive: Archive) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(archive.opener())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise _corrupt(archive, exc) from None


def read_index(dest: Path, archive: Archive) -> tuple[list[tuple[str, str, int, int]], zipfile.ZipFile | None]:
    """(target, member, size, CRC) of every file of the archive, from its index when one was made for
    these bytes, else from its central directory (every name checked: :func:`member_target`), the
    index written then, and the archive left open (None: not opened). Raises :class:`DataError`
    naming the archive (and the member refused)."""
    found = cached_index(dest, archive)
    if found is not None:
        return found, None
    try:
        zf = _zip(archive)
        try:
            members = [(info, member_target(archive, info)) for info in zf.infolist()]  # every name checked first
        except DataError:
            zf.close()
            raise
    except DataError:
        raise
    except archive.read_errors as exc:
        raise DataError(f"cannot read the archive's directory: {getattr(exc, 'strerror', None) or exc}", file=archive.name,
                        field="dataset.video_archives", hint="check your network, or run again") from None
    out = [(target.as_posix(), info.filename, info.file_size, info.CRC) for info, target in members if target is not None]
    path = _index_file(dest, archive)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps({"format": _FORMAT, "archive": archive.name, "strip": archive.strip,
                                           "key": archive.key, "members": out}))
    except OSError as exc:
        raise DataError(f"cannot write the archive's index in {dest}: {exc.strerror or type(exc).__name__}",
                        file=archive.name, field="dataset.video_archives",
                        hint=f"free disk space there, or set {ARCHIVES_HINT} to a folder with room") from None
    return out, zf


class Extractor:
    """The members of ``archives`` (later archives winning a path) extracted on demand into
    ``dest``: :meth:`ensure` a path the task reads."""

    def __init__(self, archives: Sequence[Archive], dest: Path) -> None:
        self.archives = list(archives)
        self.dest = dest
        self._root = os.path.realpath(dest)
        members: dict[str, Member] = {}
        self._open: dict[int, zipfile.ZipFile] = {}  # the archives opened (their directory read) by this process
        try:
            for k, archive in enumerate(self.archives):
                found, zf = read_index(dest, archive)
                if zf is not None:
                    self._open[k] = zf
                for target, name, size, crc in found:
                    members[target] = Member(k, name, size, crc)
        except DataError:
            self.close()
            raise
        self.members = members
        self._sorted = sorted(members)
        #: target -> the content (:attr:`Member.content`) of the file extracted there, kept on disk:
        #: a file is known by what it holds, not by the commit it was read at
        self._contents = _read_contents(dest)
        #: the members extracted by this process, in order (archive name, member)
        self.extracted: list[tuple[str, str]] = []

    def holds(self, path: Path) -> bool:
        return bool(self._wanted(path))

    def _wanted(self, path: Path) -> list[str]:
        rel = os.path.relpath(path, self._root)
        if rel.startswith(".."):
            return []
        rel = PurePosixPath(Path(rel)).as_posix()
        if rel in self.members:
            return [rel]
        prefix = rel + "/"  # a folder of frames (MVBench's tvqa): every member under it
        first = bisect.bisect_left(self._sorted, prefix)
        out = []
        for target in self._sorted[first:]:
            if not target.startswith(prefix):
                break
            out.append(target)
        return out

    def _present(self, target: str) -> bool:
        path = Path(self._root, *target.split("/"))
        try:
            st = path.lstat()
        except OSError:
            return False
        member = self.members[target]
        return stat.S_ISREG(st.st_mode) and st.st_size == member.size and self._contents.get(target) == member.content

    def ensure(self, path: Path) -> list[str]:
        """Extract the member at ``path`` (or the members under it, a folder), those not extracted
        yet; returns their targets. A path the archives do not hold is left alone. Raises
        :class:`DataError` naming the archive and member."""
        todo = [t for t in self._wanted(path) if not self._present(t)]
        if not todo:
            return []
        from filelock import FileLock

        self.dest.mkdir(parents=True, exist_ok=True)
        done = []
        with FileLock(str(self.dest / ".mmtasks-extract.lock")):
            self._contents = _read_contents(self.dest)  # what another process extracted meanwhile
            try:
                for target in todo:
                    if self._present(target):  # another process did it while this one waited
                        continue
                    self._extract(target)
                    self._contents[target] = self.members[target].content
                    done.append(target)
            finally:
                if done:
                    _write_contents(self.dest, self._contents)
        return done

    def _zip(self, k: int) -> zipfile.ZipFile:
        if k not in self._open:
            self._open[k] = _zip(self.archives[k])
        return self._open[k]

    def _extract(self, target: str) -> None:
        member = self.members[target]
        archive = self.archives[member.archive]
        root = Path(self._root)
        try:
            zf = self._zip(member.archive)
            info = zf.getinfo(member.name)
            if member_target(archive, info) != PurePosixPath(target):  # the directory read now says otherwise
                raise _refused(archive, member.name, "changed since the archive was indexed")
            free = shutil.disk_usage(root).free
            if info.file_size > free:  # a member's reader stops at its declared size: that bounds what is written
                raise DataError(f"member {member.name!r} holds {info.file_size / 1e9:.1f} GB, and {self.dest} has "
                                f"{free / 1e9:.1f} GB free", file=archive.name, field="dataset.video_archives",
                                hint=f"free disk space there, or set {ARCHIVES_HINT} to a folder with room")
            path = root.joinpath(*target.split("/"))
            parent = path.parent
            parent.mkdir(parents=True, exist_ok=True)
            if not parent.resolve().is_relative_to(root) or path.is_symlink():
                raise _refused(archive, member.name, "escapes the extraction folder")
            partial = parent / f".{path.name}.{os.getpid()}.partial"
            try:
                with zf.open(info) as src, open(partial, "wb") as out:
                    shutil.copyfileobj(src, out, _CHUNK)  # a wrong CRC is found at the member's end
                os.replace(partial, path)
            except BaseException:
                _remove(partial)  # on every failure path: no hidden copy is left behind
                raise
            self.extracted.append((archive.name, member.name))
        except DataError:
            raise
        except (zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, EOFError, KeyError) as exc:  # RuntimeError: encrypted
            raise _corrupt(archive, exc) from None
        except archive.read_errors as exc:
            raise DataError(f"cannot extract member {member.name!r} into {self.dest}: {getattr(exc, 'strerror', None) or exc}",
                            file=archive.name, field="dataset.video_archives",
                            hint=f"check your network and free disk space there, or set {ARCHIVES_HINT} to a folder "
                                 "with room") from None

    def close(self) -> None:
        for zf in self._open.values():
            fp = zf.fp
            zf.close()
            if fp is not None:
                fp.close()  # a file object handed to ZipFile stays open when it closes
        self._open.clear()


def local(path: Path, name: str, strip: str | None = None) -> Archive:
    """An archive on disk (its key: size and modification time)."""
    st = path.stat()
    return Archive(name, strip, f"local:{st.st_size}:{st.st_mtime_ns}", lambda: open(path, "rb"),
                   replace_hint=lambda: f"replace {path}: it is damaged")


_CONTENTS = "extracted.json"


def _read_contents(dest: Path) -> dict[str, str]:
    try:
        data = json.loads((dest / INDEX / _CONTENTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write_contents(dest: Path, contents: dict[str, str]) -> None:
    (dest / INDEX).mkdir(parents=True, exist_ok=True)
    write_atomically(dest / INDEX / _CONTENTS, json.dumps(contents, sort_keys=True))


@dataclass
class Pruned:
    """What :func:`prune` removed: files (and bytes) no index references, partial files left by
    an interrupted write, and folders of an older layout."""

    files: int = 0
    bytes: int = 0
    paths: list[str] = field(default_factory=list)


def prune(dest: Path, pruned: Pruned | None = None) -> Pruned:
    """Remove from an extraction folder every file no index in it references (a member of an
    archive the dataset no longer holds, or of its older bytes), every ``.partial`` file, and the
    index entries of what is gone. The indexes themselves and the lock file are kept."""
    from filelock import FileLock

    pruned = pruned or Pruned()
    with FileLock(str(dest / ".mmtasks-extract.lock")):  # not while a run extracts into the folder
        _prune_locked(dest, pruned)
    return pruned


def _prune_locked(dest: Path, pruned: Pruned) -> None:
    referenced: set[str] = set()
    contents = _read_contents(dest)
    for index in (dest / INDEX).glob("*.json") if (dest / INDEX).is_dir() else ():
        if index.name in (_CONTENTS, "listing.json") or index.name.startswith("listing-"):
            continue
        try:
            data = json.loads(index.read_text(encoding="utf-8"))
            referenced.update(str(m[0]) for m in data.get("members", []))
        except (OSError, ValueError, TypeError, IndexError, AttributeError):
            continue  # an unreadable index references nothing: its files are extracted again if needed
    for root, dirs, files in os.walk(dest):
        rel_root = os.path.relpath(root, dest)
        if rel_root.split(os.sep)[0] == INDEX:
            dirs[:] = []
            for name in files:
                if name.endswith(".partial"):
                    _prune_file(Path(root, name), pruned)
            continue
        for name in files:
            rel = PurePosixPath(Path(rel_root, name)).as_posix() if rel_root != "." else name
            if name.endswith(".partial") or (rel not in referenced and name != ".mmtasks-extract.lock"):
                _prune_file(Path(root, name), pruned)
                contents.pop(rel, None)
    if (dest / INDEX / _CONTENTS).exists():
        _write_contents(dest, contents)
    for root, dirs, files in os.walk(dest, topdown=False):  # folders left empty
        if root != str(dest) and not os.listdir(root):
            os.rmdir(root)


def _prune_file(path: Path, pruned: Pruned) -> None:
    try:
        size = path.lstat().st_size
        path.unlink()
    except OSError:
        return
    pruned.files += 1
    pruned.bytes += size
    pruned.paths.append(str(path))


__all__ = ["Archive", "Extractor", "INDEX", "Member", "Pruned", "cached_index", "local", "member_target", "prune", "read_index",
           "write_atomically"]
