"""Loading the reference code the conformance tests run verbatim: the peer harnesses' generic files
shared by several folders (``tests/reference/``, see its README), a folder's own (its
``tests/reference/``), and unlicensed authors' code read from ``MMTASKS_REFERENCE_DIR``."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

#: the peer harnesses' files that several benchmark folders' tests run
SHARED = Path(__file__).resolve().parent / "reference"
ENV = "MMTASKS_REFERENCE_DIR"


def load_file(path: Path, name: str | None = None, **given: Any) -> ModuleType:
    """The Python file at ``path`` as a new module named ``name`` (not put in ``sys.modules``), with
    ``given`` set in its namespace before it runs (stand-ins for what it imports)."""
    spec = importlib.util.spec_from_file_location(name or f"reference_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(given)
    spec.loader.exec_module(module)
    return module


def load_reference(name: str, folder: Path = SHARED, **given: Any) -> ModuleType:
    """``<folder>/<name>.py`` (the shared ``tests/reference/`` unless a folder's is given) as a module."""
    return load_file(folder / f"{name}.py", f"reference_{folder.parent.parent.name}_{name}", **given)


def reference_dir_file(filename: str, why: str = "") -> Path:
    """``$MMTASKS_REFERENCE_DIR/<filename>``, the test skipped where it is not there."""
    folder = os.environ.get(ENV)
    path = Path(folder) / filename if folder else None
    if path is None or not path.is_file():
        pytest.skip(f"needs {filename}{f' ({why})' if why else ''} in {ENV}")
    return path
