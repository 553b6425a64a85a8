"""tests/reference_code.py: the loader of the bundled references and of MMTASKS_REFERENCE_DIR's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reference_code import ENV, SHARED, load_file, load_reference, reference_dir_file


def test_reference_dir_file_is_the_file_or_a_skip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "theirs.py").write_text("VALUE = given + 1\n", encoding="utf-8")
    monkeypatch.setenv(ENV, str(tmp_path))
    path = reference_dir_file("theirs.py", "why")
    assert path == tmp_path / "theirs.py"
    assert load_file(path, "reference_theirs", given=41).VALUE == 42     # given: set before it runs
    with pytest.raises(pytest.skip.Exception, match=r"needs absent.py \(unlicensed\) in MMTASKS_REFERENCE_DIR"):
        reference_dir_file("absent.py", "unlicensed")
    monkeypatch.delenv(ENV)
    with pytest.raises(pytest.skip.Exception):
        reference_dir_file("theirs.py")


def test_every_shared_file_has_its_readme_row() -> None:
    readme = (SHARED / "README.md").read_text(encoding="utf-8")
    files = sorted(p.name for p in SHARED.glob("*.py"))
    assert files and all(f"| `{name}` |" in readme for name in files)
    assert callable(load_reference("vlmevalkit_matching_util_e8e78f0").can_infer)
