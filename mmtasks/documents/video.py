"""Videos as inputs: the header check, the frame rule, subtitles, and decoding with a run's cache.

A task's ``dataset.video`` names the record field holding a video (a file PyAV opens: MP4,
WebM, MKV, MOV, an animated GIF; or a folder of frame images) and the frame rule. When
documents are read, each video's header is read (:func:`probe`: container, duration, frame
count, frame rate; no frame is decoded) and the rule picks the frame indices and their
timestamps (:func:`sample_indices`), so templates see the timestamps and the preflight reports
every unreadable video before any model is built. A :class:`VideoClip` is the chosen frames of
one video; its frames become lazy :class:`~mmtasks.core.conversation.Image` parts
(:meth:`VideoClip.frame_images`), decoded when a backend first needs pixels, all frames of a
clip in one pass (:func:`decode_frames`: PyAV, seeking to the frames far apart), once per run
while they stay in the :class:`FrameStore`'s cache (Video-MME asks three questions per video).

PyAV (``pip install 'mmtasks[video]'``) is imported only when a task has videos.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mmtasks.core.conversation import FrameRef, Image
from mmtasks.core.pixels import Undecodable, decoding, pixel_budget_problem
from mmtasks.errors import DataError

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

    from mmtasks.config.task_config import VideoConfig

#: file names in a folder of frames that are frames
FRAME_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp")
#: the key-frame spacing assumed until two key frames have been seen (streaming sites encode a key
#: frame every 2 s or so): a frame one spacing or more past the last key frame decoded is reached
#: by seeking to the key frame before it instead of decoding every frame in between
SEEK_SECONDS = 2.0
#: decoded frames kept for reuse, in bytes (about 2,700 448x448 RGB frames)
DEFAULT_CACHE_BYTES = 1 << 30
INSTALL_HINT = "reading videos needs PyAV: pip install 'mmtasks[video]'"


def _av() -> Any:
    try:
        import av
    except ImportError:
        raise DataError("this task has videos, and reading them needs the PyAV package (av)", field="dataset.video",
                        hint="pip install 'mmtasks[video]'") from None
    return av


@dataclass(frozen=True)
class VideoInfo:
    """What a video's header says (no frame decoded)."""

    duration: float
    frames: int
    fps: float
    width: int
    height: int
    #: "file" (a container PyAV reads) or "folder" (frame images)
    kind: str = "file"
    #: each frame's start time in seconds, where frames last unequal times (an animated GIF's
    #: delays, read from its packets: no frame decoded); None: frame k starts at k / fps
    times: tuple[float, ...] | None = None

    def time_of(self, index: int) -> float:
        """When frame ``index`` starts showing, in seconds from the start."""
        return self.times[index] if self.times is not None else index / self.fps

    def index_at(self, seconds: float) -> int:
        """The frame showing at ``seconds`` (within the video)."""
        if self.times is not None:
            return min(self.frames - 1, max(0, bisect.bisect_right(self.times, seconds + 1e-9) - 1))
        return min(self.frames - 1, max(0, int(seconds * self.fps + 1e-6)))


class VideoProblem(Exception):
    """What is wrong with a video, in a few words (the caller names the file and document)."""


def _frame_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in FRAME_SUFFIXES and p.is_file())


def _stat_key(path: Path, files: Sequence[Path]) -> str | None:
    """The memo key of a video's hash: its resolved path and each file's size, mtime_ns, inode and
    device (None when a file cannot be read: it is then hashed, or fails, as without a memo)."""
    try:
        parts = [str(path.resolve())]
        for f in files:
            st = f.stat()
            parts.append(f"{f.name}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}:{st.st_dev}")
    except OSError:
        return None
    return "sha256-v1\0" + "\0".join(parts)


def _racy(files: Sequence[Path]) -> bool:
    now = time.time_ns()
    try:
        return any(now - f.stat().st_mtime_ns < RACY_NS for f in files)
    except OSError:
        return True


