#!/usr/bin/env python
"""Write the pages and lists generated from the benchmark folders (tasks/<name>/README.md's cards).

    python scripts/make_benchmark_pages.py             # write them
    python scripts/make_benchmark_pages.py --check     # exit 1 naming each stale file
    python scripts/make_benchmark_pages.py --demo-tasks  # the tasks `make demo` runs, comma-separated

The pages: docs/benchmarks/ (an index and a page per benchmark), docs/coverage.md,
data/sample/README.md and the README's benchmark table (see mmtasks.config.benchmark_pages).
tests/test_benchmark_pages.py fails when a committed one differs from what this writes now.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mmtasks.config.benchmark_folders import demo_tasks, folders_under  # noqa: E402
from mmtasks.config.benchmark_pages import generated_files  # noqa: E402
from mmtasks.config.task_registry import TaskRegistry  # noqa: E402
from mmtasks.errors import ConfigError  # noqa: E402
from mmtasks.leaderboard.sections import discover_sections  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is stale")
    parser.add_argument("--demo-tasks", action="store_true", help="print the demo's tasks and exit")
    args = parser.parse_args(argv)
    registry = TaskRegistry.discover()
    folders = folders_under(registry.dirs)
    if args.demo_tasks:
        print(",".join(demo_tasks(folders)))
        return 0
    try:  # each folder's leaderboard tab reads too (its required `category:` ...): one line naming the file
        discover_sections()
    except ConfigError as exc:
        print(exc.render(), file=sys.stderr)
        return 2
    files = generated_files(ROOT, folders, registry)
    stale = [rel for rel, text in files.items()
             if not (ROOT / rel).is_file() or (ROOT / rel).read_text(encoding="utf-8") != text]
    if args.check:
        for rel in stale:
            print(f"stale: {rel} (run `python scripts/make_benchmark_pages.py`)")
        return 1 if stale else 0
    for rel in stale:
        (ROOT / rel).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / rel).write_text(files[rel], encoding="utf-8")
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
