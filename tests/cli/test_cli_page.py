"""docs/users/cli.md is what scripts/make_cli_page.py writes from the argument parser now, and what
`mmtasks ... --help` prints: a flag added, renamed or re-documented without regenerating the page
fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.commands import cli_reference
from mmtasks.commands.cli_reference import PAGE, WIDTH, cli_markdown

#: the repository root, wherever under tests/ this file sits
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())


def section(page: str, prog: str) -> str:
    match = re.search(rf"## `{re.escape(prog)}`\n\n```text\n(.*?)\n```", page, re.S)
    assert match, f"no section for {prog}"
    return match.group(1)


def test_the_cli_page_is_current() -> None:
    page = (ROOT / PAGE).read_text(encoding="utf-8")
    assert page == cli_markdown(), "docs/users/cli.md is stale: run `python scripts/make_cli_page.py`"


@pytest.mark.parametrize("argv, prog", [
    (["--help"], "mmtasks run"),
    (["check", "--help"], "mmtasks check"),
    (["leaderboard", "build", "--help"], "mmtasks leaderboard build"),
    (["judge", "agreement", "--help"], "mmtasks judge agreement"),
])
def test_the_page_is_what_help_prints(argv: list[str], prog: str, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The page's block for a command is the real `--help` output on a terminal of the page's width."""
    monkeypatch.setenv("COLUMNS", str(WIDTH + 2))  # argparse formats at the terminal's columns - 2
    if argv == ["--help"]:
        assert main(argv) == 0  # `mmtasks --help` prints the run command's help and returns
    else:
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 0
    printed = capsys.readouterr().out.rstrip()
    assert printed == section(cli_markdown(), prog)


def test_every_command_has_a_section_and_a_new_flag_makes_the_page_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    page = cli_markdown()
    for prog in ("mmtasks run", "mmtasks tasks", "mmtasks models", "mmtasks cache", "mmtasks check",
                 "mmtasks compare", "mmtasks view", "mmtasks leaderboard publish"):
        section(page, prog)
    from mmtasks import cli

    build = cli.build_parser

    def with_a_new_flag():  # type: ignore[no-untyped-def]
        parser = build()
        check = next(a for a in parser._actions if a.dest == "command").choices["check"]
        check.add_argument("--brand-new", help="a flag added to the code")
        return parser

    monkeypatch.setattr(cli, "build_parser", with_a_new_flag)
    assert "--brand-new" in section(cli_reference.cli_markdown(), "mmtasks check")


def test_the_running_pages_command_table_names_every_command() -> None:
    """docs/users/running.md's table of commands is the parser's list: a command added or renamed
    without a row fails here."""
    table = (ROOT / "docs" / "users" / "running.md").read_text(encoding="utf-8").split("## The commands")[1]
    rows = set(re.findall(r"^\| `(mmtasks [a-z ]+)` \|", table, re.M))
    progs = set(re.findall(r"^## `(mmtasks [a-z ]+)`", cli_markdown(), re.M))
    leaves = {p for p in progs if not any(other.startswith(p + " ") for other in progs)}  # not `mmtasks judge`
    assert rows == leaves