def probe(path: Path, frames_fps: float = 1.0) -> VideoInfo:
    """The header of a video file (container opened, its first video stream's duration, frame
    count and rate read; nothing decoded), or of a folder of frames; raises :class:`VideoProblem`."""
    try:
        st = path.stat()
    except OSError:
        raise VideoProblem("video not found") from None
    if path.is_dir():
        files = _frame_files(path)
        if not files:
            raise VideoProblem("the folder of frames holds no image (.jpg, .jpeg, .png, .webp, .bmp)")
        from mmtasks.documents.image_header import image_file_problem

        problem = image_file_problem(files[0])
        if problem is not None:
            raise VideoProblem(f"its first frame {files[0].name}: {problem}")
        from PIL import Image as PILImage

        try:
            with decoding(), PILImage.open(files[0]) as img:
                width, height = img.size
        except Undecodable as exc:
            raise VideoProblem(f"its first frame {files[0].name}: not a readable image ({exc.kind}: {str(exc)[:120]})") from None
        return VideoInfo(len(files) / frames_fps, len(files), frames_fps, width, height, "folder")
    if not path.is_file() or st.st_size == 0:
        raise VideoProblem("not a regular, non-empty file")
    av = _av()
    try:
        with decoding(av.FFmpegError, UnicodeDecodeError), av.open(str(path), "r") as container:
            if not container.streams.video:
                raise VideoProblem("the file holds no video stream")
            stream = container.streams.video[0]
            rate = stream.average_rate or stream.guessed_rate or stream.base_rate
            fps = float(rate) if rate else 0.0
            duration = float(stream.duration * stream.time_base) if stream.duration and stream.time_base else 0.0
            if duration <= 0 and container.duration:
                duration = container.duration / 1_000_000  # av.time_base: microseconds
            frames = int(stream.frames or 0)
            if frames <= 0 and duration > 0 and fps > 0:
                frames = int(round(duration * fps))  # WebM/MKV headers often give no frame count
            if fps <= 0 and frames > 0 and duration > 0:
                fps = frames / duration
            width, height = stream.codec_context.width, stream.codec_context.height
            times = None
            if stream.codec_context.name == "gif" and stream.time_base:  # frames of unequal delays: their start times
                starts = [float(p.pts * stream.time_base) for p in container.demux(stream) if p.pts is not None]
                if len(starts) == frames and starts == sorted(starts):
                    times = tuple(round(t - starts[0], 6) for t in starts)
    except Undecodable as exc:
        raise VideoProblem(f"not a readable video ({exc.kind}: {str(exc)[:120]})") from None
    if frames <= 0 or fps <= 0 or duration <= 0:
        raise VideoProblem(f"its header gives no duration or frame count (duration {duration:g} s, {frames} frames, {fps:g} fps)")
    too_large = pixel_budget_problem(width, height)
    if too_large is not None:  # the images' budget: a 12,000 x 12,000 video is refused as the PNG is
        raise VideoProblem(f"its frames: {too_large}")
    return VideoInfo(duration, frames, fps, width, height, times=times)


def linspace_int(start: int, stop: int, num: int) -> list[int]:
    """``numpy.linspace(start, stop, num, dtype=int)``, computed as numpy does (float64 step
    ``(stop - start) / (num - 1)``, ``i * step + start`` truncated, the last one ``stop``): the
    same indices to the last float rounding (``15 * (1029 / 63)`` is 244.99999999999997, so 244),
    repeats kept when ``num`` exceeds the frames."""
    if num == 1:
        return [start]
    step = (stop - start) / (num - 1)
    if step == 0:
        return [start] * num
    out = [int(float(i) * step + start) for i in range(num)]
    out[-1] = stop
    return out


def segment_centers(start: int, end: int, num: int) -> list[int]:
    """Ask-Anything's MVBench ``get_index`` (video_chat2/mvbench.ipynb, commit 4dd8210):
    ``int(start + s / 2 + round(s * i))`` with ``s = (end - start) / num``, repeats kept."""
    seg = float(end - start) / num
    return [int(start + seg / 2 + round(seg * i)) for i in range(num)]


