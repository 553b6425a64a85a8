#!/usr/bin/env python
"""Keep the fast tier fast: run it once with per-test durations and add to tests/slow_tests.txt every
test that took over 0.5 s (conftest.py marks those `slow`, so `make test-fast` leaves them out).

    python scripts/fast_tier.py --update     # run `pytest -m "not slow" -n 2 --durations=0`, extend the list

The list only grows here (a test that became fast is taken out by hand); docs/contributors/tests.md,
"The fast tier", records the last measured time. scripts/fast_tier_coverage.py says which modules the
tier runs.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "tests" / "slow_tests.txt"
THRESHOLD_S = 0.5
_DURATION = re.compile(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", required=True, help="run the tier and extend the list")
    parser.parse_args(argv)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile", "-m", "not slow",
                          "-p", "no:cacheprovider", "--durations=0"], cwd=ROOT, capture_output=True, text=True)
    per: Counter[str] = Counter()
    for line in run.stdout.splitlines():
        match = _DURATION.match(line)
        if match:
            per[match.group(2)] += float(match.group(1))
    lines = LIST.read_text(encoding="utf-8").splitlines()
    known = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    added = sorted(test for test, seconds in per.items() if seconds > THRESHOLD_S and test not in known)
    LIST.write_text("\n".join(lines + added) + "\n", encoding="utf-8")
    print(run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "no output")
    print(f"{len(added)} tests added to {LIST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
