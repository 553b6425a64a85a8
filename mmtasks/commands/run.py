"""``mmtasks run``: evaluate, print the results table, report failures."""

from __future__ import annotations

import argparse
import sys

from mmtasks.config.run_config import RunConfig
from mmtasks.models.base import parse_args_string
from mmtasks.report import print_problems, print_results_table
from mmtasks.runner import evaluate


def run_config_from_args(args: argparse.Namespace) -> RunConfig:
    return RunConfig(
        tasks=[t for t in args.tasks.split(",") if t.strip()],
        model=args.model,
        model_args=parse_args_string(args.model_args),
        judge=args.judge,
        judge_args=parse_args_string(args.judge_args),
        strategy=args.strategy,
        notetaker=args.notetaker,
        notetaker_args=parse_args_string(args.notetaker_args),
        data_dir=args.data_dir,
        output_path=args.output_path,
        overwrite=args.overwrite,
        include_paths=args.include_path,
        limit=args.limit,
        seed=args.seed,
        batch_size=args.batch_size,
        image_mode=args.image_mode,
        history=args.history,
        probe=args.probe,
        truncate=args.truncate,
        predict_only=args.predict_only,
        use_cache=not args.no_cache,
        cache_dir=args.cache_dir,
        allow_failures=args.allow_failures,
        max_live=args.max_live,
        progress=not args.no_progress and sys.stderr.isatty(),
        verbose=args.verbose,
    )


def run_command(args: argparse.Namespace) -> int:
    run = run_config_from_args(args)
    outcome = evaluate(run)
    if not outcome.is_main:  # another rank of a data parallel run: rank 0 reports
        return 0
    print_results_table(outcome.results)
    if run.output_path is not None:
        print(f"results: {run.output_path / 'results.json'}")
    problems = outcome.problems
    if problems:
        print_problems(problems, allowed=run.allow_failures)
        if not run.allow_failures:
            return 1
    return 0
