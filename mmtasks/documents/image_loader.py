"""Decoded images for local backends: each distinct image decoded once per run, off the main thread.

A local backend (``hf``, ``vllm``) needs pixels for every image of every
request it runs. Decoding a 1080x3500 screenshot takes tens of milliseconds,
and in a multi-turn dialogue every turn carries all the images shown so far,
so decoding per request, on the thread that drives the model, would leave the
accelerator idle and repeat the same work turn after turn.

An :class:`ImageLoader` decodes in worker threads (PIL releases the GIL while
it decodes), starts as soon as a backend says which images it will need next
(:meth:`ImageLoader.prefetch`), and keeps decoded images in an LRU cache
bounded by their size in memory, so an image is decoded once while it stays
in the cache. Decoding errors (:class:`~mmtasks.errors.DataError` naming the
file and document) are raised by :meth:`ImageLoader.load` for the request
that needs the image.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

    from mmtasks.core.conversation import Image

#: decoded bytes kept for reuse (about 90 decoded 1080x3500 RGB screenshots)
DEFAULT_CACHE_BYTES = 1 << 30


def image_key(image: "Image") -> str:
    """What identifies an image's pixels: its file, or the hash of its bytes."""
    if image.parts:
        return "combined(" + ",".join(image_key(p) for p in image.parts) + ")"
    if image.frame is not None:  # the path is the video's
        return f"frame:{image.frame.clip.content_hash}:{image.frame.position}"
    if image.path is not None and image.data is None:
        return f"path:{image.path}"
    return f"sha256:{image.content_hash}"


class ImageLoader:
    def __init__(self, workers: int | None = None, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.cache_bytes = cache_bytes
        self._pool = ThreadPoolExecutor(max_workers=workers or min(8, os.cpu_count() or 1), thread_name_prefix="mmtasks-decode")
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, Future[PILImage]] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._total = 0
        #: images decoded (cache misses), for tests and benchmarks
        self.decoded = 0

    def prefetch(self, images: Iterable["Image"]) -> None:
        """Start decoding the images that are neither cached nor being decoded."""
        for image in images:
            self._future(image)

    def load(self, image: "Image") -> "PILImage":
        """The image's RGB pixels (shared: callers must not modify them); raises DataError."""
        return self._future(image).result()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            self._cache.clear()
            self._sizes.clear()
            self._total = 0

    def _future(self, image: "Image") -> "Future[PILImage]":
        key = image_key(image)
        with self._lock:
            future = self._cache.get(key)
            if future is not None:
                self._cache.move_to_end(key)
                return future
            future = self._cache[key] = self._pool.submit(self._decode, key, image)
            return future

    def _decode(self, key: str, image: "Image") -> "PILImage":
        pixels = image.load()
        size = pixels.width * pixels.height * len(pixels.getbands())
        with self._lock:
            self.decoded += 1
            if key in self._cache:
                self._sizes[key] = size
                self._total += size
                self._evict()
        return pixels

    def _evict(self) -> None:
        """Drop least recently used decoded images beyond the budget (images being decoded stay)."""
        while self._total > self.cache_bytes and len(self._sizes) > 1:
            oldest = next((key for key in self._cache if key in self._sizes), None)
            if oldest is None:
                return
            del self._cache[oldest]
            self._total -= self._sizes.pop(oldest)
