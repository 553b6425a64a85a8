"""Reading a task's documents: local JSONL/JSON under the data root, or a Hugging Face dataset.

Records are streamed (JSONL is read line by line) and turned into
:class:`Document` objects whose images are lazy :class:`~mmtasks.core.conversation.Image`
parts: only their existence and header are checked here, pixels are decoded by a backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from mmtasks.config.task_config import DatasetConfig, TaskConfig
from mmtasks.core.conversation import Image
from mmtasks.documents.hub_split import split_files
from mmtasks.documents.image_header import image_bytes_problem, image_file_problem
from mmtasks.documents.jsonl import iter_jsonl, loads_checked
from mmtasks.documents.paths import ConfinedPaths, inside
from mmtasks.errors import DataError, MmtasksError, Where

__all__ = ["Document", "Exclusions", "Scan", "image_entries", "image_file_problem", "load_documents", "scan_documents"]

#: where problems go when the caller collects them (the preflight) instead of stopping at the first
Report = Callable[[MmtasksError], None]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int,), "list": (list,), "dict": (dict,),
    "str|int": (str, int), "str|list": (str, list), "any": (object,),
}

@dataclass(frozen=True)
class Document:
    """One benchmark record. ``index`` is its position in the source (stable across runs)."""

    index: int
    doc_id: str
    record: dict[str, Any]
    images: tuple[Image, ...]
    source: str
    #: the record's line in a JSONL source (None for JSON files and Hub datasets)
    line: int | None = None
    #: the record's videos (``dataset.video``), their frames chosen (``mmtasks.documents.video.VideoClip``)
    videos: tuple[Any, ...] = ()
    #: how the task's record policy treated this record while it was evaluated: treatment
    #: (``kept_as_text``, ``scored_wrong``) -> reason; filled as its prompt and target are made
    #: (shared by the transformed copies of the document), copied to its sample
    treated: dict[str, str] = field(default_factory=dict, compare=False)
    #: the few-shot demonstrations shown before this document's question (``fewshot:``), drawn
    #: from the task's demonstration source
    demonstrations: tuple["Document", ...] = field(default=(), compare=False)


@dataclass
class Exclusions:
    """The records a task's record policy left out (``treat: exclude``), by reason, counted as the
    documents are read: they have no document and no sample, and results.json counts them here."""

    by_reason: dict[str, int] = field(default_factory=dict)

    def add(self, reason: str) -> None:
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1


class _Excluded(Exception):
    """A record the record policy leaves out (internal: the loader counts it)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def load_documents(task: TaskConfig, data_root: Path | None, *, task_file: Path | None = None,
                   adapter: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                   limit: int | None = None, report: Report | None = None,
                   only: Callable[[int], bool] | None = None, frames: Any = None,
                   excluded: Exclusions | None = None) -> Iterator[Document]:
    """The task's documents (the records before index ``limit``); ``adapter`` is its resolved
    ``dataset.adapter`` (built-ins are looked up when omitted).

    A problem with one record (a malformed line, a schema error, a missing or unreadable image)
    is raised; with ``report`` it is given to ``report`` instead, every problem of the record is
    checked, and the record is left out (the preflight reads on, to report every problem).
    Problems with the source itself (no data file, no data directory) are always raised.

    ``only``: read just the records whose index it accepts (a share of the data, for a check in
    several processes); the others are still read far enough to find duplicate ids.

    ``frames``: the :class:`~mmtasks.documents.video.FrameStore` the videos' frames are decoded
    into (shared by the passes of a run; default: one for this pass).

    A record that a rule of ``dataset.record_policy`` excludes (a field its authors require, null
    or missing) yields no document and is counted in ``excluded``. An integer id (a Hub ``int64``
    column) is the document's id as its decimal text, and the record holds that text where the task
    requires a string id (``required_fields``)."""
    ds = task.dataset
    videos = None
    if ds.video is not None:
        from mmtasks.documents.video import FrameStore, VideoReader

        videos = VideoReader(ds.video, frames if frames is not None else FrameStore())
    if adapter is None and ds.adapter:
        from mmtasks.registry import adapters

        adapter = adapters.get(ds.adapter, file=task_file)
    if ds.local is not None and (data_root is not None or (ds.hf is None and ds.hub is None)):
        if data_root is None:
            raise DataError(
                f"task {task.task!r} reads local data but no data directory is set",
                field="--data-dir",
                hint=f"pass --data-dir DIR or set MMTASKS_DATA_DIR; expected DIR/{ds.local.dir}/{ds.local.file}. "
                + (ds.get_data or ""),
            )
        folder = data_root / inside(ds.local.dir, where="the data root", field="dataset.local.dir", file=task_file)
        path = folder / inside(ds.local.file, where=f"the data folder {folder}", field="dataset.local.file", file=task_file)
        if not path.is_file():
            raise DataError(
                f"data file not found for task {task.task!r}",
                file=path,
                hint=ds.get_data or f"put the benchmark's data at {path}",
            )
        records = _exploded(_read_local(path, report), ds, str(path))
        yield from _documents(records, ds, folder, str(path), adapter, report, limit, only, videos, excluded)
    elif ds.hf is not None or ds.hub is not None:
        if ds.hf is not None:
            repo, revision = ds.hf.path, ds.hf.revision
        elif ds.hub is not None:
            repo, revision = ds.hub.repo, ds.hub.revision
        folder = data_root or Path.cwd()
        missing = None
        fetch = None
        within = under = None
        if ds.video_files is not None:
            from mmtasks.documents.hub_files import hub_video_files

            files = hub_video_files(repo, revision, ds.video_files.under)
            folder, fetch, within, missing = files.folder, files.ensure, files.storage, files.missing_hint()
            under = ds.video_files.under
        elif ds.video_archives:
            from mmtasks.documents.hub_files import extracted_videos

            archives = extracted_videos(repo, revision, ds.video_archives)
            folder, fetch = archives.folder, archives.ensure
            missing = (f"it is in none of the archives of {repo} ({', '.join(a.path for a in ds.video_archives)}) "
                       f"extracted in {folder}: put the file there yourself if the dataset's card says where to get it")
        records = _exploded(_read_hf(task, data_root, task_file) if ds.hf is not None else _read_hub(task), ds, f"hf:{repo}")
        yield from _documents(records, ds, folder, f"hf:{repo}", adapter, report, limit, only, videos, excluded, missing,
                              fetch, within, under)
    else:
        raise DataError(f"task {task.task!r} names no dataset (dataset.local, dataset.hf or dataset.hub)", file=task_file,
                        field="dataset")


