"""Images as ``data:`` URLs for API backends: size caps, and each image encoded once.

An :class:`ImageEncoder` is thread-safe and meant to be called from a thread
pool (decoding a 1080x3500 screenshot must not stall an event loop). It keys
its results on the image's content hash, so the same picture in many requests
(every turn of an MMDU dialogue, every judge call) is encoded once per run;
concurrent requests for an image being encoded wait for that one encoding.

Pixels match :func:`mmtasks.core.pixels.decode_image` (RGB, no EXIF
rotation): JPEG/PNG files that are already RGB, unrotated and within the caps
are sent as they are; everything else is decoded, converted to RGB,
downscaled to the caps and re-encoded. Whether a file can go as it is is read
from its header bytes (:func:`read_header`: PNG chunks, JPEG markers, the EXIF
orientation tag), never by decoding it (Pillow's ``getexif`` decodes a whole
PNG to find an ``eXIf`` chunk: 1.3 ms against 0.05 ms for the header).
"""

from __future__ import annotations

import base64
import io
import math
import os
import re
import struct
import threading
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from PIL import Image as PILImageModule

from mmtasks.core.pixels import JPEG_SIGNATURE, JPEG_SOF, PNG_SIGNATURE, check_pixel_budget, open_image
from mmtasks.errors import DataError

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

    from mmtasks.core.conversation import Image

_MIME = {"JPEG": "image/jpeg", "PNG": "image/png"}
_EXIF_ORIENTATION = 0x0112


@dataclass(frozen=True)
class ImageEncoding:
    """How images are sent."""

    #: downscale so that the longest side is at most this many pixels (None: no limit)
    max_side: int | None = None
    #: most bytes of the encoded image file (before base64); larger images are shrunk
    max_bytes: int = 20_000_000
    #: "auto": JPEG sources stay JPEG, others become PNG (JPEG when PNG is too big)
    format: Literal["auto", "jpeg", "png"] = "auto"
    jpeg_quality: int = 90


