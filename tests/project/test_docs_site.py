"""The documentation site (mkdocs.yml, docs/) builds with `mkdocs build --strict`: a broken link, a
link to a missing anchor, or a page left out of the nav fails here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

#: the repository root, wherever under tests/ this file sits
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())

pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]' (make test installs it)")
pytest.importorskip("material", reason="mkdocs-material is not installed: pip install -e '.[docs]'")


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's banner about its successor
    # no -q: mkdocs 1.6 then drops the warnings that --strict counts, and a broken link passes
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, timeout=600, env=env)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "authors" / "tutorial" / "index.html").is_file()


def small_site(tmp_path: Path, index: str, other: str) -> Path:
    """A two-page site with the project's theme and validation settings."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config.update(docs_dir=str(tmp_path / "docs"), nav=[{"Home": "index.md"}, {"Other": "other.md"}])
    config.pop("exclude_docs", None)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(index, encoding="utf-8")
    (tmp_path / "docs" / "other.md").write_text(other, encoding="utf-8")
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.mark.parametrize("index, other, problem", [
    ("# Home\n\n[other](other.md#a-section)\n", "# Other\n\n## A section\n", None),
    ("# Home\n\n[other](other.md#no-such-section)\n", "# Other\n\n## A section\n", "no-such-section"),
    ("# Home\n\n[gone](gone.md)\n", "# Other\n", "gone.md"),
    ("# Home\n\n[readme](../README.md)\n", "# Other\n", "README.md"),
])
def test_a_broken_link_or_anchor_fails_the_strict_build(tmp_path: Path, index: str, other: str,
                                                       problem: str | None) -> None:
    done = build(small_site(tmp_path, index, other), tmp_path / "site")
    if problem is None:
        assert done.returncode == 0, done.stderr
    else:
        assert done.returncode != 0 and problem in done.stderr


def test_a_page_left_out_of_the_nav_fails(tmp_path: Path) -> None:
    config = small_site(tmp_path, "# Home\n", "# Other\n")
    (tmp_path / "docs" / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    done = build(config, tmp_path / "site")
    assert done.returncode != 0 and "orphan.md" in done.stderr