def _exploded(records: Iterator[tuple[int, dict[str, Any], int | None]], ds: DatasetConfig,
              source: str) -> Iterator[tuple[int, dict[str, Any], int | None]]:
    """``dataset.records_field``: each item of that list field of a source record as a record of
    its own, the outer record's other fields beside the item's (the item's win), numbered across
    the source; without it, the records as they are."""
    name = ds.records_field
    if name is None:
        yield from records
        return
    index = 0
    for _, rec, lineno in records:
        items = rec.get(name)
        if not isinstance(items, list):
            raise DataError(f"expected a list of records (dataset.records_field), got {type(items).__name__}",
                            file=source, line=lineno, field=name)
        outer = {k: v for k, v in rec.items() if k != name}
        for k, item in enumerate(items):
            if not isinstance(item, dict):
                raise DataError(f"item {k}: expected a record (an object), got {type(item).__name__}", file=source,
                                line=lineno, field=name)
            yield index, {**outer, **item}, lineno
            index += 1


def _read_hub(task: TaskConfig) -> Iterator[tuple[int, dict[str, Any], int | None]]:
    from mmtasks.documents.hub_files import read_records

    assert task.dataset.hub is not None
    yield from read_records(task.dataset.hub)


def _read_local(path: Path, report: Report | None = None) -> Iterator[tuple[int, dict[str, Any], int | None]]:
    """Yield (index, record, line number) from JSONL, or from JSON holding a list / a dict of id -> record."""
    if path.suffix == ".jsonl":
        for index, (lineno, rec) in enumerate(iter_jsonl(path, report)):
            yield index, rec, lineno
        return
    try:
        data = loads_checked(path.read_text(encoding="utf-8"), file=path)  # numbers finite, no lone surrogate, bounded depth
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or type(exc).__name__}", file=path) from None
    if isinstance(data, dict):
        items = []
        for key, rec in data.items():
            if isinstance(rec, dict):
                rec = {"id": key, **rec} if "id" not in rec else rec
            items.append(rec)
        data = items
    if not isinstance(data, list):
        raise DataError("expected a list of records or a dict of id -> record", file=path)
    for index, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise DataError(f"record {index} is not an object", file=path)
        yield index, rec, None


