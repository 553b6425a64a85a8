"""Image pipeline: large images (1080x3500) hashed, decoded, resized and encoded once per run, off the main thread.

Writes (once) ``--images`` distinct 1080x3500 JPEG screenshots (gradients,
noise, boxes and text; about 800 KB each) under ``benchmarks/_work/``, then
builds MMDU-like traffic: ``--dialogues`` dialogues of ``--turns`` turns over
their own images, turn t carrying the first t images of its dialogue (the
history), so every image is referenced by several requests. The waves go
through the real ``openai`` backend to the loopback chat server (latency 0,
its own process) twice:

- ``as-is``: the default settings, JPEG sources within the caps are sent as
  they are (read + base64);
- ``resize``: ``max_image_side=1024``, every image decoded, resized (Lanczos)
  and re-encoded as JPEG.

Figures: images per second (distinct images / wall time of the waves), how
many encodings were done (must equal the number of distinct images), and the
CPU time of the main thread during the waves (the work happens in the
backend's thread pool; the main thread only waits). Also the content hashes
(the cache key's image part, SHA-256 of the file): images per second on the
main thread.

Then the same waves through the ``hf`` backend (the tiny LLaVA of
``tests/tiny_models.py``, batch 16): how many decodes its ``ImageLoader`` did
(worker threads, each distinct image once) and how long the main thread
waited for pixels, against decoding every image reference on the main thread
(what the backend did before).

Usage (from the repository root)::

    python benchmarks/image_pipeline.py [--images 32] [--dialogues 8] [--turns 4]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.loopback import ServerProcess  # noqa: E402
from mmtasks.core.conversation import Image, Message, Text  # noqa: E402
from mmtasks.models.base import ModelContext, load_model, parse_model_spec  # noqa: E402
from mmtasks.models.openai_api import OpenAIModel  # noqa: E402
from mmtasks.core.request import GenerationConfig, Request  # noqa: E402

WORK = REPO / "benchmarks" / "_work"
SIZE = (1080, 3500)


def screenshot(k: int, path: Path) -> None:
    """A deterministic screenshot-like picture: smooth background, noise, boxes and text."""
    import numpy as np
    from PIL import Image as PILImage
    from PIL import ImageDraw

    w, h = SIZE
    rng = np.random.default_rng(k)
    y = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
    x = np.linspace(0, 1, w, dtype=np.float32)[None, :, None]
    base = np.concatenate([y * 200 + x * 30 + k, x * 180 + 20 * np.sin(y * 40 + k), (1 - y) * 150 + x * 50], axis=2)
    base = base + rng.normal(0, 6, size=(h, w, 3)).astype(np.float32)
    img = PILImage.fromarray(np.clip(base, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(img)
    for i in range(120):
        x0, y0 = int(rng.integers(0, w - 200)), int(rng.integers(0, h - 60))
        draw.rectangle([x0, y0, x0 + int(rng.integers(40, 400)), y0 + int(rng.integers(10, 60))],
                       fill=tuple(int(v) for v in rng.integers(0, 255, 3)))
        draw.text((x0 + 5, y0 + 5), f"line {i} of note {k}: price {int(rng.integers(10, 999))}", fill=(0, 0, 0))
    img.save(path, format="JPEG", quality=90)


def write_images(n: int) -> list[Path]:
    folder = WORK / f"large-images-{SIZE[0]}x{SIZE[1]}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(n):
        path = folder / f"{k:03d}.jpg"
        if not path.is_file():
            screenshot(k, path)
        paths.append(path)
    return paths


def waves(paths: list[Path], dialogues: int, turns: int) -> list[list[Request]]:
    """Turn t of every dialogue as one wave; a dialogue's images are fresh ``Image`` objects per run."""
    per = len(paths) // dialogues
    images = [[Image(path=p, doc_id=f"d{d}") for p in paths[d * per : (d + 1) * per]] for d in range(dialogues)]
    out = []
    for t in range(1, turns + 1):
        wave = []
        for d in range(dialogues):
            shown = images[d][: max(1, round(per * t / turns))]
            msg = Message("user", (Text(f"dialogue {d} turn {t}: describe the screenshots"), *shown))
            wave.append(Request(messages=(msg,), generation=GenerationConfig(max_new_tokens=16), task="bench", doc_id=f"d{d}", position=t))
        out.append(wave)
    return out


