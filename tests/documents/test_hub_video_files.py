"""``dataset.video_files`` (mmtasks/documents/hub_files.py, paths.py): videos that lie as files of a
Hub dataset repository, each downloaded alone into the Hugging Face cache when a document needs it.
The key's checks at load, the confinement of the paths records name (the snapshot folder, whose
files are links into the repository's ``blobs/``; ``under``), and a task of this file's own read
end to end from the loopback Hub (tests/hub_server.py): the videos its documents name fetched once,
none again, nothing offline. The built-in tasks that use the key test it on their own data
(tasks/<bench>/tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from mmtasks.config.task_config import DatasetConfig
from mmtasks.documents.paths import ConfinedPaths
from mmtasks.errors import DataError

REPO = Path(__file__).resolve().parents[2]
#: two short videos of the bundled sample (other bytes: the cache keeps one blob for the same bytes)
VIDEOS = REPO / "data" / "sample" / "mlvu" / "MLVU" / "video"
CLIPS = (VIDEOS / "1_plotQA" / "movie101_1.mp4", VIDEOS / "2_needle" / "needle_1.mp4")


def test_the_key_is_checked_when_the_task_loads() -> None:
    video = {"path": "videos/{{ doc.video }}", "num_frames": 4}
    hub = {"repo": "org/clips", "files": [{"path": "records.json"}]}
    ok = DatasetConfig.model_validate({"hub": hub, "video": video, "video_files": {"under": "videos"}})
    assert ok.video_files is not None and ok.video_files.under == "videos"
    assert DatasetConfig.model_validate({"hf": {"path": "org/clips"}, "video": video, "video_files": {}}).video_files
    for bad, words in [
        ({"local": {"dir": "x", "file": "y.json"}, "video": video, "video_files": {}}, "hf or hub: name one"),
        ({"hub": hub, "video_files": {}}, "give dataset.video too"),
        ({"hub": hub, "video": video, "video_files": {}, "video_archives": [{"path": "v.zip"}]}, "not both"),
        ({"hub": hub, "video": video, "video_files": {"under": "../x"}}, "not a path inside the repository"),
        ({"hub": hub, "video": video, "video_files": {"under": "/abs"}}, "not a path inside the repository"),
        ({"hub": hub, "video": video, "video_files": {"folder": "x"}}, "Extra inputs"),
    ]:
        with pytest.raises(ValidationError, match=words):
            DatasetConfig.model_validate(bad)


def cache_layout(tmp_path: Path) -> tuple[Path, Path]:
    """A Hugging Face cache's repository folder: a snapshot whose file is a link into ``blobs/``,
    and a file outside the repository's folder."""
    storage = tmp_path / "hub" / "datasets--org--clips"
    (storage / "blobs").mkdir(parents=True)
    (storage / "blobs" / "abc").write_bytes(b"video")
    snapshot = storage / "snapshots" / ("0" * 40)
    (snapshot / "videos").mkdir(parents=True)
    (snapshot / "records.json").write_text("[]")
    os.symlink("../../../blobs/abc", snapshot / "videos" / "a.mp4")
    (tmp_path / "secret.txt").write_text("no")
    os.symlink(str(tmp_path / "secret.txt"), snapshot / "videos" / "out.mp4")
    return storage, snapshot


def test_paths_may_follow_the_snapshots_links_into_the_blobs_and_no_further(tmp_path: Path) -> None:
    storage, snapshot = cache_layout(tmp_path)
    paths = ConfinedPaths(snapshot, within=storage, under="videos", under_key="dataset.video_files.under")
    assert paths("videos/a.mp4") == (storage / "blobs" / "abc").resolve()
    assert paths("videos/b.mp4") == (snapshot / "videos" / "b.mp4").resolve()  # not downloaded yet: its place
    for rel, words in [
        ("videos/out.mp4", "leaves the data root"),  # a link out of the repository's folder
        ("../../blobs/abc", "leaves the data root"),  # named outside the snapshot, though its target is inside
        ("videos/../../" + "1" * 40 + "/videos/a.mp4", "leaves the data root"),
        ("records.json", "is outside videos/, the folder the dataset's files are read from (dataset.video_files.under)"),
        ("videos/../records.json", "is outside videos/"),
        ("/etc/passwd", "absolute"),
    ]:
        with pytest.raises(DataError, match=words.replace("(", r"\(").replace(")", r"\)")):
            paths(rel, doc_id="d", field="dataset.video.path")
    # without within, the snapshot's links lead out of it: refused, as for any data folder
    with pytest.raises(DataError, match="leaves the data root"):
        ConfinedPaths(snapshot)("videos/a.mp4")