DataFiles = str | list[str] | dict[str, str | list[str]]


def data_files_base(data_root: Path | None, task_file: Path | None) -> tuple[Path, str]:
    """The folder a relative ``dataset.hf.data_files`` path resolves against, and how to name it:
    the data root (``--data-dir`` / ``$MMTASKS_DATA_DIR``) when the run has one, else the folder of
    the task's YAML file (else the working directory)."""
    if data_root is not None:
        return data_root, f"the data root {data_root}"
    if task_file is not None:
        return Path(task_file).parent, f"the task's folder {Path(task_file).parent}"
    return Path.cwd(), "the working directory"


def resolve_data_files(files: DataFiles, data_root: Path | None, task_file: Path | None) -> DataFiles:
    """A builder's (``path: parquet``, ``json`` ...) ``dataset.hf.data_files`` with each relative
    path made absolute under :func:`data_files_base`
    (a relative path may not climb out of it with ``..``); absolute paths and URLs (``hf://``,
    ``https://``) as given. A listed file that does not exist (a pattern that matches none) is a
    :class:`DataError` naming it, before ``datasets`` is asked (which would blame the network)."""
    base, where = data_files_base(data_root, task_file)

    def one(value: str) -> str:
        if "://" in value:
            return value
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = base / inside(value, where=where, field="dataset.hf.data_files", file=task_file)
        if not (any(path.parent.glob(path.name)) if any(c in value for c in "*?[") else path.is_file()):
            raise DataError(f"data file not found (dataset.hf.data_files {value!r}, relative paths resolve against "
                            f"{where})", file=path, field="dataset.hf.data_files",
                            hint="relative paths resolve against --data-dir when given, else the task's folder")
        return str(path)

    if isinstance(files, str):
        return one(files)
    if isinstance(files, list):
        return [one(f) for f in files]
    return {split: one(f) if isinstance(f, str) else [one(x) for x in f] for split, f in files.items()}


