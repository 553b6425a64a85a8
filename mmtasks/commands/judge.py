"""``mmtasks judge agreement RUN_A RUN_B``: how far two runs' judges agree on the same samples."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mmtasks.errors import ConfigError, printable


def add_judge_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> argparse.ArgumentParser:
    judge = sub.add_parser("judge", help="check a judge: agreement between two runs' verdicts")
    actions = judge.add_subparsers(dest="judge_command")
    agree = actions.add_parser(
        "agreement", help="Pearson, Spearman, Kendall and weighted kappa between two runs' verdicts",
        description="Pair the judge verdicts of two runs over the same samples (two judges, or a judge and human "
                    "ratings replayed as judge replies) and report, per task and scored dimension or ability, "
                    "Pearson, Spearman and Kendall (tau-b) correlations and Cohen's weighted kappa (integer scales), "
                    "each with a bootstrap confidence interval and the number of pairs compared.")
    agree.add_argument("run_a", type=Path, help="run folder, samples folder or samples .jsonl")
    agree.add_argument("run_b", type=Path, help="the other run, on the same samples")
    agree.add_argument("--json", type=Path, default=None, dest="json_out", help="also write the report as JSON to this file")
    agree.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    agree.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    agree.add_argument("--weights", choices=["quadratic", "linear"], default="quadratic", help="kappa weights")
    return judge


def _estimate(name: str, est: object) -> str:
    from mmtasks.agreement.stats import Estimate

    assert isinstance(est, Estimate) or est is None
    if est is None:
        return f"{name:9s}{'-':>6s}{'':17s}"
    value = "-" if est.value is None else f"{est.value:.3f}"
    ci = f"[{est.low:.3f}, {est.high:.3f}]" if est.low is not None and est.high is not None else ""
    return f"{name:9s}{value:>6s} {ci:16s}"


def judge_command(args: argparse.Namespace) -> int:
    if getattr(args, "judge_command", None) != "agreement":
        raise ConfigError("say what to check: `mmtasks judge agreement RUN_A RUN_B`", field="judge")
    from mmtasks.agreement.stats import MAX_RESAMPLES

    if not 0 <= args.resamples <= MAX_RESAMPLES:
        raise ConfigError(f"must be from 0 to {MAX_RESAMPLES}", field="--resamples")
    if not 0 < args.level < 1:
        raise ConfigError("must be between 0 and 1", field="--level")
    from mmtasks.agreement import compare_runs

    report = compare_runs(args.run_a, args.run_b, n_resamples=args.resamples, level=args.level, weights=args.weights)
    print(printable(f"judge agreement: {report.run_a} vs {report.run_b}"))
    print(f"  {report.n_items} items judged by both; {report.only_a} only in the first, {report.only_b} only in the second")
    if not report.quantities:
        print("  no verdicts in common: are these runs of the same tasks and samples?")
    for row in report.quantities:
        a = row.agreement
        means = f", mean {a.mean_a:.2f} vs {a.mean_b:.2f}" if a.mean_a is not None and a.mean_b is not None else ""
        print(printable(f"{row.task} {row.quantity} (n={a.n_pairs}{means})"))  # judge JSON keys: escaped
        print(("  " + _estimate("pearson", a.pearson) + "  " + _estimate("spearman", a.spearman)).rstrip())
        print(("  " + _estimate("kendall", a.kendall) + "  " + _estimate("kappa", a.kappa)).rstrip())
    if args.json_out is not None:
        from mmtasks.results.writer import atomic_write_text

        atomic_write_text(args.json_out, json.dumps(report.model_dump(mode="json"), indent=1, allow_nan=False) + "\n")
        print(printable(f"report: {args.json_out}"))
    return 0 if report.quantities else 1
