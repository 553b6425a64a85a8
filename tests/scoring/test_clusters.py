"""Clustered standard errors declared in the task (issue 30): ``cluster: FIELD`` resamples whole
clusters, results.json records the cluster count, a record without the field is a preflight
error, and the samples carry each document's cluster (for ``mmtasks compare``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main

#: 9 questions about 3 videos; the model is right on every question about v1 and v3, wrong on v2
DOCS = [{"id": f"q{i}", "video_id": f"v{i // 3 + 1}", "question": f"question {i}", "answer": "yes"} for i in range(9)]


def _task(root: Path, cluster: str | None) -> Path:
    tasks = root / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    line = f"cluster: {cluster}\n" if cluster else ""
    (tasks / "clustered_qa.yaml").write_text(
        "task: clustered_qa\n"
        "dataset:\n  local: {dir: qa, file: qa.jsonl}\n  required_fields: {question: str, answer: str}\n"
        "prompt:\n  user: \"{{ doc.question }}\"\n"
        "target: \"{{ doc.answer }}\"\n"
        "metrics:\n  - {name: acc, function: exact_match, primary: true}\n" + line)
    return tasks


def _run(tmp_path: Path, cluster: str | None, docs: list[dict] = DOCS) -> tuple[int, Path]:
    root = tmp_path / (cluster or "independent")
    data = root / "data" / "qa"
    data.mkdir(parents=True)
    (data / "qa.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    replies = root / "replies.jsonl"
    replies.write_text("".join(json.dumps({"task": "clustered_qa", "doc_id": d["id"],
                                           "responses": ["no" if d.get("video_id") == "v2" else "yes"]}) + "\n"
                               for d in docs))
    out = root / "run"
    code = main(["--tasks", "clustered_qa", "--include-path", str(_task(root, cluster)), "--model", f"replay:{replies}",
                 "--data-dir", str(root / "data"), "--output-path", str(out), "--no-cache", "--no-progress"])
    return code, out


def test_cluster_field_resamples_whole_clusters(tmp_path: Path) -> None:
    code, clustered = _run(tmp_path, "video_id")
    assert code == 0
    code, independent = _run(tmp_path, None)
    assert code == 0
    c, i = (json.loads((r / "results.json").read_text()) for r in (clustered, independent))
    assert c["results"]["clustered_qa"]["acc"] == i["results"]["clustered_qa"]["acc"] == pytest.approx(600 / 9)
    assert c["n-samples"]["clustered_qa"]["clusters"] == 3 and "clusters" not in i["n-samples"]["clustered_qa"]
    # the analytic cluster-robust error doubles here (tests/comparison/test_compare.py); the bootstrap's, without
    # small-sample factors, grows by sqrt(((G-1)/G) / ((n-1)/n)) * 2 = 1.73 in expectation
    ratio = c["results"]["clustered_qa"]["acc_stderr"] / i["results"]["clustered_qa"]["acc_stderr"]
    assert 1.4 < ratio < 2.1, ratio
    rows = [json.loads(line) for line in (clustered / "samples" / "clustered_qa.jsonl").read_text().splitlines()]
    assert [r["cluster"] for r in rows] == [d["video_id"] for d in DOCS]


def test_a_record_without_the_cluster_field_is_a_preflight_error(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    docs = [dict(d) for d in DOCS]
    del docs[4]["video_id"]
    code, _ = _run(tmp_path, "video_id", docs)
    assert code == 2
    err = capsys.readouterr().err
    assert "q4" in err and "video_id" in err and "cluster" in err
