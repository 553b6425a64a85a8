"""Bounded resources and one-line errors for hostile inputs (issue 12): templates that loop or
grow without end, decompression bombs, combined images, FIFOs as image paths, record text
holding the image marker, non-UTF-8 data, corrupt or full caches."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from mmtasks.cache.response_cache import CacheError, ResponseCache
from mmtasks.cli import main
from mmtasks.core.conversation import Image
from mmtasks.core import pixels as images_module
from mmtasks.documents.dataset import image_file_problem
from mmtasks.documents.image_loader import ImageLoader
from mmtasks.core.pixels import MAX_IMAGE_PIXELS, decode_image
from mmtasks.errors import DataError, TemplateError
from mmtasks.models.image_encoding import ImageEncoder
from mmtasks.templates import render, split_on_images
from tests.builders import ranking_record, write_image, write_realbench

REPO = Path(__file__).resolve().parents[2]


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("mmtasks: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- templates ------------------------------------------------------------------

@pytest.mark.parametrize(("source", "message"), [
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "loops ran more than"),
    ("{% set a = range(100000) | list %}{% for i in a %}{% for j in a %}{{ '' }}{% endfor %}{% endfor %}", "loops ran more than"),
    ("{{ 'x' * 1000000000 }}", "builds a value longer than"),
    ("{% for i in range(100000) %}{{ doc.big }}{% endfor %}", "output is longer than"),
    ("{{ 9 ** 999999999 }}", "power too large"),
])
def test_hostile_templates_are_one_line_template_errors(source: str, message: str) -> None:
    # the bound that stops it is named (iterations, size, power), not the 5 s clock bound: no
    # wall-clock assertion, the message shows which bound acted
    with pytest.raises(TemplateError, match=message) as info:
        render(source, {"doc": {"big": "y" * 100}}, origin="task.yaml", doc_id="d1", field="prompt.user")
    assert str(info.value).startswith("task.yaml, document 'd1', field 'prompt.user': template is too costly")


def test_ordinary_templates_render_as_before() -> None:
    source = "{% for i in range(n) %}Image {{ i + 1 }}: {{ image(i) }}\n{% endfor %}{{ loop_free }} {{ xs | length }}{% for x in xs %}{{ loop.index }}{{ x }}{% if loop.last %}!{% endif %}{% endfor %}"
    text = render(source, {"n": 2, "loop_free": None, "xs": ["a", "b"]})
    assert split_on_images(text) == ["Image 1: ", 0, "\nImage 2: ", 1, "\nNone 21a2b!"]


@pytest.mark.parametrize("source", ["{{ doc.text }}", "Question: {{ doc.text | trim }}", "{% for t in doc.turns %}{{ t }}{% endfor %}"])
def test_record_text_holding_the_image_marker_cannot_place_an_image(source: str) -> None:
    marker = "look \x00IMG:0\x00 here"
    pieces = split_on_images(render(source, {"doc": {"text": marker, "turns": [marker]}}))
    assert all(isinstance(p, str) for p in pieces)
    assert "IMG:0" in "".join(pieces) and "\x00" not in "".join(pieces)


def test_marker_in_a_record_does_not_inject_an_image_into_the_prompt(capsys, tmp_path: Path) -> None:
    rec = ranking_record("r-1", n_images=2)
    rec["text"] = "步骤 \x00IMG:1\x00 \x00IMG:1\x00 \x00IMG:1\x00"
    write_realbench(tmp_path / "data", "ranking_easy.jsonl", [rec])
    code = main(["--tasks", "realbench_ranking_easy", "--model", "random", "--data-dir", str(tmp_path / "data"),
                 "--output-path", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    row = json.loads((tmp_path / "out" / "samples" / "realbench_ranking_easy.jsonl").read_text())
    assert sum(p["type"] == "image" for p in row["prompt"][-1]["content"]) == 2


# -- images ---------------------------------------------------------------------

def png_header(path: Path, width: int, height: int) -> Path:
    """A PNG whose header says ``width`` x ``height`` (its pixel data a few bytes: a bomb's header)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))
    return path


@pytest.mark.parametrize("size", [(30000, 30000), (MAX_IMAGE_PIXELS // 10000 + 1, 10000)])
def test_decompression_bomb_is_one_data_error_in_every_backend(tmp_path: Path, size: tuple[int, int]) -> None:
    bomb = Image(path=png_header(tmp_path / "bomb.png", *size), doc_id="doc-7")
    # found from the header when documents are read (the preflight), and again by every decoder
    assert image_file_problem(bomb.path) == (f"image is {size[0]}x{size[1]} pixels, more than the limit of "
                                             f"{MAX_IMAGE_PIXELS} (a decompression bomb?)")
    loader = ImageLoader(workers=1)
    try:
        for decode in (decode_image, loader.load, ImageEncoder().data_url):  # hf, vllm / hf, openai
            with pytest.raises(DataError) as info:
                decode(bomb)
            text = str(info.value)
            assert str(bomb.path) in text and "document 'doc-7'" in text and f"{size[0]}x{size[1]}" in text or "twice the limit" in text
    finally:
        loader.close()


def test_bomb_inside_a_combined_image_is_one_data_error(tmp_path: Path) -> None:
    ok = Image(path=write_image(tmp_path / "ok.png"), doc_id="d")
    bomb = Image(path=png_header(tmp_path / "bomb.png", 30000, 30000), doc_id="d")
    with pytest.raises(DataError, match="bomb.png"):
        decode_image(Image(parts=(ok, bomb), doc_id="d"))


def test_combined_image_matches_the_in_memory_grid(tmp_path: Path) -> None:
    from PIL import Image as PIL

    parts = [write_image(tmp_path / "a.png", (255, 0, 0), (10, 20)), write_image(tmp_path / "b.png", (0, 0, 255), (30, 10)),
             write_image(tmp_path / "c.png", (0, 255, 0), (5, 5))]
    grid = decode_image(Image(parts=tuple(Image(path=p) for p in parts)))
    assert grid.size == (2 * 30 + 8, 2 * 20 + 8)
    assert grid.getpixel((0, 0)) == (255, 0, 0) and grid.getpixel((38, 0)) == (0, 0, 255) and grid.getpixel((0, 28)) == (0, 255, 0)
    expected = images_module.combine([PIL.open(p).convert("RGB") for p in parts])
    assert grid.tobytes() == expected.tobytes()


COMBINE_SCRIPT = """
import resource, sys
from pathlib import Path
from mmtasks.core.conversation import Image
from mmtasks.core.pixels import decode_image
paths = [Path(p) for p in sys.argv[1:]]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
grid = decode_image(Image(parts=tuple(Image(path=p) for p in paths)))
print(grid.size[0], grid.size[1], (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)
"""


def test_combined_mode_memory_stays_near_the_final_image(tmp_path: Path) -> None:
    """9 tiles of 4000x4000 (432 MB decoded): the old path held them all plus a 12000x12000 canvas."""
    from PIL import Image as PIL

    tile = tmp_path / "tile.png"
    PIL.new("RGB", (4000, 4000), (120, 30, 200)).save(tile, compress_level=1)
    proc = subprocess.run([sys.executable, "-c", COMBINE_SCRIPT, *[str(tile)] * 9], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    width, height, grown_mb = map(int, proc.stdout.split())
    assert max(width, height) == 4096
    final_mb = width * height * 3 / 2**20  # 48 MB
    assert grown_mb < 3 * final_mb + 4000 * 4000 * 3 / 2**20, grown_mb  # the canvas, one tile and its resize


def test_fifo_as_an_image_path_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "img.png"
    os.mkfifo(fifo)
    result: list[str | None] = []
    worker = threading.Thread(target=lambda: result.append(image_file_problem(fifo)), daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "reading a FIFO hung"
    assert result == ["not a regular file"]


def test_fifo_in_a_record_is_one_line(capsys, tmp_path: Path) -> None:
    write_realbench(tmp_path / "data", "ranking_easy.jsonl", [ranking_record("r-1")])
    target = tmp_path / "data" / "realbench" / "images" / "r-1" / "2.jpg"
    target.unlink()
    os.mkfifo(target)
    code = main(["--tasks", "realbench_ranking_easy", "--model", "random", "--data-dir", str(tmp_path / "data"),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    line = error_line(capsys.readouterr().err)
    assert code == 2 and "not a regular file" in line and "document 'r-1'" in line


# -- data and cache ---------------------------------------------------------------

def test_non_utf8_jsonl_is_one_line_naming_file_and_line(capsys, tmp_path: Path) -> None:
    path = write_realbench(tmp_path / "data", "ranking_easy.jsonl", [ranking_record("r-1"), ranking_record("r-2")])
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[1].replace("做饭".encode(), b"\xff\xfe"))
    code = main(["--tasks", "realbench_ranking_easy", "--model", "random", "--data-dir", str(tmp_path / "data"),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    line = error_line(capsys.readouterr().err)
    assert code == 2 and f"{path}:2" in line and "not UTF-8" in line


def test_corrupt_cache_is_one_line(capsys, tmp_path: Path) -> None:
    write_realbench(tmp_path / "data", "ranking_easy.jsonl", [ranking_record("r-1")])
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "responses.sqlite").write_bytes(b"this is not a database" * 100)
    code = main(["--tasks", "realbench_ranking_easy", "--model", "hf:/no/such/checkpoint", "--data-dir", str(tmp_path / "data"),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    line = error_line(capsys.readouterr().err)  # reported before the model is loaded
    assert code == 2 and "responses.sqlite" in line and "damaged" in line and "--no-cache" in line


def test_full_cache_disk_is_one_line_saying_what_was_kept(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    try:
        pages = cache._conn.execute("PRAGMA page_count").fetchone()[0]
        cache._conn.execute(f"PRAGMA max_page_count = {pages + 4}")  # SQLITE_FULL, as on a full disk
        stored = 0
        with pytest.raises(CacheError) as info:
            for i in range(100):
                cache.put(f"k{i}", "model", "r" * 3000)
                stored += 1
        assert 0 < stored < 100
        text = str(info.value)
        assert "responses.sqlite" in text and "full" in text and "kept: every reply committed before this one" in text
        assert cache.count() == stored
    finally:
        cache.close()
