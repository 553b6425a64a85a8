"""``mmtasks publish-results RUN --to ORG/MODEL --view-url URL``: the run's scores as the Hub's
``.eval_results/`` files of the model repo, in a pull request (see :mod:`mmtasks.leaderboard.eval_results`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_publish_results_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> argparse.ArgumentParser:
    p = sub.add_parser(
        "publish-results", help="a run's scores on the model's Hub page (.eval_results/, as a pull request)",
        description="Write the run's scores as the Hugging Face Hub's .eval_results/ files of a model repo (one per "
                    "benchmark dataset and variant; each entry the task's primary metric, the dataset's commit, the "
                    "run's view as its source) and open a pull request with them (--push: commit to main). Only files "
                    "mmtasks wrote there before (.eval_results/.mmtasks-results.json lists them) are ever replaced; "
                    "nothing is deleted. The token is HF_TOKEN or the one `hf auth login` stored; HF_ENDPOINT selects "
                    "another Hub. Tasks on local data only have no Hub benchmark and are left out (named).")
    p.add_argument("run", type=Path, metavar="RUN", help="run folder (results.json)")
    p.add_argument("--to", required=True, metavar="ORG/MODEL", help="the model repo (not created)")
    p.add_argument("--view-url", required=True, metavar="URL",
                   help="where the run's view is published (a dataset or Space, e.g. by `mmtasks leaderboard publish "
                        "--with-site`): each file's source link")
    p.add_argument("--push", action="store_true", help="commit to the main branch instead of opening a pull request")
    p.add_argument("--dry-run", action="store_true", help="print the files; change nothing")
    p.add_argument("--message", default=None, help="the commit (pull request) title")
    return p


def publish_results_command(args: argparse.Namespace) -> int:
    from mmtasks.errors import printable
    from mmtasks.leaderboard.eval_results import load_plan, publish_results

    plan = load_plan(args.run, args.to, args.view_url)
    for task, why in plan.skipped.items():
        print(printable(f"left out {task}: {why}"))
    if args.dry_run:
        for path, text in plan.files.items():
            print(printable(f"--- {path}\n{text}"))
        print(printable(f"{len(plan.files)} file(s) -> model {plan.repo} (dry run: nothing changed)"))
        return 0
    url, written = publish_results(plan, push=args.push, message=args.message)
    what = "committed to main" if args.push else "opened a pull request"
    print(printable(f"{what} on model {plan.repo} with {', '.join(written)}: {url}"))
    return 0
