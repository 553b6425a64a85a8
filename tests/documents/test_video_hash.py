"""A video's content hash (the response cache key of its frames) is read once per machine: kept
in the cache's memos by the file's path and stat, so a rerun reads no video to hash it, and a video
changed at the same path (new bytes, so a new size or mtime) gets a new hash and new keys."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from mmtasks.cache.response_cache import ResponseCache
from mmtasks.documents.video import FrameStore

SAMPLE_VIDEO = Path(__file__).resolve().parents[2] / "data" / "sample" / "videomme" / "data" / "smplVid001a.mp4"
#: an mtime well in the past (ns): not "racy", so the hash is kept
OLD = 1_600_000_000 * 10**9


def sha(*files: tuple[str, bytes]) -> str:
    h = hashlib.sha256()
    for name, data in files:
        h.update(name.encode() + b"\0" + data)
    return h.hexdigest()


def write(path: Path, data: bytes, mtime_ns: int = OLD) -> None:
    path.write_bytes(data)
    os.utime(path, ns=(mtime_ns, mtime_ns))


@pytest.fixture
def cache(tmp_path: Path):  # type: ignore[no-untyped-def]
    cache = ResponseCache(tmp_path / "cache")
    yield cache
    cache.close()


def test_a_rerun_reads_no_video_and_a_changed_video_changes_its_hash(tmp_path: Path, cache: ResponseCache) -> None:
    video = tmp_path / "v.mp4"
    write(video, b"first version")
    first = FrameStore(hashes=cache.memo("video-sha256"))
    assert first.file_hash(video) == sha(("v.mp4", b"first version")) and first.files_hashed == 1
    assert first.file_hash(video) == sha(("v.mp4", b"first version")) and first.files_hashed == 1  # once per store

    rerun = FrameStore(hashes=cache.memo("video-sha256"))
    assert rerun.file_hash(video) == sha(("v.mp4", b"first version")) and rerun.files_hashed == 0  # from the memo

    # new bytes of the same size, written later: the mtime differs, the hash is read again
    write(video, b"other version", OLD + 1)
    changed = FrameStore(hashes=cache.memo("video-sha256"))
    assert changed.file_hash(video) == sha(("v.mp4", b"other version")) and changed.files_hashed == 1
    # ... and a new size with the old mtime put back
    write(video, b"a longer first version", OLD)
    assert FrameStore(hashes=cache.memo("video-sha256")).file_hash(video) == sha(("v.mp4", b"a longer first version"))

    # the limit (documented): bytes changed with size and mtime put back by hand are not seen
    write(video, b"first VERSION", OLD)
    write(video, b"first version", OLD)  # the memo now holds this content under this stat
    FrameStore(hashes=cache.memo("video-sha256")).file_hash(video)
    write(video, b"first VERSION", OLD)
    assert FrameStore(hashes=cache.memo("video-sha256")).file_hash(video) == sha(("v.mp4", b"first version"))
    assert FrameStore().file_hash(video) == sha(("v.mp4", b"first VERSION"))  # without the memo, the bytes


def test_a_file_written_just_now_is_not_kept(tmp_path: Path, cache: ResponseCache) -> None:
    video = tmp_path / "v.mp4"
    video.write_bytes(b"still being written")  # mtime: now, within the racy window
    FrameStore(hashes=cache.memo("video-sha256")).file_hash(video)
    again = FrameStore(hashes=cache.memo("video-sha256"))
    assert again.file_hash(video) == sha(("v.mp4", b"still being written")) and again.files_hashed == 1


def test_the_hash_is_the_contents_wherever_the_file_is(tmp_path: Path, cache: ResponseCache) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    shutil.copyfile(SAMPLE_VIDEO, a / SAMPLE_VIDEO.name)
    shutil.copyfile(SAMPLE_VIDEO, b / SAMPLE_VIDEO.name)
    store = FrameStore(hashes=cache.memo("video-sha256"))
    assert store.file_hash(a / SAMPLE_VIDEO.name) == store.file_hash(b / SAMPLE_VIDEO.name) == \
        sha((SAMPLE_VIDEO.name, SAMPLE_VIDEO.read_bytes()))
    assert store.files_hashed == 2  # a copied data folder is hashed once more, and keeps its cached replies


def test_a_folder_of_frames_changes_with_any_frame(tmp_path: Path, cache: ResponseCache) -> None:
    folder = tmp_path / "frames"
    folder.mkdir()
    write(folder / "0001.jpg", b"frame one")
    write(folder / "0002.jpg", b"frame two")
    before = FrameStore(hashes=cache.memo("video-sha256")).file_hash(folder)
    assert before == sha(("0001.jpg", b"frame one"), ("0002.jpg", b"frame two"))
    write(folder / "0002.jpg", b"frame TWO", OLD + 5)
    store = FrameStore(hashes=cache.memo("video-sha256"))
    assert store.file_hash(folder) == sha(("0001.jpg", b"frame one"), ("0002.jpg", b"frame TWO")) and store.files_hashed == 1


def test_a_changed_video_changes_its_frames_cache_keys(tmp_path: Path, cache: ResponseCache) -> None:
    pytest.importorskip("av")
    from mmtasks.cache.response_cache import request_key
    from mmtasks.core.conversation import Message, Text
    from mmtasks.core.request import Request
    from mmtasks.documents.video import Bound, VideoClip, probe

    video = tmp_path / "v.mp4"
    write(video, SAMPLE_VIDEO.read_bytes())

    def key() -> str:
        info = probe(video)
        store = FrameStore(hashes=cache.memo("video-sha256"))
        clip = VideoClip(path=video, info=info, indices=(0, 1), bound=Bound(), store=store)
        request = Request(messages=(Message("user", (*clip.frame_images(), Text("what happens?"))),))
        return request_key("model", request)

    before = key()
    assert key() == before  # a rerun: the same keys, from the memo
    data = bytearray(SAMPLE_VIDEO.read_bytes())
    data[-1] ^= 0xFF  # one byte of the file changed (its size kept), written later
    write(video, bytes(data), OLD + 10**9)
    assert key() != before


def test_a_rerun_served_from_the_cache_hashes_no_video(tmp_path: Path, chat_server, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end: the runner hands the response cache's memos to the run's frame store."""
    pytest.importorskip("av")
    import mmtasks
    from mmtasks.documents import video as video_module

    data = tmp_path / "data"
    shutil.copytree(SAMPLE_VIDEO.parents[1], data / "videomme")
    for f in (data / "videomme").rglob("*"):
        os.utime(f, ns=(OLD, OLD))
    stores: list[FrameStore] = []

    class Recorded(FrameStore):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            stores.append(self)

    monkeypatch.setattr(video_module, "FrameStore", Recorded)
    chat_server.reply = lambda body: "A"

    def run() -> FrameStore:
        stores.clear()
        mmtasks.evaluate(tasks="videomme", model="openai:test-model", data_dir=data, cache_dir=tmp_path / "cache",
                         model_args={"base_url": chat_server.base_url, "max_retries": 0})
        return next(s for s in stores if s._memo is not None)

    videos = len(list((data / "videomme" / "data").glob("*.mp4")))
    assert videos >= 2 and run().files_hashed == videos
    calls = chat_server.calls
    assert run().files_hashed == 0 and chat_server.calls == calls  # every reply from the cache, no video read to hash
