"""The ``mmtasks`` command line.

``mmtasks [run] --tasks ... --model SPEC ...`` evaluates; ``mmtasks tasks``
lists tasks and groups; ``mmtasks cache ...`` manages the response cache;
``mmtasks leaderboard ...`` builds the static leaderboard. A user error prints
one line and exits 2 (traceback only with ``--verbose``); failures during the
run exit 1 unless ``--allow-failures``; ``--max-cost`` reached exits 3; Ctrl-C exits 130, SIGTERM 143, and the next run
resumes from the cache.
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import NoReturn

from mmtasks import __version__, logs
from mmtasks.errors import MmtasksError
from mmtasks.secrets import redact, register_env_secrets

SUBCOMMANDS = ("run", "check", "tasks", "cache", "leaderboard", "models", "judge", "view", "compare", "publish-results", "serve", "merge", "run-set")


def _run_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, default=None, metavar="FILE",
                   help="a run file (YAML: option names to values) or a results.json, whose recorded config reruns "
                        "it; the flags given here win (docs/running-at-scale.md)")
    p.add_argument("--tasks", default=None, metavar="TASKS", help="comma-separated task and group names (see `mmtasks tasks`)")
    p.add_argument("--model", default=None, metavar="SPEC", help="backend:name (hf:, vllm:, openai:, anthropic:, gemini:), random, replay:PATH or a preset[@mode] (see `mmtasks models`)")
    p.add_argument("--model-args", default="", metavar="K=V,...", help="passed to the model's backend (e.g. dtype=bfloat16,device_map=auto)")
    p.add_argument("--run-name", default=None, metavar="NAME", help="display name of the run (e.g. LLaVA-1.5-13B), recorded in "
                   "results.json and shown by the leaderboard and the run viewer beside the model spec")
    p.add_argument("--judge", default=None, metavar="SPEC", help="judge model spec (any backend); default: the task's default judge")
    p.add_argument("--judge-args", default="", metavar="K=V,...", help="for the judge's backend (e.g. base_url=http://127.0.0.1:8000/v1)")
    p.add_argument("--strategy", choices=["none", "notetaking"], default="none", help="wrap the model with a strategy")
    p.add_argument("--notetaker", default=None, metavar="SPEC", help="note-taker model for --strategy notetaking (default: the model)")
    p.add_argument("--notetaker-args", default="", metavar="K=V,...", help="for the note taker's backend")
    p.add_argument("--matcher", default=None, metavar="SPEC",
                   help="LLM answer matcher for tasks with answer.matcher (BLINK, MMIU): asked which option a reply chose when "
                        "no rule reads one; a model spec, or 'default' for the task's (the authors') matcher. Off unless given")
    p.add_argument("--matcher-args", default="", metavar="K=V,...", help="for the matcher's backend")
    p.add_argument("--data-dir", type=Path, default=None, metavar="DIR", help="benchmark data root (default: $MMTASKS_DATA_DIR)")
    p.add_argument("--output-path", type=Path, default=None, metavar="DIR", help="write DIR/results.json and DIR/samples/<task>.jsonl")
    p.add_argument("--overwrite", action="store_true", help="replace another run's results in --output-path (the same command again resumes without it)")
    p.add_argument("--include-path", action="append", type=Path, default=[], metavar="DIR", help="extra folder of task YAML (repeatable)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N documents of each task (N >= 1)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of sampling backends and the random baseline (default 0)")
    p.add_argument("--batch-size", type=int, default=None, metavar="N", help="requests per forward pass for local backends")
    p.add_argument("--image-mode", choices=["separate", "combined"], default="separate",
                   help="combined: stitch each document's images into one (for single-image models)")
    p.add_argument("--history", choices=["self", "reference"], default=None, help="multi-turn history: the model's own replies or the reference ones")
    p.add_argument("--truncate", choices=["none", "oldest_turns"], default=None,
                   help="multi-turn: when a turn's prompt does not fit the model's context, drop the oldest "
                        "exchanges of the history until it fits (recorded per turn); default none: a context_overflow failure")
    p.add_argument("--probe", choices=["independent", "cumulative", "algorithm1"], default=None,
                   help="replay_probe tasks (MMRC): ask evaluation questions independently, one after another keeping the answers "
                        "(cumulative), or keeping only the questions (algorithm1: the paper's Algorithm 1)")
    p.add_argument("--predict-only", action="store_true", help="run the model and write samples without judging")
    p.add_argument("--gen-kwargs", default="", metavar="K=V,...",
                   help="override the tasks' generation settings for the model (max_new_tokens, temperature, ...; "
                        "lm-eval's name): recorded in results.json, and not the benchmark's official protocol")
    p.add_argument("--num-frames", type=int, default=None, metavar="N",
                   help="video tasks: sample N frames uniformly instead of the task's rule (recorded; not the official setting)")
    p.add_argument("--fps", type=float, default=None, metavar="F",
                   help="video tasks: one frame every 1/F s instead of the task's rule, capped by --max-frames (recorded)")
    p.add_argument("--max-frames", type=int, default=None, metavar="M", help="video tasks: the cap of --fps")
    p.add_argument("--num-fewshot", type=int, default=None, metavar="K",
                   help="few-shot tasks: K demonstrations per question instead of the task's fewshot.k (recorded; not the official setting)")
    p.add_argument("--system-instruction", default=None, metavar="TEXT",
                   help="the system message of every model request, in place of the tasks' own (lm-eval's name): "
                        "recorded in results.json, and not the benchmark's official protocol")
    p.add_argument("--repeats", type=int, default=1, metavar="K",
                   help="run every document of a task that samples K times with distinct seeds: the results give the "
                        "spread between repeats and the per-document reducers (mean, majority, any-correct)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    p.add_argument("--cache-dir", type=Path, default=None, metavar="DIR", help="response cache folder (default: $MMTASKS_CACHE_DIR or ~/.cache/mmtasks)")
    p.add_argument("--allow-failures", action="store_true", help="exit 0 even when requests, parses or judge calls failed")
    p.add_argument("--shard", default=None, metavar="I/N",
                   help="run slice I (0-based) of N of the documents into its own --output-path; "
                        "`mmtasks merge OUT SLICE...` makes the slices one run (docs/running-at-scale.md)")
    p.add_argument("--rank-timeout", type=float, default=None, metavar="S",
                   help="data parallel runs: name a rank silent for S seconds and stop (default $MMTASKS_RANK_TIMEOUT_S or 600)")
    p.add_argument("--launcher", choices=("local", "ray"), default="local",
                   help="ray: the model's replicas are Ray actors pulling requests from one queue; a replica that "
                        "dies hands its requests to the others (pip install 'mmtasks[ray]'; docs/running-at-scale.md)")
    p.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="--launcher ray: the cluster to join (default: start a local one for the run)")
    p.add_argument("--ray-replicas", type=int, default=None, metavar="N",
                   help="--launcher ray: how many model replicas (default: as many as the cluster's GPUs/CPUs hold)")
    p.add_argument("--batch", action="store_true",
                   help="send the model's requests through the provider's batch API (openai:, anthropic:, gemini:; half price, "
                        "results within 24 h), one batch per wave; a killed run resumes the same batches (docs/users/cost.md)")
    p.add_argument("--judge-batch", action="store_true", help="the judge's and matcher's requests through the batch API")
    p.add_argument("--batch-poll-s", type=float, default=30.0, metavar="S", help="seconds between polls of a pending batch (default 30)")
    p.add_argument("--max-cost", type=float, default=None, metavar="USD",
                   help="stop the run (exit 3) once the requests it sent cost USD by models/prices.yaml; the same "
                        "command resumes from the cache (docs/users/cost.md)")
    p.add_argument("--max-live", type=int, default=1024, metavar="N", help="most dialogues in flight at once (bounds memory; default 1024)")
    p.add_argument("--log-to", default="", metavar="TRACKERS",
                   help="log the run to experiment trackers: wandb, mlflow, trackio (comma-separated; each an extra: "
                        "pip install 'mmtasks[wandb]'): config, every metric, samples tables, the view (docs/trackers.md)")
    p.add_argument("--log-args", default="", metavar="K=V,...|JSON",
                   help="the trackers' settings: project, name, entity, group, tags, mode, dir, tracking_uri, experiment, "
                        "samples (rows per task, default 100), view (true/false)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (terminal) or progress lines (otherwise) on stderr")


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verbose", "-v", action="store_true", help="show tracebacks and debug logs")


OTHER_COMMANDS = """other commands (each has --help):
  mmtasks check         check tasks and data (templates, images, targets) without a model
  mmtasks tasks         tasks and groups: description, primary metric, judge
  mmtasks models        model presets and backends
  mmtasks cache         inspect or clear the response cache (info, clear); prune extracted archives
  mmtasks leaderboard   the static leaderboard and figures (build, plot, schema, publish)
  mmtasks judge         agreement between two runs' judge verdicts
  mmtasks merge         merge the --shard I/N slices of a run into one run folder
  mmtasks run-set       many models x tasks from a manifest: retries, resume, one leaderboard
  mmtasks compare       is B better than A? paired differences, McNemar, intervals
  mmtasks view          a static site of every answer of a run, or two side by side
  mmtasks publish-results  a run's scores on the model's Hub page (.eval_results/, a pull request)
  mmtasks serve         an HTTP evaluation server (jobs in, results out) for training loops

