"""MVBench and Video-MME read from a loopback Hugging Face Hub (tests/hub_server.py, reached through
``HF_ENDPOINT``) holding each dataset in its real layout: the committed samples
``data/sample/mvbench/hub/`` (``json/<task>.json``, ``video/<source>.zip``, no NTU RGB+D archive)
and ``data/sample/videomme/hub/`` (``videomme/test-*.parquet``, ``videos_chunked_XX.zip``,
``subtitle.zip``), written by scripts/sample_data.

The built-in tasks run unchanged, in a subprocess, without ``--data-dir``; the model replays
scripted replies, every score worked out by hand (beside each reply). The files downloaded are
counted from the server's requests (only what the task reads), a second run offline fetches
nothing, and a hostile archive is refused before anything is extracted.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("av")
pytest.importorskip("datasets")

from tests.hub_server import HubState, running_hub  # noqa: E402
from tasks.mvbench.tests.test_mvbench import MVBENCH  # noqa: E402
from tasks.videomme.tests.test_videomme import VIDEOMME_REPLIES  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample"


@pytest.fixture
def hub() -> Iterator[tuple[str, HubState]]:
    with running_hub() as served:
        yield served


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run(tasks: str, tmp_path: Path, endpoint: str, replies: dict[str, dict[str, str]], out: Path,
        offline: bool = False, command: str = "run", extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": t, "doc_id": d, "responses": [r]}) + "\n"
                            for t, by_doc in replies.items() for d, r in by_doc.items()), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_", "HF_", "TRANSFORMERS_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": endpoint,
                "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1"})
    if offline:
        env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    args = ["check", "--tasks", tasks] if command == "check" else [
        "--tasks", tasks, "--model", f"replay:{pred}", "--output-path", str(out), "--no-progress", *extra]
    return subprocess.run([sys.executable, "-m", "mmtasks", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=240)


def results_of(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def samples_of(out: Path, task: str) -> dict[str, dict]:
    return {s["doc_id"]: s for s in map(json.loads, (out / "samples" / f"{task}.jsonl").read_text().splitlines())}


def extracted(tmp_path: Path, repo: str) -> Path:
    """The one extraction folder of ``repo`` (``<HF_HOME>/mmtasks-archives/<org>--<name>/<commit>``)."""
    (folder,) = [p for p in (tmp_path / "hf-home" / "mmtasks-archives" / repo.replace("/", "--")).iterdir()
                 if not p.name.startswith(".")]  # .refs: the commit of each revision, for offline runs
    return folder


#: MVBench's documents from the Hub are numbered across its 20 files in the task's order, the
#: order of the sample's records: mvbench_07 is document 7
MVBENCH_HUB = {str(int(doc.split("_")[1])): reply for doc, (_, reply) in MVBENCH.items()}


def test_mvbench_from_its_hub_layout(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    state.seed("dataset", "OpenGVLab/MVBench", files_of(SAMPLE / "mvbench" / "hub"))
    replies = {"mvbench": MVBENCH_HUB}
    # the Hub holds no NTU RGB+D archive: the preflight names Fine-grained Pose's video, where it
    # looked and what to do, before any model is built, and the run stops there (exit 2)
    proc = run("mvbench", tmp_path, endpoint, replies, tmp_path / "first")
    assert proc.returncode == 2, proc.stderr
    folder = extracted(tmp_path, "OpenGVLab/MVBench")
    assert f"video not found: {folder / 'nturgbd' / 'd.mp4'}" in proc.stderr
    assert "in none of the archives of OpenGVLab/MVBench (video/*.zip, video/data0613.zip)" in proc.stderr
    assert proc.stderr.count("video not found") == 1 and not (tmp_path / "first" / "results.json").exists()
    # what was downloaded: the 20 record files and the 11 archives, nothing else (not the card's
    # figures, not MVBench_videos_ntu.txt), each once
    fetched = state.fetched("dataset", "OpenGVLab/MVBench")
    assert sorted(fetched) == sorted(p for p in state.repos[("dataset", "OpenGVLab/MVBench")].files
                                     if p.startswith("json/") or p.endswith(".zip"))
    assert len(fetched) == 31
    # extracted once, merged: data0613.zip's video under its source folder, tvqa's frame folder whole
    assert (folder / "star" / "Charades_v1_480" / "a_0613.mp4").is_file()
    assert len(list((folder / "tvqa" / "frames_fps3_hq" / "e").iterdir())) == 12
    # the user puts NTU RGB+D's video where the line says; the run goes to the end
    (folder / "nturgbd").mkdir()
    shutil.copyfile(SAMPLE / "mvbench" / "nturgbd" / "d.mp4", folder / "nturgbd" / "d.mp4")
    requests = len(state.requests)
    out = tmp_path / "out"
    proc = run("mvbench", tmp_path, endpoint, replies, out)
    assert proc.returncode == 1, proc.stderr  # one unparsed reply
    assert state.fetched("dataset", "OpenGVLab/MVBench") == fetched  # nothing downloaded again
    assert not any(r.method == "GET" and "/resolve/" in r.path for r in state.requests[requests:])
    results = results_of(out)
    # as from the local sample (tasks/mvbench/tests/test_mvbench.py): wrong 3, 7, 16; unparsed 10; right 16 of 20
    assert results["results"]["mvbench"]["acc"] == pytest.approx(80.0)
    assert results["problems"]["mvbench"]["unparsed"] == 1
    samples = samples_of(out, "mvbench")
    assert sorted(samples, key=int) == [str(k) for k in range(20)]
    assert {d: s["target"] for d, s in samples.items()} == {str(int(d.split("_")[1])): gold for d, (gold, _) in MVBENCH.items()}
    by_task = results["breakdowns"]["mvbench"]["task_type"]
    assert len(by_task) == 20 and by_task["Object Interaction"]["acc"] == 100.0  # its video from data0613.zip
    # offline, a third run reads everything from the caches: the same results, no request at all
    requests = len(state.requests)
    proc = run("mvbench", tmp_path, endpoint, replies, tmp_path / "again", offline=True)
    assert proc.returncode == 1, proc.stderr
    assert len(state.requests) == requests
    assert results_of(tmp_path / "again")["results"] == results["results"]


def test_videomme_from_its_hub_layout_without_and_with_subtitles(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    state.seed("dataset", "lmms-lab/Video-MME", files_of(SAMPLE / "videomme" / "hub"))
    out = tmp_path / "out"
    proc = run("videomme", tmp_path, endpoint, {"videomme": VIDEOMME_REPLIES}, out)
    assert proc.returncode == 1, proc.stderr  # two unparsed replies
    # without subtitles: the card, the parquet file and the two video archives; not subtitle.zip
    assert sorted(state.fetched("dataset", "lmms-lab/Video-MME")) == [
        "README.md", "videomme/test-00000-of-00001.parquet", "videos_chunked_01.zip", "videos_chunked_02.zip"]
    # the hand-computed score of tasks/videomme/tests/test_videomme.py: 6 of the 7 read right (the 2 unparsed left out)
    assert results_of(out)["results"]["videomme"]["acc"] == pytest.approx(100 * 6 / 7)
    # with subtitles: subtitle.zip added, extracted beside the videos (the archives done before are not again)
    subs = tmp_path / "subs"
    proc = run("videomme_subtitles", tmp_path, endpoint, {"videomme_subtitles": VIDEOMME_REPLIES}, subs)
    assert proc.returncode == 1, proc.stderr
    assert state.fetched("dataset", "lmms-lab/Video-MME")[-1] == "subtitle.zip"
    samples = samples_of(subs, "videomme_subtitles")
    text = "".join(p["text"] for p in samples["001-1"]["prompt"][-1]["content"] if p["type"] == "text")
    assert text.startswith("This video's subtitles are listed below:\nWe start with a red screen.\n")
    assert "No subtitles available" in "".join(p["text"] for p in samples["003-1"]["prompt"][-1]["content"]
                                               if p["type"] == "text")
    # offline: nothing requested, the same scores
    requests = len(state.requests)
    proc = run("videomme,videomme_subtitles", tmp_path, endpoint,
               {"videomme": VIDEOMME_REPLIES, "videomme_subtitles": VIDEOMME_REPLIES}, tmp_path / "again", offline=True)
    assert proc.returncode == 1, proc.stderr
    assert len(state.requests) == requests
    again = results_of(tmp_path / "again")["results"]
    assert again["videomme"]["acc"] == pytest.approx(100 * 6 / 7)


def hostile_zip(member: str, *, link: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("data/fine.mp4", (SAMPLE / "videomme" / "data" / "smplVid001a.mp4").read_bytes())
        info = zipfile.ZipInfo(member)
        info.external_attr = ((0o120777 if link else 0o100644) << 16)
        zf.writestr(info, b"/etc/passwd" if link else b"evil")
    return buf.getvalue()


@pytest.mark.parametrize(("member", "link", "why"), [
    ("../../escaped.mp4", False, "escapes the extraction folder"),
    ("data/link.mp4", True, "is a symbolic link"),
])  # the other names refused (absolute, a drive, backslashes): tests/documents/test_archives.py
def test_a_hostile_archive_member_is_refused_with_one_line(hub, tmp_path: Path, member: str, link: bool, why: str) -> None:
    endpoint, state = hub
    files = files_of(SAMPLE / "videomme" / "hub")
    files["videos_chunked_02.zip"] = hostile_zip(member, link=link)
    state.seed("dataset", "lmms-lab/Video-MME", files)
    proc = run("videomme", tmp_path, endpoint, {}, tmp_path / "out", command="check")
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "videos_chunked_02.zip" in line]
    assert len(lines) == 1 and f"archive member {member!r} {why}" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    folder = extracted(tmp_path, "lmms-lab/Video-MME")
    # every archive's directory is read and checked before any member is extracted: nothing of the
    # hostile archive (not even its sound member), nothing of the sound one either; no index of the
    # hostile one is kept (a rerun refuses it again)
    assert not (folder / "data").exists()
    assert not any(p.name in ("escaped.mp4", "link.mp4") for p in tmp_path.rglob("*"))
    commit = state.repos[("dataset", "lmms-lab/Video-MME")].head
    assert sorted(p.name for p in (folder / ".mmtasks-index").iterdir()) == [f"listing-{commit}.json", "videos_chunked_01.zip.json"]
    # the hostile archive was not downloaded: its directory alone (the range probe, the end record,
    # the zip64 locator's place, the central directory)
    size = len(files["videos_chunked_02.zip"])
    assert state.served[("dataset", "lmms-lab/Video-MME", "videos_chunked_02.zip")] < size
    proc = run("videomme", tmp_path, endpoint, {}, tmp_path / "out", command="check")
    assert proc.returncode == 2 and f"archive member {member!r} {why}" in proc.stderr


def test_the_preflight_reports_every_problem_of_the_extracted_videos_at_once(hub, tmp_path: Path) -> None:
    """As for local videos: each document's missing or unreadable video, all in one check."""
    endpoint, state = hub
    files = files_of(SAMPLE / "videomme" / "hub")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:  # smplVid002b left out, smplVid003c not a video
        zf.writestr("data/smplVid001a.mp4", (SAMPLE / "videomme" / "data" / "smplVid001a.mp4").read_bytes())
        zf.writestr("data/smplVid003c.mp4", b"\x00\x00\x00\x18ftypmp42 not really a video")
    files["videos_chunked_01.zip"] = buf.getvalue()
    del files["videos_chunked_02.zip"]
    state.seed("dataset", "lmms-lab/Video-MME", files)
    proc = run("videomme", tmp_path, endpoint, {}, tmp_path / "out", command="check")
    assert proc.returncode == 2, proc.stderr
    assert "2 problems found before any model or judge was built" in proc.stderr
    lines = proc.stderr.splitlines()
    # three questions about each video: the first document named, the others counted
    (missing,) = [line for line in lines if "video not found" in line]
    assert "document '002-1'" in missing and "smplVid002b.mp4" in missing and "(the same in 2 more documents)" in missing
    assert "in none of the archives of lmms-lab/Video-MME (videos_chunked_*.zip)" in missing
    (unreadable,) = [line for line in lines if "not a readable video" in line]
    assert "document '003-1'" in unreadable and "smplVid003c.mp4" in unreadable
    assert unreadable.endswith("(the same in 2 more documents)")


