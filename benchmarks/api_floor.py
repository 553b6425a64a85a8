"""W1 at its latency floor: 500 documents x 4 PNGs, multiple choice, through the ``openai`` backend.

The work: RealBench ``ranking_easy`` (choose A-D), 500 synthetic records with 4
distinct 256x256 PNGs each (2,000 images, ``synthetic_realbench.py``), against
the loopback chat server (its own process) answering every call after 50 ms
with ``A``; ``concurrency=32``, ``--no-cache``. The floor is the server's
latency times the rounds 32 slots need: ceil(500 / 32) x 0.05 s = 0.8 s.

Measured, each ``--repeat`` times (medians reported):

- **run**: ``mmtasks.cli.main`` in this process, imports done (task loading, the
  data scan, the endpoint check, 500 requests, scoring, writing results);
  its CPU seconds (this process only: the server is another) per request;
- **command**: ``python -m mmtasks ...`` as a fresh process (interpreter start
  and imports included), wall time and peak RSS;
- the ramp: seconds from the first call's arrival until 8 / 16 / 32 calls were
  in flight, and the command's start to its first call;
- image encoding alone: CPU per image of ``ImageEncoder.data_url`` (header
  decision + base64) on the same 2,000 PNGs, and of the old Pillow decision
  (``getexif`` decodes a PNG) for comparison.

Usage (from the repository root)::

    python benchmarks/api_floor.py [--docs 500] [--images 4] [--side 256] [--latency 0.05] [--concurrency 32] [--repeat 5]
"""

from __future__ import annotations

import argparse
import io
import math
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import mmtasks.commands.run  # noqa: E402,F401  (imported before timing)
import mmtasks.models.openai_api  # noqa: E402,F401
from benchmarks.loopback import ServerProcess  # noqa: E402
from benchmarks.sim_api import register as register_sim  # noqa: E402
from benchmarks.synthetic_realbench import write_realbench  # noqa: E402
from benchmarks.timing import compile_mmtasks, median, run_process, timed_cli  # noqa: E402

WORK = REPO / "benchmarks" / "_work"
TASK = "realbench_ranking_easy"


def w1_data(docs: int, images: int, side: int) -> Path:
    return write_realbench(WORK / f"w1-{docs}x{images}-{side}", docs, images, subtasks=("ranking_easy",), png_side=side)


def w1_argv(data: Path, out: Path, base_url: str, concurrency: int) -> list[str]:
    return ["--tasks", TASK, "--model", "openai:bench", "--model-args", f"base_url={base_url},concurrency={concurrency}",
            "--data-dir", str(data), "--output-path", str(out), "--overwrite", "--no-cache", "--no-progress"]


def simulated(data: Path, latency: float, concurrency: int) -> tuple[float, float]:
    """The same run on the simulated API backend (``sim_api.py``: images encoded, JSON bodies built,
    the latency waited, no HTTP): wall seconds and CPU ms per request of the harness itself."""
    register_sim()
    out = WORK / "w1-sim"
    argv = ["--tasks", TASK, "--model", "sim:bench", "--model-args", f"latency={latency},concurrency={concurrency},reply=choice",
            "--data-dir", str(data), "--output-path", str(out), "--overwrite", "--no-cache", "--no-progress"]
    cpu0 = time.process_time()
    wall, results = timed_cli(argv, out)
    sent = sum(results["run_stats"]["sent"].values())
    return wall, (time.process_time() - cpu0) / sent * 1000


