"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_llava_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random LLaVA checkpoint (see tests/tiny_models.py), built once per session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.tiny_models import build_tiny_llava

    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))
