"""``mmtasks compare RUN_A RUN_B``: is model B better than model A on the same documents?"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mmtasks.errors import ConfigError, printable


def add_compare_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> argparse.ArgumentParser:
    p = sub.add_parser(
        "compare", help="paired comparison of two runs on the same documents",
        description="Pair two runs' documents by id and report, per task and group, the difference B - A of every "
                    "metric with a 95%% interval from a paired bootstrap over documents (clusters where the task "
                    "declares them), McNemar's exact test for right/wrong metrics, the minimum detectable effect "
                    "at 80%% power, and the documents only one run holds. The documents each run failed (no score) are "
                    "listed by id and scored as the task's failure rule says: wrong (0) where results.json reports "
                    "the metric's _all, else left out of that metric. Runs of different task configs or "
                    "documents are refused.")
    p.add_argument("run_a", type=Path, help="the first run's folder (results.json and samples/)")
    p.add_argument("run_b", type=Path, help="the second run's folder, on the same tasks and documents")
    p.add_argument("--tasks", default=None, help="compare only these tasks (comma-separated)")
    p.add_argument("--json", type=Path, default=None, dest="json_out", help="also write the report as JSON to this file")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--variant", default=None, metavar="NAME",
                   help="compare the scores of this scoring variant (a task's variants:, e.g. lmms_eval) instead of "
                        "the tasks' own rule; only tasks both runs scored with it")
    return p


#: failed documents' ids printed per side (all of them are in --json)
SHOWN_IDS = 20


def _signed(value: float) -> str:
    return f"{value:+.2f}"


def _failed_line(side: str, failed: dict[str, str]) -> str:
    kinds: dict[str, int] = {}
    for kind in failed.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    ids = list(failed)
    shown = ", ".join(ids[:SHOWN_IDS]) + (f" ... and {len(ids) - SHOWN_IDS} more (all in --json)"
                                          if len(ids) > SHOWN_IDS else "")
    why = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
    return f"  {side} failed {len(ids)} document{'s' if len(ids) != 1 else ''} ({why}): {shown}"


def compare_command(args: argparse.Namespace) -> int:
    from mmtasks.comparison.runs import compare
    from mmtasks.config.bounds import MAX_SEED

    if not 0 <= args.seed <= MAX_SEED:
        raise ConfigError(f"must be from 0 to {MAX_SEED} (got {args.seed})", field="--seed")
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None
    report = compare(args.run_a, args.run_b, tasks=tasks, seed=args.seed, variant=args.variant)
    scored = f", scored as variant {args.variant}" if args.variant else ""
    print(printable(f"compare: B = {report.run_b} against A = {report.run_a} (B - A, 95% paired bootstrap interval{scored})"))
    for warning in report.warnings:
        print(printable(f"mmtasks: warning: {warning}"), file=sys.stderr)
    for t in report.tasks:
        unit = f", {t.clusters} clusters" if t.clusters else ""
        print(printable(f"{t.task}: {t.both} documents in both runs, {t.scored_by_both} scored by both{unit}; "
                        f"{t.only_a} only in A, {t.only_b} only in B"))
        for side, failed in (("A", t.failed_a), ("B", t.failed_b)):
            if failed:
                print(printable(_failed_line(side, failed)))
        for m in t.metrics:
            line = (f"  {m.metric:14s} A {m.a:6.2f}  B {m.b:6.2f}  B-A {_signed(m.difference)} "
                    f"[{_signed(m.low)}, {_signed(m.high)}]")
            if m.mcnemar_p is not None:
                line += f"  McNemar p={m.mcnemar_p:.3g} ({m.a_only} vs {m.b_only} discordant)"
            verdict = "significant" if m.significant else "not significant"
            if t.failed_a or t.failed_b:
                verdict += (f"; failed documents counted as wrong ({m.metric}_all)" if m.failures == "wrong"
                            else "; failed documents left out")
            if abs(m.difference) < m.minimum_detectable_effect:
                verdict += f"; below the minimum detectable effect ({m.minimum_detectable_effect:.2f} at 80% power)"
            print(printable(f"{line}  {verdict}"))
    for g in report.groups:
        verdict = "significant" if g.significant else "not significant"
        print(printable(f"group {g.group} ({len(g.tasks)} tasks): B-A {_signed(g.difference)} "
                        f"[{_signed(g.low)}, {_signed(g.high)}]  {verdict}"))
    for side, names in (("A", report.only_in_a), ("B", report.only_in_b)):
        if names:
            print(printable(f"only in {side}: {', '.join(names)}"))
    if args.json_out is not None:
        from mmtasks.results.writer import atomic_write_text

        atomic_write_text(args.json_out, json.dumps(report.model_dump(mode="json"), indent=1, allow_nan=False) + "\n")
        print(printable(f"report: {args.json_out}"))
    return 0
