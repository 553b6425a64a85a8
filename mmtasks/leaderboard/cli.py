"""``mmtasks leaderboard build|plot|publish|schema``.

The main CLI hands everything after ``leaderboard`` to :func:`main`, as
``python -m mmtasks.leaderboard ...`` does.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from mmtasks.errors import MmtasksError, printable


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the ``build``, ``plot``, ``publish`` and ``schema`` subcommands to a ``leaderboard`` parser."""
    commands = parser.add_subparsers(dest="leaderboard_command", metavar="COMMAND", required=True)

    build = commands.add_parser(
        "build",
        help="write leaderboard.json and the static site from runs' results.json",
        description="Read RUN_DIR/results.json of each run and write OUT/leaderboard.json, OUT/leaderboard.js "
        "and the page (index.html, app.js, style.css). Open OUT/index.html from disk or serve OUT.",
    )
    build.add_argument("runs", nargs="*", type=Path, metavar="RUN_DIR",
                       help="run folders (each with a results.json) or results.json files")
    build.add_argument("--out", type=Path, required=True, help="output folder, e.g. leaderboard/")
    build.add_argument("--no-paper", action="store_true", help="leave out the reference rows reported by the papers")
    _include_path(build)
    build.set_defaults(leaderboard_handler=_build)

    plot = commands.add_parser(
        "plot",
        help="write PNG/SVG figures of the leaderboard's charts",
        description="Bar, radar and breakdown figures (by turn, by length, by image count) for reports.",
    )
    plot.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    plot.add_argument("--out", type=Path, required=True, help="folder for the figures")
    plot.add_argument("--format", default="png,svg", help="comma-separated: png, svg (default: png,svg)")
    plot.add_argument("--with-paper", action="store_true", help="also draw the papers' reference rows")
    _include_path(plot)
    plot.set_defaults(leaderboard_handler=_plot)

    publish = commands.add_parser(
        "publish",
        help="upload a built leaderboard to a Hugging Face dataset repo or Space",
        description="Upload OUT/leaderboard.json (with --with-site also the page, leaderboard.js and views/) to the "
        "Hugging Face Hub in one commit with huggingface_hub's HfApi.upload_folder. The token is HF_TOKEN or the one "
        "`hf auth login` stored; HF_ENDPOINT selects another Hub. A publish changes only what mmtasks published there before "
        "(the repo's .mmtasks-publish.json lists it): files of the last publish that this build lacks are deleted, nothing else.",
    )
    publish.add_argument("out", type=Path, metavar="OUT", help="a folder written by `mmtasks leaderboard build --out`")
    publish.add_argument("--repo", required=True, metavar="ORG/NAME", help="the repo to publish to (created when missing)")
    publish.add_argument("--repo-type", choices=["dataset", "space"], default="dataset",
                         help="dataset (default: the JSON) or space (a static Space serving the page; needs --with-site)")
    publish.add_argument("--with-site", action="store_true", help="also upload the page (index.html, app.js, style.css, "
                         "leaderboard.js) and the runs' views in OUT/views/")
    publish.add_argument("--dry-run", action="store_true", help="list what would be uploaded and deleted (reads the repo's manifest); change nothing")
    publish.add_argument("--message", default=None, help="the commit message")
    publish.set_defaults(leaderboard_handler=_publish)

    schema = commands.add_parser("schema", help="print the JSON Schema of leaderboard.json")
    schema.set_defaults(leaderboard_handler=_schema)


def _include_path(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--include-path", action="append", type=Path, default=[], metavar="DIR",
        help="extra folder of task YAML (repeatable), as for a run: each leaderboard.yaml under it "
        "is a tab of the leaderboard",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mmtasks leaderboard", description="The static leaderboard.")
    configure_parser(parser)
    args = parser.parse_args(argv)
    try:
        return args.leaderboard_handler(args)
    except MmtasksError as err:
        print(f"error: {err.render()}", file=sys.stderr)
        return err.exit_code


def _build(args: argparse.Namespace) -> int:
    from mmtasks.leaderboard.build import build_leaderboard, load_runs, published_views, unused_tasks
    from mmtasks.leaderboard.sections import discover_sections
    from mmtasks.leaderboard.site import DATA_JSON, write_site

    if not args.runs and args.no_paper:
        raise MmtasksError("nothing to show: no RUN_DIR given and --no-paper set")
    sections = discover_sections(args.include_path)
    runs = load_runs(args.runs)
    for name, tasks in unused_tasks(runs, sections).items():
        print(printable(f"note: run {name}: tasks without a leaderboard.yaml, shown in the automatic tab "
                        f"'Other tasks': {', '.join(tasks)}"), file=sys.stderr)
    board = build_leaderboard(runs, include_paper=not args.no_paper, sections=sections,
                              views=published_views(args.out, runs))
    if not board.benchmarks:
        raise MmtasksError("nothing to show: no run holds a task of a benchmark on the leaderboard"
                           + (", and --no-paper set" if args.no_paper else ", and no benchmark has paper rows"),
                           hint="see the notes above for the runs' tasks; a benchmark folder's leaderboard.yaml "
                           "names the tasks of its tab")
    write_site(board, args.out)
    summary = ", ".join(
        f"{bench.title} {sum(e.source == 'run' for e in bench.entries)} run / "
        f"{sum(e.source == 'paper' for e in bench.entries)} paper"
        for bench in board.benchmarks
    )
    print(printable(f"wrote {args.out / DATA_JSON} from {len(runs)} run(s): {summary}"))
    print(printable(f"open {args.out / 'index.html'} in a browser, or serve {args.out} with any static web server"))
    return 0


def _plot(args: argparse.Namespace) -> int:
    from mmtasks.leaderboard.build import build_leaderboard, load_runs
    from mmtasks.leaderboard.plot import plot_leaderboard

    formats = [fmt.strip().lower() for fmt in args.format.split(",") if fmt.strip()]
    board = build_leaderboard(load_runs(args.runs), include_paper=args.with_paper, include_paths=args.include_path)
    written = plot_leaderboard(board, args.out, formats=formats, include_paper=args.with_paper)
    if not written:
        print("no figures: the runs hold no results for any benchmark on the leaderboard", file=sys.stderr)
        return 1
    for path in written:
        print(printable(path))
    return 0


def _publish(args: argparse.Namespace) -> int:
    from mmtasks.leaderboard.publish import deletions, describe, plan, publish

    upload = plan(args.out, args.repo, repo_type=args.repo_type, with_site=args.with_site)
    if args.dry_run:
        print("would change (dry run, nothing sent):")
        for line in describe(upload, deletions(upload)):
            print(f"  {line}")
        return 0
    url, gone = publish(upload, message=args.message)
    removed = f", deleting {len(gone)} file(s) it published before" if gone else ""
    print(f"published {len(upload.files)} file(s) to {upload.repo_type} {upload.repo} in one commit{removed}: {url}")
    return 0


def _schema(args: argparse.Namespace) -> int:
    from mmtasks.leaderboard.schema import Leaderboard

    print(json.dumps(Leaderboard.model_json_schema(), indent=2))
    return 0
