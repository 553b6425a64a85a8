#!/usr/bin/env python
"""Write docs/users/cli.md, the command-line reference page, from the real argument parser.

    python scripts/make_cli_page.py

The page is :func:`mmtasks.commands.cli_reference.cli_markdown`: every command's ``--help`` at a
fixed width. tests/cli/test_cli_page.py fails when the page in the repository differs from what this
writes now: run this after adding or changing a flag or its help.
"""

from __future__ import annotations

from pathlib import Path

from mmtasks.commands.cli_reference import PAGE, cli_markdown

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    path = ROOT / PAGE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cli_markdown(), encoding="utf-8", newline="\n")
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
