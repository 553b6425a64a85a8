"""Images for the viewer: each image a sample names becomes a small thumbnail and a larger copy
inside the site's ``img/`` folder, written once per image content (named by its hash), re-encoded
from pixels (no EXIF, ICC profile or other metadata survives) and bounded in size.

The page loads nothing from outside its folder: an image that cannot be read is shown as its file
name and the reason, never as a link to its path.
"""

from __future__ import annotations

import errno
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: writes a file of the site (whole, or not at all)
WriteBytes = Callable[[Path, bytes], None]

#: longest side of a thumbnail, in place in a message (pixels)
THUMB_SIDE = 160
#: longest side of the enlarged copy shown on click
LARGE_SIDE = 1024
#: images with more pixels than this are not decoded (a decompression bomb, or no photo)
MAX_PIXELS = 80_000_000
#: bytes read to hash an image file at most (a larger file is not an image we show)
MAX_FILE_BYTES = 64 * 1024 * 1024
IMG_DIR = "img"


@dataclass(frozen=True)
class Shown:
    """How the page shows one image part: the thumbnail and enlarged copy (site-relative), or why not."""

    name: str
    thumb: str | None = None
    large: str | None = None
    width: int | None = None
    height: int | None = None
    missing: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "image", "name": self.name}
        if self.missing is not None:
            out["missing"] = self.missing
        else:
            out.update(thumb=self.thumb, large=self.large, w=self.width, h=self.height)
        return out


class ImageStore:
    """Writes thumbnails into ``site/img/``; one entry per image path (memoised) and one pair of
    files per image content (an image shared by many documents is written once)."""

    def __init__(self, site: Path, write: WriteBytes) -> None:
        self.site = site
        self.folder = site / IMG_DIR
        self._write = write
        self._by_path: dict[str, Shown] = {}
        #: content hash -> written (thumb, large, width, height)
        self._by_hash: dict[str, tuple[str, str, int, int]] = {}
        self.written = 0

    def show(self, described: str) -> Shown:
        """The page's view of the image part ``{"type": "image", "image": described}``."""
        hit = self._by_path.get(described)
        if hit is None:
            hit = self._by_path[described] = self._load(described)
        return hit

    def show_frame(self, described: str, video: str, timestamp: float) -> Shown:
        """The page's view of a video frame part (``{"type": "image", "image": "V@Ts", "video": V,
        "timestamp": T}``): the frame shown at T s, decoded from the video where the run read it."""
        hit = self._by_path.get(described)
        if hit is None:
            hit = self._by_path[described] = self._load_frame(video, timestamp)
        return hit

    def _load_frame(self, video: str, timestamp: float) -> Shown:
        import io

        from mmtasks.documents.video import VideoProblem, decode_frames, probe
        from mmtasks.errors import MmtasksError

        name = f"{Path(video.replace(chr(92), '/')).name}@{timestamp:g}s"
        try:
            info = probe(Path(video))
            index = info.index_at(timestamp)
            [frame] = decode_frames(Path(video), [index], info)
        except VideoProblem as exc:
            return Shown(name=name, missing=f"{exc}: not shown")
        except MmtasksError as exc:  # PyAV missing, or the video does not decode
            return Shown(name=name, missing=f"{exc.message}: not shown")
        buffer = io.BytesIO()
        frame.save(buffer, format="PNG")
        data = buffer.getvalue()
        digest = hashlib.sha256(data).hexdigest()[:24]
        done = self._by_hash.get(digest)
        if done is None:
            done = self._by_hash[digest] = self._encode(digest, data)
        thumb, large, width, height = done
        return Shown(name=name, thumb=thumb, large=large, width=width, height=height)

    def _load(self, described: str) -> Shown:
        name = Path(described.replace("\\", "/")).name or "image"
        if described.startswith("<"):  # an in-memory image (``<bytes>``, ``<PIL image>``): nothing on disk
            return Shown(name=described, missing="not a file: the run kept no copy of it")
        from mmtasks.core.pixels import read_image_file

        path = Path(described)
        try:
            data = read_image_file(path, MAX_FILE_BYTES)  # a FIFO or a device is refused, never waited on
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                return Shown(name=name, missing=f"{exc.strerror}: not shown")
            return Shown(name=name, missing=f"not found where the run read it ({exc.strerror or 'unreadable'})")
        if len(data) > MAX_FILE_BYTES:
            return Shown(name=name, missing=f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB: not shown")
        digest = hashlib.sha256(data).hexdigest()[:24]
        done = self._by_hash.get(digest)
        if done is None:
            from mmtasks.core.pixels import Undecodable, decoding

            try:
                with decoding():  # every decoder error of every format, in the one place they are named
                    done = self._by_hash[digest] = self._encode(digest, data)
            except Undecodable as exc:
                return Shown(name=name, missing=f"cannot be decoded ({exc.kind})")
        thumb, large, width, height = done
        return Shown(name=name, thumb=thumb, large=large, width=width, height=height)

    def _encode(self, digest: str, data: bytes) -> tuple[str, str, int, int]:
        import io

        from PIL import Image, ImageOps

        thumb_rel = f"{IMG_DIR}/{digest}.t.jpg"
        large_rel = f"{IMG_DIR}/{digest}.l.jpg"
        with Image.open(io.BytesIO(data)) as opened:
            if opened.width * opened.height > MAX_PIXELS:
                raise ValueError(f"{opened.width}x{opened.height} pixels")
            image = ImageOps.exif_transpose(opened)  # the orientation EXIF asks for, then the EXIF is gone
            if image.mode not in ("RGB", "L"):
                background = Image.new("RGB", image.size, (255, 255, 255))
                rgba = image.convert("RGBA")
                background.paste(rgba, mask=rgba.getchannel("A"))
                image = background
            width, height = image.size
            if max(width, height) <= THUMB_SIDE:
                large_rel = thumb_rel  # small enough: the thumbnail is the image at full size
            for rel, side in dict.fromkeys([(thumb_rel, THUMB_SIDE), (large_rel, LARGE_SIDE)] if large_rel != thumb_rel
                                           else [(thumb_rel, THUMB_SIDE)]):
                target = self.site / rel
                if target.is_file() and not target.is_symlink():
                    continue  # written by an earlier build of this view: same content, same name
                copy = image.copy()
                copy.thumbnail((side, side))
                buf = io.BytesIO()
                copy.save(buf, format="JPEG", quality=82, optimize=True)  # no exif=, no icc_profile=: none written
                self._write(target, buf.getvalue())
                self.written += 1
        return thumb_rel, large_rel, width, height