From Python: mmtasks.evaluate(tasks=..., model=..., **options)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mmtasks", description="Evaluate multimodal models on multi-image and multi-turn benchmarks.")
    parser.add_argument("--version", action="version", version=f"mmtasks {__version__}")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser(
        "run", help="evaluate a model on tasks (the default command)",
        usage="mmtasks [run] --tasks TASKS --model SPEC [options]",
        description="Evaluate a model on tasks (`run` may be left out).",
        epilog=OTHER_COMMANDS, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _run_parser(run)
    _add_common(run)
    tasks = sub.add_parser("tasks", help="list tasks and groups", description="List tasks (description, primary metric, "
                           "whether a judge is needed) and groups. Reads task files only; creates nothing.")
    tasks.add_argument("--include-path", action="append", type=Path, default=[], help="extra folder of task YAML (repeatable)")
    tasks.add_argument("--data-dir", type=Path, default=None,
                       help="with --verbose: count each task's documents here and give its minimum detectable effect")
    _add_common(tasks)
    models = sub.add_parser("models", help="list model presets and backends", description="List model backends and presets.")
    _add_common(models)
    cache = sub.add_parser("cache", help="inspect or clear the response cache; prune extracted video archives",
                           description="Inspect (info) or clear the response cache. `info` never creates the cache folder. "
                           "`prune` gives back the disk of the Hub video archives' extracted files that no index references.")
    cache.add_argument("action", choices=["info", "clear", "prune", "export", "import"],
                       help="prune: remove the Hub video archives' extracted files that no index references, partial "
                            "files, and older per-commit copies; export FILE: copy replies to a new cache file (--run DIR: "
                            "those of a run's model and judge; --model TEXT: of models whose identity contains TEXT); "
                            "import FILE: add an exported file's replies (the ones here are kept)")
    cache.add_argument("file", nargs="?", type=Path, default=None, metavar="FILE", help="export/import: the exported cache file")
    cache.add_argument("--run", type=Path, default=None, metavar="DIR", help="export: only the replies of this run's models")
    cache.add_argument("--archives-dir", type=Path, default=None,
                       help="with prune: the archives folder (default: $MMTASKS_ARCHIVES_DIR or mmtasks-archives beside the Hub cache)")
    cache.add_argument("--cache-dir", type=Path, default=None, help="cache folder (default: $MMTASKS_CACHE_DIR or ~/.cache/mmtasks)")
    cache.add_argument("--model", default=None, help="clear, export: only entries of models whose identity contains this text")
    _add_common(cache)
    from mmtasks.commands.check import add_check_parser
    from mmtasks.commands.compare import add_compare_parser
    from mmtasks.commands.judge import add_judge_parser
    from mmtasks.commands.view import add_view_parser
    from mmtasks.leaderboard.cli import configure_parser as configure_leaderboard

    _add_common(add_check_parser(sub))
    _add_common(add_judge_parser(sub))
    _add_common(add_compare_parser(sub))
    _add_common(add_view_parser(sub))
    from mmtasks.commands.publish_results import add_publish_results_parser

    _add_common(add_publish_results_parser(sub))
    from mmtasks.commands.serve import add_serve_parser

    _add_common(add_serve_parser(sub))
    from mmtasks.shards import add_merge_parser

    _add_common(add_merge_parser(sub))
    from mmtasks.run_set import add_run_set_parser

    _add_common(add_run_set_parser(sub))
    configure_leaderboard(sub.add_parser("leaderboard", help="build the static leaderboard or plot figures",
                                         description="The static leaderboard and figures from run folders."))
    return parser


class Terminated(BaseException):
    """SIGTERM (a scheduler's preemption, ``kill``): stop like Ctrl-C, exit 143."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or argv[0] in ("-h", "--help"):
        # `mmtasks --help`: the run flags (the default command) and the other commands
        # argparse's private attributes: typeshed types them as any group's and any action's
        run_parser = parser._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr,index]
        run_parser.print_help(sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] not in SUBCOMMANDS and argv[0] != "--version":
        argv = ["run", *argv]
    args = parser.parse_args(argv)
    verbose = bool(getattr(args, "verbose", False))
    logs.configure(verbose)
    register_env_secrets()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if args.command == "run":
            from mmtasks.commands.run import run_command

            return run_command(args, parser._subparsers._group_actions[0].choices["run"])  # type: ignore[union-attr,index]
        if args.command == "check":
            from mmtasks.commands.check import check_command

            return check_command(args)
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
        if args.command == "compare":
            from mmtasks.commands.compare import compare_command

            return compare_command(args)
        if args.command == "serve":
            from mmtasks.commands.serve import serve_command

            return serve_command(args)
        if args.command == "publish-results":
            from mmtasks.commands.publish_results import publish_results_command

            return publish_results_command(args)
        if args.command == "run-set":
            from mmtasks.run_set import run_set_command

            return run_set_command(args)
        if args.command == "merge":
            from mmtasks.shards import merge_command

            return merge_command(args)
        if args.command == "view":
            from mmtasks.commands.view import view_command

            return view_command(args)
        if args.command == "leaderboard":
            return args.leaderboard_handler(args)
        parser.print_help(sys.stderr)
        return 2
    except MmtasksError as exc:
        if verbose:
            raise
        if not exc.quiet:
            print(f"mmtasks: error: {redact(exc.render())}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("mmtasks: interrupted; run the same command again to resume from the cache", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `mmtasks tasks | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Terminated:
        print("mmtasks: terminated (SIGTERM); run the same command again to resume from the cache", file=sys.stderr)
        return 143


def entry() -> None:
    """The ``mmtasks`` command (and ``python -m mmtasks``): :func:`main`, then :func:`exit_now`."""
    exit_now(main())


#: how long exit_now waits for other threads to end before it leaves the exit to Python
_THREAD_GRACE_S = 2.0


def exit_now(code: int) -> NoReturn:
    """Exit with ``code`` without tearing down every module one by one.

    Python's own exit spends 60-150 ms after a run deallocating the modules it imported (the
    ``openai`` SDK's ~700 pydantic classes, numpy, jinja2), work whose result nobody sees. This
    does what that exit does that matters, in its order: waits for the other non-daemon threads
    (when one is still running after a grace period, it leaves the exit to Python, which waits
    for them as always), runs the ``atexit`` handlers (logging's flush, SQLite's and the
    libraries' cleanups), flushes stdout and stderr, then ends the process with ``os._exit``.
    Everything mmtasks writes is closed and flushed before ``main`` returns."""
    deadline = time.monotonic() + _THREAD_GRACE_S
    for thread in threading.enumerate():
        if thread is threading.main_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`mmtasks tasks | head`) or a closed stream
            pass
    os._exit(code)


if __name__ == "__main__":
    entry()
