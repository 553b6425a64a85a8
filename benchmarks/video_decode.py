"""Video decoding: frames decoded per second by mmtasks against lmms-eval 0.7's decode path, same files, one run.

Writes (once) ``--videos`` synthetic H.264 MP4s under ``benchmarks/_work/videos/`` (``--seconds``
long, 30 fps, 640x360, a key frame every 2 s as streaming sites encode; moving gradients and noise,
so the encoder cannot skip work), then decodes the frames each side's rule picks from every file,
round after round, alternating the sides:

- ``mmtasks``: :func:`mmtasks.documents.video.decode_frames` (PyAV; seeks to the key frame before
  a frame 2 s or more ahead), the indices of ``dataset.video: {num_frames: K}`` (linspace);
- ``lmms-eval pyav``: lmms-eval 0.7's ``read_video`` with its default backend (PyAV, decoding in
  order from the start up to the last index), the same K;
- ``lmms-eval torchcodec``: the same ``read_video`` with ``backend="torchcodec"`` (TorchCodec's
  ``VideoDecoder.get_frames_at``), lmms-eval 0.7's faster path, when ``torchcodec`` imports
  (it needs FFmpeg's shared libraries: Debian's ``ffmpeg`` package).

lmms-eval's function is imported from its own file in an lmms-eval checkout (``--lmms-eval``:
``lmms_eval/models/model_utils/load_video.py``, which imports only ``av`` and ``numpy``), not
copied. Both sides return the same frames (checked: the same indices, pixels within 2 levels on
average). Figures: frames per second (frames returned / wall time), median over the rounds.

Usage (from the repository root)::

    git clone --depth 1 -b v0.7 https://github.com/EvolvingLMMs-Lab/lmms-eval benchmarks/_work/lmms-eval
    python benchmarks/video_decode.py --lmms-eval benchmarks/_work/lmms-eval [--videos 3] [--seconds 60] [--frames 8,32] [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import av  # noqa: E402

from mmtasks.config.task_config import VideoConfig  # noqa: E402
from mmtasks.documents.video import decode_frames, probe, sample_indices  # noqa: E402

WORK = ROOT / "benchmarks" / "_work" / "videos"


def write_video(path: Path, seconds: int, fps: int = 30, size: tuple[int, int] = (640, 360)) -> None:
    rng = np.random.default_rng(len(path.name))
    w, h = size
    xs = np.linspace(0, 255, w, dtype=np.float32)[None, :, None]
    ys = np.linspace(0, 255, h, dtype=np.float32)[:, None, None]
    tmp = path.with_suffix(".part.mp4")
    with av.open(str(tmp), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.options = {"g": str(2 * fps), "preset": "veryfast", "crf": "28"}
        for k in range(seconds * fps):
            base = (xs + ys + 4 * k) % 256 * np.array([1.0, 0.6, 0.3], dtype=np.float32)
            noise = rng.integers(0, 24, (h, w, 1), dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray((base.astype(np.uint8) + noise), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    tmp.rename(path)


def load_lmms(checkout: Path):  # type: ignore[no-untyped-def]
    file = checkout / "lmms_eval" / "models" / "model_utils" / "load_video.py"
    spec = importlib.util.spec_from_file_location("lmms_eval_load_video", file)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lmms-eval", type=Path, required=True, help="an lmms-eval 0.7 checkout")
    parser.add_argument("--videos", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--frames", default="8,32", help="frame counts to sample, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    lmms = load_lmms(args.lmms_eval)
    try:
        import torchcodec  # noqa: F401

        lmms_backends = ["pyav", "torchcodec"]
    except (ImportError, RuntimeError, OSError):
        lmms_backends = ["pyav"]
    WORK.mkdir(parents=True, exist_ok=True)
    files = []
    for k in range(args.videos):
        path = WORK / f"synthetic_{args.seconds}s_{k}.mp4"
        if not path.exists():
            write_video(path, args.seconds)
        files.append(path)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; Python "
          f"{platform.python_version()}, PyAV {av.__version__}" + (f", torchcodec {torchcodec.__version__}" if "torchcodec" in lmms_backends else ""))
    print(f"{len(files)} videos: {args.seconds} s, 30 fps, 640x360 H.264, key frame every 2 s, {sum(f.stat().st_size for f in files) // 1024} KiB")
    for k in (int(x) for x in args.frames.split(",")):
        rule = VideoConfig(num_frames=k)
        times: dict[str, list[float]] = {"mmtasks": [], **{f"lmms-eval {b}": [] for b in lmms_backends}}
        for _ in range(args.rounds):
            for side in list(times):
                start = time.perf_counter()
                for path in files:
                    if side == "mmtasks":
                        info = probe(path)
                        ours = decode_frames(path, sample_indices(info, rule), info)
                        assert len(ours) == k
                    else:
                        theirs = lmms.read_video(str(path), num_frm=k, backend=side.split()[1])
                        assert len(theirs) == k
                times[side].append(time.perf_counter() - start)
        # the same frames on both sides
        info = probe(files[0])
        ours = np.stack([np.asarray(f) for f in decode_frames(files[0], sample_indices(info, rule), info)]).astype(np.int16)
        theirs = lmms.read_video(str(files[0]), num_frm=k).astype(np.int16)
        diff = float(np.abs(ours - theirs).mean())
        base = statistics.median(times["mmtasks"])
        print(f"\n{k} frames per video ({len(files) * k} frames a round, {args.rounds} rounds; mean pixel difference to lmms-eval pyav {diff:.2f}):")
        for side, values in times.items():
            median = statistics.median(values)
            print(f"  {side:22s} {len(files) * k / median:8.1f} frames/s  (median {median:.3f} s a round; x{median / base:.2f} mmtasks' time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