#: the sample's Video-MME archives, read with zipfile.ZipInfo: the directory at the end, each member
#: a 30-byte local header, its name and its bytes (stored), after a folder entry ``data/`` (35 bytes)
CHUNK_01, CHUNK_02 = 4750, 2143  # sizes; central directories 4545..4728 (183 bytes), 2004..2121 (117)
DIRECTORY_01 = 22 + 20 + 183  # the end record, the 20 bytes before it (zip64 locator's place), the directory
DIRECTORY_02 = 22 + 20 + 117
PROBE = 22  # the range request that asks whether the Hub answers ranges (the last 22 bytes)
VID_001A = 30 + 20 + 2260  # data/smplVid001a.mp4 at 35 in chunk 01
VID_002B = 30 + 20 + 2150  # data/smplVid002b.mp4 at 2345 in chunk 01
VID_003C = 30 + 20 + 1919  # data/smplVid003c.mp4 at 35 in chunk 02


def served(state: HubState, repo: str = "lmms-lab/Video-MME") -> dict[str, int]:
    return {path: n for (kind, r, path), n in state.served.items() if r == repo and path.endswith(".zip")}


def test_a_limited_run_reads_the_directories_and_its_members_alone(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    files = files_of(SAMPLE / "videomme" / "hub")
    assert (len(files["videos_chunked_01.zip"]), len(files["videos_chunked_02.zip"])) == (CHUNK_01, CHUNK_02)
    state.seed("dataset", "lmms-lab/Video-MME", files)
    proc = run("videomme", tmp_path, endpoint, {"videomme": VIDEOMME_REPLIES}, tmp_path / "one", extra=("--limit", "1"))
    assert proc.returncode == 0, proc.stderr
    assert results_of(tmp_path / "one")["results"]["videomme"]["acc"] == pytest.approx(100.0)  # 001-1: A, gold A
    # the parquet file, both archives' directories and document 001-1's video; not subtitle.zip
    assert served(state) == {"videos_chunked_01.zip": PROBE + DIRECTORY_01 + VID_001A, "videos_chunked_02.zip": DIRECTORY_02}
    assert sum(served(state).values()) == 2716 < (CHUNK_01 + CHUNK_02) / 2  # of 6893
    folder = extracted(tmp_path, "lmms-lab/Video-MME")
    assert sorted(p.name for p in (folder / "data").iterdir()) == ["smplVid001a.mp4"]
    assert (folder / "data" / "smplVid001a.mp4").read_bytes() == (SAMPLE / "videomme" / "data" / "smplVid001a.mp4").read_bytes()
    # the full run extracts the rest: the indexes kept, each archive's directory read again to open it
    state.served.clear()
    out = tmp_path / "full"
    proc = run("videomme", tmp_path, endpoint, {"videomme": VIDEOMME_REPLIES}, out)
    assert proc.returncode == 1, proc.stderr  # two unparsed
    assert results_of(out)["results"]["videomme"]["acc"] == pytest.approx(100 * 6 / 7)
    assert served(state) == {"videos_chunked_01.zip": PROBE + DIRECTORY_01 + VID_002B,
                             "videos_chunked_02.zip": DIRECTORY_02 + VID_003C}
    assert sorted(p.name for p in (folder / "data").iterdir()) == ["smplVid001a.mp4", "smplVid002b.mp4", "smplVid003c.mp4"]
    # a third run online: the commit asked (one request), no archive read
    state.served.clear()
    requests = len(state.requests)
    proc = run("videomme", tmp_path, endpoint, {"videomme": VIDEOMME_REPLIES}, tmp_path / "third", extra=("--limit", "3"))
    assert proc.returncode == 0, proc.stderr
    assert served(state) == {}
    assert not any(".zip" in r.path for r in state.requests[requests:])
    # offline: no request at all
    requests = len(state.requests)
    proc = run("videomme", tmp_path, endpoint, {"videomme": VIDEOMME_REPLIES}, tmp_path / "offline", offline=True)
    assert proc.returncode == 1, proc.stderr
    assert len(state.requests) == requests
    assert results_of(tmp_path / "offline")["results"]["videomme"]["acc"] == pytest.approx(100 * 6 / 7)


def test_a_hub_without_range_requests_gets_each_archive_downloaded_whole(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    state.ranges = False
    state.seed("dataset", "lmms-lab/Video-MME", files_of(SAMPLE / "videomme" / "hub"))
    proc = run("videomme", tmp_path, endpoint, {"videomme": VIDEOMME_REPLIES}, tmp_path / "one", extra=("--limit", "1"))
    assert proc.returncode == 0, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if "range request" in line]
    assert "answers no range request: the video archives of lmms-lab/Video-MME are downloaded whole" in line
    # the probe's answer (the whole archive, its body cut short by the client or not) and the download
    assert served(state)["videos_chunked_02.zip"] == CHUNK_02
    assert CHUNK_01 <= served(state)["videos_chunked_01.zip"] <= 2 * CHUNK_01
    folder = extracted(tmp_path, "lmms-lab/Video-MME")
    assert sorted(p.name for p in (folder / "data").iterdir()) == ["smplVid001a.mp4"]  # extracted as needed, still
    state.served.clear()
    out = tmp_path / "full"
    proc = run("videomme", tmp_path, endpoint, {"videomme": VIDEOMME_REPLIES}, out)
    assert proc.returncode == 1, proc.stderr
    assert results_of(out)["results"]["videomme"]["acc"] == pytest.approx(100 * 6 / 7)  # the same score


def test_an_archive_the_hub_refuses_is_one_line_not_a_whole_download(hub, tmp_path: Path) -> None:
    """The range probe answered 403: the run stops naming the archive (no fallback to downloading
    every archive whole, which only a 200 answer to a range request means)."""
    endpoint, state = hub
    state.seed("dataset", "lmms-lab/Video-MME", files_of(SAMPLE / "videomme" / "hub"))
    state.forbidden.add("videos_chunked_01.zip")
    proc = run("videomme", tmp_path, endpoint, {}, tmp_path / "out", command="check")
    assert proc.returncode == 2, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if "videos_chunked_01.zip" in line]
    assert "cannot read the archive 'videos_chunked_01.zip' of Hugging Face dataset 'lmms-lab/Video-MME'" in line
    assert "range request" not in proc.stderr and "Traceback" not in proc.stderr
    assert served(state) == {}


