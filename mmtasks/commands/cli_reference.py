"""The command-line reference page (``docs/users/cli.md``), written from the real argument parser.

Every command's ``--help``, as ``mmtasks`` prints it, at a fixed width (100 columns) so the page
does not depend on the terminal that wrote it. ``scripts/make_cli_page.py`` writes the page, and a
test fails when the page in the repository is not what this module writes now.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import cast

#: the page's path in the repository
PAGE = "docs/users/cli.md"

#: the width the help is formatted at (a terminal's COLUMNS does not reach the page)
WIDTH = 100

_HEADER = """\
# Command-line reference

Every command's `--help`, exactly as `mmtasks` prints it. This page is written by
`python scripts/make_cli_page.py` from the argument parser itself, and a test fails when it is
stale, so it cannot say anything the code does not. `mmtasks --help` prints the `run` command's
help: `run` is the default command and may be left out (`mmtasks --tasks ... --model ...`).

"""


def _commands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser``, then every sub-command's parser below it, depth first, in the order they were added."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):  # aliases name one parser twice
                yield from _commands(child)


def _help(parser: argparse.ArgumentParser) -> str:
    """``parser.format_help()`` at :data:`WIDTH` columns, whatever the terminal's width (the parser is
    the page's own, built for it: its formatter is set back after)."""
    original = parser.formatter_class
    base = cast("type[argparse.HelpFormatter]", original)

    def fixed_width(*, prog: str) -> argparse.HelpFormatter:
        return base(prog, width=WIDTH)

    parser.formatter_class = fixed_width
    try:
        return parser.format_help()
    finally:
        parser.formatter_class = original


def cli_markdown() -> str:
    """The page: one section per command, its help in a code block."""
    from mmtasks.cli import build_parser

    parts = [_HEADER]
    for command in _commands(build_parser()):
        if command.prog == "mmtasks":
            continue  # its help is the run command's (see the header)
        parts.append(f"## `{command.prog}`\n\n```text\n{_help(command).rstrip()}\n```\n\n")
    return "".join(parts).rstrip() + "\n"
