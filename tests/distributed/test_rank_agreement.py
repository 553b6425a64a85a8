"""Ranks in separate folders, as on separate nodes (each its own data, weights and cache):
ranks that would evaluate different things are refused before any work, naming the rank, the
node and what differs; a silent rank is named after the silence timeout; the building blocks
(digests, differences, the scored-once check) directly."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmtasks.rank_agreement import (DocumentsUnaccounted, RunDigest, TaskDocuments, build_digest, check_scored_once,
                                    difference, silence_timeout, weights_fingerprint)
from mmtasks.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
HARNESS = Path(__file__).with_name("rank_in_folder.py")
TASK = "realbench_ranking_easy"


def nodes(tmp_path: Path, n: int = 2) -> Path:
    """``n`` node folders, each with its own copy of RealBench's sample data."""
    root = tmp_path / "nodes"
    for r in range(n):
        shutil.copytree(SAMPLE / "realbench", root / f"node{r}" / "data" / "realbench")
    return root


def torchrun(root: Path, args: list[str], env_extra: dict[str, str] | None = None, **popen: object) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", **(env_extra or {}))
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(HARNESS), str(root),
           "--tasks", TASK, "--data-dir", "data", "--output-path", str(root / "out"), "--no-progress", "--limit", "6", *args]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, text=True, **popen)  # type: ignore[call-overload]


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=300)  # a hang guard only
    return proc.returncode, err


@pytest.mark.slow
def test_stale_data_on_one_rank_is_refused(tmp_path):
    pytest.importorskip("torch.distributed")
    root = nodes(tmp_path)
    stale = root / "node1" / "data" / "realbench" / "ranking_easy.jsonl"
    lines = stale.read_text().splitlines(keepends=True)
    dropped = json.loads(lines[1])["id"]
    stale.write_text("".join(lines[:1] + lines[2:]))  # node 1's copy is one record short
    code, err = finish(torchrun(root, ["--model", "random"], stderr=subprocess.PIPE))
    assert code != 0
    line = f"rank 1 (node {socket.gethostname()}) differs from rank 0 (node {socket.gethostname()}): task {TASK!r}"
    assert line in err, err[-3000:]
    assert "document 1 is" in err and repr(dropped) in err  # the shifted document is named
    assert err.count("mmtasks: error:") == 1  # said once, by rank 0
    assert not (root / "out" / "results.json").exists()


@pytest.mark.slow
def test_other_weights_on_one_rank_are_refused(tmp_path):
    """Same file names, sizes and safetensors header, other values: the sampled chunks differ.
    Refused before the weights are loaded (they are not even a loadable model here)."""
    pytest.importorskip("torch.distributed")
    np = pytest.importorskip("numpy")
    from safetensors.numpy import save_file

    root = nodes(tmp_path)
    for r, value in ((0, 0.5), (1, 0.25)):
        weights = root / f"node{r}" / "weights"
        weights.mkdir()
        (weights / "config.json").write_text('{"model_type": "tiny"}')
        save_file({"w": np.full((64, 64), value, dtype=np.float32)}, str(weights / "model.safetensors"))
    code, err = finish(torchrun(root, ["--model", "hf:weights"], stderr=subprocess.PIPE))
    assert code != 0, err[-3000:]  # torchrun exits 1 when a rank fails (each rank exited 2)
    assert f"rank 1 (node {socket.gethostname()}) differs from rank 0" in err
    assert "the model's weights differ: model.safetensors is 16456 bytes" in err, err[-3000:]
    assert "no work was started" in err


