"""``mmtasks publish-results RUN --to ORG/MODEL`` through the real huggingface_hub client against the
loopback Hub (tests/hub_server.py): one pull request whose files parse as the Hub's
``.eval_results`` format (huggingface_hub's own parser) with the run's scores, the dataset's commit
and the view's link; the main branch and every other file untouched; a file mmtasks did not write
refused; ``--push`` commits to main; a rerun replaces only mmtasks's own files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.hub_server import running_hub

pytest.importorskip("huggingface_hub")

REPO = Path(__file__).resolve().parents[2]
TOKEN = "hf_loopbackTokenValue0123456789abcdef"
VIEW = "https://huggingface.co/spaces/org/board/resolve/main/views/run/index.html"
TASK = """\
task: {name}
dataset: {{hub: {{repo: org/cardqa, files: [{{path: {file}}}]}}, images_field: null}}
prompt: {{user: "{{{{ doc.question }}}}"}}
target: "{{{{ doc.answer }}}}"
metrics:
  - {{name: em, function: exact_match, primary: true}}
"""
RECORDS = {"a.jsonl": [{"id": "a1", "question": "1+1?", "answer": "2"}, {"id": "a2", "question": "2+2?", "answer": "4"}],
           "b.jsonl": [{"id": "b1", "question": "3+3?", "answer": "6"}]}
#: the replies: a1 right, a2 wrong (card_a: 50), b1 right (card_b: 100)
REPLIES = [("card_a", "a1", "2"), ("card_a", "a2", "5"), ("card_b", "b1", "6")]
OTHERS = {"README.md": b"---\nlicense: mit\n---\n# a model\n", "config.json": b"{}",
          ".eval_results/gpqa.yaml": b"- dataset: {id: Idavidrein/gpqa, task_id: gpqa_diamond}\n  value: 41.0\n"}


def _env(tmp_path: Path, endpoint: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING", "TRANSFORMERS_", "MMTASKS_"))}
    env.update({"PYTHONPATH": str(REPO), "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf-home"),
                "MMTASKS_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
                "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_TOKEN": TOKEN})
    return env


def _mmtasks(args: list[str], tmp_path: Path, endpoint: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mmtasks", *args], cwd=tmp_path, env=_env(tmp_path, endpoint),
                          capture_output=True, text=True, timeout=300, check=False)


def _run(tmp_path: Path, endpoint: str, limit: int | None = None) -> Path:
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    for name, file in (("card_a", "a.jsonl"), ("card_b", "b.jsonl")):
        (tasks / f"{name}.yaml").write_text(TASK.format(name=name, file=file), encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": t, "doc_id": d, "responses": [r]}) + "\n" for t, d, r in REPLIES))
    out = tmp_path / ("out" if limit is None else f"out-limit{limit}")
    proc = _mmtasks(["--tasks", "card_a,card_b", "--include-path", str(tasks), "--model", f"replay:{pred}",
                     "--output-path", str(out), "--no-progress", *(["--limit", str(limit)] if limit else [])],
                    tmp_path, endpoint)
    assert proc.returncode == 0, proc.stderr
    return out


def _seed(state) -> tuple:
    data = state.seed("dataset", "org/cardqa", {name: "".join(json.dumps(r) + "\n" for r in rows).encode()
                                               for name, rows in RECORDS.items()})
    model = state.seed("model", "org/model", OTHERS)
    return data, model


def test_one_pull_request_whose_files_parse_as_eval_results_and_touch_nothing_else(tmp_path: Path) -> None:
    from huggingface_hub import parse_eval_result_entries

    with running_hub({TOKEN: {"org"}}) as (endpoint, state):
        data, model = _seed(state)
        out = _run(tmp_path, endpoint)
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        before_main = dict(model.files)
        before_commits = list(model.commits)

        proc = _mmtasks(["publish-results", str(out), "--to", "org/model", "--view-url", VIEW], tmp_path, endpoint)
        assert proc.returncode == 0, proc.stderr
        assert "opened a pull request on model org/model" in proc.stdout and "/discussions/1" in proc.stdout

        assert len(model.prs) == 1 and model.files == before_main and model.commits == before_commits  # main untouched
        pr = model.prs[0]
        assert sorted(pr["paths"]) == [".eval_results/.mmtasks-results.json", ".eval_results/cardqa.yaml"]
        assert pr["deleted"] == []
        assert {k: v for k, v in pr["files"].items() if k not in pr["paths"]} == before_main  # nothing else changed
        entries = parse_eval_result_entries(yaml.safe_load(pr["files"][".eval_results/cardqa.yaml"]))
        assert [(e.dataset_id, e.task_id, e.value) for e in entries] == [("org/cardqa", "card_a", 50.0),
                                                                         ("org/cardqa", "card_b", 100.0)]
        assert results["results"]["card_a"]["em"] == 50.0 and results["results"]["card_b"]["em"] == 100.0
        assert all(e.dataset_revision == data.head and e.source_url == VIEW and e.source_name == "mmtasks run"
                   and e.notes is None and e.date for e in entries)
        manifest = json.loads(pr["files"][".eval_results/.mmtasks-results.json"])
        assert manifest == {"writer": "mmtasks", "files": [".eval_results/cardqa.yaml"]}

        # a variant (--limit) is another file, its notes saying what differs
        limited = _run(tmp_path, endpoint, limit=1)
        proc = _mmtasks(["publish-results", str(limited), "--to", "org/model", "--view-url", VIEW, "--push"], tmp_path, endpoint)
        assert proc.returncode == 0, proc.stderr
        assert len(model.prs) == 1 and len(model.commits) == len(before_commits) + 1  # --push: one commit on main
        assert sorted(set(model.files) - set(before_main)) == [".eval_results/.mmtasks-results.json",
                                                                ".eval_results/cardqa_limit-1.yaml"]
        [entry, _] = parse_eval_result_entries(yaml.safe_load(model.files[".eval_results/cardqa_limit-1.yaml"]))
        assert entry.notes == "limit 1" and entry.value == 100.0  # a1 only: right
        assert {k: model.files[k] for k in before_main} == before_main


def test_a_file_mmtasks_did_not_write_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    with running_hub({TOKEN: {"org"}}) as (endpoint, state):
        _, model = _seed(state)
        model.files[".eval_results/cardqa.yaml"] = b"- dataset: {id: org/cardqa, task_id: card_a}\n  value: 1\n"
        out = _run(tmp_path, endpoint)
        before = dict(model.files)
        proc = _mmtasks(["publish-results", str(out), "--to", "org/model", "--view-url", VIEW], tmp_path, endpoint)
        assert proc.returncode == 1 and ".eval_results/cardqa.yaml is already there and mmtasks did not write it" in proc.stderr
        assert "Traceback" not in proc.stderr and model.prs == [] and model.files == before
        # --dry-run prints the files and sends no commit
        dry = _mmtasks(["publish-results", str(out), "--to", "org/model", "--view-url", VIEW, "--dry-run"], tmp_path, endpoint)
        assert dry.returncode == 0 and "--- .eval_results/cardqa.yaml" in dry.stdout and model.prs == []
        bad = _mmtasks(["publish-results", str(out), "--to", "org/model", "--view-url", "views/run"], tmp_path, endpoint)
        assert bad.returncode == 2 and "field '--view-url'" in bad.stderr