class ImageEncoder:
    """Thread-safe ``Image`` -> data URL conversion with a byte-bounded LRU cache."""

    def __init__(self, settings: ImageEncoding | None = None, cache_bytes: int = 512 * 1024 * 1024) -> None:
        self.settings = settings or ImageEncoding()
        self.cache_bytes = cache_bytes
        #: images actually encoded (cache misses), for tests and stats
        self.encoded = 0
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, Future[str]] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._total = 0

    def data_url(self, image: "Image") -> str:
        """The image as a ``data:image/...;base64,...`` URL (blocking; call from a worker thread)."""
        key = image.content_hash
        with self._lock:
            future = self._cache.get(key)
            owner = future is None
            if future is None:
                future = self._cache[key] = Future()
            else:
                self._cache.move_to_end(key)
        if not owner:
            return future.result()
        try:
            url = self._encode(image)
        except BaseException as exc:
            with self._lock:
                self._cache.pop(key, None)
            future.set_exception(exc)
            raise
        future.set_result(url)
        with self._lock:
            self._count(key, url)
        return url

    def _count(self, key: str, url: str) -> None:
        """Account for a finished encoding (hold the lock): its size, if it is still cached, then eviction."""
        self.encoded += 1
        if key in self._cache:
            self._sizes[key] = len(url)
            self._total += len(url)
            self._evict()

    def cheap_data_url(self, image: "Image", max_bytes: int) -> str | None:
        """The data URL when it needs no decoding, else None (then call :meth:`data_url` from a
        worker thread): an image already encoded, or a file of at most ``max_bytes`` whose
        header says it goes out as it is (read, checked against the pixel budget, base64).
        Cheap enough for an event loop: one ``stat``, two reads of a small file, no pixels."""
        if image.parts or image.frame is not None:
            return None
        if image.data is not None:
            size = len(image.data)
        elif image.path is not None:
            try:
                size = os.stat(image.path).st_size
            except OSError:
                return None  # the worker's encoding reports it, with the document
        else:
            return None
        if size > max_bytes:
            return None
        key = image.content_hash
        with self._lock:
            future = self._cache.get(key)
            if future is not None:
                if not future.done() or future.exception() is not None:
                    return None
                self._cache.move_to_end(key)
                return future.result()
        data = image.read_bytes()
        url = self._as_is(image, data, read_header(data))
        if url is None:
            return None
        done: Future[str] = Future()
        done.set_result(url)
        with self._lock:
            if key not in self._cache:
                self._cache[key] = done
                self._count(key, url)
        return url

    def _evict(self) -> None:
        for key in list(self._cache):
            if self._total <= self.cache_bytes or len(self._sizes) <= 1:
                return
            if key in self._sizes:  # pending encodings have no size yet and stay
                del self._cache[key]
                self._total -= self._sizes.pop(key)

    # -- encoding ----------------------------------------------------------
    def _encode(self, image: "Image") -> str:
        if image.parts or image.frame is not None:  # pixels made here (combined, or decoded from a video)
            return self._from_pixels(image.load(), None, image)
        data = image.read_bytes()
        header = read_header(data)
        as_is = self._as_is(image, data, header)
        if as_is is not None:
            return as_is
        # the one pixel budget of every backend; every decoder error in the block is a DataError
        # naming the file and document (open_image's translation)
        with open_image(image, data) as img:
            source = img.format
            if header is None and self._pillow_can_send_as_is(img, len(data)):
                return _data_url(source, data)
            img.load()
            rgb = img.convert("RGB")
        return self._from_pixels(rgb, source, image)

    def _as_is(self, image: "Image", data: bytes, header: "ImageHeader | None") -> str | None:
        """``data`` as a data URL when its header says it can go unchanged, else None; a header
        over the pixel budget is refused first (a bomb is never sent nor decoded)."""
        if header is None:
            return None
        check_pixel_budget(header.width, header.height, image)
        return _data_url(header.format, data) if self.can_send_as_is(header, len(data)) else None

    def can_send_as_is(self, header: "ImageHeader", size: int) -> bool:
        """Whether a file with this header and ``size`` bytes goes out unchanged: a JPEG or PNG
        in a format the settings accept, plain 8-bit RGB (what decoding would give), not
        rotated by an EXIF orientation, within the size caps. Decided from the header alone."""
        s = self.settings
        wanted = {"auto": ("JPEG", "PNG"), "jpeg": ("JPEG",), "png": ("PNG",)}[s.format]
        return (
            header.format in wanted
            and header.plain_rgb
            and header.orientation == 1
            and (s.max_side is None or max(header.width, header.height) <= s.max_side)
            and size <= s.max_bytes
        )

    def _pillow_can_send_as_is(self, img: "PILImage", size: int) -> bool:
        """The same decision through Pillow, for files whose header :func:`read_header` does not
        understand (other formats, EXIF in PNG text chunks); may decode the whole image."""
        s = self.settings
        wanted = {"auto": ("JPEG", "PNG"), "jpeg": ("JPEG",), "png": ("PNG",)}[s.format]
        return (
            img.format in wanted
            and img.mode == "RGB"
            and "transparency" not in img.info
            and not getattr(img, "is_animated", False)
            and img.getexif().get(_EXIF_ORIENTATION, 1) == 1
            and (s.max_side is None or max(img.size) <= s.max_side)
            and size <= s.max_bytes
        )

    def _from_pixels(self, img: "PILImage", source: str | None, image: "Image") -> str:
        s = self.settings
        if s.max_side is not None and max(img.size) > s.max_side:
            img = _scaled(img, s.max_side / max(img.size))
        fmt = "PNG" if s.format == "png" or (s.format == "auto" and source != "JPEG") else "JPEG"
        data = self._save(img, fmt)
        while len(data) > s.max_bytes:
            if fmt == "PNG" and s.format == "auto":
                fmt = "JPEG"
            else:
                factor = min(0.9, max(0.5, math.sqrt(s.max_bytes / len(data)) * 0.95))
                if min(img.size) * factor < 16:
                    raise DataError(f"image cannot be made smaller than image_max_bytes={s.max_bytes}", file=image.path, doc_id=image.doc_id, field="images")
                img = _scaled(img, factor)
            data = self._save(img, fmt)
        return _data_url(fmt, data)

    def _save(self, img: "PILImage", fmt: str) -> bytes:
        buf = io.BytesIO()
        if fmt == "JPEG":
            img.save(buf, format="JPEG", quality=self.settings.jpeg_quality)
        else:
            img.save(buf, format="PNG", compress_level=3)
        return buf.getvalue()


def _scaled(img: "PILImage", factor: float) -> "PILImage":
    size = (max(1, round(img.width * factor)), max(1, round(img.height * factor)))
    return img.resize(size, PILImageModule.Resampling.LANCZOS, reducing_gap=3.0)


def _data_url(fmt: str | None, data: bytes) -> str:
    return f"data:{_MIME[fmt or 'PNG']};base64,{base64.b64encode(data).decode('ascii')}"


