"""MVBench's frames are the ones its authors' code opens, and ``num_frames`` is numpy's linspace.

The authors' ``get_index``, ``read_video`` and ``read_frame`` (Ask-Anything's mvbench.ipynb,
bundled verbatim in reference/ beside this file) run on the same files as mmtasks' frame rule: a
folder of frames (Episodic Reasoning's TVQA layout: ``00001.jpg`` ..., 3 fps) with a window, a
0.4 s window of a folder, and a 0.4 s window of a 30 fps video. Every frame encodes its own number
as a grey level, so the frames compared are the pixels each side opened.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

av = pytest.importorskip("av")

from PIL import Image as PILImage  # noqa: E402

from mmtasks.config.task_config import VideoConfig  # noqa: E402
from mmtasks.documents.video import VideoInfo, VideoReader, sample_indices  # noqa: E402

REFERENCE = Path(__file__).parent / "reference" / "ask_anything_mvbench.py"
#: MVBench's rule as tasks/mvbench/mvbench.yaml writes it
RULE = VideoConfig(num_frames=16, sampling="centers", start_field="start", end_field="end", frames_fps=3)


class _DecordStandIn:
    """decord.VideoReader as read_video uses it (len, get_avg_fps, [i].numpy()), over PyAV."""

    def __init__(self, path: str, ctx: object = None, num_threads: int = 1) -> None:
        with av.open(path) as container:
            stream = container.streams.video[0]
            self.fps = float(stream.average_rate)
            self.frames = [f.to_ndarray(format="rgb24") for f in container.decode(stream)]

    def __len__(self) -> int:
        return len(self.frames)

    def get_avg_fps(self) -> float:
        return self.fps

    def __getitem__(self, i: int) -> "_DecordStandIn._Frame":
        return self._Frame(self.frames[i])

    class _Frame:
        def __init__(self, array: np.ndarray) -> None:
            self.array = array

        def numpy(self) -> np.ndarray:
            return self.array


def authors() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ask_anything_mvbench", REFERENCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.VideoReader, module.cpu = _DecordStandIn, (lambda n: None)
    return module


def level(img: PILImage.Image, step: int) -> int:
    return round(img.convert("L").getpixel((8, 8)) / step)


def frame_folder(folder: Path, n: int) -> Path:
    """n frames 00001.jpg .. at 3 fps, frame j a grey of level 3j."""
    folder.mkdir(parents=True)
    for j in range(1, n + 1):
        PILImage.new("RGB", (16, 16), (3 * j,) * 3).save(folder / f"{j:05d}.jpg", quality=100)
    return folder


def video(path: Path, n: int = 60, fps: int = 30) -> Path:
    """n frames at ``fps``, frame k a grey of level 4k."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width = stream.height = 32
        stream.pix_fmt = "yuv420p"
        stream.options = {"g": "10", "crf": "0"}
        for k in range(n):
            frame = av.VideoFrame.from_ndarray(np.full((32, 32, 3), 4 * k, np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def ours(path: Path, start: float, end: float) -> list[PILImage.Image]:
    clip = VideoReader(RULE).clip(path, path.name, "d", {"start": start, "end": end})
    return clip.frames()


@pytest.mark.parametrize("start, end", [(5.8, 21.9), (10.0, 10.4)])
def test_a_folder_of_frames_is_read_as_read_frame_reads_it(tmp_path: Path, start: float, end: float) -> None:
    folder = frame_folder(tmp_path / "tvqa" / "clip", 70)
    theirs = authors().MVBench_dataset(num_segments=16).read_frame(str(folder), bound=(start, end), fps=3)
    expected = [level(img, 3) for img in theirs]
    assert len(expected) == 16
    assert [level(img, 3) for img in ours(folder, start, end)] == expected
    if end - start < 1:  # 0.4 s: files 30 and 31 only, each sent as often as the authors send it
        assert expected == [30] * 9 + [31] * 7
    else:  # files 17..66 (round(5.8 * 3), round(21.9 * 3)), s = 49 / 16: the authors open 18, 21, ... 64
        assert expected == [int(17 + 3.0625 / 2 + round(3.0625 * i)) for i in range(16)]


def test_a_short_clip_keeps_its_repeated_frames(tmp_path: Path) -> None:
    path = video(tmp_path / "clip.mp4")
    theirs = authors().MVBench_dataset(num_segments=16).read_video(str(path), bound=(1.0, 1.4))
    expected = [level(img, 4) for img in theirs]
    # 0.4 s at 30 fps: frames 30..42, s = 0.75: 16 frames, repeats kept
    assert expected == [int(30 + 0.375 + round(0.75 * i)) for i in range(16)]
    assert len(set(expected)) < 16
    assert [level(img, 4) for img in ours(path, 1.0, 1.4)] == expected


def test_the_whole_video_without_a_window(tmp_path: Path) -> None:
    path = video(tmp_path / "whole.mp4")
    theirs = authors().MVBench_dataset(num_segments=16).read_video(str(path), bound=None)
    clip = VideoReader(RULE).clip(path, path.name, "d", {})
    assert [level(img, 4) for img in clip.frames()] == [level(img, 4) for img in theirs]


def test_num_frames_64_is_numpys_linspace() -> None:
    # 15 * (1029 / 63) is 244.99999999999997 in floating point: numpy gives 244, not 245
    info = VideoInfo(duration=1030 / 30, frames=1030, fps=30.0, width=32, height=32)
    got = sample_indices(info, VideoConfig(num_frames=64))
    assert got == np.linspace(0, 1029, 64, dtype=int).tolist()
    assert got[15] == 244
    for n in (7, 100, 901, 1030, 5399, 10_007):
        for k in (1, 2, 8, 16, 32, 64, 100):
            rule = VideoConfig(num_frames=k)
            info = VideoInfo(duration=n / 30, frames=n, fps=30.0, width=32, height=32)
            expected = np.linspace(0, n - 1, k, dtype=int).tolist() if k < n else list(range(n))
            assert sample_indices(info, rule) == expected, (n, k)
