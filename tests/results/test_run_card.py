"""results.json's run card (``run_card``, mmtasks/results/run_card.py): a local-data run names its
records file's SHA-256 (one changed record changes it), a Hub-data run the dataset's commit (on the
loopback Hub), every run its documents' ids hash, the versions and the machine; a local checkpoint
is named by its config and safetensors headers, never its tensors; ``mmtasks compare`` warns when
two runs read different data; the run viewer and the leaderboard show the card."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import mmtasks
from mmtasks.core.provenance import local_checkpoint_hash, model_revision
from mmtasks.results.schema import read_results

REPO = Path(__file__).resolve().parents[2]
TASK = "realbench_ranking_easy"

QA_TASK = """\
task: card_qa
dataset: {hub: {repo: org/cardqa, files: [{path: records.jsonl}]}, images_field: null}
prompt: {user: "{{ doc.question }}"}
target: "{{ doc.answer }}"
metrics:
  - {name: em, function: exact_match, primary: true}
"""
RECORDS = [{"id": "a", "question": "1+1?", "answer": "2"}, {"id": "b", "question": "2+2?", "answer": "4"}]


def _sample_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(REPO / "data" / "sample" / "realbench", data / "realbench")
    return data


def _run(data: Path, out: Path) -> dict:
    mmtasks.evaluate(tasks=TASK, model="random", data_dir=data, output_path=out, limit=3, use_cache=False)
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_a_local_data_run_names_its_records_by_content_and_one_changed_record_changes_it(tmp_path: Path) -> None:
    data = _sample_data(tmp_path)
    records = data / "realbench" / "ranking_easy.jsonl"
    first = _run(data, tmp_path / "a")
    card = first["run_card"]
    assert card["data"][TASK] == {"source": "local", "file": "realbench/ranking_easy.jsonl",
                                  "sha256": hashlib.sha256(records.read_bytes()).hexdigest()}
    ids = [json.loads(line)["id"] for line in records.read_text(encoding="utf-8").splitlines()[:3]]
    assert card["doc_ids"][TASK] == hashlib.sha256("".join(i + "\n" for i in ids).encode()).hexdigest()
    assert card["versions"]["mmtasks"] == mmtasks.__version__ and card["versions"]["python"]
    assert card["hardware"]["cpus"] == os.cpu_count() and card["model"] is None  # the random baseline names no weights
    read_results(tmp_path / "a" / "results.json")  # typed: the schema reads it back

    # one record's text changed (its id and target kept): another content hash, the same ids
    lines = records.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["text"] += " (edited)"
    lines[1] = json.dumps(row, ensure_ascii=False)
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    second = _run(data, tmp_path / "b")["run_card"]
    assert second["data"][TASK]["sha256"] == hashlib.sha256(records.read_bytes()).hexdigest() != card["data"][TASK]["sha256"]
    assert second["doc_ids"] == card["doc_ids"]

    # compare says the two runs read different data (and still compares: the ids and targets match)
    from mmtasks.comparison.runs import compare

    report = compare(tmp_path / "a", tmp_path / "b")
    assert len(report.warnings) == 1 and TASK in report.warnings[0] and "different data revisions" in report.warnings[0]
    assert compare(tmp_path / "a", tmp_path / "a").warnings == []
    proc = subprocess.run([sys.executable, "-m", "mmtasks", "compare", str(tmp_path / "a"), str(tmp_path / "b")],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "warning: task 'realbench_ranking_easy' read different data revisions" in proc.stderr

    # the run viewer's header and the leaderboard's run reference carry the card
    from mmtasks.leaderboard.build import build_leaderboard
    from mmtasks.leaderboard.results import load_run
    from mmtasks.view.records import load_view_run

    lines_shown = load_view_run(tmp_path / "a").describe("A")["card"]
    assert f"data {TASK}: local realbench/ranking_easy.jsonl@{card['data'][TASK]['sha256'][:12]}" in lines_shown
    assert any(line.startswith("software: mmtasks ") for line in lines_shown)
    board = build_leaderboard([load_run(tmp_path / "a")])
    refs = [ref for b in board.benchmarks for e in b.entries for ref in e.runs]
    assert refs and refs[0].data_revisions[TASK] == f"local realbench/ranking_easy.jsonl@{card['data'][TASK]['sha256'][:12]}"
    assert refs[0].software["mmtasks"] == mmtasks.__version__


def test_a_hub_data_run_holds_the_datasets_commit(tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub")
    from tests.hub_server import running_hub

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "card_qa.yaml").write_text(QA_TASK, encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "card_qa", "doc_id": r["id"], "responses": [r["answer"]]}) + "\n"
                            for r in RECORDS), encoding="utf-8")
    with running_hub() as (endpoint, state):
        repo = state.seed("dataset", "org/cardqa", {"records.jsonl": "".join(json.dumps(r) + "\n" for r in RECORDS).encode()})
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_", "HF_", "TRANSFORMERS_"))}
        env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": endpoint,
                    "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1"})
        proc = subprocess.run([sys.executable, "-m", "mmtasks", "--tasks", "card_qa", "--include-path", str(tasks),
                               "--model", f"replay:{pred}", "--output-path", str(tmp_path / "out"), "--no-progress"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
        assert proc.returncode == 0, proc.stderr
        card = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["run_card"]
        assert card["data"]["card_qa"] == {"source": "hub", "repo": "org/cardqa", "commit": repo.head}
        assert len(repo.head) == 40
        assert card["doc_ids"]["card_qa"] == hashlib.sha256(b"a\nb\n").hexdigest()


def _safetensors(path: Path, header: dict, payload: bytes) -> None:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + payload)


def test_a_local_checkpoint_is_named_by_its_config_and_headers_never_its_tensors(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "config.json").write_text('{"model_type": "x"}')
    header = {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    _safetensors(ckpt / "model.safetensors", header, b"\x00" * 8)
    (ckpt / "tokenizer.json").write_text("{}")
    first = local_checkpoint_hash(ckpt)
    _safetensors(ckpt / "model.safetensors", header, b"\x01" * 8)  # other weights under the same header: not read
    assert local_checkpoint_hash(ckpt) == first
    (ckpt / "tokenizer.json").write_text('{"v": 2}')  # not a weights file
    assert local_checkpoint_hash(ckpt) == first
    _safetensors(ckpt / "model.safetensors", {"w": {"dtype": "F16", "shape": [4], "data_offsets": [0, 8]}}, b"\x01" * 8)
    assert local_checkpoint_hash(ckpt) != first
    second = local_checkpoint_hash(ckpt)
    (ckpt / "config.json").write_text('{"model_type": "y"}')
    assert local_checkpoint_hash(ckpt) != second
    revision = model_revision(str(ckpt))
    assert revision.source == "local" and revision.name == "ckpt" and revision.sha256 == local_checkpoint_hash(ckpt)
    # a Hub name with a pinned commit is that commit, asked of nobody
    pinned = "0123456789abcdef0123456789abcdef01234567"
    assert model_revision("org/model", pinned).commit == pinned


def test_tasks_on_one_dataset_ask_for_its_commit_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """MMMU's 30 subjects read one Hub dataset: the card asks for its commit once, not 30 times."""
    from types import SimpleNamespace

    from mmtasks.results import run_card

    asked: list[tuple[str, str | None]] = []

    def counted(repo: str, revision: str | None, repo_type: str) -> str:
        asked.append((repo, revision))
        return "c" * 40

    monkeypatch.setattr(run_card, "hub_commit", counted)
    hf = SimpleNamespace(path="MMMU/MMMU", revision=None, data_files=None)
    configs = {f"mmmu_{i}": SimpleNamespace(dataset=SimpleNamespace(local=None, hf=hf, hub=None)) for i in range(30)}
    card = run_card.build_card(configs, None, {}, None)  # type: ignore[arg-type]
    assert asked == [("MMMU/MMMU", None)]
    assert {d.commit for d in card.data.values()} == {"c" * 40} and len(card.data) == 30