# -- header-only decision ---------------------------------------------------
#: JPEG markers without a length field
_JPEG_STANDALONE = frozenset(range(0xD0, 0xDA)) | {0x01}
_XMP_PREFIX = b"http://ns.adobe.com/xap/1.0/\x00"
_XMP_ORIENTATION = re.compile(rb'tiff:Orientation(="|>)([0-9])')
_PNG_ORIENTATION_TEXT = (b"Raw profile type exif", b"XML:com.adobe.xmp")


@dataclass(frozen=True)
class ImageHeader:
    """What the first bytes of a JPEG or PNG file say, read without decoding a pixel.

    ``plain_rgb`` is True when Pillow would open the file as one 8-bit RGB frame
    without transparency, i.e. exactly what :func:`~mmtasks.documents.images.decode_image`
    makes of it; ``orientation`` is the EXIF orientation tag (1 when absent).
    """

    format: Literal["JPEG", "PNG"]
    width: int
    height: int
    plain_rgb: bool
    orientation: int = 1


def read_header(data: bytes) -> ImageHeader | None:
    """The header of a JPEG or PNG file, or None when it is neither or not understood
    (the caller then opens the image with Pillow)."""
    try:
        if data.startswith(PNG_SIGNATURE):
            return _png_header(data)
        if data.startswith(JPEG_SIGNATURE):
            return _jpeg_header(data)
    except (struct.error, IndexError, ValueError):
        return None
    return None


def _png_header(data: bytes) -> ImageHeader | None:
    pos = len(PNG_SIGNATURE)
    width = height = 0
    plain, orientation, seen_ihdr = True, 1, False
    while pos + 8 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, pos)
        body = data[pos + 8 : pos + 8 + length]
        if len(body) < length:
            return None  # truncated: let Pillow report it
        if kind == b"IHDR":
            width, height, depth, color, _c, _f, interlace = struct.unpack(">IIBBBBB", body[:13])
            plain = depth == 8 and color == 2
            seen_ihdr = True
        elif kind in (b"tRNS", b"acTL"):
            plain = False  # transparency, or an animated PNG
        elif kind == b"eXIf":
            orientation = _exif_orientation(body)
        elif kind in (b"tEXt", b"zTXt", b"iTXt") and body.split(b"\x00", 1)[0] in _PNG_ORIENTATION_TEXT:
            return None  # EXIF or XMP in a text chunk (possibly compressed): Pillow reads it
        elif kind == b"IEND":
            break
        pos += 12 + length  # length, type, data, CRC
    if not seen_ihdr or width == 0 or height == 0:
        return None
    return ImageHeader("PNG", width, height, plain, orientation)


def _jpeg_header(data: bytes) -> ImageHeader | None:
    pos = 2
    orientation = 1
    xmp_orientation = 1
    multi_picture = False
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in _JPEG_STANDALONE:
            pos += 2
            continue
        (length,) = struct.unpack_from(">H", data, pos + 2)
        body = data[pos + 4 : pos + 2 + length]
        if marker == 0xE1 and body.startswith(b"Exif\x00\x00"):
            orientation = _exif_orientation(body[6:])
        elif marker == 0xE1 and body.startswith(_XMP_PREFIX):
            match = _XMP_ORIENTATION.search(body)
            xmp_orientation = int(match[2]) if match else 1
        elif marker == 0xE2 and body.startswith(b"MPF\x00"):
            multi_picture = True  # Pillow opens it as MPO (several frames)
        elif marker in JPEG_SOF:
            _precision, height, width, components = struct.unpack_from(">BHHB", body)
            if width == 0 or height == 0:
                return None
            plain = components == 3 and _precision == 8 and not multi_picture
            # like Pillow: XMP's tiff:Orientation counts when EXIF has none
            return ImageHeader("JPEG", width, height, plain, orientation if orientation != 1 else xmp_orientation)
        elif marker == 0xDA:  # start of scan before any frame header
            return None
        pos += 2 + length
    return None


def _exif_orientation(tiff: bytes) -> int:
    """The orientation tag (0x0112) of IFD0 of a TIFF-structured EXIF block (1 when absent);
    0 (not a valid orientation, so never "as is") when the block cannot be read."""
    if tiff[:4] == b"II*\x00":
        order = "<"
    elif tiff[:4] == b"MM\x00*":
        order = ">"
    else:
        return 0
    (ifd,) = struct.unpack_from(order + "I", tiff, 4)
    (count,) = struct.unpack_from(order + "H", tiff, ifd)
    for k in range(count):
        tag, kind, _n = struct.unpack_from(order + "HHI", tiff, ifd + 2 + 12 * k)
        if tag == _EXIF_ORIENTATION:
            if kind != 3:  # SHORT
                return 0
            return struct.unpack_from(order + "H", tiff, ifd + 2 + 12 * k + 8)[0]
    return 1