def run(model: OpenAIModel, plan: list[list[Request]]) -> tuple[float, float, int]:
    """Send every wave; return wall seconds, main-thread CPU seconds and image references."""
    refs = sum(len(r.images) for wave in plan for r in wave)
    start, cpu = time.perf_counter(), time.thread_time()
    for wave in plan:
        replies = model.generate_all(wave)
        bad = [r.error for r in replies if not r.ok]
        if bad:
            raise SystemExit(f"request failed: {bad[0]}")
    return time.perf_counter() - start, time.thread_time() - cpu, refs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=32, help="distinct 1080x3500 images")
    ap.add_argument("--dialogues", type=int, default=8)
    ap.add_argument("--turns", type=int, default=4)
    args = ap.parse_args()
    paths = write_images(args.images)
    mb = sum(p.stat().st_size for p in paths) / 1e6
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f}")
    print("command: python benchmarks/image_pipeline.py " + " ".join(sys.argv[1:]))
    print(f"{len(paths)} distinct {SIZE[0]}x{SIZE[1]} JPEGs ({mb / len(paths):.2f} MB each); "
          f"{args.dialogues} dialogues x {args.turns} turns, turn t carries the dialogue's first images so far")

    imgs = [Image(path=p) for p in paths]
    start = time.perf_counter()
    for img in imgs:
        img.content_hash  # noqa: B018  (the cache key's image part)
    wall = time.perf_counter() - start
    print(f"content hash (SHA-256 of the file, main thread): {len(imgs) / wall:7.1f} images/s")

    from concurrent.futures import ThreadPoolExecutor

    from mmtasks.models.image_encoding import ImageEncoder, ImageEncoding

    workers = min(16, os.cpu_count() or 1)  # the openai backend's image pool
    rates = []
    for side in (None, 1024):
        encoder = ImageEncoder(ImageEncoding(max_side=side))
        fresh = [Image(path=p) for p in paths]
        start = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(encoder.data_url, fresh))
        rates.append(len(fresh) / (time.perf_counter() - start))
    print(f"encoder alone ({workers} worker threads, no HTTP): as-is {rates[0]:.1f} images/s, "
          f"decode+resize to 1024+JPEG {rates[1]:.1f} images/s")

    print(f"{'openai':>8} {'requests':>9} {'image refs':>11} {'encoded':>8} {'wall s':>7} {'images/s':>9} {'main-thread CPU s':>18}")
    with ServerProcess(latency=0.0, models=("bench",)) as server:
        for mode, extra in (("as-is", {}), ("resize", {"max_image_side": 1024})):
            spec = parse_model_spec("openai:bench", {"base_url": server.base_url, "concurrency": 16, **extra})
            model = load_model(spec, ModelContext())
            assert isinstance(model, OpenAIModel)
            try:
                model.check_ready()
                plan = waves(paths, args.dialogues, args.turns)
                wall, main_cpu, refs = run(model, plan)
            finally:
                model.close()
            n_req = sum(len(w) for w in plan)
            print(f"{mode:>8} {n_req:>9} {refs:>11} {model.encoder.encoded:>8} {wall:>7.2f} {model.encoder.encoded / wall:>9.1f} {main_cpu:>18.3f}", flush=True)

    # hf: pixels for a local model, decoded by the backend's ImageLoader
    import torch

    from mmtasks.documents import image_loader
    from mmtasks.models.hf import HFModel
    from tests.tiny_models import build_tiny_llava

    torch.set_num_threads(1)
    tiny = WORK / "tiny-llava"
    if not (tiny / "config.json").is_file():
        build_tiny_llava(tiny)
    waited = [0.0]
    original_load = image_loader.ImageLoader.load

    def timed_load(self, image):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return original_load(self, image)
        finally:
            waited[0] += time.perf_counter() - start

    image_loader.ImageLoader.load = timed_load  # type: ignore[method-assign]
    model = load_model(parse_model_spec(f"hf:{tiny}", {"batch_size": 16}), ModelContext())
    assert isinstance(model, HFModel)
    try:
        plan = waves(paths, args.dialogues, args.turns)
        start = time.perf_counter()
        for wave in plan:
            model.generate_all(wave)
        wall = time.perf_counter() - start
    finally:
        model.close()
        image_loader.ImageLoader.load = original_load  # type: ignore[method-assign]
    refs = sum(len(r.images) for wave in plan for r in wave)
    hf_line = (f"hf (tiny LLaVA, batch 16): {sum(len(w) for w in plan)} requests, {refs} image refs, {model.images.decoded} decoded "
               f"(in worker threads); waves took {wall:.2f} s, of which the main thread waited {waited[0]:.2f} s for pixels")
    plan = waves(paths, args.dialogues, args.turns)
    start = time.perf_counter()
    for wave in plan:
        for request in wave:
            for image in request.images:
                image.load()
    wall = time.perf_counter() - start
    print("images/s = distinct images encoded / wall time of all waves (requests to a loopback server, latency 0, 16 concurrent)")
    print(hf_line)
    print(f"before (hf decoded every image reference on the main thread): {refs} decodes, {wall:.2f} s of main thread "
          f"({refs / wall:.1f} images/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
