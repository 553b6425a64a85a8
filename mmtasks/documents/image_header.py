"""What is wrong with an image file, from its header alone: missing, not a regular file, not an
image, or more pixels than the budget (:data:`mmtasks.core.pixels.MAX_IMAGE_PIXELS`).

Every document's images are checked here when documents are read (the preflight and the
run read them through the same loader), at the cost of one ``stat``, one ``open`` and one
small read per image; no pixel is decoded. The size comes from the header: PNG, GIF, BMP
and WebP hold it in their first 30 bytes; a JPEG's is in its frame header (SOF), found by
walking the segments before it (a few small reads past EXIF and ICC blocks). Other formats
(TIFF, ICO, TGA ...) get PIL's header parse.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path
from typing import IO

from PIL import Image as PILImage

from mmtasks.core.pixels import (BEYOND_TWICE_THE_LIMIT, JPEG_SIGNATURE, JPEG_SOF, PNG_SIGNATURE, Undecodable, decoding,
                                 pixel_budget_problem)

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
#: bytes read first: enough for the size of PNG, GIF, BMP and WebP and most JPEG headers
HEAD_BYTES = 512
#: JPEG segments walked before giving up on finding the frame header (then PIL parses it)
_MAX_JPEG_SEGMENTS = 64

#: leading bytes of other formats PIL reads (their size comes from PIL's header parse)
_OTHER_SIGNATURES = (b"II*\x00", b"MM\x00*")


def image_file_problem(path: Path) -> str | None:
    """What is wrong with an image file ("image not found", "not a readable image", "image is
    WxH pixels, more than ..."), or None. A header check: no pixel is decoded; a file damaged
    after a valid header is reported, with its document, when a backend decodes it."""
    try:
        st = os.stat(path)  # before any open: a FIFO or a device is never opened
    except (FileNotFoundError, NotADirectoryError):
        return "image not found"
    except OSError:
        return "not a readable image"
    if stat.S_ISDIR(st.st_mode):
        return "image not found"
    if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block the run or never end
        return "not a regular file"
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    except (FileNotFoundError, NotADirectoryError):
        return "image not found"
    except OSError:
        return "not a readable image"
    try:
        head = os.read(fd, HEAD_BYTES)
        size: tuple[int, int] | str | None = header_size(head, fd)
        moving = not_a_picture(head, fd, None)
    except IsADirectoryError:
        return "image not found"
    except OSError:
        return "not a readable image"
    finally:
        os.close(fd)
    if moving is not None:
        return moving
    if size is None:
        size = _pil_size(path, head)
    if size is None:
        return "not a readable image"
    return size if isinstance(size, str) else budget_problem(*size)


def image_bytes_problem(data: bytes) -> str | None:
    """:func:`image_file_problem` for an image embedded in a record (a Hub dataset's bytes)."""
    moving = not_a_picture(data[:HEAD_BYTES], None, data)
    if moving is not None:
        return moving
    size: tuple[int, int] | str | None = header_size(data[:HEAD_BYTES], None, data)
    if size is None:
        import io

        size = _pil_size(io.BytesIO(data), data[:HEAD_BYTES])
    if size is None:
        return "not a readable image"
    return size if isinstance(size, str) else budget_problem(*size)


#: how a file that moves is refused as an image: the input that takes it (docs/vocabulary.md, "Videos")
VIDEO_HINT = "give it as a video: dataset.video: {field: ..., num_frames: 8} and {{ video(i) }} in the prompt"
#: ISO-BMFF brands of still images (HEIF, AVIF): an ``ftyp`` box that is not a video
_STILL_BRANDS = (b"heic", b"heix", b"mif1", b"avif")
#: GIF blocks walked looking for a second frame before giving up (then: one frame, as PIL would show it)
_MAX_GIF_BLOCKS = 4096


def not_a_picture(head: bytes, fd: int | None, data: bytes | None) -> str | None:
    """Why a file given as an image is not one picture: a video container (MP4/MOV, WebM/MKV,
    AVI), or an animated GIF, PNG or WebP (more than one frame); None for a still image. Sent as
    an image, only its first frame would reach the model, without a word (issue 27)."""
    kind = None
    if head[4:8] == b"ftyp" and head[8:12] not in _STILL_BRANDS:
        kind = "an MP4/MOV video"
    elif head[:4] == b"\x1a\x45\xdf\xa3":
        kind = "a WebM/MKV video"
    elif head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        kind = "an AVI video"
    elif head[:6] in (b"GIF87a", b"GIF89a"):
        if _gif_frames(head, fd, data) > 1:
            kind = "an animated GIF (more than one frame)"
    elif head[:8] == PNG_SIGNATURE:
        at = head.find(b"acTL")
        idat = head.find(b"IDAT")
        if at >= 0 and (idat < 0 or at < idat) and len(head) >= at + 8 and struct.unpack(">I", head[at + 4:at + 8])[0] > 1:
            kind = "an animated PNG (more than one frame)"
    elif head[:4] == b"RIFF" and head[8:12] == b"WEBP" and head[12:16] == b"VP8X" and len(head) > 20 and head[20] & 0x02:
        kind = "an animated WebP"
    return None if kind is None else f"{kind}, not one picture: {VIDEO_HINT}"


def _gif_frames(head: bytes, fd: int | None, data: bytes | None) -> int:
    """The GIF's image descriptors counted up to two (the blocks walked by their lengths, no
    pixel decoded); a truncated file counts the frames found."""
    def read(offset: int, n: int) -> bytes:
        if offset + n <= len(head):
            return head[offset:offset + n]
        return _more(fd, data, offset, n)

    pos = 13
    flags = read(10, 1)
    if flags and flags[0] & 0x80:  # the global colour table
        pos += 3 * (2 << (flags[0] & 0x07))
    frames = 0
    for _ in range(_MAX_GIF_BLOCKS):
        block = read(pos, 1)
        if not block or block == b"\x3b":  # the end, or the trailer
            return frames
        if block == b"\x2c":  # an image descriptor: 9 bytes, a local colour table, the LZW code size
            frames += 1
            if frames > 1:
                return frames
            desc = read(pos + 1, 9)
            if len(desc) < 9:
                return frames
            pos += 10 + (3 * (2 << (desc[8] & 0x07)) if desc[8] & 0x80 else 0) + 1
        elif block == b"\x21":  # an extension: its label, then data sub-blocks
            pos += 2
        else:
            return frames
        while True:  # data sub-blocks, each its length then its bytes, up to a zero length
            size = read(pos, 1)
            if not size:
                return frames
            pos += 1 + size[0]
            if size[0] == 0:
                break
    return frames


def budget_problem(width: int, height: int) -> str | None:
    if width <= 0 or height <= 0:
        return "not a readable image"
    return pixel_budget_problem(width, height)


def header_size(head: bytes, fd: int | None, data: bytes | None = None) -> tuple[int, int] | None:
    """(width, height) from the header of a PNG, GIF, BMP, WebP or JPEG; None for another format
    or a header that does not decode. ``fd`` (or ``data``) gives the rest of a JPEG."""
    if head[:8] == PNG_SIGNATURE and len(head) >= 24 and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    if head[:2] == b"BM" and len(head) >= 26:
        (dib,) = struct.unpack("<I", head[14:18])
        if dib == 12:
            return struct.unpack("<HH", head[18:22])
        width, height = struct.unpack("<ii", head[18:26])
        return width, abs(height)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
        return _webp_size(head)
    if head[:3] == JPEG_SIGNATURE:
        return _jpeg_size(head, fd, data)
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", head[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and head[20:21] == b"\x2f":
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


def _jpeg_size(head: bytes, fd: int | None, data: bytes | None) -> tuple[int, int] | None:
    """Walk the JPEG's segments (markers and lengths) to its frame header: in ``head`` while it
    lasts (the usual case), then by small reads past large EXIF or ICC segments."""
    buf, base = head, 0  # buf holds the file's bytes from offset base
    pos = 2
    for _ in range(_MAX_JPEG_SEGMENTS):
        if pos + 9 > base + len(buf):  # the next marker, length and frame size lie past what is read
            buf, base = _more(fd, data, pos, 4096), pos
            if len(buf) < 4:
                return None
        i = pos - base
        if buf[i] != 0xFF:
            return None
        kind = buf[i + 1]
        if kind == 0xFF:  # fill byte
            pos += 1
            continue
        if kind == 0x01 or 0xD0 <= kind <= 0xD7:  # markers without a length
            pos += 2
            continue
        length = (buf[i + 2] << 8) | buf[i + 3]
        if kind in JPEG_SOF:
            if i + 9 > len(buf):
                return None
            return (buf[i + 7] << 8) | buf[i + 8], (buf[i + 5] << 8) | buf[i + 6]
        if kind == 0xDA or length < 2:  # scan data before any frame header: not a JPEG we can read
            return None
        pos += 2 + length
    return None


def _more(fd: int | None, data: bytes | None, offset: int, n: int) -> bytes:
    if data is not None:
        return data[offset:offset + n]
    return os.pread(fd, n, offset) if fd is not None else b""


def _pil_size(source: Path | IO[bytes], head: bytes) -> tuple[int, int] | str | None:
    """PIL's header parse (no pixels), for formats :func:`header_size` does not read; a str is
    the problem (PIL refuses to open an image of more than twice its pixel limit)."""
    if len(head) < 8 and not any(head.startswith(s) for s in _OTHER_SIGNATURES):
        return None
    try:
        with decoding(), PILImage.open(source) as img:
            return (img.width, img.height) if img.format else None
    except Undecodable as exc:
        return BEYOND_TWICE_THE_LIMIT if exc.kind == "DecompressionBombError" else None