def _read_hf(task: TaskConfig, data_root: Path | None = None,
             task_file: Path | None = None) -> Iterator[tuple[int, dict[str, Any], int | None]]:
    hf = task.dataset.hf
    assert hf is not None
    # a builder's (parquet, json ...) files are local; a Hub dataset's data_files are paths in its repository
    local = hf.data_files is not None and "/" not in hf.path
    data_files = resolve_data_files(hf.data_files, data_root, task_file) if local and hf.data_files is not None else hf.data_files
    try:
        import datasets
    except ImportError:
        raise DataError("reading a Hugging Face dataset needs the `datasets` package", hint="pip install 'mmtasks[datasets]'") from None
    generation_error = getattr(getattr(datasets, "exceptions", None), "DatasetGenerationError", ValueError)
    try:
        # only the split the task reads is downloaded (mmtasks.documents.hub_split)
        files = split_files(datasets, hf) if hf.data_files is None else None
        if files is not None:
            dset = datasets.load_dataset("parquet", data_files={hf.split: files}, split=hf.split)
        else:
            dset = datasets.load_dataset(hf.path, hf.name, split=hf.split, revision=hf.revision, data_files=data_files)
    except generation_error as exc:  # a corrupt parquet or arrow file: its reader's own words name it
        cause = exc.__cause__ or exc.__context__ or exc
        raise DataError(
            f"cannot read Hugging Face dataset {hf.path!r}: a data file is corrupt or not in its format "
            f"({type(cause).__name__}: {str(cause).splitlines()[0][:200] if str(cause) else ''})",
            field="dataset.hf", hint="download its files again (delete them from the Hugging Face cache)",
        ) from None
    except (FileNotFoundError, ValueError, ConnectionError, OSError) as exc:
        raise DataError(
            f"cannot load Hugging Face dataset {hf.path!r} ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})",
            field="dataset.hf.data_files" if local else "dataset.hf",
            hint=("check the files of dataset.hf.data_files and the builder named by dataset.hf.path" if local else
                  "check the name and your network, or download it and use local data with --data-dir"),
        ) from None
    dset = _undecoded_images(dset, datasets)
    for index, rec in enumerate(dset):
        yield index, dict(rec), None


def _undecoded_images(dset: Any, datasets: Any) -> Any:
    """Keep Hub image columns as encoded bytes (lazy), not decoded PIL images."""
    for name, feature in dset.features.items():
        if isinstance(feature, datasets.Image):
            dset = dset.cast_column(name, datasets.Image(decode=False))
        elif isinstance(feature, (list, datasets.Sequence)):
            inner = feature[0] if isinstance(feature, list) else feature.feature
            if isinstance(inner, datasets.Image):
                dset = dset.cast_column(name, [datasets.Image(decode=False)] if isinstance(feature, list)
                                        else datasets.Sequence(datasets.Image(decode=False)))
    return dset


def _documents(records: Iterator[tuple[int, dict[str, Any], int | None]], ds: DatasetConfig, folder: Path, source: str,
               adapter: Callable[[dict[str, Any]], dict[str, Any]] | None, report: Report | None = None,
               limit: int | None = None, only: Callable[[int], bool] | None = None, videos: Any = None,
               excluded: Exclusions | None = None, missing_video: str | None = None,
               fetch: Callable[[Path], Any] | None = None, within: Path | None = None,
               under: str | None = None) -> Iterator[Document]:
    """``missing_video``: the hint of a video not found (where the videos came from); ``fetch``:
    called with each video (and subtitles) path before it is read, to extract it from its archive
    or download it; ``within``: the folder holding ``folder`` that its links may lead into (the Hub
    cache's snapshot folder links into the repository's blobs); ``under``: the folder of ``folder``
    the records' paths must name a place in (``dataset.video_files.under``)."""
    seen: set[str] = set()
    paths = ConfinedPaths(folder, within=within, under=under, under_key="dataset.video_files.under")
    for index, rec, lineno in records:
        if limit is not None and index >= limit:
            return
        if only is not None and not only(index):
            try:  # another share's record: its id only (a later duplicate is in this share or another)
                seen.add(str((adapter(rec) if adapter is not None else rec).get(ds.id_field, index)))
            except DataError:
                pass  # reported by the share that reads the record
            continue
        problems: list[MmtasksError] = []
        try:
            doc = _document(index, rec, lineno, ds, paths, source, adapter, seen, problems, collect=report is not None,
                            videos=videos, missing_video=missing_video, fetch=fetch)
        except _Excluded as exc:
            if excluded is not None:
                excluded.add(exc.reason)
            continue
        if problems:
            if report is None:
                raise problems[0]
            for problem in problems:
                report(problem)
            continue
        if doc is not None:
            yield doc


