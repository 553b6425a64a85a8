"""``--log-to wandb,mlflow,trackio`` (mmtasks/trackers): a run logged to W&B in offline mode, an
MLflow local file store and Trackio's local store, each read back through its own files or client
and compared equal to results.json (every metric per task and group, with stderr, coverage and
problems), with the config, a samples table per task holding images, and the view as an artifact;
the same command again (a resume) logs to the same tracker runs. Bad flags are one line.

The runs are subprocesses: each tracker library keeps process-wide state (its active run, its
storage folder read at import)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mmtasks.trackers.records import metrics_of, token_totals

pytest.importorskip("wandb")
pytest.importorskip("mlflow")
pytest.importorskip("trackio")

REPO = Path(__file__).resolve().parents[2]
TASKS = "realbench_ranking_easy,realbench_ranking_hard"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "MLFLOW_", "TRACKIO_", "MMTASKS_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"), "WANDB_MODE": "offline",
                "WANDB_SILENT": "true", "MLFLOW_ALLOW_FILE_STORE": "true", "TRACKIO_DIR": str(tmp_path / "trackio"),
                "HF_HUB_OFFLINE": "1"})
    return env


def _run(tmp_path: Path, out: Path) -> subprocess.CompletedProcess:
    args = {"project": "evals", "dir": str(tmp_path / "wandb"), "tracking_uri": (tmp_path / "mlruns").as_uri(),
            "samples": 2, "tags": ["ci"]}
    return subprocess.run([sys.executable, "-m", "mmtasks", "--tasks", TASKS, "--model", "random", "--data-dir",
                           str(REPO / "data" / "sample"), "--limit", "3", "--output-path", str(out), "--no-progress",
                           "--log-to", "wandb,mlflow,trackio", "--log-args", json.dumps(args)],
                          cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=600)


def wandb_records(path: Path) -> list[Any]:
    """The records of a W&B run's transaction log (``run-<id>.wandb``): a 7-byte header (``:W&B``,
    a 2-byte magic, a version byte), then LevelDB's log format (32 KiB blocks; each chunk a CRC-32C,
    a little-endian 2-byte length and a type: 1 full, 2 first, 3 middle, 4 last), each record a
    ``wandb.proto.wandb_internal_pb2.Record`` (as wandb's own reader, sdk/internal/datastore.py
    of wandb 0.17, read them)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    out, pos, pending, block = [], 7, b"", 32768
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        chunk, pos = data[pos + 7:pos + 7 + length], pos + 7 + length
        if kind in (1, 4):
            record = pb.Record()
            record.ParseFromString(pending + chunk if kind == 4 else chunk)
            out.append(record)
            pending = b""
        elif kind in (2, 3):
            pending += chunk
    return out


