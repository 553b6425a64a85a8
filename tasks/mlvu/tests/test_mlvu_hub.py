"""MLVU dev read from a loopback Hugging Face Hub (tests/hub_server.py, reached through
``HF_ENDPOINT``) holding the bundled sample in the layout of ``MLVU/MVLU``: the record files
``MLVU/json/<n>_<task>.json`` and the videos as loose files ``MLVU/video/<n>_<task>/<video>``
(``dataset.hub`` and ``dataset.video_files``).

The built-in tasks run unchanged, in a subprocess, without ``--data-dir``: the files downloaded are
counted from the server's requests (the seven record files and the seven videos the documents name,
each once; not the generation tasks' files), a second run downloads nothing, an offline run asks
nothing, and the scores are those of the ``--data-dir`` run (test_mlvu.py's, worked out by hand).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("av")

from tests.folder_copies import SAMPLE, predictions_by_task, results_of, samples_of  # noqa: E402
from tests.hub_server import HubState, running_hub  # noqa: E402
from tasks.mlvu.tests.test_mlvu import REPLIES  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
HUB = "MLVU/MVLU"
#: the files of the seven multiple-choice tasks: their record files and the videos their records name
MC_FILES = [f"MLVU/json/{name}.json" for name in (
    "1_plotQA", "2_needle", "3_ego", "4_count", "5_order", "6_anomaly_reco", "7_topic_reasoning")]
MC_VIDEOS = ["MLVU/video/1_plotQA/movie101_1.mp4", "MLVU/video/2_needle/needle_1.mp4", "MLVU/video/3_ego/ego_1.mp4",
             "MLVU/video/4_count/count_1.mp4", "MLVU/video/5_order/order_1.mp4",
             "MLVU/video/6_anomaly_reco/surveil_1.mp4", "MLVU/video/7_topic_reasoning/AWA-1.mp4"]


@pytest.fixture
def hub() -> Iterator[tuple[str, HubState]]:
    with running_hub() as served:
        yield served


def seed(state: HubState, changed: dict[str, bytes | None] | None = None) -> None:
    """The sample's files in the repository's layout, a card beside them; ``changed``: path -> other
    bytes, or None to leave the file out."""
    folder = SAMPLE / "mlvu"
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    files["README.md"] = b"---\nlicense: cc-by-nc-sa-4.0\n---\n# a loopback copy of MLVU/MVLU's layout\n"
    for path, data in (changed or {}).items():
        if data is None:
            files.pop(path)
        else:
            files[path] = data
    state.seed("dataset", HUB, files)


def run(args: list[str], tmp_path: Path, endpoint: str, *, offline: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_", "HF_", "TRANSFORMERS_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": endpoint,
                "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1"})
    if offline:
        env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    extra = [] if args[0] == "check" else ["--no-progress"]
    return subprocess.run([sys.executable, "-m", "mmtasks", *args, *extra], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=240)


def replay(tmp_path: Path) -> str:
    pred = predictions_by_task(tmp_path / "pred.jsonl", {t: {d: r for d, (_, r) in docs.items()} for t, docs in REPLIES.items()})
    return f"replay:{pred}"


def resolved(state: HubState, since: int = 0) -> list[str]:
    """The paths of the repository asked for (``resolve``: HEAD or GET) after request ``since``."""
    prefix = f"/datasets/{HUB}/resolve/"
    return [r.path.split("?")[0][len(prefix):].split("/", 1)[1] for r in state.requests[since:]
            if r.path.startswith(prefix)]


def test_mlvu_dev_from_the_hub_fetches_the_videos_it_needs_once(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    seed(state)
    commit = state.repos[("dataset", HUB)].head
    model = replay(tmp_path)
    proc = run(["--tasks", "mlvu_dev", "--model", model, "--output-path", str(tmp_path / "one")], tmp_path, endpoint)
    assert proc.returncode == 1, proc.stderr  # two replies read as no letter (as from --data-dir)
    # the seven record files and the seven videos the ten documents name, each downloaded once; not the
    # generation tasks' files (8_sub_scene, 9_summary), not the card
    fetched = state.fetched("dataset", HUB)
    assert sorted(fetched) == sorted(MC_FILES + MC_VIDEOS)
    assert sum(1 for r in state.requests if r.method == "GET" and "/resolve/" in r.path and r.path.endswith(".mp4")) == 7
    results = results_of(tmp_path / "one")
    # test_mlvu.py's hand-computed scores: M-Avg 450 / 7, lmms-eval's reading 600 / 7
    assert results["groups"]["mlvu_dev"]["average"] == pytest.approx(450 / 7)
    assert results["groups"]["mlvu_dev"]["variants"]["lmms_eval"] == pytest.approx(600 / 7)
    for task, docs in REPLIES.items():
        assert {s["doc_id"]: s["target"] for s in samples_of(tmp_path / "one", task)} == {d: g for d, (g, _) in docs.items()}
        # the run card names the Hub source and the commit the files came from
        assert results["run_card"]["data"][task] == {"source": "hub", "repo": HUB, "commit": commit}
    # the videos lie in the Hugging Face cache, at the commit, as the repository lays them out
    snapshot = tmp_path / "hf-home" / "hub" / "datasets--MLVU--MVLU" / "snapshots" / commit
    assert (snapshot / MC_VIDEOS[0]).read_bytes() == (SAMPLE / "mlvu" / MC_VIDEOS[0]).read_bytes()

    # a second run: the commit and the record files' listing asked, no video asked for at all
    requests = len(state.requests)
    proc = run(["--tasks", "mlvu_dev", "--model", model, "--output-path", str(tmp_path / "two")], tmp_path, endpoint)
    assert proc.returncode == 1, proc.stderr
    assert not [p for p in resolved(state, requests) if p.endswith(".mp4")]
    assert state.fetched("dataset", HUB) == fetched
    assert results_of(tmp_path / "two")["results"] == results["results"]
    # offline: no request at all, the same scores
    requests = len(state.requests)
    proc = run(["--tasks", "mlvu_dev", "--model", model, "--output-path", str(tmp_path / "three")], tmp_path, endpoint,
               offline=True)
    assert proc.returncode == 1, proc.stderr
    assert len(state.requests) == requests
    assert results_of(tmp_path / "three")["results"] == results["results"]


def test_a_limited_run_fetches_its_documents_videos_alone_and_random_scores_as_from_the_sample(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    seed(state)
    proc = run(["--tasks", "mlvu_dev_plotqa,mlvu_dev_count", "--model", "random", "--limit", "1",
                "--output-path", str(tmp_path / "hub")], tmp_path, endpoint)
    assert proc.returncode == 0, proc.stderr
    assert [p for p in state.fetched("dataset", HUB) if p.endswith(".mp4")] == [
        "MLVU/video/1_plotQA/movie101_1.mp4", "MLVU/video/4_count/count_1.mp4"]
    # every task, the random baseline: the same samples and scores as from --data-dir data/sample
    proc = run(["--tasks", "mlvu_dev", "--model", "random", "--output-path", str(tmp_path / "all")], tmp_path, endpoint)
    assert proc.returncode == 0, proc.stderr
    proc = run(["--tasks", "mlvu_dev", "--model", "random", "--data-dir", str(SAMPLE), "--output-path",
                str(tmp_path / "local")], tmp_path, endpoint)
    assert proc.returncode == 0, proc.stderr
    hub_results, local = results_of(tmp_path / "all"), results_of(tmp_path / "local")
    assert hub_results["results"] == local["results"] and hub_results["groups"] == local["groups"]
    for task in REPLIES:
        assert [(s["doc_id"], s["response"] if "response" in s else s.get("responses")) for s in samples_of(tmp_path / "all", task)] \
            == [(s["doc_id"], s["response"] if "response" in s else s.get("responses")) for s in samples_of(tmp_path / "local", task)]
    assert local["run_card"]["data"]["mlvu_dev_plotqa"]["source"] == "local"


def test_check_reads_from_the_hub_and_names_a_video_the_repository_lacks(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    seed(state, {"MLVU/video/3_ego/ego_1.mp4": None})
    proc = run(["check", "--tasks", "mlvu_dev"], tmp_path, endpoint)
    assert proc.returncode == 2, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if "video not found" in line]
    commit = state.repos[("dataset", HUB)].head
    assert "ego_1.mp4" in line and f"no file of the Hugging Face dataset {HUB} at commit {commit[:12]} (under MLVU/video/)" in line
    assert "Traceback" not in proc.stderr
    # the others were downloaded by the check, and the check says which source it read
    assert len([p for p in state.fetched("dataset", HUB) if p.endswith(".mp4")]) == 6


def test_a_gated_repository_or_video_is_one_line_before_any_model(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    seed(state)
    state.forbidden.add("MLVU/video/2_needle/needle_1.mp4")
    proc = run(["--tasks", "mlvu_dev", "--model", "random", "--output-path", str(tmp_path / "out")], tmp_path, endpoint)
    assert proc.returncode == 2, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if "needle_1.mp4" in line]
    assert f"cannot download the video 'MLVU/video/2_needle/needle_1.mp4' of Hugging Face dataset '{HUB}'" in line
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "results.json").exists()
    # the whole repository gated (no token): the first request refused, one line
    state.repos[("dataset", HUB)].public = False
    proc = run(["--tasks", "mlvu_dev_plotqa", "--model", "random", "--output-path", str(tmp_path / "out")], tmp_path, endpoint)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if HUB in line]
    assert lines and "hf auth login" in lines[0] and "Traceback" not in proc.stderr


@pytest.mark.parametrize(("video", "words"), [
    ("../../json/1_plotQA.json", "is outside MLVU/video/, the folder the dataset's files are read from (dataset.video_files.under): refused"),
    ("../../../../../../etc/passwd", "leaves the data root"),
])
def test_a_record_naming_a_file_outside_the_videos_is_refused(hub, tmp_path: Path, video: str, words: str) -> None:
    endpoint, state = hub
    records = json.loads((SAMPLE / "mlvu" / "MLVU" / "json" / "1_plotQA.json").read_text(encoding="utf-8"))
    records[0]["video"] = video
    seed(state, {"MLVU/json/1_plotQA.json": json.dumps(records).encode()})
    proc = run(["check", "--tasks", "mlvu_dev_plotqa"], tmp_path, endpoint)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if words in line]
    assert len(lines) == 1, proc.stderr
    assert "document '0'" in lines[0]
    assert [p for p in state.fetched("dataset", HUB) if not p.startswith("MLVU/json/")] == ["MLVU/video/1_plotQA/movie101_1.mp4"]