QA_TASK = """\
task: clip_qa
dataset:
  hub: {repo: org/clips, files: [{path: records.json}]}
  video_files: {under: videos}
  images_field: null
  video: {path: "videos/{{ doc.video }}", num_frames: 2}
prompt:
  user: "{{ video(0) }}{{ doc.question }}"
target: "{{ doc.answer }}"
metrics:
  - {name: em, function: exact_match, primary: true}
"""


def test_a_task_reads_its_videos_from_the_hub_once(tmp_path: Path) -> None:
    pytest.importorskip("av")
    from tests.hub_server import running_hub

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "clip_qa.yaml").write_text(QA_TASK, encoding="utf-8")
    records = [{"id": "a", "video": "one.mp4", "question": "Q1", "answer": "x"},
               {"id": "b", "video": "one.mp4", "question": "Q2", "answer": "y"},
               {"id": "c", "video": "two.mp4", "question": "Q3", "answer": "z"}]
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "clip_qa", "doc_id": r["id"], "responses": [r["answer"]]}) + "\n"
                            for r in records), encoding="utf-8")
    one, two = (path.read_bytes() for path in CLIPS)
    with running_hub() as (endpoint, state):
        repo = state.seed("dataset", "org/clips", {"records.json": json.dumps(records).encode(), "videos/one.mp4": one,
                                                   "videos/two.mp4": two, "videos/unused.mp4": one + b"\0", "big.bin": b"0" * 100})
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_", "HF_", "TRANSFORMERS_"))}
        env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": endpoint,
                    "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1"})

        def run(out: str, limit: int | None = None, offline: bool = False, status: int = 0) -> dict:
            extra = ["--limit", str(limit)] if limit else []
            proc = subprocess.run([sys.executable, "-m", "mmtasks", "--tasks", "clip_qa", "--include-path", str(tasks),
                                   "--model", f"replay:{pred}", "--output-path", str(tmp_path / out), "--no-progress",
                                   *extra], cwd=tmp_path, capture_output=True, text=True, timeout=240,
                                  env={**env, **({"HF_HUB_OFFLINE": "1"} if offline else {})})
            assert proc.returncode == status, proc.stderr
            if status:
                return {"stderr": proc.stderr}
            return json.loads((tmp_path / out / "results.json").read_text(encoding="utf-8"))

        first = run("one", limit=2)  # two documents, one video
        assert state.fetched("dataset", "org/clips") == ["records.json", "videos/one.mp4"]
        assert first["results"]["clip_qa"]["em"] == 100.0
        assert first["run_card"]["data"]["clip_qa"] == {"source": "hub", "repo": "org/clips", "commit": repo.head}
        # offline, the third document's video was never downloaded: one line naming it, before any model
        stderr = run("offline", offline=True, status=2)["stderr"]
        (line,) = [line for line in stderr.splitlines() if "two.mp4" in line]
        assert "the video 'videos/two.mp4' of 'org/clips' is not in the Hugging Face cache, and the Hub is offline" in line
        assert "Traceback" not in stderr and not (tmp_path / "offline" / "results.json").exists()
        run("two")  # the third document's video alone
        assert state.fetched("dataset", "org/clips") == ["records.json", "videos/one.mp4", "videos/two.mp4"]
        requests = len(state.requests)
        run("three")  # nothing downloaded again: no file asked for
        assert not [r for r in state.requests[requests:] if "/resolve/" in r.path and "videos/" in r.path]
        requests = len(state.requests)
        assert run("four", offline=True)["results"]["clip_qa"]["em"] == 100.0
        assert len(state.requests) == requests  # offline: nothing asked
        snapshot = tmp_path / "hf-home" / "hub" / "datasets--org--clips" / "snapshots" / repo.head
        assert (snapshot / "videos" / "two.mp4").read_bytes() == two