def _expected(out: Path) -> dict[str, float]:
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    tokens = {}
    for task in results["results"]:
        rows = [json.loads(line) for line in (out / "samples" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()]
        if (totals := token_totals(rows)):
            tokens[task] = totals
    return metrics_of(results, tokens)


def test_three_trackers_read_back_equal_to_results_json_and_a_rerun_logs_to_the_same_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3's file store, kept for local use (its opt-in)
    out = tmp_path / "out"
    proc = _run(tmp_path, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    expected = _expected(out)
    # what is compared: each task's metrics with stderr, coverage, problems; the group's average
    for key in ("realbench_ranking_easy/acc", "realbench_ranking_easy/acc_stderr", "realbench_ranking_hard/acc",
                "realbench_ranking_easy/coverage/percent", "realbench_ranking_easy/problems/unparsed",
                "groups/realbench_ranking/average"):
        assert key in expected, key
    assert expected["realbench_ranking_easy/acc"] == results["results"]["realbench_ranking_easy"]["acc"]
    assert expected["groups/realbench_ranking/average"] == results["groups"]["realbench_ranking"]["average"]
    ids = json.loads((out / ".mmtasks-trackers.json").read_text(encoding="utf-8"))
    assert set(ids) == {"wandb", "mlflow", "trackio"}

    # --- W&B offline: the run's transaction log -------------------------------------------
    [log_file] = (tmp_path / "wandb").glob(f"wandb/offline-run-*-{ids['wandb']}/run-{ids['wandb']}.wandb")
    records = wandb_records(log_file)
    summary: dict[str, Any] = {}
    config: dict[str, Any] = {}
    artifacts: list[tuple[str, list[str]]] = []
    for r in records:
        kind = r.WhichOneof("record_type")
        if kind == "summary":
            for u in r.summary.update:
                summary["/".join(u.nested_key) if u.nested_key else u.key] = json.loads(u.value_json)
        elif kind in ("run", "config"):
            for u in (r.run.config if kind == "run" else r.config).update:
                config[u.key] = json.loads(u.value_json)
        elif kind == "artifact":
            artifacts.append((r.artifact.type, [c.path for c in r.artifact.manifest.contents]))
    assert {k: summary[k] for k in expected} == expected
    assert config["config"]["model"] == "random" and config["run_card"]["data"] == results["run_card"]["data"]
    for task in ("realbench_ranking_easy", "realbench_ranking_hard"):
        [table] = [paths for kind, paths in artifacts if kind == "run_table" and f"samples/{task}.table.json" in paths]
        assert any(p.startswith("media/images/") and p.endswith(".png") for p in table), artifacts  # the images
    [view] = [paths for kind, paths in artifacts if kind == "mmtasks-view"]
    assert "index.html" in view and any(p.endswith("rows.js") for p in view)
    table_files = list(log_file.parent.glob("files/media/table/samples/realbench_ranking_easy_*.table.json"))
    table = json.loads(table_files[0].read_text())
    assert table["columns"] == ["doc_id", "image", "prompt", "response", "parsed", "target", "metrics", "failures"]
    assert [row[0] for row in table["data"]] == ["rank-e-001", "rank-e-002"]  # samples=2: the first two documents

    # --- MLflow local file store: its client --------------------------------------------------
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=(tmp_path / "mlruns").as_uri())
    run = client.get_run(ids["mlflow"])
    assert run.data.metrics == expected and run.info.status == "FINISHED"
    assert run.data.params["config.model"] == "random" and run.data.tags.get("mmtasks.tag.ci") == "true"
    assert client.get_experiment(run.info.experiment_id).name == "evals"
    samples_dir = [a.path for a in client.list_artifacts(ids["mlflow"], "samples")]
    assert sorted(samples_dir) == ["samples/realbench_ranking_easy.json", "samples/realbench_ranking_hard.json"]
    local = Path(client.download_artifacts(ids["mlflow"], "samples/realbench_ranking_easy.json", str(tmp_path / "dl")))
    logged = json.loads(local.read_text())
    assert logged["columns"][:2] == ["doc_id", "image"] and len(logged["data"]) == 2
    assert all(row[1]["type"] == "image" for row in logged["data"])
    assert "view/index.html" in [a.path for a in client.list_artifacts(ids["mlflow"], "view")]

    # --- Trackio local store: its storage API (in a process of its own: the folder is read at import) ---
    trackio_logs = _trackio(tmp_path, ids["trackio"])
    merged: dict[str, Any] = {}
    for row in trackio_logs["logs"]:
        merged.update(row)
    assert {k: merged[k] for k in expected} == expected
    assert merged["samples/realbench_ranking_easy"]["_type"] == "trackio.table"
    cells = merged["samples/realbench_ranking_easy"]["_value"]
    assert [c["doc_id"] for c in cells] == ["rank-e-001", "rank-e-002"] and cells[0]["image"]["_type"] == "trackio.image"
    assert trackio_logs["config"]["config"]["model"] == "random"
    assert trackio_logs["artifacts"]

    # --- the same command again: the same tracker runs ----------------------------------------
    again = _run(tmp_path, out)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads((out / ".mmtasks-trackers.json").read_text(encoding="utf-8")) == ids
    assert len(list((tmp_path / "wandb").glob("wandb/offline-run-*"))) == 2  # two sessions ...
    assert {p.name.rsplit("-", 1)[1] for p in (tmp_path / "wandb").glob("wandb/offline-run-*")} == {ids["wandb"]}  # ... one run
    history = client.get_metric_history(ids["mlflow"], "realbench_ranking_easy/acc")
    assert len(history) == 2 and len(client.search_runs([run.info.experiment_id])) == 1
    assert len(_trackio(tmp_path, ids["trackio"])["runs"]) == 1


def _trackio(tmp_path: Path, name: str) -> dict[str, Any]:
    script = (
        "import json, sys\n"
        "from trackio import SQLiteStorage as S\n"
        f"name = {name!r}\n"
        "print(json.dumps({'logs': S.get_logs('evals', name), 'config': S.get_run_config('evals', name),\n"
        "                  'runs': S.get_runs('evals'), 'artifacts': S.list_artifacts('evals')}, default=str))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_bad_tracker_flags_are_one_line_before_any_model(tmp_path: Path) -> None:
    env = _env(tmp_path)
    base = [sys.executable, "-m", "mmtasks", "--tasks", "realbench_ranking_easy", "--model", "random", "--data-dir",
            str(REPO / "data" / "sample"), "--limit", "1", "--no-progress"]
    for extra, message in ((["--log-to", "tensorboard"], "field '--log-to': unknown tracker 'tensorboard'"),
                           (["--log-to", "wandb", "--log-args", "projekt=x"], "unknown key 'projekt'"),
                           (["--log-to", "wandb", "--log-args", "{bad"], "field '--log-args': not a JSON object"),
                           # the library's own refusal (a tracking URI it has no store for): one line too
                           (["--log-to", "mlflow", "--log-args", "tracking_uri=nosuchstore://x"],
                            "--log-to mlflow: the tracker did not start")):
        proc = subprocess.run(base + extra, env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
