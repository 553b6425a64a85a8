"""Zip archives of videos, extracted once into a folder they cannot escape.

A dataset's videos on the Hub are often zip files (Video-MME's ``videos_chunked_XX.zip``,
MVBench's ``video/<source>.zip``). :func:`extract_once` extracts each into one destination
folder, the first time only: every member's name is checked before anything is written (an
absolute path, a ``..`` part, a drive letter, a symbolic link or any other non-regular file is
refused, naming the archive and the member, and nothing of that archive is extracted), each file
is written beside its place and renamed into it, and a marker records the archive done (its
size and modification time), so a later run, online or offline, extracts nothing. A lock file
keeps two processes from extracting into the same folder at once.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mmtasks.errors import DataError

#: the folder (inside the destination) holding one marker per archive extracted
MARKERS = ".mmtasks-extracted"
_CHUNK = 1 << 20
#: the setting that moves the extraction folder (mmtasks.documents.hub_files)
ARCHIVES_HINT = "MMTASKS_ARCHIVES_DIR"


@dataclass(frozen=True)
class Archive:
    """A zip file to extract: ``path`` on disk, ``name`` as the task names it (its path in the Hub
    repository), ``strip`` a leading folder removed from its members' paths."""

    path: Path
    name: str
    strip: str | None = None


def _refused(archive: Archive, member: str, why: str) -> DataError:
    return DataError(f"archive member {member!r} {why}: refused, nothing of the archive extracted",
                     file=archive.name, field="dataset.video_archives",
                     hint="the archive is not the dataset's own or was tampered with; delete it from the Hugging Face cache "
                          "and download it again")


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


def _marker(dest: Path, archive: Archive) -> Path:
    strip = "" if archive.strip is None else "@" + archive.strip.replace("/", "__")
    return dest / MARKERS / (archive.name.replace("/", "__") + strip + ".json")


def _stamp(archive: Archive) -> dict[str, object]:
    st = archive.path.stat()
    return {"archive": archive.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "strip": archive.strip}


def is_extracted(dest: Path, archive: Archive) -> bool:
    try:
        return json.loads(_marker(dest, archive).read_text(encoding="utf-8")) == _stamp(archive)
    except (OSError, ValueError):
        return False


def extract_once(archives: Sequence[Archive], dest: Path) -> list[str]:
    """Extract the archives not yet extracted into ``dest`` (created); returns the names of the
    archives extracted now. Raises :class:`DataError` (naming the archive) for a refused member,
    a corrupt or encrypted archive, or a disk error."""
    todo = [a for a in archives if not is_extracted(dest, a)]
    if not todo:
        return []
    from filelock import FileLock

    dest.mkdir(parents=True, exist_ok=True)
    done: list[str] = []
    with FileLock(str(dest / ".mmtasks-extract.lock")):
        for archive in todo:
            if is_extracted(dest, archive):  # another process did it while this one waited
                continue
            _extract(archive, dest)
            marker = _marker(dest, archive)
            marker.parent.mkdir(exist_ok=True)
            marker.write_text(json.dumps(_stamp(archive)), encoding="utf-8")
            done.append(archive.name)
    return done


def _extract(archive: Archive, dest: Path) -> None:
    root = dest.resolve()
    try:
        with zipfile.ZipFile(archive.path) as zf:
            members = [(info, member_target(archive, info)) for info in zf.infolist()]  # every name checked first
            # the declared sizes bound what is written (a member's reader stops at its size): room for them first
            needed = sum(info.file_size for info, target in members if target is not None)
            free = shutil.disk_usage(root).free
            if needed > free:
                raise DataError(f"the archive holds {needed / 1e9:.1f} GB, and {dest} has {free / 1e9:.1f} GB free",
                                file=archive.name, field="dataset.video_archives",
                                hint=f"free disk space there, or set {ARCHIVES_HINT} to a folder with room")
            for info, target in members:
                if target is None:
                    continue
                path = root.joinpath(*target.parts)
                parent = path.parent
                parent.mkdir(parents=True, exist_ok=True)
                if not parent.resolve().is_relative_to(root) or path.is_symlink():
                    raise _refused(archive, info.filename, "escapes the extraction folder")
                partial = parent / f".{path.name}.partial"
                with zf.open(info) as src, open(partial, "wb") as out:
                    shutil.copyfileobj(src, out, _CHUNK)
                os.replace(partial, path)
    except DataError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, EOFError) as exc:  # RuntimeError: encrypted
        raise DataError(f"corrupt or unreadable zip archive ({type(exc).__name__}: {str(exc)[:160]})", file=archive.name,
                        field="dataset.video_archives",
                        hint="delete it from the Hugging Face cache and download it again") from None
    except OSError as exc:
        raise DataError(f"cannot extract the archive into {dest}: {exc.strerror or type(exc).__name__}", file=archive.name,
                        field="dataset.video_archives",
                        hint=f"free disk space there, or set {ARCHIVES_HINT} to a folder with room") from None


__all__ = ["Archive", "MARKERS", "extract_once", "is_extracted", "member_target"]
