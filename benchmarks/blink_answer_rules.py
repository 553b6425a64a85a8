#!/usr/bin/env python
"""How close mmtasks' offline answer rules come to the BLINK authors' answer extraction.

    python benchmarks/blink_answer_rules.py PATH/TO/BLINK_Benchmark

The authors' repository (github.com/zeyofu/BLINK_Benchmark) releases, for each of the
19 baselines of their paper, every val reply (``eval/saved_outputs/<model>/<Subtask>.json``:
``full_prediction``) with the letter their ``analyze_answer`` extracted from it
(``prediction``: their heuristic, and gpt-3.5-turbo where the heuristic could not decide)
and the gold letter (``answer``). For each model this prints the val average (the mean of
the 14 subtask accuracies, as ``eval/evaluate.py``) from their letters, which reproduces
their README's Val column, and from the letters the generic ``choice`` parser reads with
``rule: first_letter`` and ``rule: mmmu``, with how often each rule gives their letter.

A question's letters are A up to the highest gold letter of its subtask (the saved
outputs do not hold the choices; every subtask's highest gold letter is its number of
choices in practice).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mmtasks.scoring.answer_rules import last_occurrence_choice
from mmtasks.scoring.parsers import choose_letter

RULES = {"first_letter": lambda text, letters: choose_letter(text, letters),
         "mmmu": lambda text, letters: last_occurrence_choice(text, letters, {})}


def model_rows(folder: Path) -> dict[str, dict[str, dict[str, int]]]:
    """subtask -> counts: n, right by their letter and by each rule, agreement with their letter."""
    out: dict[str, dict[str, int]] = {}
    for path in sorted(folder.glob("*.json")):
        replies = json.loads(path.read_text(encoding="utf-8"))["val"]
        n_letters = max(ord(d["answer"].strip("()")) - ord("A") + 1 for d in replies)
        letters = [chr(ord("A") + k) for k in range(n_letters)]
        row = out.setdefault(path.stem.replace(" ", "_"), {"n": 0, "theirs": 0})
        for d in replies:
            text, theirs, gold = d["full_prediction"] or "", (d["prediction"] or "").strip(), d["answer"]
            row["n"] += 1
            row["theirs"] += theirs == gold
            for name, rule in RULES.items():
                letter = rule(text, letters)
                ours = f"({letter})" if letter else None
                row[name] = row.get(name, 0) + (ours == gold)
                row[f"{name}_agree"] = row.get(f"{name}_agree", 0) + (ours == theirs)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("blink_repo", type=Path, help="a checkout of github.com/zeyofu/BLINK_Benchmark")
    args = parser.parse_args(argv)
    root = args.blink_repo / "eval" / "saved_outputs"
    models = sorted(p for p in root.iterdir() if p.is_dir() and "concat" not in p.name)
    print(f"{'model':24s} {'theirs':>7s}" + "".join(f" {name:>13s} {'agree':>6s}" for name in RULES))
    totals = {name: [0, 0] for name in RULES}
    gaps: dict[str, list[float]] = {name: [] for name in RULES}
    for folder in models:
        rows = model_rows(folder)
        average = {k: 100 * sum(r[k] / r["n"] for r in rows.values()) / len(rows) for k in ("theirs", *RULES)}
        n = sum(r["n"] for r in rows.values())
        line = f"{folder.name:24s} {average['theirs']:7.2f}"
        for name in RULES:
            agree = sum(r[f"{name}_agree"] for r in rows.values())
            totals[name][0] += agree
            totals[name][1] += n
            gaps[name].append(abs(average[name] - average["theirs"]))
            line += f" {average[name]:13.2f} {agree / n:6.3f}"
        print(line)
    for name in RULES:
        agree, n = totals[name]
        print(f"{name}: their letter for {agree / n:.1%} of {n} replies; "
              f"mean |average - theirs| {sum(gaps[name]) / len(gaps[name]):.2f} points over {len(gaps[name])} models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
