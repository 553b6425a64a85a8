"""``mmtasks view RUN [RUN_B] --out DIR``: the run viewer's static site (see :mod:`mmtasks.view`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_view_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> argparse.ArgumentParser:
    view = sub.add_parser(
        "view", help="a static site of every answer of a run (or two runs side by side)",
        description="Write a static site that shows every document of a run as the model saw it: the images in "
                    "place, each turn's prompt and reply, the parsed answer against the target, every judge prompt "
                    "with its reply and verdict, re-asks and failures, the metrics; a table per task with filters. "
                    "With RUN_B, the two runs side by side with a filter for where they disagree. Open "
                    "DIR/index.html from disk or serve DIR. Write it to LEADERBOARD_DIR/views/<run folder name> and "
                    "the leaderboard built into LEADERBOARD_DIR links the run's rows to it.")
    view.add_argument("run", type=Path, metavar="RUN", help="run folder (results.json and samples/)")
    view.add_argument("run_b", type=Path, nargs="?", default=None, metavar="RUN_B",
                      help="a second run on the same tasks, shown beside the first")
    view.add_argument("--out", type=Path, required=True, metavar="DIR",
                      help="output folder (new, empty, or an earlier view, which is rebuilt)")
    view.add_argument("--tasks", default=None, metavar="TASKS", help="only these tasks (comma-separated; default: all)")
    view.add_argument("--include-path", action="append", type=Path, default=[], metavar="DIR",
                      help="extra folder of task YAML (repeatable), as for the run: the task list groups each task "
                           "under the benchmark folder that holds it")
    return view


def view_command(args: argparse.Namespace) -> int:
    from mmtasks.errors import printable
    from mmtasks.view.records import load_view_run
    from mmtasks.view.site import build_view

    runs = [load_view_run(args.run)] + ([load_view_run(args.run_b)] if args.run_b is not None else [])
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None
    index = build_view(runs, args.out, tasks=tasks, progress=lambda task: print(printable(f"  {task}"), file=sys.stderr),
                       include_paths=args.include_path)
    total = sum(t["n"] for t in index["tasks"])
    print(printable(f"wrote the view of {total} documents in {len(index['tasks'])} task(s) to {args.out} "
                    f"({index['images_written']} image files written)"))
    print(printable(f"open {args.out / 'index.html'} in a browser, or serve {args.out} with any static web server"))
    return 0