def test_a_readme_only_commit_reads_no_archive_again_and_keeps_one_copy(hub, tmp_path: Path) -> None:
    """Issue 41, finding 10: a commit that changed only the README made the next run read every
    archive's directory and member again, and keep the videos in a second folder (one per commit,
    the old one never removed). Extracted members are now known by their content (name, size,
    CRC) in one folder per dataset, archives by their blob id: only the commit is asked."""
    endpoint, state = hub
    repo = state.seed("dataset", "lmms-lab/Video-MME", files_of(SAMPLE / "videomme" / "hub"))
    proc = run("videomme", tmp_path, endpoint, {"videomme": VIDEOMME_REPLIES}, tmp_path / "one", extra=("--limit", "1"))
    assert proc.returncode == 0, proc.stderr
    folder = extracted(tmp_path, "lmms-lab/Video-MME")
    video = folder / "data" / "smplVid001a.mp4"
    inode = video.stat().st_ino
    repo.files["README.md"] = repo.files.get("README.md", b"") + b"\nA fixed typo.\n"
    repo.commits.append({"oid": "1" * 40, "summary": "README", "paths": ["README.md"], "deleted": []})
    state.served.clear()
    requests = len(state.requests)
    proc = run("videomme", tmp_path, endpoint, {"videomme": VIDEOMME_REPLIES}, tmp_path / "two", extra=("--limit", "1"))
    assert proc.returncode == 0, proc.stderr
    assert served(state) == {}  # before: both directories and the member read again (2,716 bytes)
    assert not any(".zip" in r.path for r in state.requests[requests:])
    assert extracted(tmp_path, "lmms-lab/Video-MME") == folder  # before: a second folder, for the new commit
    assert video.stat().st_ino == inode  # the same file, not extracted again
    assert results_of(tmp_path / "two")["results"]["videomme"]["acc"] == pytest.approx(100.0)
