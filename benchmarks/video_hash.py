"""A video's content hash (its frames' response-cache key) on a large file: read whole on every run
before, once per machine now (kept in the response cache's memos by path and stat).

Writes (once) ``--gib`` GiB of random bytes as ``benchmarks/_work/video-hash/big.mp4`` (the hash
reads bytes; it never decodes), with an mtime in the past, then times
:meth:`mmtasks.documents.video.FrameStore.file_hash` three ways, ``--rounds`` times each (median):

- ``no memo``: a fresh store without memos (every run before this change);
- ``first run``: a fresh store with an empty memo table (reads the file, keeps its hash);
- ``rerun``: a fresh store with that memo table (a stat and one SQLite read; the file is not read).

The first read of a round may come from the disk; later ones from the page cache, so ``no memo``
is a lower bound of what a run paid (``--drop`` asks the kernel to drop its caches before each
round: root only). Usage (from the repository root)::

    python benchmarks/video_hash.py [--gib 1] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mmtasks.cache.response_cache import ResponseCache  # noqa: E402
from mmtasks.documents.video import FrameStore  # noqa: E402

OLD = 1_600_000_000 * 10**9


def big_file(gib: float) -> Path:
    path = ROOT / "benchmarks" / "_work" / "video-hash" / "big.mp4"
    size = int(gib * (1 << 30))
    if not path.is_file() or path.stat().st_size != size:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            left = size
            while left:
                block = os.urandom(min(left, 1 << 24))
                fh.write(block)
                left -= len(block)
    os.utime(path, ns=(OLD, OLD))
    return path


def drop_caches() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as fh:
        fh.write("3\n")


def timed(store: FrameStore, path: Path) -> float:
    started = time.perf_counter()
    store.file_hash(path)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--drop", action="store_true", help="drop the page cache before each round (root)")
    args = parser.parse_args()
    path = big_file(args.gib)
    rows: dict[str, list[float]] = {"no memo": [], "first run": [], "rerun": []}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            cache = ResponseCache(Path(tmp))
            try:
                if args.drop:
                    drop_caches()
                rows["no memo"].append(timed(FrameStore(), path))
                if args.drop:
                    drop_caches()
                first = FrameStore(hashes=cache.memo("video-sha256"))
                rows["first run"].append(timed(first, path))
                rerun = FrameStore(hashes=cache.memo("video-sha256"))
                rows["rerun"].append(timed(rerun, path))
                assert first.files_hashed == 1 and rerun.files_hashed == 0
            finally:
                cache.close()
    print(f"file_hash of one {args.gib:g} GiB file, median of {args.rounds} rounds ({os.cpu_count()} cores)")
    print("| store | ms |")
    print("|---|---|")
    for name, values in rows.items():
        print(f"| {name} | {1000 * statistics.median(values):,.2f} |")


if __name__ == "__main__":
    main()
