"""The wheel: built from the source, installed into a fresh virtual environment outside the
source tree, it lists the built-in tasks and presets, runs a sample task and builds the
leaderboard, all from its package data (nothing read from the checkout).

Offline: the wheel is built without build isolation and installed with ``--no-deps
--no-index``; the new environment reaches the dependencies through a ``.pth`` file naming
this environment's site-packages. Python does not process ``.pth`` files inside a directory
added that way, so this environment's editable install of mmtasks does not leak in.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from mmtasks.models.prices import PRICES_FILE

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "mmtasks"
SAMPLE = REPO / "data" / "sample"
TIMEOUT = 300
PROBE_DIR = "zz_wheel_probe"


#: the top-level data folders of the tree and where the build backend maps each in the wheel
DATA_FOLDERS = {"tasks": "mmtasks/tasks", "models": "mmtasks/presets", "leaderboard": "mmtasks/leaderboard/site",
                "viewer": "mmtasks/viewer_site", "reports": "mmtasks/reports"}


def _package_data(folder: str) -> set[str]:
    """Files under the top-level ``folder`` as wheel paths (bytecode caches, built output left out)."""
    root = REPO / folder
    return {
        f"{DATA_FOLDERS[folder]}/{path.relative_to(root).as_posix()}"
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert result.returncode == 0, f"{' '.join(cmd)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV") and not k.startswith("MMTASKS_")}
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    env.update(extra)
    return env


def build_wheel(tmp_path: Path) -> Path:
    """Build from a copy of the sources, so no stale build/ folder of the checkout gets in."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, src / name)
    for folder in ("mmtasks", *DATA_FOLDERS):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "leaderboard.js"))
    # A benchmark folder of the kinds of files plugins bring, whatever the built-in ones hold
    # today: nested Python and a prompt; and bytecode, which must stay out.
    probe = src / "tasks" / PROBE_DIR
    (probe / "scoring").mkdir(parents=True)
    (probe / "scoring" / "plugin.py").write_text("VALUE = 1\n", encoding="utf-8")
    (probe / "prompt.txt").write_text("Describe the image.\n", encoding="utf-8")
    (probe / "scoring" / "__pycache__").mkdir()
    (probe / "scoring" / "__pycache__" / "plugin.cpython-311.pyc").write_bytes(b"\0")
    dist = tmp_path / "dist"
    if importlib.util.find_spec("build") is not None:
        cmd = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(src)]
    else:
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
               "--wheel-dir", str(dist), str(src)]
    _run(cmd, cwd=tmp_path, env=_clean_env())
    [wheel] = dist.glob("mmtasks-*.whl")
    return wheel


def make_venv(root: Path) -> tuple[Path, Path]:
    """A fresh environment whose only way to this one's packages is a .pth of its site-packages."""
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(root)
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    ours = [p for p in site.getsitepackages() if Path(p).is_dir()] or [sysconfig.get_paths()["purelib"]]
    (Path(purelib) / "_shared_dependencies.pth").write_text("\n".join(ours) + "\n", encoding="utf-8")
    return python, Path(purelib)


