"""``mmtasks check``: the preflight of a run on its own (see :mod:`mmtasks.preflight`).

Reads every selected task and document, renders every template, checks every image header
and target; prints every problem (exit 2) or one line saying what was checked (exit 0).
Nothing is built, sent or written."""

from __future__ import annotations

import argparse

from mmtasks.api import parse_component_args
from mmtasks.config.run_config import RunConfig
from mmtasks.errors import printable
from mmtasks.runner import check


def add_check_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> argparse.ArgumentParser:
    p = sub.add_parser("check", help="check tasks and their data without running a model",
                       description="Check everything a run would read, before any model or judge is built: every "
                                   "document against its schema, every prompt, judge and breakdown template, every "
                                   "image header, every target against its answer space. Every problem is "
                                   "reported (exit 2); nothing is written.")
    p.add_argument("--tasks", required=True, metavar="TASKS", help="comma-separated task and group names")
    p.add_argument("--data-dir", type=str, default=None, metavar="DIR", help="benchmark data root (default: $MMTASKS_DATA_DIR)")
    p.add_argument("--include-path", action="append", default=[], metavar="DIR", help="extra folder of task YAML (repeatable)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N documents of each task")
    p.add_argument("--image-mode", choices=["separate", "combined"], default="separate")
    p.add_argument("--strategy", choices=["none", "notetaking"], default="none")
    p.add_argument("--gen-kwargs", default="", metavar="K=V,...", help="generation overrides, as for a run")
    p.add_argument("--num-fewshot", type=int, default=None, metavar="K", help="few-shot demonstrations per question, as for a run")
    p.add_argument("--system-instruction", default=None, metavar="TEXT", help="the system message, as for a run")
    p.add_argument("--num-frames", type=int, default=None, metavar="N", help="video tasks' frame count, as for a run")
    p.add_argument("--fps", type=float, default=None, metavar="F", help="video tasks' frame rate, as for a run")
    p.add_argument("--max-frames", type=int, default=None, metavar="M", help="the cap of --fps, as for a run")
    return p


def check_command(args: argparse.Namespace) -> int:
    # the same RunConfig validation as a run (the model is not used: nothing is built)
    run = RunConfig.build(tasks=args.tasks, model="random", data_dir=args.data_dir, include_paths=args.include_path,
                          limit=args.limit, image_mode=args.image_mode, strategy=args.strategy,
                          gen_kwargs=parse_component_args(args.gen_kwargs, "--gen-kwargs"), num_fewshot=args.num_fewshot,
                          system_instruction=args.system_instruction, num_frames=args.num_frames, fps=args.fps,
                          max_frames=args.max_frames)
    checked = check(run)
    n = len(checked.tasks)
    print(f"checked {checked.documents} documents of {n} task{'s' if n != 1 else ''} in {checked.seconds:.2f} s: no problems")
    for task, scan in checked.scans.items():  # the dataset's own records, treated as the task declares
        parts = [f"{treatment.replace('_', ' ')}: {reason} {count}"
                 for treatment, reasons in scan.treated.items() for reason, count in reasons.items()]
        if parts:
            print(printable(f"  {task} (its record policy): " + "; ".join(parts)))
    return 0
