#!/usr/bin/env python
"""The figures of docs/fidelity.md's "Conformance with the published outputs": the authors'
published per-sample outputs (tests/fixtures/published/) replayed through mmtasks, against the
authors' own scoring code run on the same replies.

    python benchmarks/published_outputs.py [--blink-replies]

MMMU: for LLaVA-1.5-13B and Qwen-VL, main_eval_only.py's Overall and per-discipline accuracy, ours,
the documents whose reply the authors' rule could not read (a random letter on both sides), and
how many verdicts differ (only guessed documents can). BLINK: evaluate.py's Total for each of the
19 models from their extracted letters and ours from the same letters replayed; with
``--blink-replies`` also ours from the raw replies (``full_prediction``) read by the task's offline
rule (no LLM matcher). Takes a few minutes of CPU (36,119 BLINK documents per reply set).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import mmtasks  # noqa: E402
from tests.published import (  # noqa: E402
    MMMU_MODELS,
    authors_blink_module,
    authors_mmmu_eval,
    blink_outputs,
    mmmu_outputs,
    mmmu_subject,
    mmmu_task,
    write_blink_data,
    write_blink_replies,
    write_mmmu_data,
    write_mmmu_replies,
)
from tests.project.test_published_outputs import authors_mmmu_verdicts  # noqa: E402

DISCIPLINES = ("Art and Design", "Business", "Science", "Health and Medicine", "Humanities and Social Science",
               "Tech and Engineering")


def mmmu(tmp: Path) -> None:
    print("MMMU (validation, 900 replies each): main_eval_only.py vs mmtasks")
    print(f"{'model':14s} {'theirs':>7s} {'ours':>7s} {'guessed':>8s} {'differ':>7s}  " + "  ".join(d.split()[0] for d in DISCIPLINES))
    for model in MMMU_MODELS:
        outputs = mmmu_outputs(model)
        data = tmp / f"mmmu-{model}"
        write_mmmu_data(outputs, data)
        result = mmtasks.evaluate(tasks="mmmu_val", model=f"replay:{write_mmmu_replies(outputs, tmp / f'{model}.jsonl')}",
                                  data_dir=data, use_cache=False, allow_failures=True, progress=False)
        theirs = authors_mmmu_eval(model)
        right, guessed = authors_mmmu_verdicts(model)
        ours_right = {s.doc_id: s.metrics["acc"] == 100.0 for samples in result.samples.values() for s in samples}
        differ = sorted(d for d in right if ours_right[d] != right[d])
        groups = result["groups"]
        disc = "  ".join(f"{100 * theirs['Overall-' + d]['acc']:.1f}/{groups[g]['average']:.1f}"
                         for d, g in zip(DISCIPLINES, ("mmmu_val_art_design", "mmmu_val_business", "mmmu_val_science",
                                                       "mmmu_val_health_medicine", "mmmu_val_humanities_social_science",
                                                       "mmmu_val_tech_engineering")))
        print(f"{model:14s} {100 * theirs['Overall']['acc']:7.1f} {groups['mmmu_val']['average']:7.2f} {len(guessed):8d} "
              f"{len(differ):7d}  {disc}")
        for d in differ:
            print(f"  {d}: theirs {'right' if right[d] else 'wrong'}, ours {'right' if ours_right[d] else 'wrong'} (guessed)")
        by_subject = defaultdict(int)
        for d in guessed:
            by_subject[mmmu_subject(d)] += 1
        print("  guessed by subject: " + ", ".join(f"{s} {n}" for s, n in sorted(by_subject.items())))
        assert all(d in guessed for d in differ) and all(mmmu_task(mmmu_subject(d)) in result["results"] for d in differ)


def blink(tmp: Path, replies: bool) -> None:
    outputs = blink_outputs()
    models = sorted({o["model"] for o in outputs})
    write_blink_data(outputs, tmp)
    answers = {o["idx"]: o["answer"] for o in outputs}
    predictions = {m: {o["idx"]: o["prediction"] for o in outputs if o["model"] == m} for m in models}
    authors = authors_blink_module(answers, predictions, tmp / "authors")
    import os

    here = os.getcwd()
    os.chdir(tmp / "authors")
    try:
        theirs = {}
        for model in models:
            authors.get_prediction_file("val", model)
            theirs[model] = authors.eval_prediction("val", model)
    finally:
        os.chdir(here)
    print("\nBLINK (val, 1,901 replies each): evaluate.py Total vs mmtasks")
    print(f"{'model':24s} {'theirs':>7s} {'letters':>8s}" + (f" {'replies':>8s} {'agree':>6s}" if replies else ""))
    for model in models:
        mine = [o for o in outputs if o["model"] == model]
        row = f"{model:24s} {100 * theirs[model]['Total']:7.2f}"
        for field in ("prediction", "full_prediction") if replies else ("prediction",):
            path = write_blink_replies(mine, tmp / f"{model}-{field}.jsonl", field)
            result = mmtasks.evaluate(tasks="blink", model=f"replay:{path}", data_dir=tmp, use_cache=False,
                                      allow_failures=True, progress=False)
            row += f" {result['groups']['blink']['average']:8.2f}"
            if field == "full_prediction":
                letters = {s.doc_id: s.parsed for samples in result.samples.values() for s in samples}
                agree = sum(f"({letters[o['idx']]})" == o["prediction"] for o in mine) / len(mine)
                row += f" {agree:6.3f}"
        print(row)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blink-replies", action="store_true", help="also replay BLINK's raw replies (full_prediction)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mmmu(Path(tmp))
        blink(Path(tmp), args.blink_replies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
