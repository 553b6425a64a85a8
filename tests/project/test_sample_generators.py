"""Every benchmark folder's sample-data generator (tasks/<name>/make_sample.py) writes what is committed
under data/sample/<name>/: the records, cards, Hub JSON files and subtitles byte for byte, zip archives
member by member (images, videos and parquet may differ with the Pillow/PyAV/pyarrow versions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import assert_regenerates, sample_generators

REPO = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p.name for p in (REPO / "tasks").iterdir() if (p / "make_sample.py").is_file())


def test_every_benchmark_folder_has_a_generator_and_a_sample() -> None:
    folders = sorted(p.name for p in (REPO / "tasks").iterdir() if p.is_dir())
    assert FOLDERS == folders
    assert all((REPO / "data" / "sample" / name).is_dir() for name in FOLDERS)


@pytest.mark.parametrize("name", FOLDERS)
def test_the_sample_regenerates(tmp_path: Path, name: str) -> None:
    pytest.importorskip("datasets")
    (generator,) = sample_generators(name)
    assert_regenerates(generator.generate, tmp_path / name, REPO / "data" / "sample" / name)


def test_the_regeneration_check_compares_the_hub_files_and_the_archives(tmp_path: Path) -> None:
    """A generator that changed a Hub JSON record file, or a text member or a member's name in a zip,
    no longer passes (the check once compared .jsonl and .md files alone)."""
    import zipfile

    (generator,) = sample_generators("mvbench")

    def with_json_changed(dest: Path) -> None:
        generator.generate(dest)
        path = dest / "hub" / "json" / "action_count.json"
        path.write_text(path.read_text(encoding="utf-8").replace('"answer"', '"Answer"', 1), encoding="utf-8")

    with pytest.raises(AssertionError, match="action_count.json"):
        assert_regenerates(with_json_changed, tmp_path / "a", REPO / "data" / "sample" / "mvbench")

    (videomme,) = sample_generators("videomme")

    def with_member_renamed(dest: Path) -> None:
        videomme.generate(dest)
        path = dest / "hub" / "subtitle.zip"
        with zipfile.ZipFile(path) as zf:
            members = [(i, zf.read(i)) for i in zf.infolist()]
        with zipfile.ZipFile(path, "w") as zf:
            for info, data in members:
                info.filename = info.filename.replace("smplVid002b", "smplVid002x")
                zf.writestr(info, data)

    with pytest.raises(AssertionError, match="subtitle.zip"):
        assert_regenerates(with_member_renamed, tmp_path / "b", REPO / "data" / "sample" / "videomme")
