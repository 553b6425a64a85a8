"""Copying a built-in benchmark folder under a new task name and running it in a subprocess (against
the loopback chat server where a test gives one): the helpers of the MUIRBench, LLaVA-Bench and
video benchmark folders' own tests."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path



REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
PACKAGE_TASKS = REPO / "tasks"
MODEL, JUDGE = "mm-model", "mm-judge"
FAST = "max_retries=1"  # no HTTP errors are scripted here: judge re-asks are protocol-level


def copy_task_folder(bench: str, dest_root: Path, *, replace: dict[str, str] | None = None) -> str:
    """Copy ``tasks/<bench>`` to ``dest_root/<bench>_copy``; every task of the copy is renamed
    ``<name>_copy`` (``<bench>_copy`` for the folder's main task; a group ``g`` named by one line
    becomes ``g_copy``: a group belongs to the built-in folder) and ``replace`` is applied to
    ``<bench>.yaml``. Returns the copy's main task name."""
    dest = dest_root / f"{bench}_copy"
    shutil.copytree(PACKAGE_TASKS / bench, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for other in dest.glob("*.yaml"):
        text = other.read_text(encoding="utf-8")
        name = re.search(r"^task: (\S+)$", text, re.MULTILINE)
        if name is not None:
            text = text.replace(f"task: {name.group(1)}\n", f"task: {name.group(1)}_copy\n", 1)
            # a group belongs to its folder: the copy's tasks make a group of their own
            text = re.sub(r"^group: (\w+)$", r"group: \1_copy", text, flags=re.MULTILINE)
            other.write_text(text, encoding="utf-8")
    yaml_file = dest / f"{bench}.yaml"
    text = yaml_file.read_text(encoding="utf-8")
    assert f"\ntask: {bench}_copy\n" in f"\n{text}"
    for old, new in (replace or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    yaml_file.write_text(text, encoding="utf-8")
    return f"{bench}_copy"


def run_mmtasks(args: list[str], tmp_path: Path, *, base_url: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"),
                "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")})
    if base_url:
        env.update({"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key-000"})
    return subprocess.run([sys.executable, "-m", "mmtasks", *args, "--no-progress"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=240)


def results_of(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def samples_of(out: Path, task: str) -> list[dict]:
    return [json.loads(line) for line in (out / "samples" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def predictions_by_task(path: Path, replies: dict[str, dict[str, str]]) -> Path:
    """A replay file of ``replies``: task -> document id -> the reply."""
    path.write_text("".join(json.dumps({"task": task, "doc_id": doc, "responses": [reply]}) + "\n"
                            for task, by_doc in replies.items() for doc, reply in by_doc.items()), encoding="utf-8")
    return path


def text_of(sample: dict) -> str:
    return "".join(p["text"] for p in sample["prompt"][-1]["content"] if p["type"] == "text")

