"""``mmtasks run``: evaluate, print the results table, report failures.

A thin layer over the Python API: the flags become the same :class:`RunConfig`
that :func:`mmtasks.evaluate` builds, and :func:`mmtasks.api.run` evaluates it."""

from __future__ import annotations

import argparse

from mmtasks.api import parse_component_args, run
from mmtasks.config.run_config import RunConfig
from mmtasks.progress import quiet_library_bars
from mmtasks.report import print_problems, print_results_table
from mmtasks.trackers import parse_log_args


def run_config_from_args(args: argparse.Namespace, run_parser: argparse.ArgumentParser | None = None) -> RunConfig:
    """The run the flags say; with ``--config``, the run file's options under the flags that differ from
    ``run_parser``'s defaults (the ``run`` command's parser, which the CLI passes)."""
    if getattr(args, "config", None) is not None:  # a run file (or results.json) under the flags given
        from mmtasks.run_file import read_run_file, with_run_file

        if run_parser is None:
            raise ValueError("a run file needs the run command's parser, for its defaults")
        defaults = argparse.Namespace(**{a.dest: a.default for a in run_parser._actions if a.dest != "help"})
        return with_run_file(args.config, read_run_file(args.config), _fields(args), _fields(defaults))
    if args.tasks is None or args.model is None:
        from mmtasks.errors import ConfigError

        missing = "--tasks" if args.tasks is None else "--model"
        raise ConfigError(f"{missing} is required (or a run file: --config run.yaml)", field=missing)
    return RunConfig.build(**_fields(args))


def _fields(args: argparse.Namespace) -> dict:
    """The RunConfig fields the flags say."""
    return dict(
        tasks=args.tasks,
        model=args.model,
        model_args=parse_component_args(args.model_args, "--model-args"),
        run_name=args.run_name,
        judge=args.judge,
        judge_args=parse_component_args(args.judge_args, "--judge-args"),
        strategy=args.strategy,
        notetaker=args.notetaker,
        notetaker_args=parse_component_args(args.notetaker_args, "--notetaker-args"),
        matcher=args.matcher,
        matcher_args=parse_component_args(args.matcher_args, "--matcher-args"),
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
        gen_kwargs=parse_component_args(args.gen_kwargs, "--gen-kwargs"),
        num_frames=args.num_frames,
        fps=args.fps,
        max_frames=args.max_frames,
        num_fewshot=args.num_fewshot,
        system_instruction=args.system_instruction,
        repeats=args.repeats,
        use_cache=not args.no_cache,
        cache_dir=args.cache_dir,
        allow_failures=args.allow_failures,
        max_cost=args.max_cost,
        batch=args.batch,
        judge_batch=args.judge_batch,
        batch_poll_s=args.batch_poll_s,
        max_live=args.max_live,
        rank_timeout=args.rank_timeout,
        launcher=args.launcher,
        ray_address=args.ray_address,
        ray_replicas=args.ray_replicas,
        shard=args.shard,
        log_to=args.log_to,
        log_args=parse_log_args(args.log_args).model_dump(mode="json", exclude_defaults=True),
        progress=not args.no_progress,
        verbose=args.verbose,
    )


def run_command(args: argparse.Namespace, run_parser: argparse.ArgumentParser | None = None) -> int:
    config = run_config_from_args(args, run_parser)
    if args.no_progress:  # the libraries' own bars too ("Generating test split")
        quiet_library_bars()
    result = run(config)
    if not result.is_main:  # another rank of a data parallel run: rank 0 reports
        return 0
    print_results_table(result)
    if result.results_path is not None:
        print(f"results: {result.results_path}")
    problems = result.problems
    if problems:
        print_problems(problems, allowed=config.allow_failures)
        if not config.allow_failures:
            return 1
    return 0
