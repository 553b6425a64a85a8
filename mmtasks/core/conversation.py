"""The conversation model: messages made of interleaved text and image parts.

Images stay lazy: an :class:`Image` holds a path (or bytes) until a backend
asks for pixels, so memory does not grow with the dataset.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, Union

from mmtasks.errors import DataError

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Text:
    text: str

    def to_json(self) -> dict:
        return {"type": "text", "text": self.text}


class FrameSource(Protocol):
    """What a video frame is read from (``mmtasks.documents.video.VideoClip``): the sampled frames
    of one video, their timestamps, and a hash of the video and the frames chosen."""

    @property
    def content_hash(self) -> str: ...

    @property
    def timestamps(self) -> tuple[float, ...]: ...

    @property
    def indices(self) -> tuple[int, ...]: ...

    @property
    def fps(self) -> float: ...

    @property
    def total_frames(self) -> int: ...

    @property
    def duration(self) -> float: ...

    @property
    def frame_size(self) -> tuple[int, int]: ...

    def pixels(self, position: int) -> "PILImage": ...


@dataclass(frozen=True, eq=False)
class FrameRef:
    """An image part that is the ``position``-th sampled frame of a video (``clip``)."""

    clip: FrameSource
    position: int

    @property
    def timestamp(self) -> float:
        return self.clip.timestamps[self.position]


@dataclass(frozen=True, eq=False)
class Image:
    """An image part: a file path (lazy) or encoded bytes.

    ``doc_id`` is kept for error messages. ``content_hash`` is the SHA-256 of
    the file bytes (used in cache keys); it is computed once, on demand.
    """

    path: Path | None = None
    data: bytes | None = None
    doc_id: str | None = None
    label: str | None = None
    #: A transform applied to the pixels (e.g. "combined" images are built from parts).
    parts: tuple["Image", ...] = field(default=())
    #: a frame of a video (``path`` is the video's): decoded with the video's other sampled frames
    frame: FrameRef | None = None
    #: how closely an API model looks at the image, as the task declares it (``prompt.image_detail``:
    #: OpenAI's ``detail``, ``low``/``high``/``auto``); None: not said. Backends without the notion
    #: (hf, vllm) send the pixels as they are
    detail: str | None = None

    def __post_init__(self) -> None:
        if self.path is None and self.data is None and not self.parts and self.frame is None:
            raise ValueError("Image needs a path, bytes or parts")

    @cached_property
    def content_hash(self) -> str:
        h = hashlib.sha256()
        if self.frame is not None:
            h.update(f"video-frame:{self.frame.clip.content_hash}:{self.frame.position}".encode())
        elif self.parts:
            # "captioned": the grid draws "Image k" on its tiles (core/pixels.py), so replies cached
            # for the earlier uncaptioned grid are not served for it
            h.update(b"combined-captioned:")
            for p in self.parts:
                h.update(p.content_hash.encode())
        else:
            h.update(self.read_bytes())
        return h.hexdigest()

    def read_bytes(self) -> bytes:
        """The image file's bytes (a video frame: its pixels as PNG)."""
        if self.frame is not None:
            import io

            buffer = io.BytesIO()
            self.load().save(buffer, format="PNG")
            return buffer.getvalue()
        if self.data is not None:
            return self.data
        assert self.path is not None
        from mmtasks.core.pixels import MAX_IMAGE_FILE_BYTES, read_image_file

        try:
            data = read_image_file(self.path)
        except FileNotFoundError:
            raise DataError("image file not found", file=self.path, doc_id=self.doc_id, field="images") from None
        except OSError as exc:
            raise DataError(f"cannot read image: {exc.strerror}", file=self.path, doc_id=self.doc_id, field="images") from None
        if len(data) > MAX_IMAGE_FILE_BYTES:
            raise DataError(f"image file larger than {MAX_IMAGE_FILE_BYTES // (1024 * 1024)} MB", file=self.path,
                            doc_id=self.doc_id, field="images")
        return data

    def load(self) -> "PILImage":
        """Decode to an RGB PIL image (the only place pixels are made)."""
        if self.frame is not None:
            return self.frame.clip.pixels(self.frame.position)
        from mmtasks.core.pixels import decode_image  # PIL is imported when pixels are first needed

        return decode_image(self)

    def describe(self) -> str:
        if self.parts:
            return "combined(" + ",".join(p.describe() for p in self.parts) + ")"
        if self.frame is not None:
            return f"{self.path}@{self.frame.timestamp:g}s"
        if self.path is not None:
            return str(self.path)
        return f"<{len(self.data or b'')} bytes>"

    def to_json(self) -> dict:
        if self.frame is not None:
            return {"type": "image", "image": self.describe(), "video": str(self.path), "timestamp": self.frame.timestamp}
        out = {"type": "image", "image": self.describe()}
        if self.detail is not None:
            out["detail"] = self.detail
        return out


Part = Union[Text, Image]


@dataclass(frozen=True)
class Message:
    role: Role
    parts: tuple[Part, ...]

    @classmethod
    def text(cls, role: Role, text: str) -> "Message":
        return cls(role, (Text(text),))

    @property
    def images(self) -> list[Image]:
        return [p for p in self.parts if isinstance(p, Image)]

    @property
    def plain_text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    def to_json(self) -> dict:
        return {"role": self.role, "content": [p.to_json() for p in self.parts]}



@dataclass(frozen=True)
class VideoRun:
    """Consecutive frame parts of one video, every sampled frame in order: what a backend that
    takes video natively sends as one video (:func:`video_runs`)."""

    clip: FrameSource
    frames: tuple[Image, ...]

    @property
    def timestamps(self) -> tuple[float, ...]:
        return self.clip.timestamps


def video_runs(parts: tuple[Part, ...]) -> list["Part | VideoRun"]:
    """``parts`` with each run of all the sampled frames of one video, in order and nothing
    between them (what ``{{ video(i) }}`` places), as one :class:`VideoRun`; other frames (placed
    one by one, e.g. with a timestamp between them) stay images."""
    out: list[Part | VideoRun] = []
    i = 0
    while i < len(parts):
        part = parts[i]
        if isinstance(part, Image) and part.frame is not None and part.frame.position == 0:
            clip = part.frame.clip
            n = len(clip.timestamps)
            run = [p for p in parts[i:i + n] if isinstance(p, Image)]
            if len(run) == n and all(p.frame is not None and p.frame.clip is clip and p.frame.position == k
                                     for k, p in enumerate(run)):
                out.append(VideoRun(clip, tuple(run)))
                i += n
                continue
        out.append(part)
        i += 1
    return out
