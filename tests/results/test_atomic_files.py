"""results.json and samples are replaced atomically: a reader (or the next run) sees the old
file or the new one, never half of one - also when the writer is killed mid-write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmtasks.core.sample import Sample
from mmtasks.results.files import OutputError, SamplesWriter, atomic_write_text

REPO = Path(__file__).resolve().parents[2]

WRITER = """
import json, sys
from pathlib import Path
from mmtasks.results.files import atomic_write_text
path = Path(sys.argv[1])
for version in range(1, 10**6):
    rows = [{"version": version, "row": i, "text": "x" * 200} for i in range(4000)]
    atomic_write_text(path, json.dumps({"version": version, "rows": rows}))
    print(version, flush=True)
"""


def test_killed_writer_leaves_a_whole_file(tmp_path: Path) -> None:
    """SIGKILL a process that keeps rewriting a ~1 MB results file, at several moments: the
    file always parses and is one whole version."""
    path = tmp_path / "results.json"
    atomic_write_text(path, json.dumps({"version": 0, "rows": []}))
    versions = []
    for delay in (0.05, 0.13, 0.21, 0.34, 0.55):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        proc.stdout.readline()  # one version written: the loop is running
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()
        data = json.loads(path.read_text())
        assert all(r["version"] == data["version"] for r in data["rows"]) and len(data["rows"]) == 4000
        versions.append(data["version"])
    assert versions[-1] >= 1


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.json"
    atomic_write_text(path, '{"old": true}')

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OutputError, match="No space left on device; kept: the previous results.json"):  # one line, not a traceback
        atomic_write_text(path, '{"new": true, "rows": [' + "1," * 10000 + "1]}")
    assert path.read_text() == '{"old": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # no temporary file left


def test_samples_stream_to_a_partial_file_then_land_in_document_order(tmp_path: Path) -> None:
    writer = SamplesWriter(tmp_path / "samples")
    samples = [Sample(task="t", doc_id=f"d{i}", doc_index=i, responses=[str(i)]) for i in (2, 0, 1)]
    for s in samples:
        writer.write(s)
    partial = tmp_path / "samples" / "t.jsonl.partial"
    assert [json.loads(line)["doc_id"] for line in partial.read_text().splitlines()] == ["d2", "d0", "d1"]
    assert not (tmp_path / "samples" / "t.jsonl").exists()  # no final file until the task is complete
    writer.finish("t", samples)
    final = (tmp_path / "samples" / "t.jsonl").read_text().splitlines()
    assert [json.loads(line)["doc_id"] for line in final] == ["d0", "d1", "d2"]
    assert not partial.exists()