def segment_middles(n: int, num: int) -> list[int]:
    """video-slicer's ``get_seq_frames`` (github.com/look4u-ok/video-slicer ``slice_and_extract.py``,
    commit aff7000, the script the Video-MME README links): ``s = (n - 1) / num``, segment i from
    ``round(s * i)`` to ``round(s * (i + 1))``, its middle ``(start + end) // 2``. The script writes
    each chosen frame once (``if count in selected_frame_ids``): repeats are dropped."""
    seg = float(n - 1) / num
    return sorted({(int(round(seg * i)) + int(round(seg * (i + 1)))) // 2 for i in range(num)})


def interior_points(n: int, num: int) -> list[int]:
    """VLMEvalKit's Video-MME frames (``vlmeval/dataset/videomme.py`` ``save_video_frames``,
    commit e8e78f0): ``int(i * (n / (num + 1)))`` for i = 1 .. num, the ends left out, repeats kept."""
    step = n / (num + 1)
    return [int(i * step) for i in range(1, num + 1)]


def stride_points(duration: float, fps: float, num: int) -> list[int]:
    """LongVideoBench's ``load_video`` (github.com/longvideobench/LongVideoBench
    ``longvideobench/longvideobench_dataset.py``, commit fc3c553): ``m = min(num, int(duration))``
    frames, ``int(int(duration * fps) / m) * i`` for i = 0 .. m-1 (the last frames of the video are
    never reached). A video shorter than a second (the authors' code divides by zero): frame 0 (ours)."""
    count = min(num, int(duration))
    if count <= 0:
        return [0]
    step = int(int(duration * fps) / count)
    return [step * i for i in range(count)]


def sample_indices(info: VideoInfo, rule: "VideoConfig", start: float | None = None, end: float | None = None,
                   duration: float | None = None) -> list[int]:
    """The frame indices ``rule`` names for a video of ``info``, in order, as the reference code
    sends them (``centers`` may repeat an index in a clip of fewer frames than asked for).

    ``num_frames`` k, ``sampling: linspace``: ``numpy.linspace(0, n - 1, k, dtype=int)`` exactly
    (:func:`linspace_int`; lmms-eval's ``read_video_pyav``), the first and last frame included; a
    video of n <= k frames gives each frame once (lmms-eval samples ``min(n, k)``);
    ``sampling: centers``: Ask-Anything's MVBench ``get_index`` (:func:`segment_centers`), the
    middle of each of k segments between ``round(start * fps)`` and ``min(round(end * fps), n - 1)``;
    for a folder of frames its ``read_frame``: frames numbered from 1, the window between
    ``max(1, round(start * fps))`` and ``min(round(end * fps), n)`` (n: the folder's files), frame
    j being the j-th file; ``sampling: segment_middles``: video-slicer's segment middles
    (:func:`segment_middles`, the rule the Video-MME README links); ``sampling: interior``:
    VLMEvalKit's ``int(i * n / (k + 1))`` (:func:`interior_points`); ``sampling: stride``:
    LongVideoBench's (:func:`stride_points`) over ``duration`` seconds (the record's, else the
    video's), an index past the last frame (a record's duration longer than the file) clamped to
    it (ours: decord would fail). ``fps`` f, ``max_frames`` m (ours): the frames shown at 0, 1/f, 2/f ...
    seconds (those before the end), thinned to m of them (``linspace`` over their positions) when
    more.

    ``start``, ``end`` (seconds): only the frames within them are chosen from, as Ask-Anything's
    ``get_index`` bounds MVBench's clips (a window wholly outside the video: the whole video, ours:
    the authors' code would fail there).
    """
    n = info.frames
    base = 1 if info.kind == "folder" and rule.num_frames is not None and rule.sampling == "centers" else 0
    if info.times is not None:  # frames of unequal lengths: the frames showing at start and end
        first = info.index_at(start) if start is not None else 0
        last = info.index_at(end) if end is not None else n - 1
    else:
        first = max(base, round(start * info.fps)) if start is not None else base
        last = min(round(end * info.fps), n - 1 + base) if end is not None else n - 1 + base
    if last < first:
        first, last = base, n - 1 + base
    if rule.num_frames is not None:
        k = rule.num_frames
        if rule.sampling == "centers":
            return [i - base for i in segment_centers(first, last, k)]
        if rule.sampling == "segment_middles":
            return [first + i for i in segment_middles(last - first + 1, k)]
        if rule.sampling == "interior":
            return [first + i for i in interior_points(last - first + 1, k)]
        if rule.sampling == "stride":
            span = duration if duration is not None else (last - first + 1) / info.fps
            return [min(last, first + i) for i in stride_points(span, info.fps, k)]
        if k >= last - first + 1:  # no more frames than asked for: each once (lmms-eval's min(total, k))
            return list(range(first, last + 1))
        return linspace_int(first, last, k)
    assert rule.fps is not None and rule.max_frames is not None
    span = last - first + 1
    step = 1.0 / rule.fps
    candidates: Sequence[int]
    if info.times is not None:
        begin, end_time = info.time_of(first), (info.time_of(last + 1) if last + 1 < n else info.duration)
        count = max(1, math.ceil((end_time - begin) / step - 1e-9))
        if count <= MAX_LISTED_TIMES:
            times = [begin + i * step for i in range(count)]
            candidates = sorted({min(last, info.index_at(t)) for t in times})
        else:  # each frame of the span (listed in the header) that some time falls in
            candidates = [k for k in range(first, last + 1) if _shown_at_a_time(info, k, begin, step, count, last)]
    else:
        count = max(1, math.ceil(span / info.fps / step - 1e-9))
        if count <= MAX_LISTED_TIMES:
            times = [i * step for i in range(count)]
            candidates = sorted({min(last, first + int(t * info.fps + 1e-6)) for t in times})
        elif step * info.fps <= 1:  # a time at least every frame: every frame up to the last time's
            candidates = range(first, min(last, first + int((count - 1) * step * info.fps + 1e-6)) + 1)
        else:  # fewer times than frames: the frame at each time, computed where it is asked for
            candidates = _FrameAtTime(first, last, step * info.fps, count)
    m = rule.max_frames
    if len(candidates) > m:
        return [candidates[p] for p in linspace_int(0, len(candidates) - 1, m)]
    return list(candidates)


#: the most sampling times listed one by one (ours): past it (a header of 4.7e-10 fps makes a
#: 3-frame video 6.4 billion seconds long) the candidate frames are computed without listing the
#: times, the same frames in exact arithmetic, in memory and steps bounded by the frames returned
MAX_LISTED_TIMES = 100_000


@dataclass(frozen=True)
class _FrameAtTime(Sequence[int]):
    """The frame shown at each of ``length`` times ``i * step`` (``frames_per_step`` > 1 frames
    apart, so no frame twice), computed when indexed: nothing listed."""

    first: int
    last: int
    frames_per_step: float
    length: int  # not `count`: that is Sequence.count(value)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.length))]
        if not 0 <= i < self.length:
            raise IndexError(i)
        return min(self.last, self.first + int(i * self.frames_per_step + 1e-6))


def _shown_at_a_time(info: VideoInfo, k: int, begin: float, step: float, count: int, last: int) -> bool:
    """Whether frame ``k`` (of a video whose frames last unequal times) is the one showing at one
    of the ``count`` times ``begin + i * step`` (the last frame: at or after its start)."""
    assert info.times is not None
    i = max(0, math.ceil((info.time_of(k) - 1e-9 - begin) / step))
    if i >= count:
        return False
    return k == last or begin + i * step + 1e-9 < info.time_of(k + 1)


# -- subtitles ------------------------------------------------------------------

#: formatting tags of SubRip cues (Video-MME's ``<font color="white" size=".72c">``): not the text
_TAG = re.compile(r"</?(?:font|b|i|u|s)\b[^>]*+>", re.IGNORECASE)
#: a cue's time line; its hours are a run of at most 9 digits tried from its first digit only
#: (ours: a line of 120,000 digits used to be tried from every digit, each try reading the rest)
_SRT_TIME = re.compile(r"(?<!\d)(\d{1,9}):(\d\d):(\d\d)[,.](\d{1,3})\s*+-->\s*+(\d{1,9}):(\d\d):(\d\d)[,.](\d{1,3})")


def _untagged(line: str) -> str:
    """``line`` without its formatting tags (:data:`_TAG`). Only the text up to its last ``>`` can
    hold a tag: past it an unclosed ``<b`` would be read to the end again from every ``<``."""
    last = line.rfind(">")
    return _TAG.sub("", line[:last + 1]) + line[last + 1:]


@dataclass(frozen=True)
class Cue:
    start: float
    end: float
    text: str


def _seconds(h: str, m: str, s: str, ms: str) -> float:
    return int(h) * 3600 + int(m) * 60 + int(s) + int(ms.ljust(3, "0")) / 1000


def parse_srt(text: str) -> list[Cue]:
    """The cues of a SubRip file (blocks of an optional number, ``HH:MM:SS,mmm --> HH:MM:SS,mmm``
    and text lines, joined by spaces); blocks without a time line are skipped (a cue without text
    is kept, with text ""), and the formatting tags ``<font ...>``, ``<b>``, ``<i>``, ``<u>``, ``<s>`` removed."""
    cues: list[Cue] = []
    for block in re.split(r"\r?\n\s*\r?\n", text.replace("\ufeff", "")):
        lines = [line.strip() for line in block.strip().splitlines()]
        for i, line in enumerate(lines):
            m = _SRT_TIME.search(line)
            if m:
                body = " ".join(x for x in (_untagged(line).strip() for line in lines[i + 1:]) if x)
                # a cue without text is kept: the first cue at a frame is its line, an empty one none
                cues.append(Cue(_seconds(*m.groups()[:4]), _seconds(*m.groups()[4:]), body))
                break
    return cues


def windowed(cues: Sequence[Cue], timestamps: Sequence[float]) -> list[str]:
    """The cues shown at the sampled frames' times (start <= t <= end), in order, each once
    (``subtitle_lines: per_cue``, ours; close to lmms-eval's, which takes each cue whose frame
    span ``[int(start * fps), int(end * fps))`` holds a sampled frame, once)."""
    out: list[str] = []
    seen: set[int] = set()
    for t in timestamps:
        for k, cue in enumerate(cues):
            if k not in seen and cue.text and cue.start <= t <= cue.end:
                seen.add(k)
                out.append(cue.text)
    return out


def per_frame(cues: Sequence[Cue], indices: Sequence[int], info: "VideoInfo") -> list[str]:
    """One line per sampled frame (``subtitle_lines: per_frame``): the text of the first cue with
    ``start < t < end`` (in milliseconds; ``t = round(index * 1000 / fps)``, pysubs2's
    ``make_time(frames=, fps=)``), none when there is no such cue or its text is blank; a cue
    over two frames is listed twice. The Video-MME authors' linked script (video-slicer
    ``slice_and_extract.py``, commit aff7000) and VLMEvalKit's ``VideoMME.build_prompt`` (commit
    e8e78f0) do this."""
    out: list[str] = []
    for index in indices:
        t = int(round(info.time_of(index) * 1000)) if info.times is not None else int(round(index * (1000 / info.fps)))
        for cue in cues:
            if round(cue.start * 1000) < t < round(cue.end * 1000):
                if cue.text.strip():
                    out.append(cue.text)
                break
    return out


# -- clips and their frames --------------------------------------------------------

@dataclass(frozen=True)
class Bound:
    """The resize bound of frames: longer side and pixel count at most these (None: no bound)."""

    max_side: int | None = None
    max_pixels: int | None = None

    def size(self, width: int, height: int) -> tuple[int, int]:
        scale = 1.0
        if self.max_side is not None and max(width, height) > self.max_side:
            scale = self.max_side / max(width, height)
        if self.max_pixels is not None and width * height * scale * scale > self.max_pixels:
            scale = math.sqrt(self.max_pixels / (width * height))
        if scale >= 1.0:
            return width, height
        return max(1, int(width * scale)), max(1, int(height * scale))


@dataclass(frozen=True, eq=False)
class VideoClip:
    """The sampled frames of one video of a document: what the rule chose, with the timestamps
    templates and native-video backends see. Decoding goes through ``store`` (once per run)."""

    path: Path
    info: VideoInfo
    indices: tuple[int, ...]
    bound: Bound
    store: "FrameStore"
    doc_id: str | None = None
    #: the record's value (a path relative to the data folder), for samples and errors
    label: str | None = None
    #: the rule as recorded (``num_frames=8``)
    rule: str = ""
    #: the subtitle cues of the whole video (None: no subtitles file)
    cues: tuple[Cue, ...] | None = None
    #: which cues ``subtitles`` lists: ``per_cue`` (:func:`windowed`) or ``per_frame`` (:func:`per_frame`)
    subtitle_lines: str = "per_cue"

    @property
    def timestamps(self) -> tuple[float, ...]:
        """Each sampled frame's time in seconds from the start (index / frame rate; a GIF's frames: when each starts)."""
        return tuple(round(self.info.time_of(i), 3) for i in self.indices)

    @property
    def fps(self) -> float:
        return self.info.fps

    @property
    def total_frames(self) -> int:
        return self.info.frames

    @property
    def duration(self) -> float:
        return self.info.duration

    @property
    def frame_size(self) -> tuple[int, int]:
        """(width, height) of each frame as sent: the header's size within the bound."""
        return self.bound.size(self.info.width, self.info.height)

    @property
    def subtitles(self) -> list[str] | None:
        if self.cues is None:
            return None
        if self.subtitle_lines == "per_frame":
            return per_frame(self.cues, self.indices, self.info)
        return windowed(self.cues, self.timestamps)

    @cached_property
    def content_hash(self) -> str:
        """SHA-256 of the video's bytes (once per file per store), the frames chosen and the bound."""
        h = hashlib.sha256(b"video-clip:")
        h.update(self.store.file_hash(self.path).encode())
        h.update(repr((self.indices, self.bound.max_side, self.bound.max_pixels)).encode())
        return h.hexdigest()

    @cached_property
    def key(self) -> str:
        return f"{self.path}|{self.indices}|{self.bound.max_side}|{self.bound.max_pixels}"

    def frame_images(self) -> tuple[Image, ...]:
        """One lazy image part per sampled frame, in order."""
        return tuple(Image(path=self.path, doc_id=self.doc_id, label=f"{self.label or self.path}@{t:g}s",
                           frame=FrameRef(self, k)) for k, t in enumerate(self.timestamps))

    def pixels(self, position: int) -> "PILImage":
        """The RGB pixels of the ``position``-th sampled frame (the clip decoded once, cached)."""
        return self.store.frames(self)[position]

    def frames(self) -> list["PILImage"]:
        return self.store.frames(self)

    def describe(self) -> dict[str, Any]:
        """The clip as templates (``videos[i]``) and samples see it."""
        return {"path": self.label or str(self.path), "duration": round(self.info.duration, 3), "fps": self.info.fps,
                "total_frames": self.info.frames, "n_frames": len(self.indices), "indices": list(self.indices),
                "timestamps": list(self.timestamps), "subtitles": self.subtitles, "rule": self.rule}


class HashMemo(Protocol):
    """Where a video's SHA-256 is kept between runs (the response cache's memo table)."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, value: str) -> None: ...


#: a file modified this recently (ns) may change again within its timestamp's resolution without
#: its mtime changing: its hash is not kept between runs (git's "racy" rule)
RACY_NS = 2_000_000_000


class FrameStore:
    """The decoded frames of a run's clips: each clip decoded once (callers asking for a clip being
    decoded wait for it), kept in an LRU cache bounded by bytes; ``decoded`` counts decodings.

    ``hashes``: where each video's SHA-256 (:meth:`file_hash`) is kept between runs, keyed by the
    file's path and ``stat`` (size, mtime_ns, inode, device); None: within this store only."""

    def __init__(self, cache_bytes: int = DEFAULT_CACHE_BYTES, hashes: HashMemo | None = None) -> None:
        self.cache_bytes = cache_bytes
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, Future[list[PILImage]]] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._total = 0
        self._hashes: dict[Path, str] = {}
        self._memo = hashes
        self._memo_lock = threading.Lock()
        #: clips decoded (cache misses), for tests and benchmarks
        self.decoded = 0
        #: frames decoded into pictures
        self.frames_decoded = 0
        #: videos whose bytes were read to hash them (not found in ``hashes``), for tests and benchmarks
        self.files_hashed = 0

    def file_hash(self, path: Path) -> str:
        """SHA-256 of the video's bytes (a folder of frames: of each frame's name and bytes), read
        once per store; with ``hashes``, once per machine while the file's stat stays the same.

        Reading a whole video to hash it costs about 1 s per GiB (Video-MME's ~100 GB: minutes on
        every run, a resumed run served from the cache too). The digest stays the content's, so a
        response cache survives a moved or copied data folder, and a video changed at the same
        path changes its key: its stat changes (a new size, or mtime; a file rewritten in place
        keeps its inode but gets a new mtime). Not detected: bytes changed with the size and
        mtime put back by hand (``touch -d``), as with git's and make's stat checks; clear the
        memos (``mmtasks cache clear``) then."""
        with self._lock:
            known = self._hashes.get(path)
        if known is not None:
            return known
        files = _frame_files(path) if path.is_dir() else [path]
        memo = self._memo
        key = _stat_key(path, files) if memo is not None else None
        digest = None
        if memo is not None and key is not None:
            with self._memo_lock:
                digest = memo.get(key)
        if digest is None:
            h = hashlib.sha256()
            for f in files:
                h.update(f.name.encode() + b"\0")
                with open(f, "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
            digest = h.hexdigest()
            with self._lock:
                self.files_hashed += 1
            # kept only when the file did not change while it was read, nor too recently to tell
            if memo is not None and key is not None and key == _stat_key(path, files) and not _racy(files):
                with self._memo_lock:
                    memo.put(key, digest)
        with self._lock:
            self._hashes[path] = digest
        return digest

    def frames(self, clip: VideoClip) -> list["PILImage"]:
        key = clip.key
        with self._lock:
            future = self._cache.get(key)
            owner = future is None
            if owner:
                future = self._cache[key] = Future()
            else:
                self._cache.move_to_end(key)
        assert future is not None
        if not owner:
            return future.result()
        try:
            frames = decode_frames(clip.path, clip.indices, clip.info, clip.bound, doc_id=clip.doc_id)
        except BaseException as exc:
            with self._lock:
                self._cache.pop(key, None)
            future.set_exception(exc)
            raise
        future.set_result(frames)
        with self._lock:
            self.decoded += 1
            self.frames_decoded += len(frames)
            if key in self._cache:
                self._sizes[key] = sum(f.width * f.height * 3 for f in frames)
                self._total += self._sizes[key]
                while self._total > self.cache_bytes and len(self._sizes) > 1:
                    oldest = next(k for k in self._cache if k in self._sizes)
                    del self._cache[oldest]
                    self._total -= self._sizes.pop(oldest)
        return frames


def _resized(img: "PILImage", bound: Bound) -> "PILImage":
    from PIL import Image as PILImage

    size = bound.size(img.width, img.height)
    return img if size == img.size else img.resize(size, PILImage.Resampling.BILINEAR)


def decode_frames(path: Path, indices: Sequence[int], info: VideoInfo, bound: Bound = Bound(),
                  doc_id: str | None = None) -> list["PILImage"]:
    """The RGB frames at ``indices`` (sorted) of a video, resized to ``bound``.

    A folder of frames: those files, decoded with Pillow. A file: PyAV, one pass in decode order
    from the start, seeking (to the key frame before it) to a frame :data:`SEEK_SECONDS` or more
    past the decoder's position; a frame is known by its presentation time (index = time x
    frame rate). An animated GIF is decoded in order, frames counted. A frame past the end of the
    stream (a header that over-counts) is the last frame decoded. Errors are
    :class:`DataError` naming the file and document.

    The decoder seeks to a frame at least one key-frame spacing (the last two key frames seen;
    :data:`SEEK_SECONDS` before that) past the last key frame decoded: a key frame lies between,
    so the frames before it need not be decoded."""
    if info.kind == "folder":
        from PIL import Image as PILImage

        files = _frame_files(path)
        out = []
        for i in indices:
            f = files[min(i, len(files) - 1)]
            try:
                with decoding(), PILImage.open(f) as img:
                    too_large = pixel_budget_problem(img.width, img.height)
                    if too_large is not None:
                        raise DataError(too_large, file=f, doc_id=doc_id, field="dataset.video")
                    out.append(_resized(img.convert("RGB"), bound))
            except Undecodable as exc:
                raise DataError(f"corrupt or unreadable frame: {exc.kind}: {exc}", file=f, doc_id=doc_id,
                                field="dataset.video") from None
        return out
    av = _av()
    wanted = sorted(set(indices))
    width, height = bound.size(info.width, info.height)
    got: dict[int, Any] = {}
    try:
        with decoding(av.FFmpegError), av.open(str(path), "r") as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            counted = stream.codec_context.name == "gif" or stream.time_base is None
            start = stream.start_time or 0
            tb = stream.time_base
            frames_iter = None
            position = -1  # index of the last frame decoded
            last_key = 0  # index of the last key frame decoded
            spacing = SEEK_SECONDS * info.fps  # key-frame spacing: between two key frames decoded one after the other
            last = None
            sought = True
            for target in wanted:
                if frames_iter is None or (not counted and target > position + 1 and target - last_key >= spacing):
                    if frames_iter is not None or target > 0:
                        if counted:
                            container.seek(0)
                            position = -1
                        else:
                            container.seek(start + int(Fraction(target) / Fraction(info.fps).limit_denominator(1_000_000) / tb),
                                           stream=stream, backward=True, any_frame=False)
                    frames_iter = container.decode(stream)
                    sought = True  # the next key frame follows a seek, not the last key frame
                found = None
                for frame in frames_iter:
                    if counted or frame.pts is None:
                        position += 1
                    else:
                        position = int(round(float((frame.pts - start) * tb) * info.fps))
                    if frame.key_frame:
                        if last is not None and not sought and position > last_key:
                            spacing = position - last_key
                        last_key, sought = position, False
                    last = frame
                    if position >= target:
                        found = frame
                        break
                if found is None:
                    found = last
                if found is None:
                    raise DataError("the video has no decodable frame", file=path, doc_id=doc_id, field="dataset.video")
                got[target] = found.to_image(width=width, height=height) if (width, height) != (found.width, found.height) else found.to_image()
    except Undecodable as exc:
        raise DataError(f"corrupt or unreadable video: {exc.kind}: {str(exc)[:160]}", file=path, doc_id=doc_id,
                        field="dataset.video") from None
    return [got[i].convert("RGB") if got[i].mode != "RGB" else got[i] for i in indices]


# -- documents' videos -------------------------------------------------------------

@dataclass
class VideoReader:
    """Builds a document's clips from the task's ``dataset.video`` (one per documents pass: the
    clips of one video share its file hash and decoded frames)."""

    config: "VideoConfig"
    store: FrameStore = field(default_factory=FrameStore)
    _infos: dict[Path, VideoInfo | VideoProblem] = field(default_factory=dict)

    def entries(self, rec: dict[str, Any], render: Any = None) -> list[tuple[str, Any]]:
        """(field label, value) of each video of the record; ``render(template, field)`` renders ``path``."""
        if self.config.path is not None:
            return [("dataset.video.path", render(self.config.path, "dataset.video.path"))]
        fields = [self.config.field] if isinstance(self.config.field, str) else self.config.field
        out: list[tuple[str, Any]] = []
        for name in fields:
            value = rec.get(name)
            if value is None or value == "":
                if isinstance(self.config.field, str):
                    out.append((name, value))
                continue
            if isinstance(value, list):
                out.extend((f"{name}[{k}]", v) for k, v in enumerate(value))
            else:
                out.append((name, value))
        return out

    def info(self, path: Path) -> VideoInfo:
        known = self._infos.get(path)
        if known is None:
            try:
                known = probe(path, self.config.frames_fps)
            except VideoProblem as exc:
                known = exc
            self._infos[path] = known
        if isinstance(known, VideoProblem):
            raise known
        return known

    def clip(self, path: Path, label: str, doc_id: str, rec: dict[str, Any] | None = None,
             subtitles: Path | None = None) -> VideoClip:
        """The clip the rule makes of the video at ``path`` (``subtitles``: its SubRip file, default
        the ``.srt`` beside it); raises :class:`VideoProblem`."""
        info = self.info(path)
        cues: tuple[Cue, ...] | None = None
        if self.config.subtitles:
            srt = subtitles or (path.with_suffix(".srt") if path.is_file() else path.with_name(path.name + ".srt"))
            try:
                cues = tuple(parse_srt(srt.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                if self.config.subtitles_required:
                    raise VideoProblem(f"subtitles file not found: {srt} (dataset.video.subtitles is true)") from None
        window = [self._seconds(rec or {}, name) for name in (self.config.start_field, self.config.end_field)]
        duration = self._seconds(rec or {}, self.config.duration_field) if self.config.sampling == "stride" else None
        indices = tuple(sample_indices(info, self.config, window[0], window[1], duration=duration))
        bound = Bound(self.config.max_side, self.config.max_pixels)
        return VideoClip(path=path, info=info, indices=indices, bound=bound, store=self.store, doc_id=doc_id, label=label,
                         rule=self.config.rule(), cues=cues, subtitle_lines=self.config.subtitle_lines)


    @staticmethod
    def _seconds(rec: dict[str, Any], name: str | None) -> float | None:
        if name is None or rec.get(name) is None:
            return None
        value = rec[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise VideoProblem(f"{name} must be a number of seconds, got {value!r}")
        return float(value)


def video_file_problem(path: Path) -> str | None:
    """What is wrong with a video file or folder of frames from its header, or None."""
    try:
        probe(path)
    except VideoProblem as exc:
        return str(exc)
    return None


def looks_like_video(path: Path) -> bool:
    """Whether a file is a video container by its first bytes (MP4/MOV ``ftyp``, WebM/MKV EBML, AVI RIFF)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return False
    return head[4:8] == b"ftyp" or head[:4] == b"\x1aE\xdf\xa3" or (head[:4] == b"RIFF" and head[8:12] == b"AVI ")


__all__ = ["Bound", "Cue", "FrameStore", "INSTALL_HINT", "VideoClip", "VideoInfo", "VideoProblem", "VideoReader",
           "decode_frames", "interior_points", "linspace_int", "looks_like_video", "parse_srt", "per_frame", "probe",
           "sample_indices", "segment_centers", "segment_middles", "stride_points", "video_file_problem", "windowed"]
