"""Reading a task's documents: local JSONL/JSON under the data root, or a Hugging Face dataset.

Records are streamed (JSONL is read line by line) and turned into
:class:`Document` objects whose images are lazy :class:`~mmtasks.conversation.Image`
parts: only their existence and header are checked here, pixels are decoded by a backend.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image as PILImage
from PIL import UnidentifiedImageError

from mmtasks.config.task_config import DatasetConfig, TaskConfig
from mmtasks.conversation import Image
from mmtasks.documents.paths import ConfinedPaths
from mmtasks.errors import DataError

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int,), "list": (list,), "dict": (dict,),
    "str|int": (str, int), "str|list": (str, list), "any": (object,),
}

#: how to get each benchmark's data, for the "missing data" error
DATA_HINTS = {
    "realbench": "RealBench's data is not public yet; put it in the local format of README 'Data' "
    "(or try the bundled sample: --data-dir data/sample)",
    "mmdu": "download benchmark.json and mmdu_pics.zip from the Hugging Face dataset laolao77/MMDU "
    "and unzip the images into <data-dir>/mmdu/images/ (or try the bundled sample: --data-dir data/sample)",
    "mmrc": "convert the Hugging Face dataset WUUE/MMRC_Real_World_Conversation with "
    "`mmtasks data mmrc-convert` (or try the bundled sample: --data-dir data/sample)",
}


@dataclass(frozen=True)
class Document:
    """One benchmark record. ``index`` is its position in the source (stable across runs)."""

    index: int
    doc_id: str
    record: dict[str, Any]
    images: tuple[Image, ...]
    source: str


def load_documents(task: TaskConfig, data_root: Path | None, *, task_file: Path | None = None) -> Iterator[Document]:
    ds = task.dataset
    if ds.local is not None and (data_root is not None or ds.hf is None):
        if data_root is None:
            raise DataError(
                f"task {task.task!r} reads local data but no data directory is set",
                field="--data-dir",
                hint=f"pass --data-dir DIR or set MMTASKS_DATA_DIR; expected DIR/{ds.local.dir}/{ds.local.file}. "
                + DATA_HINTS.get(ds.local.dir, ""),
            )
        folder = data_root / ds.local.dir
        path = folder / ds.local.file
        if not path.is_file():
            raise DataError(
                f"data file not found for task {task.task!r}",
                file=path,
                hint=DATA_HINTS.get(ds.local.dir, f"put the benchmark's data at {path}"),
            )
        records = _read_local(path)
        yield from _documents(records, ds, folder, str(path))
    elif ds.hf is not None:
        yield from _documents(_read_hf(task), ds, data_root or Path.cwd(), f"hf:{ds.hf.path}")
    else:
        raise DataError(f"task {task.task!r} names no dataset (dataset.local or dataset.hf)", file=task_file, field="dataset")


def _read_local(path: Path) -> Iterator[tuple[int, dict[str, Any], int | None]]:
    """Yield (index, record, line number) from JSONL, or from JSON holding a list / a dict of id -> record."""
    if path.suffix == ".jsonl":
        with path.open("r", encoding="utf-8") as fh:
            index = 0
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"malformed JSON line: {exc.msg} at column {exc.colno}", file=path, line=lineno) from None
                if not isinstance(rec, dict):
                    raise DataError("each line must be a JSON object", file=path, line=lineno)
                yield index, rec, lineno
                index += 1
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON: {exc.msg}", file=path, line=exc.lineno) from None
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


def _read_hf(task: TaskConfig) -> Iterator[tuple[int, dict[str, Any], int | None]]:
    hf = task.dataset.hf
    assert hf is not None
    try:
        import datasets
    except ImportError:
        raise DataError("reading a Hugging Face dataset needs the `datasets` package", hint="pip install 'mmtasks[datasets]'") from None
    try:
        dset = datasets.load_dataset(hf.path, hf.name, split=hf.split, revision=hf.revision)
    except (FileNotFoundError, ValueError, ConnectionError, OSError) as exc:
        raise DataError(
            f"cannot load Hugging Face dataset {hf.path!r} ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})",
            field="dataset.hf",
            hint="check the name and your network, or download it and use local data with --data-dir",
        ) from None
    for index, rec in enumerate(dset):
        yield index, dict(rec), None


def _documents(records: Iterator[tuple[int, dict[str, Any], int | None]], ds: DatasetConfig, folder: Path, source: str) -> Iterator[Document]:
    adapter = None
    if ds.adapter:
        from mmtasks.documents.adapters import get_adapter

        adapter = get_adapter(ds.adapter)
    seen: set[str] = set()
    paths = ConfinedPaths(folder)
    for index, rec, lineno in records:
        if adapter is not None:
            rec = adapter(rec)
        doc_id = str(rec.get(ds.id_field, index))
        where = {"file": source, "line": lineno, "doc_id": doc_id}
        if doc_id in seen:
            raise DataError(f"duplicate document id {doc_id!r}", field=ds.id_field, **where)
        seen.add(doc_id)
        for name, kind in ds.required_fields.items():
            if name not in rec:
                raise DataError("required field is missing", field=name, **where)
            if not isinstance(rec[name], _JSON_TYPES[kind]) or (kind == "int" and isinstance(rec[name], bool)):
                raise DataError(f"expected {kind}, got {type(rec[name]).__name__}", field=name, **where)
        images = tuple(_images(rec, ds, paths, doc_id, source, lineno))
        yield Document(index=index, doc_id=doc_id, record=rec, images=images, source=source)


def _images(rec: dict[str, Any], ds: DatasetConfig, paths: ConfinedPaths, doc_id: str, source: str, lineno: int | None) -> Iterator[Image]:
    if ds.images_field is None:
        return
    raw = rec.get(ds.images_field, [])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise DataError("expected a list of image paths", file=source, line=lineno, doc_id=doc_id, field=ds.images_field)
    for rel in raw:
        if not isinstance(rel, str):
            raise DataError(f"expected an image path, got {rel!r}", file=source, line=lineno, doc_id=doc_id, field=ds.images_field)
        if ds.image_resolution == "basename":
            name = rel.replace("\\", "/").rsplit("/", 1)[-1]
            path = paths(f"{ds.images_dir}/{name}", doc_id=doc_id, field=ds.images_field)
        else:
            path = paths(rel, doc_id=doc_id, field=ds.images_field)
        problem = image_file_problem(path)
        if problem is not None:
            raise DataError(f"{problem}: {path}", file=source, line=lineno, doc_id=doc_id, field=ds.images_field)
        yield Image(path=path, doc_id=doc_id, label=rel)


#: leading bytes of the image formats RealBench, MMDU and MMRC use (PIL reads them all)
_SIGNATURES: tuple[tuple[int, bytes], ...] = (
    (0, b"\xff\xd8\xff"),             # JPEG
    (0, b"\x89PNG\r\n\x1a\n"),       # PNG
    (0, b"GIF87a"), (0, b"GIF89a"),
    (0, b"BM"),                       # BMP
    (0, b"II*\x00"), (0, b"MM\x00*"),  # TIFF
)


def image_file_problem(path: Path) -> str | None:
    """What is wrong with an image file ("image not found", "not a readable image"), or None.

    A header check, no pixel decoding: the first bytes must carry a known
    image signature (other formats get PIL's header parse). This catches
    missing, empty, garbage and non-image files when documents are read, at
    the cost of one small read per image; a file that is damaged after a valid
    header is reported, with its document, when a backend decodes it.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return "image not found"
    except OSError:
        return "not a readable image"
    try:
        head = os.read(fd, 16)
    except IsADirectoryError:
        return "image not found"
    except OSError:
        return "not a readable image"
    finally:
        os.close(fd)
    if any(head[at : at + len(sig)] == sig for at, sig in _SIGNATURES) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP"):
        return None
    if len(head) < 8:
        return "not a readable image"
    try:
        with PILImage.open(path) as img:
            return None if img.format and img.width > 0 and img.height > 0 else "not a readable image"
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        return "not a readable image"


@dataclass(frozen=True)
class Scan:
    """A quick pass over a task's raw records: how many there are and the most images in one."""

    count: int
    total: int
    max_images: int


def scan_documents(task: TaskConfig, data_root: Path | None, *, limit: int | None = None, task_file: Path | None = None) -> Scan:
    """Check the data exists and count it, without resolving images (fast; no model needed)."""
    ds = task.dataset
    if ds.local is not None and (data_root is not None or ds.hf is None):
        # load_documents raises the "where it looked, how to get it" errors
        first = load_documents(task, data_root, task_file=task_file)
        next(first, None)
        assert data_root is not None and ds.local is not None
        records: Iterator[tuple[int, dict[str, Any], int | None]] = _read_local(data_root / ds.local.dir / ds.local.file)
    elif ds.hf is not None:
        records = _read_hf(task)
    else:
        raise DataError(f"task {task.task!r} names no dataset (dataset.local or dataset.hf)", file=task_file, field="dataset")
    total = 0
    max_images = 0
    for i, rec, _ in records:
        total += 1
        if limit is None or i < limit:
            imgs = rec.get(ds.images_field) if ds.images_field else None
            if isinstance(imgs, list):
                max_images = max(max_images, len(imgs))
    count = total if limit is None else min(limit, total)
    return Scan(count=count, total=total, max_images=max_images)