def test_wheel_installs_and_runs_outside_the_source_tree(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)

    # --- what the wheel holds ----------------------------------------------------------------
    names = set(zipfile.ZipFile(wheel).namelist())
    tasks = _package_data("tasks")
    assert {p for p in tasks if p.endswith(".yaml")}, "no task YAML in the source tree?"
    # a benchmark folder's tests and sample-data generator stay in the source tree
    source_only = {p for p in tasks if p.split("/")[3] == "tests" or p.endswith("/make_sample.py")}
    assert {p for p in source_only if p.endswith("/make_sample.py")}, "no sample generator in the task folders?"
    assert not source_only & names, f"source-tree files in the wheel: {sorted(source_only & names)}"
    tasks -= source_only
    assert tasks <= names, f"task files missing from the wheel: {sorted(tasks - names)}"
    assert any(p.endswith(".txt") for p in tasks & names)  # prompt files (MMDU's judge prompt)
    plugins = {p for p in tasks if p.endswith(".py")}
    assert plugins <= names  # the benchmarks' Python plugin files
    presets = _package_data("models")
    assert presets and presets <= names
    site_files = _package_data("leaderboard")
    assert site_files == {f"mmtasks/leaderboard/site/{n}" for n in ("index.html", "app.js", "style.css")}
    assert site_files <= names
    viewer_files = _package_data("viewer")
    assert viewer_files == {f"mmtasks/viewer_site/{n}" for n in ("index.html", "app.js", "style.css")}
    assert viewer_files <= names
    reports = _package_data("reports")  # the model cards' report tables (--tasks report_...)
    assert "mmtasks/reports/report_qwen2.5_vl.yaml" in reports and reports <= names
    # every Python package of the tree is listed in pyproject.toml's packages
    packages = {p.parent.relative_to(REPO).as_posix() for p in PACKAGE.rglob("__init__.py")}
    assert {f"{p}/__init__.py" for p in packages} <= names, sorted(f"{p}/__init__.py" for p in packages)
    assert "mmtasks/tasks/realbench/leaderboard.yaml" in names  # a benchmark's leaderboard section
    assert "mmtasks/leaderboard/site/leaderboard.js" not in names  # built output is not source
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert {f"mmtasks/tasks/{PROBE_DIR}/scoring/plugin.py", f"mmtasks/tasks/{PROBE_DIR}/prompt.txt"} <= names
    assert not [n for n in names
                if n.startswith(("tests/", "data/", "scripts/", "benchmarks/", "tasks/", "models/", "leaderboard/", "viewer/", "reports/"))]

    # --- a fresh environment outside the source tree -------------------------------------------
    python, purelib = make_venv(tmp_path / "venv")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
          "--no-cache-dir", str(wheel)], cwd=tmp_path, env=_clean_env())
    bindir = python.parent
    mmtasks = bindir / ("mmtasks.exe" if os.name == "nt" else "mmtasks")
    assert mmtasks.is_file(), "the console script was not installed"
    work = tmp_path / "work"
    work.mkdir()
    env = _clean_env(MMTASKS_CACHE_DIR=str(tmp_path / "cache"), PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")

    # the mmtasks that runs is the wheel's, with its package data beside it
    where = _run([str(python), "-c", "import mmtasks, mmtasks.cli; print(mmtasks.__file__)"], cwd=work, env=env)
    installed = Path(where.stdout.strip()).resolve()
    assert installed.is_relative_to(purelib.resolve()), installed
    assert not installed.is_relative_to(REPO.resolve())

    # the same listings as the checkout's (which reads the same folders from the source tree)
    checkout_env = _clean_env(PYTHONPATH=str(REPO))
    for command in ("tasks", "models"):
        from_wheel = _run([str(mmtasks), command], cwd=work, env=env).stdout
        from_checkout = _run([sys.executable, "-m", "mmtasks", command], cwd=REPO, env=checkout_env).stdout
        assert from_wheel == from_checkout, f"mmtasks {command} differs between the wheel and the checkout"
    listing = _run([str(mmtasks), "tasks"], cwd=work, env=env).stdout
    listed = {line.split()[0] for line in listing.splitlines() if line and not line[0].isspace()}
    for task in ("realbench_ranking_hard", "mmdu", "mmrc", "muirbench", "llava_bench_wild"):
        assert task in listed
    models = _run([str(mmtasks), "models"], cwd=work, env=env).stdout
    for preset in presets:
        if Path(preset).name == PRICES_FILE:  # the price table beside the presets (in the wheel, above): not a preset
            continue
        assert f"  {Path(preset).stem} " in models

    # a sample task on a copy of data/sample, then the leaderboard
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    run_dir, board_dir = work / "R", work / "S"
    _run([str(mmtasks), "--tasks", "realbench_ranking_hard", "--model", "random", "--data-dir", str(data),
          "--output-path", str(run_dir), "--no-progress"], cwd=work, env=env)
    results = json.loads((run_dir / "results.json").read_text())
    assert results["n-samples"]["realbench_ranking_hard"] == {"original": 9, "effective": 9}
    assert 0 <= results["results"]["realbench_ranking_hard"]["acc"] <= 100
    assert results["git_hash"] is None  # an installed package is no checkout
    _run([str(mmtasks), "leaderboard", "build", str(run_dir), "--out", str(board_dir)], cwd=work, env=env)
    for name in ("index.html", "app.js", "style.css", "leaderboard.json", "leaderboard.js"):
        assert (board_dir / name).is_file(), name
    board = json.loads((board_dir / "leaderboard.json").read_text())
    realbench = next(b for b in board["benchmarks"] if b["id"] == "realbench")
    [row] = [e for e in realbench["entries"] if e["source"] == "run"]
    assert row["values"]["ranking_hard"]["value"] == results["results"]["realbench_ranking_hard"]["acc"]
    assert any(e["source"] == "paper" for e in realbench["entries"])  # its leaderboard.yaml (papers:) shipped
    # the run viewer's page ships too
    _run([str(mmtasks), "view", str(run_dir), "--out", str(board_dir / "views" / "R")], cwd=work, env=env)
    for name in ("index.html", "app.js", "style.css", "index.js"):
        assert (board_dir / "views" / "R" / name).is_file(), name
