"""The README stays the front door: under 12 KB, the two commands, and links that lead somewhere
(the detail lives in docs/)."""

from __future__ import annotations

import re
from pathlib import Path

#: the repository root, wherever under tests/ this file sits
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())


def test_the_readme_is_the_front_door() -> None:
    readme = ROOT / "README.md"
    assert readme.stat().st_size < 12 * 1024, f"README.md is {readme.stat().st_size} bytes: move the detail into docs/"
    text = readme.read_text(encoding="utf-8")
    for command in ("make demo", "make test", "docs/index.md"):
        assert command in text
    links = re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+)(?:#[^)]*)?\)", text)
    assert links and not [link for link in links if not (ROOT / link).is_file()], links
