"""Timing an in-process ``mmtasks`` CLI run (imports already done, stdout silenced)."""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path
from typing import Any

from mmtasks.cli import main as mmtasks_main


def timed_cli(argv: list[str], out: Path) -> tuple[float, dict[str, Any]]:
    """Wall seconds of ``mmtasks ARGV`` and the results.json it wrote to ``out``."""
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = mmtasks_main(argv)
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"mmtasks exited with {code}")
    return elapsed, json.loads((out / "results.json").read_text(encoding="utf-8"))