def encoding_cost(data: Path) -> tuple[float, float, int]:
    """CPU ms per image: the encoder (header decision + base64), the old Pillow decision alone."""
    from PIL import Image as PILImage

    from mmtasks.core.conversation import Image
    from mmtasks.models.image_encoding import ImageEncoder

    paths = sorted((data / "realbench" / "images").rglob("*.png"))
    blobs = [p.read_bytes() for p in paths]
    encoder = ImageEncoder()
    start = time.process_time()
    for blob in blobs:
        encoder.data_url(Image(data=blob))
    per_image = (time.process_time() - start) / len(blobs) * 1000
    sample = blobs[:200]
    start = time.process_time()
    for blob in sample:
        with PILImage.open(io.BytesIO(blob)) as img:
            encoder._pillow_can_send_as_is(img, len(blob))
    old = (time.process_time() - start) / len(sample) * 1000
    return per_image, old, len(blobs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=500)
    ap.add_argument("--images", type=int, default=4)
    ap.add_argument("--side", type=int, default=256)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    compile_mmtasks()  # start from bytecode, as an installed mmtasks does

    data = w1_data(args.docs, args.images, args.side)
    floor = math.ceil(args.docs / args.concurrency) * args.latency
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print("command: python benchmarks/api_floor.py " + " ".join(sys.argv[1:]))
    print(f"W1: {args.docs} docs x {args.images} PNGs ({args.side}px), latency {args.latency:g} s, concurrency {args.concurrency}; "
          f"floor {floor:.2f} s")
    runs, cpus, cmds, rss, first_call, ramps = [], [], [], [], [], []
    with ServerProcess(latency=args.latency, reply="choice") as server:
        for k in range(args.repeat):
            server.reset()
            out = WORK / "w1-run"
            cpu0 = time.process_time()
            wall, results = timed_cli(w1_argv(data, out, server.base_url, args.concurrency), out)
            cpu = time.process_time() - cpu0
            stats = server.stats()
            sent = sum(results["run_stats"]["sent"].values())
            assert sent == args.docs and not results["run_stats"]["failed"], results["run_stats"]
            runs.append(wall)
            cpus.append(cpu / sent * 1000)
            ramps.append(stats.ramp or {})
            server.reset()
            argv = [sys.executable, "-m", "mmtasks", *w1_argv(data, WORK / "w1-cmd", server.base_url, args.concurrency)]
            env = dict(os.environ, PYTHONPATH=str(REPO))
            cwall, peak, _, started = run_process(argv, env)
            cstats = server.stats()
            cmds.append(cwall)
            rss.append(peak)
            first_call.append(cstats.first_started - started)
            print(f"  rep {k + 1}: run {wall:.2f} s ({cpu / sent * 1000:.2f} ms CPU/request, at most {stats.max_in_flight} in flight, "
                  f"32 in flight {stats.ramp.get(32, float('nan')):.3f} s after the first call); command {cwall:.2f} s, "
                  f"peak RSS {peak:.0f} MB, first call {first_call[-1]:.2f} s after start", flush=True)
    sims = [simulated(data, args.latency, args.concurrency) for _ in range(args.repeat)]
    sim_wall, sim_cpu = median([w for w, _ in sims]), median([c for _, c in sims])
    enc, old, n_images = encoding_cost(data)
    run_med = median(runs)
    print(f"run (imports done): median {run_med:.2f} s = {run_med / floor:.2f}x the floor; CPU {median(cpus):.2f} ms per request "
          f"(of which image encoding {enc * args.images:.2f} ms: {args.images} x {enc:.3f} ms)")
    print(f"command (fresh process): median {median(cmds):.2f} s = {median(cmds) / floor:.2f}x the floor; "
          f"peak RSS {median(rss):.0f} MB; first call {median(first_call):.2f} s after start")
    r32 = [r.get(32) for r in ramps if r.get(32) is not None]
    print(f"ramp: 32 in flight {median(r32) if r32 else float('nan'):.3f} s after the first call (median)")
    print(f"simulated API backend (no HTTP client; images encoded and JSON bodies built): median {sim_wall:.2f} s = "
          f"{sim_wall / floor:.2f}x the floor; harness CPU {sim_cpu:.2f} ms per request (image encoding included)")
    print(f"image encoding alone ({n_images} PNGs): {enc:.3f} ms CPU per image (header decision + base64); "
          f"the old Pillow decision alone: {old:.3f} ms per image")
    return 0


if __name__ == "__main__":
    sys.exit(main())
