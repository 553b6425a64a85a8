#!/usr/bin/env python
"""Which modules of mmtasks/ the fast tier (`make test-fast`: the tests not marked `slow`) executes.

    python scripts/fast_tier_coverage.py        # runs the fast tier once under coverage.py, one process

Prints each module's share of lines run and exits 1 naming any module the tier never runs a line of
(docs/contributors/tests.md, "The fast tier", records the last figures). Lines run only in the
subprocesses the tests start (the CLI end to end) are not counted: what is listed is what the
fast tier's own process runs. Needs the `coverage` package (the `test` extra).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        data, report = Path(tmp) / ".coverage", Path(tmp) / "coverage.json"
        env_run = [sys.executable, "-m", "coverage", "run", f"--data-file={data}", "--source=mmtasks",
                   "-m", "pytest", "-q", "-m", "not slow", "-p", "no:cacheprovider", "-x"]
        tests = subprocess.run(env_run, cwd=ROOT)
        if tests.returncode != 0:
            print(f"the fast tier failed (exit {tests.returncode})", file=sys.stderr)
            return tests.returncode
        subprocess.run([sys.executable, "-m", "coverage", "json", f"--data-file={data}", "-o", str(report), "-q"],
                       cwd=ROOT, check=True)
        files = json.loads(report.read_text(encoding="utf-8"))["files"]
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "mmtasks").rglob("*.py"))
    never = []
    for module in modules:
        summary = files.get(module, {}).get("summary")
        share = summary["percent_covered"] if summary else 0.0
        print(f"{share:6.1f}%  {module}")
        if not summary or summary["covered_lines"] == 0:
            never.append(module)
    total = sum(f["summary"]["covered_lines"] for f in files.values()), sum(f["summary"]["num_statements"] for f in files.values())
    print(f"{len(modules)} modules, {len(modules) - len(never)} run by the fast tier; {total[0]} of {total[1]} lines")
    for module in never:
        print(f"never run: {module}", file=sys.stderr)
    return 1 if never else 0


if __name__ == "__main__":
    sys.exit(main())
