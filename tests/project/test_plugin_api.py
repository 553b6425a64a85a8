"""The plugin-API page (docs/authors/plugin-api.md) is true: its example folder
(docs/examples/ask_again/: a protocol and an aggregator of a plugin file, a base file included)
runs by the page's command to the figures the page computes by hand, and the files the page
quotes are the folder's."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from mmtasks.cli import main

#: the repository root, wherever under tests/ this file sits
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
EXAMPLE = ROOT / "docs" / "examples" / "ask_again"
PAGE = ROOT / "docs" / "authors" / "plugin-api.md"


def test_the_pages_example_runs_to_the_figures_it_computes_by_hand(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```sh\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    (command,) = [line for block in blocks for line in block.splitlines() if line.startswith("mmtasks ")]
    argv = [arg.replace("runs/", f"{tmp_path}/") for arg in shlex.split(command)[1:]]
    argv = [str(ROOT / arg) if arg.startswith("docs/") else arg.replace("replay:docs/", f"replay:{ROOT}/docs/")
            for arg in argv]
    assert main([*argv, "--no-progress", "--cache-dir", str(tmp_path / "cache")]) == 0
    results = json.loads((tmp_path / "ask_again" / "results.json").read_text())
    scores = results["results"]["ask_again"]
    assert (scores["acc"], scores["first_acc"], scores["changed"]) == (75.0, 50.0, 75.0)
    assert results["n-samples"]["ask_again"]["answered_twice"] == 4
    samples = [json.loads(line) for line in (tmp_path / "ask_again" / "samples" / "ask_again.jsonl").open()]
    q4 = next(s for s in samples if s["doc_id"] == "q4")
    assert [t["parsed"] for t in q4["extra"]["turns"]] == [None, 9]
    assert q4["responses"] == ["Many.", "9"] and q4["unparsed"] == 0  # the final answer was read


def test_the_files_the_page_quotes_are_the_folders() -> None:
    quoted = re.findall(r"<!-- file: (\S+) -->\n```\w+\n(.*?)```\n", PAGE.read_text(encoding="utf-8"), re.S)
    assert {name for name, _ in quoted} == {"tasks/ask_again.py", "tasks/_base.yaml", "tasks/ask_again.yaml"}
    for name, text in quoted:
        assert text == (EXAMPLE / name).read_text(encoding="utf-8"), f"the page's copy of {name} is stale"
