"""The ``mmtasks`` command line.

``mmtasks [run] --tasks ... --model SPEC ...`` evaluates; ``mmtasks tasks``
lists tasks and groups; ``mmtasks cache ...`` manages the response cache;
``mmtasks leaderboard ...`` builds the static leaderboard. A user error prints
one line and exits 2 (traceback only with ``--verbose``); failures during the
run exit 1 unless ``--allow-failures``; Ctrl-C exits 130, SIGTERM 143, and the next run
resumes from the cache.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from mmtasks import __version__
from mmtasks.errors import MmtasksError
from mmtasks.secrets import RedactingFilter, redact, register_env_secrets

SUBCOMMANDS = ("run", "tasks", "cache", "leaderboard", "models", "judge")


def _run_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", required=True, help="comma-separated task and group names (see `mmtasks tasks`)")
    p.add_argument("--model", required=True, help="backend:name (hf:, vllm:, openai:), random, replay:PATH or a preset from models/")
    p.add_argument("--model-args", default="", help="k=v,... passed to the backend (e.g. dtype=bfloat16,device_map=auto)")
    p.add_argument("--judge", default=None, help="judge model spec (any backend); default: the task's default judge")
    p.add_argument("--judge-args", default="", help="k=v,... for the judge backend")
    p.add_argument("--strategy", choices=["none", "notetaking"], default="none", help="wrap the model with a strategy")
    p.add_argument("--notetaker", default=None, help="note-taker model spec for --strategy notetaking (default: the model)")
    p.add_argument("--notetaker-args", default="")
    p.add_argument("--data-dir", type=Path, default=None, help="benchmark data root (default: $MMTASKS_DATA_DIR)")
    p.add_argument("--output-path", type=Path, default=None, help="write DIR/results.json and DIR/samples/<task>.jsonl")
    p.add_argument("--overwrite", action="store_true", help="replace another run's results in --output-path (the same command again resumes without it)")
    p.add_argument("--include-path", action="append", type=Path, default=[], help="extra folder of task YAML (repeatable)")
    p.add_argument("--limit", type=int, default=None, help="only the first N documents of each task")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=None, help="requests per forward pass for local backends")
    p.add_argument("--image-mode", choices=["separate", "combined"], default="separate",
                   help="combined: stitch each document's images into one (for single-image models)")
    p.add_argument("--history", choices=["self", "reference"], default=None, help="multi-turn history: the model's own replies or the reference ones")
    p.add_argument("--truncate", choices=["none", "oldest_turns"], default=None,
                   help="multi-turn: when a turn's prompt does not fit the model's context, drop the oldest "
                        "exchanges of the history until it fits (recorded per turn); default none: a context_overflow failure")
    p.add_argument("--probe", choices=["independent", "cumulative", "algorithm1"], default=None,
                   help="MMRC: ask evaluation questions independently, one after another keeping the answers "
                        "(cumulative), or keeping only the questions (algorithm1: the paper's Algorithm 1)")
    p.add_argument("--predict-only", action="store_true", help="run the model and write samples without judging")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    p.add_argument("--cache-dir", type=Path, default=None, help="response cache folder (default: $MMTASKS_CACHE_DIR or ~/.cache/mmtasks)")
    p.add_argument("--allow-failures", action="store_true", help="exit 0 even when requests, parses or judge calls failed")
    p.add_argument("--max-live", type=int, default=1024, help="most dialogues in flight at once (bounds memory)")
    p.add_argument("--no-progress", action="store_true")


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verbose", "-v", action="store_true", help="show tracebacks and debug logs")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mmtasks", description="Evaluate multimodal models on multi-image and multi-turn benchmarks.")
    parser.add_argument("--version", action="version", version=f"mmtasks {__version__}")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="evaluate a model on tasks (the default command)")
    _run_parser(run)
    _add_common(run)
    tasks = sub.add_parser("tasks", help="list tasks and groups")
    tasks.add_argument("--include-path", action="append", type=Path, default=[])
    _add_common(tasks)
    models = sub.add_parser("models", help="list model presets and backends")
    _add_common(models)
    cache = sub.add_parser("cache", help="inspect or clear the response cache")
    cache.add_argument("action", choices=["info", "clear"])
    cache.add_argument("--cache-dir", type=Path, default=None)
    cache.add_argument("--model", default=None, help="clear: only entries of models whose identity contains this text")
    _add_common(cache)
    from mmtasks.commands.judge import add_judge_parser

    _add_common(add_judge_parser(sub))
    lb = sub.add_parser("leaderboard", help="build the static leaderboard or plots from run folders", add_help=False)
    lb.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


class Terminated(BaseException):
    """SIGTERM (a scheduler's preemption, ``kill``): stop like Ctrl-C, exit 143."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version"):
        argv = ["run", *argv]
    parser = build_parser()
    args = parser.parse_args(argv)
    verbose = bool(getattr(args, "verbose", False))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    register_env_secrets()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())
    try:
        if args.command == "run":
            from mmtasks.commands.run import run_command

            return run_command(args)
        if args.command == "tasks":
            from mmtasks.commands.listing import list_tasks

            return list_tasks(args)
        if args.command == "models":
            from mmtasks.commands.listing import list_models

            return list_models(args)
        if args.command == "cache":
            from mmtasks.commands.cache import cache_command

            return cache_command(args)
        if args.command == "judge":
            from mmtasks.commands.judge import judge_command

            return judge_command(args)
        if args.command == "leaderboard":
            from mmtasks.leaderboard.cli import main as leaderboard_main

            return leaderboard_main(args.rest)
        parser.print_help()
        return 2
    except MmtasksError as exc:
        if verbose:
            raise
        print(f"mmtasks: error: {redact(exc.render())}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("mmtasks: interrupted; run the same command again to resume from the cache", file=sys.stderr)
        return 130
    except Terminated:
        print("mmtasks: terminated (SIGTERM); run the same command again to resume from the cache", file=sys.stderr)
        return 143


if __name__ == "__main__":
    sys.exit(main())
