#!/usr/bin/env python
"""Generate the synthetic sample data of mmtasks: each benchmark folder's tasks/<name>/make_sample.py.

    python scripts/make_sample_data.py [OUT_DIR]            # default: data/sample
    python scripts/make_sample_data.py OUT_DIR --only NAME  # one benchmark folder

Each generator (``generate(dest: Path) -> None``) writes OUT_DIR/<name>/ in its benchmark's local
format and, where the benchmark is read from the Hugging Face Hub, a Hub-style copy (parquet, Hub
JSON, zip archives; writing parquet needs the `datasets` package). Everything is drawn with Pillow
from fixed seeds: rerunning it writes byte-identical files (with the same Pillow build). Existing
files in those folders are replaced; nothing else is touched. The generators share the drawing,
Hub-layout and video helpers of scripts/sample_data/.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parent
ROOT = SCRIPTS.parent
GENERATOR = "make_sample.py"


def load_generator(folder: Path) -> ModuleType:
    """The module ``folder/make_sample.py`` (loaded by path, with scripts/ importable for ``sample_data.*``)."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(f"mmtasks_sample_{folder.name}", folder / GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def generators(tasks_dir: Path = ROOT / "tasks") -> dict[str, Callable[[Path], None]]:
    """name -> ``generate`` of every benchmark folder under ``tasks_dir`` that has a generator."""
    return {folder.name: load_generator(folder).generate
            for folder in sorted(p for p in tasks_dir.iterdir() if (p / GENERATOR).is_file())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", default="data/sample", type=Path,
                        help="output folder (default: data/sample)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="only this benchmark folder")
    args = parser.parse_args(argv)
    found = generators()
    unknown = [name for name in args.only if name not in found]
    if unknown:
        parser.error(f"no tasks/<name>/{GENERATOR} for: {', '.join(unknown)}")
    for name, generate in found.items():
        if args.only and name not in args.only:
            continue
        target = args.out_dir / name
        if target.exists():
            shutil.rmtree(target)  # stale images of removed records must not linger
        generate(target)
        files = [p for p in target.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        print(f"{target}: {len(files)} files, {size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
