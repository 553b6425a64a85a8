"""Running a copy of a built-in benchmark folder from an include path, in a subprocess, with scripted
replies (``--model replay:``), and reading what it wrote: the helpers of the benchmark folders' own
end-to-end tests (``tasks/<bench>/tests/``)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path


from tests.builders import folder_digest

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
PACKAGE_TASKS = REPO / "tasks"


@contextlib.contextmanager
def package_unchanged(*benches: str) -> Iterator[None]:
    """Nothing a test does may touch the package's own task folders (use in an autouse fixture)."""
    before = {b: folder_digest(PACKAGE_TASKS / b) for b in benches}
    yield
    assert {b: folder_digest(PACKAGE_TASKS / b) for b in before} == before


def plugin(bench: str, file: str):
    from mmtasks import registry

    path = registry.load_plugin_file(PACKAGE_TASKS / bench / file, roots=[PACKAGE_TASKS / bench])
    return registry, path


def copy_bench(bench: str, dest_root: Path, *, replace: dict[str, str] | None = None) -> None:
    """Copy ``tasks/<bench>`` to ``dest_root/<bench>_copy``: every ``task: NAME`` becomes
    ``task: NAME_copy`` and ``group: G`` becomes ``group: G_copy`` (``replace`` applied too)."""
    dest = dest_root / f"{bench}_copy"
    shutil.copytree(PACKAGE_TASKS / bench, dest, ignore=shutil.ignore_patterns("__pycache__"))
    done = set()
    for yaml_file in dest.glob("*.yaml"):
        if yaml_file.name == "leaderboard.yaml":
            yaml_file.unlink()  # the copy's tasks are not the tab's
            continue
        text = yaml_file.read_text(encoding="utf-8")
        text = re.sub(r"^task: (\S+)$", r"task: \1_copy", text, flags=re.M)
        text = re.sub(r"^group: (\S+)$", r"group: \1_copy", text, flags=re.M)
        for old, new in (replace or {}).items():
            if old in text:
                text = text.replace(old, new)
                done.add(old)
        yaml_file.write_text(text, encoding="utf-8")
    assert done == set(replace or {}), done


def run_mmtasks(args: list[str], tmp_path: Path, *, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"),
                "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")})
    return subprocess.run([sys.executable, "-m", "mmtasks", *args, "--no-progress"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=240)


def results_of(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def samples_of(out: Path, task: str) -> dict[str, dict]:
    lines = (out / "samples" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()
    return {s["doc_id"]: s for s in map(json.loads, lines)}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def predictions(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path.write_text("".join(json.dumps({"task": t, "doc_id": d, "responses": [r]}) + "\n" for t, d, r in rows),
                    encoding="utf-8")
    return path


def run_copy(tmp_path: Path, bench: str, hub_id: str, rows: list[tuple[str, str, str]], *, hub: bool,
             cwd: Path = REPO) -> tuple[subprocess.CompletedProcess, Path]:
    """Run the copy of ``tasks/<bench>`` (its group or main task ``<bench>_copy``) with ``rows`` replayed:
    from the local sample under ``--data-dir``, or (``hub``) from the sample's Hub-style folder named
    in place of the dataset ``hub_id``. Returns the process and the output folder."""
    tasks = tmp_path / "tasks"
    replace = {f"path: {hub_id}": f"path: {json.dumps(str(SAMPLE / bench / 'hf'))}"} if hub else None
    copy_bench(bench, tasks, replace=replace)
    out = tmp_path / "out"
    data = [] if hub else ["--data-dir", str(SAMPLE)]
    proc = run_mmtasks(["--tasks", f"{bench}_copy", "--include-path", str(tasks), *data,
                        "--model", f"replay:{predictions(tmp_path / 'pred.jsonl', rows)}",
                        "--output-path", str(out)], tmp_path, cwd=cwd)
    return proc, out


def parts_of(sample: dict) -> list[str]:
    return ["<img>" if p["type"] == "image" else p["text"] for p in sample["prompt"][-1]["content"]]


# --- a copy whose files get their own replacements (MMMU-Pro, MIRB, MMT-Bench, LLaVA-Interleave) ---

def copy_bench_files(bench: str, dest_root: Path, *, replace: dict[str, dict[str, str]] | None = None) -> None:
    """Copy ``tasks/<bench>`` to ``dest_root/<bench>_copy``: every ``task: NAME`` becomes ``task: NAME_copy``
    and ``group: G`` becomes ``group: G_copy``; ``replace``: file name -> {old: new} applied to that file."""
    dest = dest_root / f"{bench}_copy"
    shutil.copytree(PACKAGE_TASKS / bench, dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "leaderboard.yaml").unlink(missing_ok=True)  # the copy's tasks are not the tab's
    for yaml_file in dest.glob("*.yaml"):
        text = yaml_file.read_text(encoding="utf-8")
        text = re.sub(r"^task: (\S+)$", r"task: \1_copy", text, flags=re.M)
        text = re.sub(r"^group: ([^\s\[]\S*)$", r"group: \1_copy", text, flags=re.M)  # not a list (group: [])
        for old, new in (replace or {}).get(yaml_file.name, {}).items():
            assert old in text, (yaml_file.name, old)
            text = text.replace(old, new)
        yaml_file.write_text(text, encoding="utf-8")


def run_copy_target(tmp_path: Path, bench: str, target: str, rows: list[tuple[str, str, str]], *,
             hub: dict[str, dict[str, str]] | None = None) -> tuple[subprocess.CompletedProcess, Path]:
    """Run ``target`` of the copy of ``tasks/<bench>`` with ``rows`` (task, doc, reply) replayed: from the
    local sample under ``--data-dir``, or (``hub``: the per-file replacements naming the Hub-style
    folders in place of the dataset) from the parquet copy."""
    tasks = tmp_path / "tasks"
    copy_bench_files(bench, tasks, replace=hub)
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": t, "doc_id": d, "responses": [r]}) + "\n" for t, d, r in rows),
                    encoding="utf-8")
    out = tmp_path / "out"
    data = [] if hub else ["--data-dir", str(SAMPLE)]
    proc = run_mmtasks(["--tasks", target, "--include-path", str(tasks), *data, "--model", f"replay:{pred}",
                        "--output-path", str(out)], tmp_path)
    return proc, out


def hub_folder(bench: str, name: str) -> str:
    return json.dumps(str(SAMPLE / bench / name))

