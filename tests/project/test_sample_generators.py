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
