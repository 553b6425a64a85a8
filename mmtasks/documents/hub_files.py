"""Files of a Hub dataset repository that a task reads besides parquet splits: JSON record files
(``dataset.hub``), zip archives of videos (``dataset.video_archives``) and videos that lie as files
of their own (``dataset.video_files``: :class:`HubVideoFiles`, each downloaded alone into the
Hugging Face cache, at the revision's commit, when a document of the run needs it).

Only the record files the task names are downloaded (``huggingface_hub.snapshot_download`` with
those paths as its ``allow_patterns``), into the Hugging Face cache; offline (``HF_HUB_OFFLINE=1``)
a run after the first finds them there and downloads nothing.

The archives are not downloaded: each is opened as a remote file (``HfFileSystem``, whose reads
are HTTP range requests), its central directory read and indexed (:mod:`mmtasks.documents.archives`)
into ``$MMTASKS_ARCHIVES_DIR/<org>--<name>/extracted/`` (default: ``mmtasks-archives/`` beside the
Hub cache, under ``HF_HOME``), the folder the task's video paths and subtitles resolve under, and
a member is extracted there when a document of the run needs it. The revision's commit, the
listing of the archives and their indexes are kept there, so a run after the first asks the Hub
for the commit alone (nothing with a commit as the revision, or offline) and reads an archive
again only for a member not yet extracted. A Hub that answers no range request (asked once a run,
on the first archive read) gets the archives downloaded whole into the Hugging Face cache, as
before, and read member by member from there (a warning says so).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote

from mmtasks.errors import DataError

if TYPE_CHECKING:
    from mmtasks.documents.archives import Pruned

#: where extracted archives go (default: beside the Hugging Face Hub cache)
ARCHIVES_ENV = "MMTASKS_ARCHIVES_DIR"
#: the folder of a dataset's extracted members (one per dataset, under its archives folder)
EXTRACTED = "extracted"
log = logging.getLogger(__name__)


def _hint(repo: str) -> str:
    return (f"check the name, your network and your access to {repo} (a gated dataset needs `hf auth login` or HF_TOKEN "
            "after accepting its terms on the Hub); offline, run once with a network first")


def _require_hub(field: str) -> None:
    """A one-line :class:`DataError` naming ``field`` when huggingface_hub is not installed (the
    core install, ``make demo``'s, has none)."""
    try:
        import huggingface_hub  # noqa: F401
    except ImportError:
        raise DataError("reading a dataset's files from the Hub needs huggingface_hub", field=field,
                        hint="pip install 'mmtasks[datasets]', or pass --data-dir with the data on disk") from None


def snapshot(repo: str, revision: str | None, patterns: Sequence[str], field: str) -> Path:
    """The local snapshot folder of ``repo`` holding the files matching ``patterns`` (downloaded
    now when missing); raises :class:`DataError` naming ``field``."""
    _require_hub(field)
    from huggingface_hub import snapshot_download

    quiet: dict[str, Any] = {}
    if not sys.stderr.isatty():  # no "Fetching N files" bar in a log (each large file's own bar stays)
        from tqdm.auto import tqdm

        class _Quiet(tqdm):
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


def network_errors() -> tuple[type[BaseException], ...]:
    """What huggingface_hub's HTTP calls raise: its ``HfHubHTTPError`` and the HTTP client's errors
    it derives from (a refused connection, a timeout), OSErrors, ValueErrors."""
    from huggingface_hub.errors import HfHubHTTPError

    client = tuple(b for b in HfHubHTTPError.__mro__ if b not in (Exception, BaseException, object))
    return (*client, OSError, ValueError, ConnectionError)


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _commit(repo: str, revision: str | None, base: Path, field: str = "dataset.video_archives") -> str:
    """The commit ``revision`` names: itself when it is one, else asked of the Hub (one request) and
    kept in ``base/.refs/``, where an offline run finds it."""
    rev = revision or "main"
    if re.fullmatch(r"[0-9a-f]{40}", rev):
        return rev
    ref = base / ".refs" / quote(rev, safe="")
    if _offline():
        try:
            return ref.read_text(encoding="utf-8").strip()
        except OSError:
            what = "the video archives of {!r} were never indexed" if field == "dataset.video_archives" else \
                "no video of {!r} was ever downloaded here"
            raise DataError(f"{what.format(repo)}, and the Hub is offline (HF_HUB_OFFLINE)", field=field,
                            hint=_hint(repo)) from None
    from huggingface_hub import HfApi

    try:
        sha = HfApi().dataset_info(repo, revision=rev).sha
    except network_errors() as exc:
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise DataError(f"cannot get the files of Hugging Face dataset {repo!r} ({type(exc).__name__}: {first})",
                        field=field, hint=_hint(repo)) from None
    assert sha is not None
    ref.parent.mkdir(parents=True, exist_ok=True)
    ref.write_text(sha, encoding="utf-8")
    return sha


def _listing(repo: str, commit: str, entries: Sequence[Any], dest: Path) -> dict[str, list[dict[str, Any]]]:
    """pattern -> the repository's files matching it (path, size, blob id), asked of the Hub once per
    commit (a listing of the folders) and kept in the index folder (one small file per commit)."""
    from mmtasks.documents.archives import INDEX, write_atomically

    path = dest / INDEX / f"listing-{commit}.json"
    try:
        cached: dict[str, list[dict[str, Any]]] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cached = {}
    wanted = [e.path for e in entries if e.path not in cached]
    if not wanted:
        return cached
    if _offline():
        raise DataError(f"the video archives {', '.join(wanted)} of {repo!r} were never indexed, and the Hub is offline "
                        "(HF_HUB_OFFLINE)", field="dataset.video_archives", hint=_hint(repo))
    fs = _filesystem()
    for pattern in wanted:
        try:
            found = fs.glob(f"datasets/{repo}@{commit}/{pattern}", detail=True)
        except network_errors() as exc:
            raise DataError(f"cannot list the files of Hugging Face dataset {repo!r} ({type(exc).__name__}: "
                            f"{str(exc)[:200]})", field="dataset.video_archives", hint=_hint(repo)) from None
        cached[pattern] = sorted(({"path": fs.resolve_path(name).path_in_repo, "size": int(info["size"]),
                                   "oid": (info.get("lfs") or {}).get("sha256") or info.get("blob_id") or ""}
                                  for name, info in found.items() if info.get("type") == "file"),
                                 key=lambda f: f["path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(cached))
    return cached


def _filesystem() -> Any:
    from huggingface_hub import HfFileSystem

    return HfFileSystem(skip_instance_cache=True)


def ranges_supported(repo: str, commit: str, path: str, size: int) -> bool:
    """Whether the Hub answers a range request for the file (206 with its ``Content-Range``), or
    the whole file (200: False; its body is not read); the last 22 bytes asked for (a zip's end
    record). Raises :class:`DataError` for any other answer (no access, no file) or no answer."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import build_hf_headers, hf_raise_for_status, http_stream_backoff

    if size < 22:  # not a zip: read whole, its reader says what is wrong
        return False
    headers = {**build_hf_headers(), "Range": f"bytes={size - 22}-{size - 1}"}
    try:
        with http_stream_backoff("GET", hf_hub_url(repo, path, repo_type="dataset", revision=commit),
                                 headers=headers) as answer:
            if answer.status_code == 200:
                return False
            hf_raise_for_status(answer)
            return answer.status_code == 206 and str(answer.headers.get("Content-Range", "")).startswith(
                f"bytes {size - 22}-{size - 1}/")
    except network_errors() as exc:
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise DataError(f"cannot read the archive {path!r} of Hugging Face dataset {repo!r} ({type(exc).__name__}: {first})",
                        field="dataset.video_archives", hint=_hint(repo)) from None


@dataclass
class VideoArchives:
    """The extraction folder of a task's ``dataset.video_archives`` and the extractor that fills it
    member by member (``ensure`` a path before reading it)."""

    folder: Path
    extractor: Any

    def ensure(self, path: Path) -> list[str]:
        return self.extractor.ensure(path)


def extracted_videos(repo: str, revision: str | None, entries: Sequence[Any]) -> VideoArchives:
    """The folder the ``dataset.video_archives`` of ``repo`` are extracted into, and their
    extractor: each archive's central directory read by range requests (once per commit: the index
    is kept beside the files), a member extracted when a document needs it. A Hub that answers no
    range request gets each archive downloaded whole, once, into the Hugging Face cache (a log
    line says so), read the same way from there."""
    from mmtasks.documents.archives import Archive, Extractor

    _require_hub("dataset.video_archives")
    base = archives_root() / repo.replace("/", "--")
    commit = _commit(repo, revision, base)
    # one folder per dataset, whatever the commit: an archive is indexed by its blob id and size, and
    # an extracted member known by its name, size and CRC, so a commit that changes only the README
    # reads no archive again and keeps no second copy (older commits' folders: `mmtasks cache prune`)
    dest = base / EXTRACTED
    listing = _listing(repo, commit, entries, dest)
    reader = _Reader(repo, commit)
    archives: list[Archive] = []
    for entry in entries:
        found = listing.get(entry.path) or []
        if not found:
            raise DataError(f"no file of the Hugging Face dataset {repo!r} matches {entry.path!r}", field="dataset.video_archives",
                            hint=_hint(repo))
        for f in found:
            archives.append(Archive(f["path"], entry.strip, f"{f['oid']}:{f['size']}", reader.opener(f["path"], f["size"]),
                                    errors=network_errors(), replace_hint=reader.replace_hint))
    return VideoArchives(dest, Extractor(archives, dest))


@dataclass
class HubVideoFiles:
    """The videos of a task's ``dataset.video_files``: files of the Hub dataset ``repo`` at
    ``commit`` as they lie there, each downloaded alone (``hf_hub_download``, into the Hugging Face
    cache) when a document needs it (``ensure`` a path before reading it). The task's video paths
    resolve under ``folder``, the cache's snapshot folder of the commit, whose files are links into
    the repository's ``blobs/`` (``storage``, the confinement's outer bound)."""

    repo: str
    commit: str
    under: str | None
    folder: Path
    storage: Path

    def missing_hint(self) -> str:
        """What to do about a video the repository does not hold."""
        return (f"it is no file of the Hugging Face dataset {self.repo} at commit {self.commit[:12]}"
                + (f" (under {self.under}/)" if self.under else "") + ": check the record, or put the file there yourself "
                "if the dataset's card says where to get it")

    def ensure(self, path: Path) -> list[str]:
        """Download the repository's file at ``path`` (a place under :attr:`folder`) when the cache
        lacks it; returns the paths downloaded. A path the cache holds (its link resolved into the
        repository's blobs) is left alone, as is one the repository does not hold (the reader then
        says it is not found). Raises :class:`DataError` for a refusal or a network error (one line
        naming the file)."""
        root = os.path.realpath(self.folder)
        rel = os.path.relpath(path, root)
        if rel == "." or rel.startswith("..") or os.path.lexists(path):
            return []  # a cached file (resolved into blobs/), or the snapshot itself
        name = Path(rel).as_posix()  # under `under` (the loader's confinement: mmtasks.documents.paths.ConfinedPaths)
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import LocalEntryNotFoundError, RemoteEntryNotFoundError

        try:
            hf_hub_download(self.repo, name, repo_type="dataset", revision=self.commit)
        except RemoteEntryNotFoundError:
            return []  # not in the repository: the reader says "video not found" with missing_hint
        except LocalEntryNotFoundError:
            raise DataError(f"the video {name!r} of {self.repo!r} is not in the Hugging Face cache, and the Hub is offline "
                            "(HF_HUB_OFFLINE)", field="dataset.video_files", hint=_hint(self.repo)) from None
        except network_errors() as exc:
            first = str(exc).splitlines()[0][:200] if str(exc) else ""
            raise DataError(f"cannot download the video {name!r} of Hugging Face dataset {self.repo!r} "
                            f"({type(exc).__name__}: {first})", field="dataset.video_files", hint=_hint(self.repo)) from None
        return [name]


def hub_video_files(repo: str, revision: str | None, under: str | None) -> HubVideoFiles:
    """The videos of ``repo`` at the commit ``revision`` names (asked of the Hub, one request, and
    kept for offline runs; none when it is a commit), downloaded as documents need them."""
    _require_hub("dataset.video_files")
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    commit = _commit(repo, revision, archives_root() / repo.replace("/", "--"), field="dataset.video_files")
    storage = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo, repo_type="dataset")
    return HubVideoFiles(repo, commit, under, storage / "snapshots" / commit, storage)


class _Reader:
    """Opens the archives of one commit when an index or a member needs them (not before): as
    remote files read by range requests, or, from a Hub that answers none (asked once) or offline,
    the whole file from the Hugging Face cache (downloaded there when missing and online)."""

    def __init__(self, repo: str, commit: str) -> None:
        self.repo, self.commit = repo, commit
        self.ranged: bool | None = None
        self.fs: Any = None

    def opener(self, name: str, size: int) -> Callable[[], IO[bytes]]:
        return lambda: self.open(name, size)

    def replace_hint(self) -> str:
        """What to do about a damaged archive, where this reader reads it from."""
        if self.ranged and not _offline():
            return (f"the Hub's copy at commit {self.commit[:12]} is damaged (it is read by range requests: nothing of it "
                    "is kept on this machine); tell the dataset's maintainers, or run with another revision")
        return "delete it from the Hugging Face cache (huggingface-cli delete-cache) and download it again"

    def open(self, name: str, size: int) -> IO[bytes]:
        if not _offline():
            if self.ranged is None:
                self.ranged = ranges_supported(self.repo, self.commit, name, size)
                if not self.ranged:
                    log.warning("the Hub at %s answers no range request: the video archives of %s are downloaded whole",
                                _endpoint(), self.repo)
            if self.ranged:
                if self.fs is None:
                    self.fs = _filesystem()
                # cache_type none: each read is one range request of exactly the bytes read
                return self.fs.open(f"datasets/{self.repo}@{self.commit}/{name}", "rb", block_size=1 << 20,
                                    cache_type="none", size=size)
        path = snapshot(self.repo, self.commit, [name], "dataset.video_archives") / name
        if not path.is_file():
            raise DataError(f"the Hugging Face dataset {self.repo!r} has no file {name!r}", field="dataset.video_archives",
                            hint=_hint(self.repo))
        return open(path, "rb")


def prune_archives(root: Path) -> "Pruned":
    """``mmtasks cache prune``: in every dataset's folder under ``root`` (:func:`archives_root`),
    the extracted files no index references and every partial file (:func:`archives.prune`), and
    the per-commit folders of the earlier layout (``<org>--<name>/<commit>/``, one copy per commit)."""
    from mmtasks.documents.archives import Pruned, prune

    pruned = Pruned()
    if not root.is_dir():
        return pruned
    for dataset in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        for folder in sorted(dataset.iterdir()):
            if re.fullmatch(r"[0-9a-f]{40}", folder.name) and folder.is_dir() and not folder.is_symlink():
                for path in sorted(folder.rglob("*")):
                    if path.is_file() and not path.is_symlink():
                        pruned.files += 1
                        pruned.bytes += path.lstat().st_size
                pruned.paths.append(str(folder))
                shutil.rmtree(folder, ignore_errors=True)
        if (dataset / EXTRACTED).is_dir():
            prune(dataset / EXTRACTED, pruned)
    return pruned


def _endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT


__all__ = ["ARCHIVES_ENV", "EXTRACTED", "HubVideoFiles", "VideoArchives", "archives_root", "extracted_videos",
           "hub_video_files", "network_errors",
           "prune_archives", "ranges_supported", "read_records", "snapshot"]