@pytest.mark.slow
def test_a_silent_rank_is_named(tmp_path):
    """Rank 1 stops (SIGSTOP) after its documents; rank 0, waiting for it, names it once its
    heartbeats have stopped for --rank-timeout seconds, instead of waiting for days."""
    pytest.importorskip("torch.distributed")
    root = nodes(tmp_path)
    log = tmp_path / "stderr.txt"
    with log.open("w") as sink:
        proc = torchrun(root, ["--model", "random", "--rank-timeout", "4"], {"HANG_RANK": "1"}, stderr=sink)
        try:
            for _ in range(3000):  # a hang guard only: the loop ends when rank 0 has spoken
                if "has given no sign of life" in log.read_text() or proc.poll() is not None:
                    break
                time.sleep(0.1)
        finally:
            pid_file = root / "hung.pid"
            if pid_file.exists():
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            proc.wait(timeout=120)
    err = log.read_text()
    assert (f"rank 1 (node {socket.gethostname()}) has given no sign of life for 4 s (stopped, hung, or its node lost) "
            "while rank 0 waited for it to finish its share of the documents") in err, err[-3000:]
    assert proc.returncode != 0
    assert not (root / "out" / "results.json").exists()


def digest(**changes: object) -> RunDigest:
    base = dict(node="a", version="1", tasks={"t": "h"}, documents={"t": TaskDocuments(["x", "y"], ["1", "2"])},
                models={"model": "m"}, weights={})
    base.update(changes)
    return RunDigest(**base)  # type: ignore[arg-type]


def test_differences_are_named():
    assert difference(digest(), digest(node="b")) is None
    assert difference(digest(), digest(version="2")) == "mmtasks 2 there, 1 on rank 0"
    assert "task 't''s config differs" in difference(digest(), digest(tasks={"t": "g"}))
    assert difference(digest(), digest(documents={"t": TaskDocuments(["x"], ["1"])})) == \
        "task 't' has 1 documents there, 2 on rank 0 (stale data?; missing there: 'y')"
    assert difference(digest(), digest(documents={"t": TaskDocuments(["x", "y"], ["1", "3"])})) == \
        "task 't''s document 'y' has other content there than on rank 0 (stale data?)"
    assert "the model differs: n there, m on rank 0" == difference(digest(), digest(models={"model": "n"}))
    assert "weights differ: a.safetensors is missing there" in difference(
        digest(weights={"model": {"a.safetensors": "1"}}), digest(weights={"model": {}}))
    back = RunDigest.from_json(digest().to_json())
    assert back == digest()


def test_digest_hashes_records_and_weights(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"\x02\x00\x00\x00\x00\x00\x00\x00{}" + b"\x00" * 100_000)
    before = weights_fingerprint(str(tmp_path))
    assert set(before) == {"config.json", "model.safetensors"}
    data = bytearray((tmp_path / "model.safetensors").read_bytes())
    data[50_010] = 1  # chunk 8 of 16 starts at 100_010 * 8 // 16 = 50_005
    (tmp_path / "model.safetensors").write_bytes(bytes(data))
    assert weights_fingerprint(str(tmp_path))["model.safetensors"] != before["model.safetensors"]
    assert weights_fingerprint("openai-model-name") == {}
    d = build_digest("1", {"t": "{}"}, {"t": iter([("a", {"q": 1}), ("b", {"q": 2})])}, {"model": ("m", None)})
    assert d.documents["t"].ids == ["a", "b"] and d.documents["t"].hashes[0] != d.documents["t"].hashes[1]


def test_every_document_scored_once():
    check_scored_once({"t": ["a", "b"]}, {"t": [("a", 0), ("b", 0)]}, {"t": 1})
    with pytest.raises(DocumentsUnaccounted, match=r"task 't': scored more than once or not in the run: 'a'; never scored: 'b'"):
        check_scored_once({"t": ["a", "b"]}, {"t": [("a", 0), ("a", 0)]}, {"t": 1})
    with pytest.raises(DocumentsUnaccounted, match="never scored: 'a'"):
        check_scored_once({"t": ["a"]}, {"t": [("a", 0)]}, {"t": 2})


def test_silence_timeout_setting():
    assert silence_timeout(None, {}) == 600
    assert silence_timeout(None, {"MMTASKS_RANK_TIMEOUT_S": "30"}) == 30
    assert silence_timeout(5, {"MMTASKS_RANK_TIMEOUT_S": "30"}) == 5
    with pytest.raises(ConfigError, match="MMTASKS_RANK_TIMEOUT_S"):
        silence_timeout(None, {"MMTASKS_RANK_TIMEOUT_S": "soon"})
