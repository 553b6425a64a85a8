"""Zip extraction of video archives (mmtasks/documents/archives.py): every member checked before
anything is written, leading folders stripped, each archive extracted once (a marker per archive
and strip), again only when the archive changed or an extraction was cut short."""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

import pytest

from mmtasks.documents.archives import Archive, extract_once, is_extracted, member_target
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
    got = member_target(Archive(Path("x.zip"), "video/x.zip", strip), info)
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


def test_each_archive_is_extracted_once_and_again_when_it_changed(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    one = Archive(make_zip(tmp_path / "one.zip", {"data/a.mp4": b"a", "data/b.mp4": b"b"}), "one.zip")
    later = Archive(make_zip(tmp_path / "later.zip", {"later/data/a.mp4": b"A2"}), "later.zip", strip="later")
    assert extract_once([one, later], dest) == ["one.zip", "later.zip"]
    assert (dest / "data" / "a.mp4").read_bytes() == b"A2"  # merged, the later archive last
    assert (dest / "data" / "b.mp4").read_bytes() == b"b"
    assert extract_once([one, later], dest) == []  # marked done: nothing again
    # the same archive with another strip is another extraction (MVBench's data0613.zip, twice)
    plain = Archive(later.path, "later.zip")
    assert not is_extracted(dest, plain) and extract_once([plain], dest) == ["later.zip"]
    assert (dest / "later" / "data" / "a.mp4").read_bytes() == b"A2"
    # a new download of an archive (other size or time) is extracted again
    make_zip(tmp_path / "one.zip", {"data/a.mp4": b"new", "data/b.mp4": b"b"})
    assert extract_once([one, later], dest) == ["one.zip"]
    assert (dest / "data" / "a.mp4").read_bytes() == b"new"


def test_a_refused_member_writes_nothing_of_its_archive(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    bad = Archive(make_zip(tmp_path / "bad.zip", {"data/good.mp4": b"g", "data/../../evil.mp4": b"e"}), "videos_02.zip")
    with pytest.raises(DataError) as err:
        extract_once([bad], dest)
    assert err.value.render().splitlines()[0].startswith(
        "videos_02.zip, field 'dataset.video_archives': archive member 'data/../../evil.mp4' escapes the extraction folder")
    assert not (dest / "data").exists() and not (tmp_path / "evil.mp4").exists()
    assert not is_extracted(dest, bad)


def test_a_link_planted_in_the_folder_is_not_followed(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    outside = tmp_path / "outside"
    outside.mkdir()
    (dest / "data").mkdir(parents=True)
    os.symlink(outside, dest / "data" / "sub")
    arc = Archive(make_zip(tmp_path / "a.zip", {"data/sub/x.mp4": b"x"}), "a.zip")
    with pytest.raises(DataError, match="escapes the extraction folder"):
        extract_once([arc], dest)
    assert list(outside.iterdir()) == []


def test_a_corrupt_archive_is_one_data_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "c.zip"
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as zf:
        zf.writestr("data/a.mp4", b"x" * 1000)
    path.write_bytes(data.getvalue()[:200])  # cut short
    with pytest.raises(DataError, match="corrupt or unreadable zip archive") as err:
        extract_once([Archive(path, "videos_chunked_09.zip")], tmp_path / "out")
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

    arc = Archive(make_zip(tmp_path / "big.zip", {"data/a.mp4": b"x" * 5000}), "videos_chunked_01.zip")
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10_000, 9_000, 1_000))
    with pytest.raises(DataError, match="the archive holds 0.0 GB, and .* has 0.0 GB free") as err:
        extract_once([arc], tmp_path / "out")
    assert err.value.file == "videos_chunked_01.zip" and "MMTASKS_ARCHIVES_DIR" in (err.value.hint or "")
    assert not (tmp_path / "out" / "data").exists()
