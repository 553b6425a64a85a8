"""Issue 31, finding 9: image decoding in one place, with every decoder error caught.

A 37x23 TIFF with one byte of its StripOffsets entry retyped passes the header check, then made
PIL raise ``TypeError`` in the openai encoder, the hf/vLLM decoders and the viewer (a traceback,
nothing written): only ``OSError``, ``ValueError`` and ``SyntaxError`` were caught. A seeded fuzz
of TIFF (every tag retyped to every type), IM and DDS files (bytes changed) found the rest. Every
decoder now goes through ``core.pixels.decoding`` (:data:`DECODE_ERRORS`): a document's data
error naming file and document, or in the viewer the image shown as not decoded."""

from __future__ import annotations

import io
import random
import struct
from pathlib import Path

import pytest
from PIL import Image as PIL

from mmtasks.core.conversation import Image
from mmtasks.core.pixels import decode_image
from mmtasks.documents.image_header import image_file_problem
from mmtasks.documents.image_loader import ImageLoader
from mmtasks.errors import DataError
from mmtasks.models.image_encoding import ImageEncoder
from mmtasks.results.writer import atomic_write_bytes
from mmtasks.view.images import ImageStore


def encoded(fmt: str) -> bytes:
    buffer = io.BytesIO()
    PIL.new("RGB", (37, 23), (10, 200, 30)).save(buffer, format=fmt)
    return buffer.getvalue()


def tiff_entries(data: bytes) -> list[tuple[int, int]]:
    """(offset of the entry, tag) of each entry of a little-endian TIFF's first directory."""
    first = struct.unpack("<I", data[4:8])[0]
    count = struct.unpack("<H", data[first:first + 2])[0]
    return [(first + 2 + 12 * k, struct.unpack("<H", data[first + 2 + 12 * k: first + 4 + 12 * k])[0]) for k in range(count)]


def retyped(data: bytes, entry: int, kind: int) -> bytes:
    out = bytearray(data)
    out[entry + 2: entry + 4] = struct.pack("<H", kind)
    return bytes(out)


def corrupt_tiff() -> bytes:
    data = encoded("TIFF")
    entry = next(offset for offset, tag in tiff_entries(data) if tag == 273)  # StripOffsets
    return retyped(data, entry, 2)  # LONG -> ASCII


def fuzzed() -> list[tuple[str, bytes]]:
    """Every TIFF tag retyped to each of types 0-19; 120 IM and 120 DDS files with 1-3 bytes changed (seeded)."""
    cases = []
    tiff = encoded("TIFF")
    for entry, tag in tiff_entries(tiff):
        cases += [(f"tiff-{tag}-{kind}", retyped(tiff, entry, kind)) for kind in range(20)]
    rng = random.Random(1)
    for fmt in ("IM", "DDS"):
        base = encoded(fmt)
        for n in range(120):
            data = bytearray(base)
            for _ in range(rng.randint(1, 3)):
                data[rng.randrange(min(len(data), 600))] = rng.choice([rng.randrange(256), *b"0123456789 ;:,-x\r\nLRGBAP"])
            cases.append((f"{fmt.lower()}-{n}", bytes(data)))
    return cases


def test_a_corrupt_tiff_is_one_data_error_in_every_decoder_and_not_decoded_in_the_view(tmp_path: Path) -> None:
    path = tmp_path / "scan.tif"
    path.write_bytes(corrupt_tiff())
    assert image_file_problem(path) is None  # the header is sound: only decoding finds the damage
    image = Image(path=path, doc_id="doc-3")
    loader = ImageLoader(workers=1)
    try:
        for decode in (decode_image, loader.load, ImageEncoder().data_url):  # hf, vllm / hf, openai
            with pytest.raises(DataError) as info:  # before: TypeError
                decode(image)
            assert str(path) in str(info.value) and "document 'doc-3'" in str(info.value)
    finally:
        loader.close()
    shown = ImageStore(tmp_path / "site", atomic_write_bytes).show(str(path))
    assert shown.thumb is None and shown.missing == "cannot be decoded (TypeError)"  # before: TypeError


