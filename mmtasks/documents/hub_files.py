"""Files of a Hub dataset repository that a task reads besides parquet splits: JSON record files
(``dataset.hub``) and zip archives of videos (``dataset.video_archives``).

Only the files the task names are downloaded (``huggingface_hub.snapshot_download`` with those
paths as its ``allow_patterns``), into the Hugging Face cache; offline (``HF_HUB_OFFLINE=1``) a
run after the first finds them there and downloads nothing. The archives are extracted once
(:mod:`mmtasks.documents.archives`) into ``$MMTASKS_ARCHIVES_DIR/<org>--<name>/<commit>/``
(default: ``mmtasks-archives/`` beside the Hub cache, under ``HF_HOME``), the folder the task's
video paths and subtitles resolve under.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mmtasks.errors import DataError

#: where extracted archives go (default: beside the Hugging Face Hub cache)
ARCHIVES_ENV = "MMTASKS_ARCHIVES_DIR"


def _hint(repo: str) -> str:
    return (f"check the name, your network and your access to {repo} (a gated dataset needs `hf auth login` or HF_TOKEN "
            "after accepting its terms on the Hub); offline, run once with a network first")


def snapshot(repo: str, revision: str | None, patterns: Sequence[str], field: str) -> Path:
    """The local snapshot folder of ``repo`` holding the files matching ``patterns`` (downloaded
    now when missing); raises :class:`DataError` naming ``field``."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise DataError("reading a dataset's files from the Hub needs huggingface_hub", field=field,
                        hint="pip install 'mmtasks[datasets]'") from None
    quiet: dict[str, Any] = {}
    if not sys.stderr.isatty():  # no "Fetching N files" bar in a log (each large file's own bar stays)
        from tqdm.auto import tqdm

        class _Quiet(tqdm):  # type: ignore[misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **{**kwargs, "disable": True})

        quiet["tqdm_class"] = _Quiet
    try:
        folder = snapshot_download(repo, repo_type="dataset", revision=revision, allow_patterns=list(patterns), **quiet)
    except (OSError, ValueError, ConnectionError) as exc:  # huggingface_hub's errors are OSErrors or ValueErrors
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise DataError(f"cannot get the files of Hugging Face dataset {repo!r} ({type(exc).__name__}: {first})",
                        field=field, hint=_hint(repo)) from None
    return Path(folder)


def matching(folder: Path, pattern: str) -> list[Path]:
    """The files of a snapshot matching ``pattern`` (``*`` within a folder), sorted by path."""
    if not any(ch in pattern for ch in "*?["):
        path = folder / pattern
        return [path] if path.is_file() else []
    base = folder / pattern.rsplit("/", 1)[0] if "/" in pattern else folder
    found = []
    if base.is_dir():
        for p in base.rglob("*"):
            rel = p.relative_to(folder).as_posix()
            if p.is_file() and fnmatch.fnmatchcase(rel, pattern) and rel.count("/") == pattern.count("/"):
                found.append(p)
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def read_records(hub: Any) -> Iterator[tuple[int, dict[str, Any], int | None]]:
    """(index, record, line) of the record files of ``dataset.hub``, in the order listed, each
    record with its file's ``fields`` set."""
    from mmtasks.documents.dataset import _read_local

    folder = snapshot(hub.repo, hub.revision, [f.path for f in hub.files], "dataset.hub")
    index = 0
    for entry in hub.files:
        path = folder / entry.path
        if not path.is_file():
            raise DataError(f"the Hugging Face dataset {hub.repo!r} has no file {entry.path!r}", field="dataset.hub.files",
                            hint=_hint(hub.repo))
        for _, rec, line in _read_local(path):
            yield index, {**rec, **entry.fields}, line
            index += 1


def archives_root() -> Path:
    configured = os.environ.get(ARCHIVES_ENV)
    if configured:
        return Path(configured).expanduser()
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE).parent / "mmtasks-archives"


def extracted_videos(repo: str, revision: str | None, entries: Sequence[Any]) -> Path:
    """The folder holding the extracted ``dataset.video_archives`` of ``repo`` (each archive
    downloaded and extracted the first time only)."""
    from mmtasks.documents.archives import Archive, extract_once

    folder = snapshot(repo, revision, [e.path for e in entries], "dataset.video_archives")
    archives: list[Archive] = []
    for entry in entries:
        found = matching(folder, entry.path)
        if not found:
            raise DataError(f"no file of the Hugging Face dataset {repo!r} matches {entry.path!r}", field="dataset.video_archives",
                            hint=_hint(repo))
        archives.extend(Archive(p, p.relative_to(folder).as_posix(), entry.strip) for p in found)
    dest = archives_root() / repo.replace("/", "--") / folder.name  # the snapshot's folder is its commit
    extract_once(archives, dest)
    return dest


__all__ = ["ARCHIVES_ENV", "archives_root", "extracted_videos", "matching", "read_records", "snapshot"]
