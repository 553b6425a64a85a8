"""The benchmark authors' tutorial (docs/authors/tutorial.md) is true: its finished folder
(docs/tutorial/) is checked, run with the `random` baseline, scored on hand-written replies to
the figures the page computes by hand, and shown on the leaderboard, by the very commands the page
shows; the files the page quotes are the folder's; make_data.py writes the committed data."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from mmtasks.cli import main

#: the repository root, wherever under tests/ this file sits
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
TUTORIAL = ROOT / "docs" / "tutorial"
PAGE = ROOT / "docs" / "authors" / "tutorial.md"


def page_commands() -> list[str]:
    """Every `mmtasks ...` line of the page's ```sh blocks, in page order."""
    blocks = re.findall(r"```sh\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    return [line for block in blocks for line in block.splitlines() if line.startswith("mmtasks ")]


def run(command: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """A page command from the repository root, its `runs/` under ``out``."""
    argv = [arg.replace("runs/", f"{out}/") for arg in shlex.split(command)[1:]]
    argv = [str(ROOT / arg) if arg.startswith("docs/") else arg.replace("replay:docs/", f"replay:{ROOT}/docs/")
            for arg in argv]
    code = main([*argv, *(["--no-progress", "--cache-dir", str(out / "cache")] if "--model" in argv else [])])
    return code, capsys.readouterr().out


def test_the_pages_commands_check_run_score_and_show_the_tutorial_benchmark(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check, random_run, known_run, board = page_commands()
    code, _ = run(check, tmp_path, capsys)
    assert code == 0

    code, _ = run(random_run, tmp_path, capsys)
    assert code == 0
    results = json.loads((tmp_path / "my_bench-random" / "results.json").read_text())
    assert set(results["results"]) == {"colour_pick", "colour_name"}
    assert results["n-samples"]["colour_pick"]["effective"] == 6

    # the replies written by hand score what the page counts by hand
    code, _ = run(known_run, tmp_path, capsys)
    assert code == 0
    known = json.loads((tmp_path / "my_bench-known" / "results.json").read_text())
    assert known["results"]["colour_pick"]["acc"] == pytest.approx(400 / 6)
    assert known["results"]["colour_pick"]["distance"] == pytest.approx(0.5)
    assert known["results"]["colour_name"]["acc"] == pytest.approx(50.0)
    assert known["groups"]["my_bench"]["average"] == pytest.approx((400 / 6 + 50) / 2)

    code, _ = run(board, tmp_path, capsys)
    assert code == 0
    data = json.loads((tmp_path / "board" / "leaderboard.json").read_text())
    tab = next(b for b in data["benchmarks"] if b["id"] == "my_bench")
    averages = {e["model"]: e["values"]["average"]["value"] for e in tab["entries"]}
    assert averages["replay:predictions.jsonl"] == pytest.approx(58.333333)
    assert set(averages) == {"replay:predictions.jsonl", "random"}


def test_the_files_the_page_quotes_are_the_folders() -> None:
    page = PAGE.read_text(encoding="utf-8")
    quoted = re.findall(r"<!-- file: (\S+) -->\n```\w+\n(.*?)```\n", page, re.S)
    assert {name for name, _ in quoted} == {"my_bench/_base.yaml", "my_bench/colour_pick.yaml",
                                            "my_bench/colour_name.yaml", "my_bench/scoring.py",
                                            "my_bench/leaderboard.yaml"}
    for name, text in quoted:
        assert text == (TUTORIAL / name).read_text(encoding="utf-8"), f"the page's copy of {name} is stale"


def test_make_data_writes_the_committed_data(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(TUTORIAL / "make_data.py"), str(tmp_path)], check=True)
    committed = TUTORIAL / "data" / "my_bench"
    assert (tmp_path / "my_bench" / "colours.jsonl").read_text() == (committed / "colours.jsonl").read_text()
    images = sorted(p.name for p in (committed / "images").iterdir())
    assert images == sorted(p.name for p in (tmp_path / "my_bench" / "images").iterdir()) and len(images) == 16
    for name in images:
        with Image.open(committed / "images" / name) as a, Image.open(tmp_path / "my_bench" / "images" / name) as b:
            assert a.convert("RGB").tobytes() == b.convert("RGB").tobytes(), name