@pytest.mark.timeout(300)
@pytest.mark.filterwarnings("ignore")
def test_fuzzed_tiff_im_and_dds_files_are_data_errors_or_images(tmp_path: Path) -> None:
    escaped: dict[str, str] = {}
    store = ImageStore(tmp_path / "site", atomic_write_bytes)
    for name, data in fuzzed():
        path = tmp_path / name
        path.write_bytes(data)
        try:
            decode_image(Image(path=path, doc_id=name))
        except DataError:
            pass
        except Exception as exc:  # noqa: BLE001 (what the test looks for)
            escaped.setdefault(type(exc).__name__, name)
        try:
            store.show(str(path))
        except Exception as exc:  # noqa: BLE001
            escaped.setdefault(f"view {type(exc).__name__}", name)
    assert escaped == {}  # before: TypeError, OverflowError (TIFF), NotImplementedError (DDS), ...


def test_a_corrupt_image_found_mid_run_fails_its_document_only(tmp_path: Path, chat_server) -> None:  # noqa: ANN001
    """The header passes the preflight, the pixels do not decode when the openai backend encodes
    the request: that document's request fails (counted, shown), the others are answered and the
    run goes to the end (before: the whole run stopped)."""
    import json

    from PIL import Image as PILImage

    from mmtasks.cli import main

    data = tmp_path / "data" / "pics"
    (data / "images").mkdir(parents=True)
    for name in ("a", "c"):
        PILImage.new("RGB", (32, 24), (200, 30, 30)).save(data / "images" / f"{name}.png")
    (data / "images" / "b.tif").write_bytes(corrupt_tiff())
    records = [{"id": d, "images": [f"images/{f}"], "answer": "red"} for d, f in (("a", "a.png"), ("b", "b.tif"), ("c", "c.png"))]
    (data / "pics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "pics.yaml").write_text(
        "task: pics\ndataset:\n  local: {dir: pics, file: pics.jsonl}\n  required_fields: {answer: str}\n"
        "prompt:\n  user: \"{{ image(0) }}Which colour?\"\ntarget: \"{{ doc.answer }}\"\n"
        "metrics:\n  - {name: acc, function: exact_match, primary: true}\n")
    chat_server.reply = lambda body: "red"
    out = tmp_path / "out"
    code = main(["--tasks", "pics", "--include-path", str(tasks), "--model", "openai:test-model", "--model-args",
                 f"base_url={chat_server.base_url}", "--data-dir", str(tmp_path / "data"), "--output-path", str(out),
                 "--no-cache", "--no-progress"])
    assert code == 1  # a counted failure, without --allow-failures
    results = json.loads((out / "results.json").read_text())
    assert results["problems"]["pics"]["request_failures"] == 1
    assert results["results"]["pics"]["acc"] == 100.0 and results["n-samples"]["pics"]["effective"] == 3
    rows = {r["doc_id"]: r for r in map(json.loads, (out / "samples" / "pics.jsonl").read_text().splitlines())}
    assert rows["b"]["failures"] and "b.tif" in rows["b"]["failures"][0] and rows["a"]["responses"] == ["red"]


def test_a_corrupt_tiff_in_a_frame_folder_is_one_data_error(tmp_path: Path) -> None:
    """Issue 41, finding 8: the third frame of a folder of frames is the corrupt TIFF (named .png).
    The header check reads the first frame only, so it passes; decoding the folder caught only
    ``OSError`` and the run and ``view`` ended in a TypeError traceback. Folder frames now go
    through the one decoding translation: a data error naming the frame and the document."""
    from mmtasks.documents.video import decode_frames, probe

    folder = tmp_path / "clip"
    folder.mkdir()
    for k in (1, 2):
        (folder / f"{k:03d}.png").write_bytes(encoded("PNG"))
    (folder / "003.png").write_bytes(corrupt_tiff())
    info = probe(folder)
    assert (info.frames, info.width, info.height) == (3, 37, 23)
    assert len(decode_frames(folder, [0, 1], info, doc_id="v1")) == 2
    with pytest.raises(DataError) as caught:  # before: TypeError
        decode_frames(folder, [0, 1, 2], info, doc_id="v1")
    message = str(caught.value)
    assert "003.png" in message and "document 'v1'" in message and "TypeError" in message


def test_a_corrupt_first_frame_of_a_folder_is_a_video_problem(tmp_path: Path) -> None:
    """The header check of a folder opens its first frame: a damaged one is the video's problem
    (one line in ``check``), through the same translation."""
    from mmtasks.documents.video import VideoProblem, probe

    folder = tmp_path / "clip"
    folder.mkdir()
    (folder / "001.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    with pytest.raises(VideoProblem) as caught:
        probe(folder)
    assert "001.png" in str(caught.value)
