"""Issue 41, finding 6: video headers that exhausted memory.

- A 1 KB video whose header says 4.7e-10 fps, in a task with the fps rule: ``check`` ended in a
  MemoryError under a 4 GB limit, because ``sample_indices`` listed 6.4 billion candidate times.
  Past :data:`MAX_LISTED_TIMES` times the candidate frames are computed without listing them (the
  same frames); the bound is shown by counted steps, never by a clock.
- A video of 12,000 x 12,000 frames passed ``check`` ("no problems") though the same size as a PNG
  is refused, and the run peaked at 3,136 MB: the images' pixel budget now applies to video
  frames (the header's size, refused in ``check``; and each file of a folder of frames)."""

from __future__ import annotations

import io
import random
import struct
import zlib
from pathlib import Path

import pytest

av = pytest.importorskip("av")
import numpy as np  # noqa: E402

from mmtasks.config.task_config import VideoConfig  # noqa: E402
from mmtasks.core.pixels import MAX_IMAGE_PIXELS  # noqa: E402
from mmtasks.documents import video  # noqa: E402
from mmtasks.documents.video import VideoInfo, VideoProblem, decode_frames, probe, sample_indices  # noqa: E402
from mmtasks.errors import DataError  # noqa: E402
from tests.step_count import count_steps  # noqa: E402


def test_a_header_of_a_billionth_of_a_frame_per_second_is_sampled_in_bounded_steps() -> None:
    """3 frames at 4.7e-10 fps: 6.4 billion seconds, one candidate time per second at 1 fps."""
    info = VideoInfo(duration=3 / 4.7e-10, frames=3, fps=4.7e-10, width=16, height=16)
    out: list[list[int]] = []
    steps = count_steps(lambda: out.append(sample_indices(info, VideoConfig(fps=1, max_frames=8))), 10_000)
    assert out == [[0, 1, 2]]  # every frame shows at some time; before: MemoryError
    assert steps < 10_000  # counted, not timed (listing the times took billions)
    # a header of a billion frames at 30 fps: sampled at 1000 fps (33 billion times, denser than
    # the frames: every frame is a candidate), and at 1 fps (33,333,334 times, 30 frames apart)
    long = VideoInfo(duration=1e9 / 30, frames=1_000_000_000, fps=30.0, width=16, height=16)
    out.clear()
    count_steps(lambda: out.append(sample_indices(long, VideoConfig(fps=1000, max_frames=4))), 10_000)
    assert out == [[0, 333_333_333, 666_666_666, 999_999_999]]  # linspace(0, 999999999, 4)
    out.clear()
    count_steps(lambda: out.append(sample_indices(long, VideoConfig(fps=1, max_frames=4))), 10_000)
    assert out == [[0, 333_333_330, 666_666_660, 999_999_990]]  # times 0, 11111111, 22222222, 33333333 s


def test_the_computed_candidates_are_the_listed_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seeded differential check: with nothing listed (MAX_LISTED_TIMES = 0) the frames chosen are
    those the listing chooses, for headers of constant and unequal frame times, windows and caps."""
    rng = random.Random(41)
    cases = []
    for _ in range(400):
        frames = rng.randint(1, 300)
        fps = rng.choice([0.5, 1.0, 2.0, 7.5, 24.0, 29.97, 30.0, 60.0])
        times = None
        if rng.random() < 0.3:
            delays = [rng.choice([0.02, 0.1, 0.5, 1.3]) for _ in range(frames)]
            times = tuple(round(sum(delays[:k]), 6) for k in range(frames))
            duration = round(sum(delays), 6)
        else:
            duration = frames / fps
        info = VideoInfo(duration=duration, frames=frames, fps=fps, width=8, height=8, times=times)
        rule = VideoConfig(fps=rng.choice([0.25, 0.5, 1.0, 2.0, 3.0, 10.0, 30.0, 100.0]), max_frames=rng.randint(1, 64))
        window = (rng.uniform(0, duration / 2), rng.uniform(duration / 2, duration)) if rng.random() < 0.3 else (None, None)
        cases.append((info, rule, window))
    listed = [sample_indices(info, rule, *window) for info, rule, window in cases]
    monkeypatch.setattr(video, "MAX_LISTED_TIMES", 0)
    assert [sample_indices(info, rule, *window) for info, rule, window in cases] == listed


def huge_header_video(path: Path) -> Path:
    """A 1.6 KB Matroska video of 3 black FFV1 frames of 256 x 256, its header rewritten to say
    12,000 x 12,000 (the PixelWidth and PixelHeight elements; FFV1 holds no size of its own)."""
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="matroska") as container:
        stream = container.add_stream("ffv1", rate=10)
        stream.width, stream.height, stream.pix_fmt = 256, 256, "yuv420p"
        for _ in range(3):
            frame = av.VideoFrame.from_ndarray(np.zeros((256, 256, 3), dtype=np.uint8), format="rgb24").reformat(format="yuv420p")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    data = buffer.getvalue()
    assert data.count(b"\xb0\x82\x01\x00") == 1 and data.count(b"\xba\x82\x01\x00") == 1
    path.write_bytes(data.replace(b"\xb0\x82\x01\x00", b"\xb0\x82\x2e\xe0").replace(b"\xba\x82\x01\x00", b"\xba\x82\x2e\xe0"))
    return path


def test_a_video_of_frames_over_the_pixel_budget_is_refused_from_its_header(tmp_path: Path) -> None:
    path = huge_header_video(tmp_path / "huge.mkv")
    assert path.stat().st_size < 4096 and 12_000 * 12_000 > MAX_IMAGE_PIXELS
    with pytest.raises(VideoProblem) as caught:  # before: accepted, "no problems"
        probe(path)
    assert "12000x12000 pixels, more than the limit of 100000000" in str(caught.value)


def png_header(width: int, height: int) -> bytes:
    """A PNG that says ``width`` x ``height`` (one empty IDAT: it never decodes)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def test_a_frame_over_the_pixel_budget_in_a_folder_is_its_documents_data_error(tmp_path: Path) -> None:
    """The header check reads a folder's first frame; a later one over the budget is refused when
    the folder is decoded, before its pixels are, naming the frame."""
    from PIL import Image as PILImage

    folder = tmp_path / "clip"
    folder.mkdir()
    for k in (1, 2):
        PILImage.new("RGB", (16, 16)).save(folder / f"{k:03d}.png")
    (folder / "003.png").write_bytes(png_header(12_000, 12_000))
    info = probe(folder)
    with pytest.raises(DataError) as caught:
        decode_frames(folder, [0, 1, 2], info, doc_id="v1")
    assert "003.png" in str(caught.value) and "12000x12000 pixels" in str(caught.value) and "document 'v1'" in str(caught.value)
