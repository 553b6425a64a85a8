"""One benchmark, one folder: the generated lists and pages follow the folders, and a copy of a
benchmark folder under a new name is listed, checked, run, shown in the generated pages and in
the leaderboard, through ``--include-path`` and through an installed plugin package, with nothing
outside the folder edited."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.config.benchmark_folders import BenchmarkFolder, demo_tasks, folders_under, read_folder
from mmtasks.config.benchmark_pages import generated_files
from mmtasks.config.task_registry import TaskRegistry
from mmtasks.errors import ConfigError
from mmtasks.leaderboard.sections import load_section
from tests.cli_process import REPO, SAMPLE


def _generated(*include: Path) -> dict[str, str]:
    registry = TaskRegistry.discover(include)
    return generated_files(REPO, folders_under(registry.dirs), registry)


def test_the_generated_pages_are_current() -> None:
    stale = [rel for rel, text in _generated().items() if (REPO / rel).read_text(encoding="utf-8") != text]
    assert not stale, f"stale: {stale}: run `python scripts/make_benchmark_pages.py`"


def test_every_builtin_folder_has_its_card_notes_generator_and_demo_tasks() -> None:
    registry = TaskRegistry.discover()
    folders = folders_under([REPO / "tasks"])
    assert sorted(f.name for f in folders) == sorted(p.name for p in (REPO / "tasks").iterdir() if p.is_dir())
    known = set(registry.task_names) | set(registry.groups)
    for folder in folders:
        assert (folder.path / "make_sample.py").is_file(), folder.name
        assert folder.section("Official or ours"), folder.name
        assert set(folder.card.demo) <= known, folder.name
        # its leaderboard tab reads (a missing `category:` is a one-line error naming the file)
        tab = folder.path / "leaderboard.yaml"
        if tab.is_file():
            assert load_section(tab, known_tasks=set(registry.task_names)).category is not None
    assert demo_tasks(folders)  # what `make demo` runs (the Makefile reads it)


def test_a_readme_without_its_card_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# My bench\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_folder(tmp_path)
    assert "README.md" in err.value.render() and "front matter" in err.value.render()
    (tmp_path / "README.md").write_text("---\ntitle: X\nkind: y\ncoverage: {benchmark: X}\n---\n# X\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_folder(tmp_path)
    assert "coverage" in err.value.render()


def copy_benchmark(source: str, dest_root: Path, new: str) -> Path:
    """``tasks/<source>/`` copied to ``dest_root/<new>/`` with its task, tab and card renamed
    (the data folder it reads stays ``<source>``'s: the copy reads the same sample)."""
    dest = dest_root / new
    shutil.copytree(REPO / "tasks" / source, dest, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    for path in dest.glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        text = text.replace(f"task: {source}\n", f"task: {new}\n").replace(f"task: {source}}}", f"task: {new}}}")
        text = text.replace(f"task: {source},", f"task: {new},").replace(f"id: {source}\n", f"id: {new}\n")
        text = text.replace("title: MIRB\n", "title: MIRB copy\n")
        path.write_text(text, encoding="utf-8")
    readme = dest / "README.md"
    text = readme.read_text(encoding="utf-8").replace("title: MIRB\n", "title: MIRB copy\n")
    readme.write_text(text.replace(f"- {source}\n", f"- {new}\n", 1), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def copied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inc")
    copy_benchmark("mirb", root, "mirb_copy")
    return root


def test_a_copied_folder_is_listed_checked_run_and_shown(copied: Path, tmp_path: Path, capsys) -> None:
    before = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout
    inc = ["--include-path", str(copied)]
    assert main(["tasks", *inc]) == 0
    assert "mirb_copy" in capsys.readouterr().out
    assert main(["check", "--tasks", "mirb_copy", "--data-dir", str(SAMPLE), *inc]) == 0
    capsys.readouterr()
    out = tmp_path / "run"
    code = main(["--tasks", "mirb_copy", "--model", "random", "--data-dir", str(SAMPLE), "--output-path", str(out),
                 "--no-cache", "--no-progress", *inc])
    assert code in (0, 1), capsys.readouterr().err  # 1: the random model's unparsed replies, counted
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    original = json.loads((SAMPLE / "mirb" / "mirb.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert results["n-samples"]["mirb_copy"]["effective"] == len((SAMPLE / "mirb" / "mirb.jsonl").read_text().splitlines())
    assert original["question_id"] in (out / "samples" / "mirb_copy.jsonl").read_text(encoding="utf-8")

    # the generated pages: its own page, its row in the index, the coverage table and the sample README
    pages = _generated(copied)
    assert "docs/benchmarks/mirb_copy.md" in pages and "`mirb_copy`" in pages["docs/benchmarks/mirb_copy.md"]
    assert "[MIRB copy](mirb_copy.md)" in pages["docs/benchmarks/index.md"]
    assert "## mirb_copy/" in pages["data/sample/README.md"]
    # ... so the committed pages would be stale with the folder in the tree
    assert any((REPO / rel).read_text(encoding="utf-8") != text for rel, text in pages.items() if (REPO / rel).is_file())
    assert "mirb_copy" in demo_tasks(folders_under(TaskRegistry.discover([copied]).dirs))

    # the leaderboard: its own tab
    board = tmp_path / "board"
    assert main(["leaderboard", "build", str(out), "--out", str(board), *inc]) == 0
    built = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    tab = next(b for b in built["benchmarks"] if b["id"] == "mirb_copy")
    assert tab["title"] == "MIRB copy" and [e["model"] for e in tab["entries"] if e["source"] == "run"] == ["random"]
    after = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout
    assert after == before  # nothing outside the copied folder was edited


def test_a_copied_folder_in_an_installed_package(copied: Path, tmp_path: Path) -> None:
    """The same folder contributed by an installed package (entry-point group ``mmtasks``)."""
    site = tmp_path / "site"
    (site / "mmtasks_copy_demo").mkdir(parents=True)
    (site / "mmtasks_copy_demo" / "__init__.py").write_text(
        "from mmtasks.plugin import task_folder\n"
        f"task_folder('copies', {str(copied / 'mirb_copy')!r})\n", encoding="utf-8")
    dist = site / "mmtasks_copy_demo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mmtasks-copy-demo\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[mmtasks]\ncopies = mmtasks_copy_demo\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]), "MMTASKS_CACHE_DIR": str(tmp_path / "cache")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mmtasks", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=180)

    listed = cli("tasks")
    assert listed.returncode == 0 and "mirb_copy" in listed.stdout, listed.stderr
    checked = cli("check", "--tasks", "mirb_copy", "--data-dir", str(SAMPLE))
    assert checked.returncode == 0, checked.stderr
    ran = cli("--tasks", "mirb_copy", "--model", "random", "--data-dir", str(SAMPLE), "--output-path", str(tmp_path / "run"),
              "--no-progress")
    assert ran.returncode in (0, 1), ran.stderr
    built = cli("leaderboard", "build", str(tmp_path / "run"), "--out", str(tmp_path / "board"))
    assert built.returncode == 0, built.stderr
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text(encoding="utf-8"))
    assert "mirb_copy" in [b["id"] for b in board["benchmarks"]]


def test_a_folder_card_reads_as_typed(copied: Path) -> None:
    folder = read_folder(copied / "mirb_copy")
    assert isinstance(folder, BenchmarkFolder)
    assert folder.card.title == "MIRB copy" and folder.card.demo == ["mirb_copy"]
    assert folder.card.coverage.lmms_eval == "`mirb`"