def _document(index: int, rec: dict[str, Any], lineno: int | None, ds: DatasetConfig, paths: ConfinedPaths, source: str,
              adapter: Callable[[dict[str, Any]], dict[str, Any]] | None, seen: set[str], problems: list[MmtasksError],
              collect: bool, videos: Any = None, missing_video: str | None = None,
              fetch: Callable[[Path], Any] | None = None) -> Document | None:
    """One record as a Document; its problems go to ``problems`` (all of them when ``collect``,
    else the first), and then None is returned."""
    if adapter is not None:
        try:
            rec = adapter(rec)
        except DataError as exc:
            # the adapter knows the record, the loader knows where it came from
            problems.append(exc if exc.file is not None else
                            DataError(exc.message, file=source, line=lineno, doc_id=exc.doc_id, field=exc.field, hint=exc.hint))
            return None
    raw_id = rec.get(ds.id_field)
    if isinstance(raw_id, int) and not isinstance(raw_id, bool) and ds.required_fields.get(ds.id_field) == "str":
        rec = {**rec, ds.id_field: str(raw_id)}  # an int64 id column where the task reads text ids: its decimal text
    doc_id = str(rec.get(ds.id_field, index))
    where: Where = {"file": source, "line": lineno, "doc_id": doc_id}
    if doc_id in seen:
        problems.append(DataError(f"duplicate document id {doc_id!r}", field=ds.id_field, **where))
        return None
    seen.add(doc_id)
    for rule in ds.record_policy:  # the dataset's own records that its authors leave out
        if rule.problem == "missing_field" and rule.field is not None and rec.get(rule.field) is None:
            raise _Excluded(rule.reason)
    for name, kind in ds.required_fields.items():
        if name not in rec:
            problems.append(DataError("required field is missing", field=name, **where))
        elif not isinstance(rec[name], _JSON_TYPES[kind]) or (kind == "int" and isinstance(rec[name], bool)):
            problems.append(DataError(f"expected {kind}, got {type(rec[name]).__name__}", field=name, **where))
        if problems and not collect:
            return None
    images = _images(rec, ds, paths, doc_id, source, lineno, problems, collect)
    clips = (_videos(rec, videos, paths, doc_id, source, lineno, problems, collect, missing_video, fetch)
             if videos is not None else [])
    if problems:
        return None
    return Document(index=index, doc_id=doc_id, record=rec, images=tuple(images), source=source, line=lineno,
                    videos=tuple(clips))


def _videos(rec: dict[str, Any], reader: Any, paths: ConfinedPaths, doc_id: str, source: str, lineno: int | None,
            problems: list[MmtasksError], collect: bool, missing_video: str | None = None,
            fetch: Callable[[Path], Any] | None = None) -> list[Any]:
    """The record's videos (``dataset.video``), each checked from its header (container opened,
    duration and frame count read, nothing decoded) and its frames chosen by the rule; ``fetch``
    extracts each (and its subtitles) from the dataset's archives first."""
    from mmtasks.documents.video import VideoProblem

    where: Where = {"file": source, "line": lineno, "doc_id": doc_id}
    out: list[Any] = []
    from mmtasks.templates import render

    def rendered(template: str, name: str) -> str:
        return render(template, {"doc": rec, "doc_id": doc_id}, origin=source, doc_id=doc_id, field=name).strip()

    try:
        entries = reader.entries(rec, rendered)
    except MmtasksError as exc:
        problems.append(exc)
        return out
    for label, rel in entries:
        if problems and not collect:
            break
        field = label.rpartition("[")[0] or label
        if isinstance(rel, dict) and isinstance(rel.get("path"), str):
            rel = rel["path"]
        if not isinstance(rel, str) or not rel:
            problems.append(DataError(f"expected a video path, got {type(rel).__name__ if rel != '' else 'an empty string'}",
                                      field=field, **where))
            continue
        try:
            path = paths(rel, doc_id=doc_id, field=field, file=source, line=lineno)
        except DataError as exc:
            problems.append(exc)
            continue
        srt = None
        if reader.config.subtitles and reader.config.subtitles_path is not None:
            try:
                srt = paths(rendered(reader.config.subtitles_path, "dataset.video.subtitles_path"), doc_id=doc_id,
                            field="dataset.video.subtitles_path", file=source, line=lineno)
            except MmtasksError as exc:
                problems.append(exc)
                continue
        if fetch is not None:
            try:
                fetch(path)
                if srt is not None:
                    fetch(srt)
            except DataError as exc:  # a disk or network error, naming the archive and member
                problems.append(exc)
                continue
        try:
            out.append(reader.clip(path, rel, doc_id, rec, srt))
        except VideoProblem as exc:
            hint = missing_video if missing_video is not None and str(exc) == "video not found" else None
            problems.append(DataError(f"{exc}: {path}", field=field, hint=hint, **where))
        except DataError as exc:  # PyAV missing
            problems.append(DataError(exc.message, field=field, hint=exc.hint, **where))
    return out


