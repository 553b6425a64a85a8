"""Small data builders for tests: RealBench-format records and images written to tmp dirs."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
import socketserver
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from PIL import Image


def write_image(path: Path, color: tuple[int, int, int] = (200, 30, 30), size: tuple[int, int] = (32, 24)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)
    return path


def ranking_record(doc_id: str, n_images: int = 3, answer: str = "C", **extra: Any) -> dict[str, Any]:
    return {
        "id": doc_id, "task": "ranking", "difficulty": "easy", "category": "food",
        "images": [f"images/{doc_id}/{i}.jpg" for i in range(1, n_images + 1)],
        "text": "做饭步骤 Figure_ 然后 Figure_",
        "options": {"A": [1, 2, 3], "B": [2, 1, 3], "C": [3, 2, 1], "D": [1, 3, 2]},
        "answer": answer, **extra,
    }


def write_realbench(root: Path, file: str, records: list[dict[str, Any]], *, images: bool = True) -> Path:
    folder = root / "realbench"
    folder.mkdir(parents=True, exist_ok=True)
    if images:
        for rec in records:
            for k, rel in enumerate(rec.get("images", [])):
                if not (folder / rel).exists() and ".." not in rel and not rel.startswith("/"):
                    write_image(folder / rel, ((40 * k) % 256, 100, 150))
    path = folder / file
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def folder_digest(folder: Path) -> str:
    """A digest of every file under ``folder`` (names and bytes; bytecode caches skipped): to show it unchanged."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


@contextlib.contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[int]:
    """Run ``server`` in a daemon thread; yields its port, shuts it down on exit."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]  # type: ignore[misc]
    finally:
        server.shutdown()
        server.server_close()


#: the files compared byte for byte (what the generators write as text); images, videos and parquet
#: may differ with the Pillow/PyAV/pyarrow versions
TEXT = (".jsonl", ".md", ".json", ".srt", ".txt")


def zip_layout(path: Path) -> list[tuple[object, ...]]:
    """A zip's members in order: name, time, mode, compression, and the bytes of a text member (a
    video member by its name alone: its bytes follow the encoder's version)."""
    import zipfile

    with zipfile.ZipFile(path) as zf:
        return [(i.filename, i.date_time, i.external_attr, i.compress_type,
                 zf.read(i) if i.filename.endswith(TEXT) else None) for i in zf.infolist()]


def assert_regenerates(generate: Callable[[Path], None], fresh: Path, committed: Path) -> None:
    """``generate(fresh)`` writes the same files as under ``committed``: records, cards, Hub JSON
    files and subtitles (``.jsonl``, ``.md``, ``.json``, ``.srt``, ``.txt``) byte for byte, zip
    archives member by member (:func:`zip_layout`); images, videos and parquet may differ with the
    Pillow/PyAV/pyarrow versions."""
    generate(fresh)

    def files(root: Path) -> list[str]:
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())

    assert files(fresh) == files(committed)
    for rel in files(fresh):
        if rel.endswith(TEXT):
            assert (fresh / rel).read_bytes() == (committed / rel).read_bytes(), rel
        elif rel.endswith(".zip"):
            assert zip_layout(fresh / rel) == zip_layout(committed / rel), rel


def sample_generators(*names: str) -> tuple[ModuleType, ...]:
    """The sample-data generator modules ``tasks/<name>/make_sample.py`` (each has ``generate(dest)``)."""
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("make_sample_data", root / "scripts" / "make_sample_data.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return tuple(script.load_generator(root / "tasks" / name) for name in names)
