"""Zip archives of videos (mmtasks/documents/archives.py): every member's name checked from the
directory before anything is written, leading folders stripped, an index per archive (and strip)
kept on disk, each member extracted when asked for, once, again only when the archive changed or
the file on disk is not the member's size."""

from __future__ import annotations

import io
import os
import stat
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from mmtasks.documents.archives import Archive, Extractor, Member, cached_index, local, member_target
from mmtasks.errors import DataError


def make_zip(path: Path, members: dict[str, bytes], modes: dict[str, int] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (modes or {}).get(name, 0o100644) << 16
            zf.writestr(info, data)
    return path


def target(name: str, strip: str | None = None, mode: int = 0o100644) -> str | None:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    got = member_target(Archive("video/x.zip", strip, "", lambda: io.BytesIO()), info)
    return None if got is None else got.as_posix()


def test_member_names_map_inside_the_folder_or_are_refused() -> None:
    assert target("data/a.mp4") == "data/a.mp4"
    assert target("./data//a.mp4") == "data/a.mp4"
    assert target("data\\a.mp4") == "data/a.mp4"  # a Windows archiver's separator
    assert target("data/") is None and target("data", mode=0o40755) is None  # folders: nothing to write
    assert target("data0613/star/a.mp4", strip="data0613") == "star/a.mp4"
    assert target("other/a.mp4", strip="data0613") == "other/a.mp4"  # outside the stripped folder: kept
    assert target("data0613/", strip="data0613") is None
    for name, why in [("../a.mp4", "escapes"), ("data/../../a.mp4", "escapes"), ("/etc/a.mp4", "escapes"),
                      ("C:/a.mp4", "escapes"), ("C:\\a.mp4", "escapes"), ("data\\..\\..\\a.mp4", "escapes")]:
        with pytest.raises(DataError, match=f"archive member .* {why} the extraction folder") as err:
            target(name)
        assert err.value.file == "video/x.zip" and err.value.field == "dataset.video_archives"
    with pytest.raises(DataError, match="is a symbolic link"):
        target("data/a.mp4", mode=0o120777)
    with pytest.raises(DataError, match="is not a regular file or folder"):
        target("data/fifo", mode=stat.S_IFIFO | 0o644)


def test_members_are_extracted_when_asked_and_once(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    one = local(make_zip(tmp_path / "one.zip", {"data/a.mp4": b"a", "data/b.mp4": b"b", "frames/e/1.jpg": b"1",
                                                 "frames/e/2.jpg": b"2", "frames/ee.jpg": b"x"}), "one.zip")
    later = local(make_zip(tmp_path / "later.zip", {"later/data/a.mp4": b"A2"}), "later.zip", strip="later")
    ex = Extractor([one, later], dest)
    assert sorted(ex.members) == ["data/a.mp4", "data/b.mp4", "frames/e/1.jpg", "frames/e/2.jpg", "frames/ee.jpg"]
    assert ex.members["data/a.mp4"] == Member(1, "later/data/a.mp4", 2, zlib.crc32(b"A2"))  # merged, the later archive winning
    assert not (dest / "data").exists()  # nothing extracted before it is asked for
    assert ex.ensure(dest / "data" / "a.mp4") == ["data/a.mp4"]
    assert (dest / "data" / "a.mp4").read_bytes() == b"A2" and not (dest / "data" / "b.mp4").exists()
    assert ex.ensure(dest / "frames" / "e") == ["frames/e/1.jpg", "frames/e/2.jpg"]  # a folder: the members under it
    assert not (dest / "frames" / "ee.jpg").exists()
    assert ex.ensure(dest / "data" / "a.mp4") == [] and ex.ensure(dest / "nowhere.mp4") == []
    assert ex.extracted == [("later.zip", "later/data/a.mp4"), ("one.zip", "frames/e/1.jpg"), ("one.zip", "frames/e/2.jpg")]
    ex.close()
    # a new process: the indexes read from disk, no archive opened until a member is missing
    opened: list[str] = []

    def counting(arc: Archive) -> Archive:
        def opener():  # noqa: ANN202
            opened.append(arc.name)
            return arc.opener()
        return Archive(arc.name, arc.strip, arc.key, opener)

    again = Extractor([counting(one), counting(later)], dest)
    assert again.members == ex.members and opened == []
    assert again.ensure(dest / "data" / "a.mp4") == [] and opened == []
    # a member cut short or changed on disk (another size) is extracted again
    (dest / "data" / "a.mp4").write_bytes(b"A")
    assert again.ensure(dest / "data" / "a.mp4") == ["data/a.mp4"] and opened == ["later.zip"]
    assert (dest / "data" / "a.mp4").read_bytes() == b"A2"
    # the same archive with another strip has its own index (MVBench's data0613.zip, twice)
    plain = local(later_path := tmp_path / "later.zip", "later.zip")
    assert cached_index(dest, plain) is None
    assert Extractor([plain], dest).ensure(dest / "later" / "data" / "a.mp4") == ["later/data/a.mp4"]
    # other bytes under the same name (a new download): indexed again
    make_zip(later_path, {"later/data/a.mp4": b"A3", "later/data/c.mp4": b"c"})
    assert "data/c.mp4" in Extractor([local(later_path, "later.zip", strip="later")], dest).members


def test_a_refused_member_writes_nothing_of_any_archive(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    good = local(make_zip(tmp_path / "good.zip", {"data/ok.mp4": b"o"}), "videos_01.zip")
    bad = local(make_zip(tmp_path / "bad.zip", {"data/good.mp4": b"g", "data/../../evil.mp4": b"e"}), "videos_02.zip")
    with pytest.raises(DataError) as err:
        Extractor([good, bad], dest)
    assert err.value.render().splitlines()[0].startswith(
        "videos_02.zip, field 'dataset.video_archives': archive member 'data/../../evil.mp4' escapes the extraction folder")
    assert not (dest / "data").exists() and not (tmp_path / "evil.mp4").exists()
    assert cached_index(dest, bad) is None  # refused again next time


def test_a_link_planted_in_the_folder_is_not_followed(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    outside = tmp_path / "outside"
    outside.mkdir()
    (dest / "data").mkdir(parents=True)
    os.symlink(outside, dest / "data" / "sub")
    ex = Extractor([local(make_zip(tmp_path / "a.zip", {"data/sub/x.mp4": b"x"}), "a.zip")], dest)
    with pytest.raises(DataError, match="member 'data/sub/x.mp4' escapes the extraction folder") as err:
        ex.ensure(dest / "data" / "sub" / "x.mp4")
    assert err.value.file == "a.zip"
    assert list(outside.iterdir()) == []


def test_a_corrupt_archive_is_one_data_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "c.zip"
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as zf:
        zf.writestr("data/a.mp4", b"x" * 1000)
    path.write_bytes(data.getvalue()[:200])  # cut short
    with pytest.raises(DataError, match="corrupt or unreadable zip archive") as err:
        Extractor([local(path, "videos_chunked_09.zip")], tmp_path / "out")
    assert err.value.file == "videos_chunked_09.zip"
    # a member whose bytes are damaged after the directory was indexed: named when extracted
    whole = data.getvalue()
    path.write_bytes(whole)
    ex = Extractor([local(path, "videos_chunked_09.zip")], tmp_path / "out")
    damaged = bytearray(whole)
    damaged[0:4] = b"XXXX"  # the member's local header
    path.write_bytes(bytes(damaged))
    with pytest.raises(DataError, match="corrupt or unreadable zip archive") as err:
        ex.ensure(tmp_path / "out" / "data" / "a.mp4")
    assert err.value.file == "videos_chunked_09.zip"


def test_the_dataset_keys_are_checked_when_the_task_loads() -> None:
    from pydantic import ValidationError

    from mmtasks.config.task_config import DatasetConfig

    video = {"path": "{{ doc.prefix }}/{{ doc.video }}", "num_frames": 4}
    hub = {"repo": "OpenGVLab/MVBench", "files": [{"path": "json/a.json", "fields": {"task_type": "A"}}]}
    ok = DatasetConfig.model_validate({"hub": hub, "video": video, "video_archives": [{"path": "video/*.zip"}]})
    assert ok.hub is not None and ok.hub.files[0].fields == {"task_type": "A"}
    for bad, words in [
        ({"hub": hub, "hf": {"path": "a/b"}}, "not both"),
        ({"local": {"dir": "x", "file": "y.jsonl"}, "video": video, "video_archives": [{"path": "v.zip"}]}, "name one"),
        ({"hub": hub, "video_archives": [{"path": "v.zip"}]}, "give dataset.video too"),
        ({"hub": {**hub, "files": [{"path": "../secret.json"}]}}, "not a path inside the repository"),
        ({"hub": {**hub, "files": [{"path": "/etc/passwd"}]}}, "not a path inside the repository"),
        ({"hub": hub, "video": video, "video_archives": [{"path": "v.zip", "strip": "../x"}]}, "not a path inside"),
        ({"hub": {**hub, "repo": "../../x"}}, "repo"),
    ]:
        with pytest.raises(ValidationError, match=words):
            DatasetConfig.model_validate(bad)


def test_an_archive_larger_than_the_free_space_is_refused_before_writing(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil
    from collections import namedtuple

    arc = local(make_zip(tmp_path / "big.zip", {"data/a.mp4": b"x" * 5000, "data/b.mp4": b"y" * 500}),
                "videos_chunked_01.zip")
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10_000, 9_000, 1_000))
    ex = Extractor([arc], tmp_path / "out")
    assert ex.ensure(tmp_path / "out" / "data" / "b.mp4") == ["data/b.mp4"]  # 500 bytes: room for it
    with pytest.raises(DataError, match="member 'data/a.mp4' holds 0.0 GB, and .* has 0.0 GB free") as err:
        ex.ensure(tmp_path / "out" / "data" / "a.mp4")
    assert err.value.file == "videos_chunked_01.zip" and "MMTASKS_ARCHIVES_DIR" in (err.value.hint or "")
    assert sorted(p.name for p in (tmp_path / "out" / "data").iterdir()) == ["b.mp4"]  # nothing of a.mp4, not even partial


def test_a_read_that_fails_is_one_data_error_naming_the_archive_and_member(tmp_path: Path) -> None:
    """A remote archive's network error (what its opener declares it raises) while a member is read."""

    class Dropped(Exception):
        pass

    path = make_zip(tmp_path / "v.zip", {"data/a.mp4": b"a" * 100})
    good = local(path, "videos_chunked_03.zip")
    ex = Extractor([good], tmp_path / "out")
    ex.close()

    class Flaky(io.BytesIO):
        def read(self, n: int | None = -1) -> bytes:
            if self.tell() > 0:
                raise Dropped("connection reset")
            return super().read(n)

    flaky = Archive(good.name, None, good.key, lambda: Flaky(path.read_bytes()), errors=(Dropped,))
    with pytest.raises(DataError, match="cannot extract member 'data/a.mp4' into .*: connection reset") as err:
        Extractor([flaky], tmp_path / "out").ensure(tmp_path / "out" / "data" / "a.mp4")
    assert err.value.file == "videos_chunked_03.zip"
    assert not (tmp_path / "out" / "data" / "a.mp4").exists()


def test_a_video_task_read_from_the_hub_without_huggingface_hub_is_one_line(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What a new user on `make demo`'s core install (no huggingface_hub) meets running Video-MME
    without --data-dir: before, a traceback (ModuleNotFoundError from the archives' folder)."""
    from mmtasks.cli import main as cli_main

    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # importing it raises ImportError
    code = cli_main(["--tasks", "videomme", "--model", "random", "--output-path", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2
    assert "needs huggingface_hub" in err and "dataset.video_archives" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def with_bad_crc(path: Path, member: str) -> Path:
    """The zip at ``path`` with one byte of ``member``'s stored data changed (its CRC now wrong)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(member)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


def test_a_member_with_a_wrong_crc_leaves_no_partial_file(tmp_path: Path) -> None:
    """Issue 41, finding 10: a member whose CRC is wrong, asked for 3 times, left three hidden
    ``.partial`` files (96 MB in the attack), and the hint said to delete the archive from the
    Hugging Face cache, where a local (or range-read) archive is not. Every failure path now removes
    its partial file, and the hint says where the archive is."""
    dest = tmp_path / "out"
    path = with_bad_crc(make_zip(tmp_path / "a.zip", {"data/a.mp4": b"x" * 5000, "data/b.mp4": b"b"}), "data/a.mp4")
    for _ in range(3):
        ex = Extractor([local(path, "video/a.zip")], dest)
        with pytest.raises(DataError) as err:
            ex.ensure(dest / "data" / "a.mp4")
        ex.close()
        assert "Bad CRC-32" in str(err.value) and err.value.file == "video/a.zip"
        assert err.value.hint == f"replace {path}: it is damaged"  # before: "delete it from the Hugging Face cache ..."
    leftovers = [p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file() and not p.name.endswith((".json", ".lock"))]
    assert leftovers == []  # before: three hidden .data/.a.mp4.<pid>.partial files
    assert Extractor([local(path, "video/a.zip")], dest).ensure(dest / "data" / "b.mp4") == ["data/b.mp4"]  # the rest is fine


def test_extracted_files_are_known_by_content_and_pruned_when_no_index_references_them(tmp_path: Path) -> None:
    """A member is extracted again when the file there holds other content of the same size (the
    archive's new bytes); ``mmtasks cache prune`` removes what no index references, partial files
    and the per-commit folders of the earlier layout, and nothing else."""
    from mmtasks.cli import main
    from mmtasks.documents.archives import prune

    dest = tmp_path / "archives" / "org--data" / "extracted"
    path = make_zip(tmp_path / "v.zip", {"data/a.mp4": b"one", "data/b.mp4": b"bb"})
    ex = Extractor([local(path, "v.zip")], dest)
    assert ex.ensure(dest / "data") == ["data/a.mp4", "data/b.mp4"]
    ex.close()
    os.utime(path, ns=(1, 1))
    make_zip(path, {"data/a.mp4": b"two"})  # same name and size, other bytes; b.mp4 gone
    ex = Extractor([local(path, "v.zip")], dest)
    assert ex.ensure(dest / "data" / "a.mp4") == ["data/a.mp4"] and (dest / "data" / "a.mp4").read_bytes() == b"two"
    ex.close()
    old = tmp_path / "archives" / "org--data" / ("c" * 40)  # the earlier layout: one copy per commit
    (old / "data").mkdir(parents=True)
    (old / "data" / "a.mp4").write_bytes(b"one")
    (dest / "data" / ".a.mp4.123.partial").write_bytes(b"half")
    code = main(["cache", "prune", "--archives-dir", str(tmp_path / "archives")])
    assert code == 0
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file() and ".mmtasks-index" not in p.parts) == [
        ".mmtasks-extract.lock", "data/a.mp4"]  # b.mp4 (no index holds it) and the partial file removed
    assert not old.exists()
    assert prune(dest).files == 0  # nothing more to remove
    assert Extractor([local(path, "v.zip")], dest).ensure(dest / "data" / "a.mp4") == []  # still known by its content