class _BadImageField(Exception):
    """A record's image field has the wrong shape (internal: the caller adds where it was read)."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


def _is_null_image(value: Any) -> bool:
    """An empty or null entry of a listed image field (a Hub Image column's null is None, or a
    dict with neither bytes nor path)."""
    if value is None or value == "":
        return True
    return isinstance(value, dict) and value.get("bytes") is None and not value.get("path")


def _one_field(rec: dict[str, Any], images_field: str) -> list[Any]:
    """The raw entries of one field or ``turns[].images`` path; raises _BadImageField."""
    head, sep, rest = images_field.partition("[].")
    raw = rec.get(head, [])
    if not sep:
        if isinstance(raw, (str, list)):
            return [raw] if isinstance(raw, str) else raw
        raise _BadImageField(images_field)
    if not isinstance(raw, list):
        raise _BadImageField(images_field)
    out: list[Any] = []
    for item in raw:
        if not isinstance(item, dict):
            raise _BadImageField(images_field)
        out.extend(_one_field(item, rest))
    return out


def _labelled_entries(rec: dict[str, Any], images_field: str | list[str] | None) -> list[tuple[str, Any]]:
    """(label, raw entry) for each image of a record, in order; raises _BadImageField.

    A single field keeps its entries as they are (a null value is a wrong shape). A list
    of fields concatenates theirs in the order listed; there an empty or null value, or a
    field the record lacks, adds no image (BLINK's ``image_1`` .. ``image_4``, some null).
    """
    if images_field is None:
        return []
    if isinstance(images_field, str):
        if "[]." not in images_field and isinstance(rec.get(images_field), dict):  # one embedded Hub image
            return [(images_field, rec[images_field])]
        return [(f"{images_field}[{k}]", raw) for k, raw in enumerate(_one_field(rec, images_field))]
    out: list[tuple[str, Any]] = []
    for name in images_field:
        if "[]." not in name and (name not in rec or _is_null_image(rec[name])):
            continue
        if "[]." not in name and isinstance(rec[name], dict):  # one embedded Hub image
            out.append((name, rec[name]))
            continue
        entries = _one_field(rec, name)
        if "[]." not in name and isinstance(rec[name], str):
            out.append((name, entries[0]))
            continue
        out.extend((f"{name}[{k}]", raw) for k, raw in enumerate(entries) if not _is_null_image(raw))
    return out


def image_entries(rec: dict[str, Any], images_field: str | list[str] | None) -> list[Any] | None:
    """The raw image entries of a record, in order; None when a field has the wrong shape.

    ``images_field`` is a field name (``images``), a path into a list of records
    (``turns[].images``: each turn's images, concatenated in turn order), or a list of
    them (see :func:`_labelled_entries`). A missing field means no images.
    """
    try:
        return [raw for _, raw in _labelled_entries(rec, images_field)]
    except _BadImageField:
        return None


def _images(rec: dict[str, Any], ds: DatasetConfig, paths: ConfinedPaths, doc_id: str, source: str, lineno: int | None,
            problems: list[MmtasksError], collect: bool) -> list[Image]:
    """The record's images, each checked from its header (see :func:`image_file_problem`)."""
    where: Where = {"file": source, "line": lineno, "doc_id": doc_id}
    try:
        entries = _labelled_entries(rec, ds.images_field)
    except _BadImageField as exc:
        problems.append(DataError("expected a list of image paths", field=exc.field, **where))
        return []
    out: list[Image] = []
    for label, rel in entries:
        if problems and not collect:
            break
        field = label.rpartition("[")[0] or label
        if isinstance(rel, dict) and isinstance(rel.get("bytes"), bytes):
            # an image embedded in the record (a Hugging Face dataset's Image feature)
            name = rel.get("path") or label
            problem = image_bytes_problem(rel["bytes"])
            if problem is not None:
                problems.append(DataError(f"{problem}: {name}", field=field, **where))
            out.append(Image(data=rel["bytes"], doc_id=doc_id, label=name))
            continue
        if isinstance(rel, dict) and isinstance(rel.get("path"), str):
            rel = rel["path"]
        if not isinstance(rel, str):
            problems.append(DataError(f"expected an image path, got {type(rel).__name__}", field=field, **where))
            continue
        try:
            if ds.image_resolution == "basename":
                name = rel.replace("\\", "/").rsplit("/", 1)[-1]
                path = paths(f"{ds.images_dir}/{name}", doc_id=doc_id, field=field, file=source, line=lineno)
            else:
                path = paths(rel, doc_id=doc_id, field=field, file=source, line=lineno)
        except DataError as exc:
            problems.append(exc)
            continue
        problem = image_file_problem(path)
        if problem is not None:
            problems.append(DataError(f"{problem}: {path}", field=field, **where))
            continue
        out.append(Image(path=path, doc_id=doc_id, label=rel))
    return out


class Media(NamedTuple):
    """The most images and videos one document of a task carries."""

    #: images, each sampled frame of a video among them (as a backend that takes frames as images gets them)
    images: int
    videos: int


@dataclass(frozen=True)
class Scan:
    """A quick pass over a task's raw records: how many there are and the most images in one."""

    count: int
    total: int
    #: the most images in one record (the preflight's check: sampled video frames among them)
    max_images: int
    #: what the task's record policy did to its records (the preflight's check): treatment ->
    #: reason -> records (``excluded``, ``kept_as_text``, ``scored_wrong``)
    treated: dict[str, dict[str, int]] = field(default_factory=dict, compare=False)
    #: the most videos in one record (the preflight's check)
    max_videos: int = 0


def scan_documents(task: TaskConfig, data_root: Path | None, *, limit: int | None = None, task_file: Path | None = None,
                   adapter: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> Scan:
    """Check the data exists and count it, without resolving images (fast; no model needed)."""
    ds = task.dataset
    if ds.local is not None and (data_root is not None or (ds.hf is None and ds.hub is None)):
        # load_documents raises the "where it looked, how to get it" errors
        first = load_documents(task, data_root, task_file=task_file, adapter=adapter)
        next(first, None)
        assert data_root is not None and ds.local is not None
        path = data_root / ds.local.dir / ds.local.file
        records: Iterator[tuple[int, dict[str, Any], int | None]] = _exploded(_read_local(path), ds, str(path))
    elif ds.hf is not None:
        records = _exploded(_read_hf(task, data_root, task_file), ds, f"hf:{ds.hf.path}")
    elif ds.hub is not None:
        records = _exploded(_read_hub(task), ds, f"hf:{ds.hub.repo}")
    else:
        raise DataError(f"task {task.task!r} names no dataset (dataset.local, dataset.hf or dataset.hub)", file=task_file,
                        field="dataset")
    total = 0
    max_images = 0
    for i, rec, _ in records:
        total += 1
        if limit is None or i < limit:
            imgs = image_entries(rec, ds.images_field)
            if imgs is not None:
                max_images = max(max_images, len(imgs))
    count = total if limit is None else min(limit, total)
    return Scan(count=count, total=total, max_images=max_images)
