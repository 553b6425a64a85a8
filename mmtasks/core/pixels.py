"""Decoding images (the one place pixels are made), the pixel budget every backend applies,
and the combined-image grid. It sits with the core types (PIL only) so that
:meth:`Image.load` needs nothing above them.

:data:`MAX_IMAGE_PIXELS` is the one pixel budget of mmtasks: the ``hf`` and ``vllm`` backends
decode through :func:`decode_image`, and the API encoder (:mod:`mmtasks.models.image_encoding`)
opens images through :func:`open_image`; both refuse a larger image (a decompression bomb: a
few KB of PNG that would decode to gigabytes) with one :class:`~mmtasks.errors.DataError`
naming the file and document, before any pixel is decoded.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import struct
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image as PILImageModule
from PIL import UnidentifiedImageError

from mmtasks.errors import DataError

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

    from mmtasks.core.conversation import Image

#: the most pixels one image may have, for every backend (10000x10000; a long 1080x3500
#: RealBench screenshot is 3.8 million): about 300 MB once decoded to RGB
MAX_IMAGE_PIXELS = 100_000_000
# PIL's own guard (a warning above it, an error above twice it) agrees with ours, for any
# code that opens images without going through this module (e.g. a Hugging Face processor).
PILImageModule.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS

#: every error PIL's decoders raise on a hostile or damaged file (what a fuzz of TIFF, IM, DDS, PNG,
#: GIF, JPEG, WebP... found: a retyped TIFF StripOffsets is a TypeError or an OverflowError, an
#: unknown DDS pixel format NotImplementedError); the one list every decoding place catches
DECODE_ERRORS: tuple[type[BaseException], ...] = (
    UnidentifiedImageError, OSError, SyntaxError, ValueError, TypeError, OverflowError, IndexError, KeyError,
    ZeroDivisionError, EOFError, struct.error, NotImplementedError, MemoryError, RecursionError,
)
_DECODE_ERRORS = DECODE_ERRORS
#: the most bytes an image file may have to be read whole (a larger file is no image we decode)
MAX_IMAGE_FILE_BYTES = 512 * 1024 * 1024

# What the header readers (the data check's :mod:`mmtasks.documents.image_header`, the API
# encoder's :func:`mmtasks.models.image_encoding.read_header`) recognise a file by.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
JPEG_SIGNATURE = b"\xff\xd8\xff"
#: JPEG start-of-frame markers (SOF0-SOF15: baseline, extended, progressive, lossless; not DHT, JPG, DAC): they hold the size
JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def read_image_file(path: Path, limit: int = MAX_IMAGE_FILE_BYTES) -> bytes:
    """An image file's bytes, at most ``limit`` + 1 of them (the caller sees it is over). Only a
    regular file is read: a FIFO or a device is refused (``OSError`` "not a regular file") from
    the open file itself (non-blocking, so a FIFO never waits for a writer)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class Undecodable(ValueError):
    """An image the decoders could not read (see :func:`decoding`): ``kind`` names the decoder's
    error (``TypeError``, ``DecompressionBombError``...), the message says why."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@contextlib.contextmanager
def decoding(*also: type[BaseException]) -> Iterator[None]:
    """Decoder errors inside the block, whatever the format raises (:data:`DECODE_ERRORS`, PIL's
    bomb guard, and ``also``: a video decoder's own error class), as one :class:`Undecodable`: the
    one translation of decoder failures, for images, video files and folders of frames alike."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PILImageModule.DecompressionBombWarning)
            yield
    except PILImageModule.DecompressionBombError:
        raise Undecodable("DecompressionBombError", BEYOND_TWICE_THE_LIMIT) from None
    except Undecodable:
        raise
    except (*DECODE_ERRORS, *also) as exc:
        raise Undecodable(type(exc).__name__, f"{exc}"[:300] or type(exc).__name__) from None


def _unreadable(image: "Image", exc: BaseException) -> DataError:
    return DataError(f"corrupt or unreadable image: {exc}", file=image.path or image.label, doc_id=image.doc_id, field="images")


#: what PIL's own guard refuses (more than twice :data:`MAX_IMAGE_PIXELS`): no size is known then
BEYOND_TWICE_THE_LIMIT = f"image is more than twice the limit of {MAX_IMAGE_PIXELS} pixels (a decompression bomb?)"


def pixel_budget_problem(width: int, height: int) -> str | None:
    """What is wrong with an image of ``width`` x ``height`` pixels under :data:`MAX_IMAGE_PIXELS`, or None."""
    if width * height > MAX_IMAGE_PIXELS:
        return f"image is {width}x{height} pixels, more than the limit of {MAX_IMAGE_PIXELS} (a decompression bomb?)"
    return None


def check_pixel_budget(width: int, height: int, image: "Image") -> None:
    """Refuse an image of more than :data:`MAX_IMAGE_PIXELS` pixels (one line naming the file and document)."""
    problem = pixel_budget_problem(width, height)
    if problem is not None:
        raise DataError(problem, file=image.path or image.label, doc_id=image.doc_id, field="images")


@contextlib.contextmanager
def open_image(image: "Image", data: bytes | None = None) -> Iterator["PILImage"]:
    """The image opened (header read, no pixels decoded) and checked against the pixel budget.
    Every decoding error inside the block is a :class:`DataError` naming the file and document.
    ``data``: the image's bytes when the caller has them already."""
    if data is None:
        data = image.read_bytes()
    try:
        with decoding(), PILImageModule.open(io.BytesIO(data)) as img:
            check_pixel_budget(img.width, img.height, image)
            yield img
    except Undecodable as exc:
        if exc.kind == "DecompressionBombError":
            raise DataError(BEYOND_TWICE_THE_LIMIT, file=image.path or image.label, doc_id=image.doc_id, field="images") from None
        raise _unreadable(image, exc) from None


def decode_image(image: "Image") -> "PILImage":
    if image.parts:
        if any(p.parts for p in image.parts):
            return combine([decode_image(p) for p in image.parts])
        return combine_parts(image.parts)
    with open_image(image) as img:
        img.load()
        return img.convert("RGB")


def _grid(sizes: Sequence[tuple[int, int]], columns: int | None, gap: int) -> tuple[int, int, int, int, int]:
    """(columns, cell width, cell height, canvas width, canvas height) of the combined grid."""
    n = len(sizes)
    cols = columns or max(1, int(-(-n**0.5 // 1)))
    rows = -(-n // cols)
    cell_w = max(w for w, _ in sizes)
    cell_h = max(h for _, h in sizes)
    return cols, cell_w, cell_h, cols * cell_w + (cols - 1) * gap, rows * cell_h + (rows - 1) * gap


#: a tile smaller than this (either side, in the combined image) gets no caption: it could not
#: hold a legible one without hiding the image
MIN_CAPTIONED_SIDE = 64


def caption_tile(tile: "PILImage", number: int) -> "PILImage":
    """Draw "Image <number>" on ``tile`` (in place), after MileBench's ``combine_images.py``
    (the precedent RealBench cites for its combined-image mode): white text on a black box,
    centred at the bottom of the tile. Sizes are relative to the tile: the text is 4% of the
    tile's longer side (MileBench: 32 px on its 800 px tiles), at least 12 px and at most a
    third of the tile's height, with a padding of 3/8 of the text size (MileBench: 12 px).
    A tile under :data:`MIN_CAPTIONED_SIDE` px on either side is left as it is."""
    from PIL import ImageDraw, ImageFont

    w, h = tile.size
    if min(w, h) < MIN_CAPTIONED_SIDE:
        return tile
    size = int(min(max(12, round(0.04 * max(w, h))), h // 3))
    font = ImageFont.load_default(size=size)
    draw = ImageDraw.Draw(tile)
    text = f"Image {number}"
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    pad = max(2, round(size * 3 / 8))
    box_w, box_h = right - left + 2 * pad, bottom - top + 2 * pad
    x0, y0 = (w - box_w) // 2, h - box_h
    draw.rectangle([x0, y0, x0 + box_w - 1, h - 1], fill="black")
    draw.text((x0 + pad - left, y0 + pad - top), text, fill="white", font=font)
    return tile


def combine(images: "list[PILImage]", *, columns: int | None = None, gap: int = 8, max_side: int = 4096) -> "PILImage":
    """Stitch images into one grid image (RealBench's combined-image mode, paper Table 3).

    Layout: a row-major grid of ``columns`` (default: ceil(sqrt(n)), MileBench's choice) cells,
    each cell the size of the largest image, ``gap`` px apart, on a white background; each image
    keeps its aspect ratio and sits at the top left of its cell; the whole is scaled down so its
    longest side is at most ``max_side``. Each tile carries the caption "Image k" (k = 1, 2, ...
    in reading order, see :func:`caption_tile`). The input images are not modified.
    """
    if not images:
        raise ValueError("nothing to combine")
    cols, cell_w, cell_h, width, height = _grid([i.size for i in images], columns, gap)
    scale = min(1.0, max_side / max(width, height))
    canvas = PILImageModule.new("RGB", (max(1, int(width * scale)), max(1, int(height * scale))), "white")
    for k, img in enumerate(images):
        r, c = divmod(k, cols)
        target = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
        tile = img.convert("RGB") if img.size == target else img.convert("RGB").resize(target, PILImageModule.Resampling.BILINEAR)
        canvas.paste(caption_tile(tile, k + 1), (int(c * (cell_w + gap) * scale), int(r * (cell_h + gap) * scale)))
    return canvas


def combine_parts(parts: "Sequence[Image]", *, columns: int | None = None, gap: int = 8, max_side: int = 4096) -> "PILImage":
    """:func:`combine` for image files (same layout and captions), within a few times the final
    image's memory: the grid is
    laid out from the headers, then each tile is decoded (JPEG at a reduced scale where it
    can), downscaled to its place in the final image and pasted, one tile at a time."""
    if not parts:
        raise ValueError("nothing to combine")
    sizes = []
    for part in parts:
        with open_image(part) as img:
            sizes.append(img.size)
    cols, cell_w, cell_h, width, height = _grid(sizes, columns, gap)
    scale = min(1.0, max_side / max(width, height))
    canvas = PILImageModule.new("RGB", (max(1, int(width * scale)), max(1, int(height * scale))), "white")
    for k, (part, (w, h)) in enumerate(zip(parts, sizes)):
        r, c = divmod(k, cols)
        target = (max(1, round(w * scale)), max(1, round(h * scale)))
        with open_image(part) as img:
            if scale < 1 and img.format == "JPEG":
                img.draft("RGB", target)  # decode at 1/2, 1/4 or 1/8 scale: fewer pixels ever exist
            img.load()
            tile = img if img.mode == "RGB" else img.convert("RGB")
            if tile.size != target:
                tile = tile.resize(target, PILImageModule.Resampling.BILINEAR, reducing_gap=2.0)
            canvas.paste(caption_tile(tile, k + 1), (int(c * (cell_w + gap) * scale), int(r * (cell_h + gap) * scale)))
            del tile
    return canvas
