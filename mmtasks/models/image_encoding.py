"""Images as ``data:`` URLs for API backends: size caps, and each image encoded once.

An :class:`ImageEncoder` is thread-safe and meant to be called from a thread
pool (decoding a 1080x3500 screenshot must not stall an event loop). It keys
its results on the image's content hash, so the same picture in many requests
(every turn of an MMDU dialogue, every judge call) is encoded once per run;
concurrent requests for an image being encoded wait for that one encoding.

Pixels match :func:`mmtasks.core.pixels.decode_image` (RGB, no EXIF
rotation): JPEG/PNG files that are already RGB, unrotated and within the caps
are sent as they are; everything else is decoded, converted to RGB,
downscaled to the caps and re-encoded.
"""

from __future__ import annotations

import base64
import io
import math
import threading
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from PIL import Image as PILImageModule
from PIL import UnidentifiedImageError

from mmtasks.core.pixels import open_image
from mmtasks.errors import DataError

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

    from mmtasks.core.conversation import Image

_MIME = {"JPEG": "image/jpeg", "PNG": "image/png"}
_EXIF_ORIENTATION = 0x0112
_DECODE_ERRORS = (UnidentifiedImageError, OSError, SyntaxError, ValueError)


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
            self.encoded += 1
            if key in self._cache:
                self._sizes[key] = len(url)
                self._total += len(url)
                self._evict()
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
        if image.parts:
            return self._from_pixels(image.load(), None, image)
        data = image.read_bytes()
        try:
            with open_image(image, data) as img:  # the one pixel budget of every backend
                source = img.format
                if self._can_send_as_is(img, len(data)):
                    return _data_url(source, data)
                img.load()
                rgb = img.convert("RGB")
        except _DECODE_ERRORS as exc:
            raise DataError(f"corrupt or unreadable image: {exc}", file=image.path, doc_id=image.doc_id, field="images") from None
        return self._from_pixels(rgb, source, image)

    def _can_send_as_is(self, img: "PILImage", size: int) -> bool:
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
