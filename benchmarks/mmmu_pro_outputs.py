#!/usr/bin/env python
"""MMMU-Pro's answer rule against the authors' published replies (tasks/mmmu_pro/notes.md, "Checked").

    python benchmarks/mmmu_pro_outputs.py MMMU_REPO/mmmu-pro/output

Reads every ``<model>_<setting>_<mode>.jsonl`` of the authors' github.com/MMMU-Benchmark/MMMU
``mmmu-pro/output/`` (each row: options, response, and the authors' ``pred_indexs`` and
``if_right`` as their ``evaluate.py`` wrote them) and reads each response with the plugin's rule
(``tasks/mmmu_pro/mmmu_pro_scoring.py``, ``pro_choice_step``). Prints per file: rows, replies
where the plugin picks the authors' letter, replies where it picks another, replies where neither
rule finds a letter (the authors then drew a random one), and the authors' accuracy (share of
``if_right``, x100).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dir", type=Path, help="the authors' mmmu-pro/output folder")
    args = parser.parse_args(argv)
    from mmtasks import registry

    folder = REPO / "tasks" / "mmmu_pro"
    path = registry.load_plugin_file(folder / "mmmu_pro_scoring.py", roots=[folder])
    step = registry.parsers.get("mmmu_pro_choice", plugins=[path]).fn.__globals__["pro_choice_step"]
    print("| file | rows | same letter | other letter | no letter (authors guessed) | authors' accuracy |")
    print("|---|---|---|---|---|---|")
    for file in sorted(args.output_dir.glob("*.jsonl")):
        rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
        same = other = none = 0
        for row in rows:
            options = ast.literal_eval(str(row["options"]))
            letters = [chr(ord("A") + i) for i in range(len(options))]
            reply = row["response"] if isinstance(row["response"], str) else ""  # evaluate.py: a dict reads as ""
            letter, _ = step(reply, letters, dict(zip(letters, map(str, options))))
            if letter is None:
                none += 1
            elif letter == row["pred_indexs"]:
                same += 1
            else:
                other += 1
        accuracy = 100 * sum(bool(r["if_right"]) for r in rows) / len(rows) if rows else 0.0
        print(f"| {file.name} | {len(rows)} | {same} | {other} | {none} | {accuracy:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
