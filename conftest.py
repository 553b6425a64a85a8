"""Shared pytest fixtures of tests/ and of the benchmark folders' own tests (tasks/<bench>/tests/)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any
from pathlib import Path

# The suite is offline: never let a library try the network (and wait on timeouts).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402

from tests.chat_server import ChatServer  # noqa: E402

#: Under pytest-xdist (``make test``: ``-n 2 --dist loadfile --no-loadscope-reorder``) the files
#: go to the workers in collection order, one at a time as a worker runs dry; these, the longest
#: files (seconds measured one after the other, 2 cores), are handed out first, so no worker is
#: left alone with a long file at the end. The rest keep their order. Serial runs are not reordered.
LONGEST_FILES = (
    "test_vllm_backend.py",  # 41 s (its module fixture starts vLLM's CPU engine)
    "test_resume.py",  # 83 s
    "test_data_parallel.py",  # 63 s
    "test_hf_families.py",  # 49 s
    "test_vllm_video.py",  # 60 s under load (another vLLM engine: not beside the first one)
    "test_viewer.py",  # 40 s
    "test_publish.py",  # 32 s
    "test_multi_turn.py",  # 31 s
    "test_leaderboard.py",  # 28 s
    "test_cli_offline.py",  # 27 s
    "test_published_outputs.py",  # 26 s
    "test_hub_videos.py",  # 26 s under load
    "test_every_reader.py",  # 24 s
    "test_presets.py",  # 21 s (imports vLLM in .venv-vllm)
    "test_muirbench.py",
    "test_trackers.py",  # 60-130 s on the shared box (wandb, mlflow and trackio each start)
    "test_trainer_callback.py",
    "test_publish_results.py",
)


#: files whose every test is `slow` besides those that mark themselves: the longest of the suite
#: (measured), left out of the fast tier (`make test-fast`, `-m "not slow"`)
SLOW_FILES = frozenset(LONGEST_FILES)
#: single tests of the other files that took over 0.5 s in a measured run of the fast tier
#: (scripts/fast_tier.py --update writes the list)
SLOW_TESTS = frozenset(line.strip() for line in (Path(__file__).parent / "tests" / "slow_tests.txt").read_text(encoding="utf-8").splitlines()
                       if line.strip() and not line.startswith("#"))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_FILES or item.nodeid in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
    if not hasattr(config, "workerinput"):  # not an xdist worker
        return
    rank = {name: k for k, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file's tests keep their order


@pytest.fixture(scope="session")
def tiny_llava_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random LLaVA checkpoint (see tests/tiny_models.py), built once per session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.tiny_models import build_tiny_llava

    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A fresh loopback OpenAI-compatible server (see tests/chat_server.py).

    Its settings (``latency``, ``reply``, ``api_key``, ``models``,
    ``strict_models``, ``models_endpoint``) are plain attributes: assign them
    in the test; schedule failures with ``chat_server.inject(...)``.
    """
    with ChatServer() as server:
        yield server


@pytest.fixture
def make_model(chat_server: ChatServer) -> Iterator[Callable[..., Any]]:
    """``make(name="test-model", **args)``: an ``openai:`` backend on the loopback server,
    closed after the test."""
    from mmtasks.models.base import ModelSpec
    from mmtasks.models.openai_api import OpenAIModel

    made: list[OpenAIModel] = []

    def make(name: str = "test-model", **args: object) -> OpenAIModel:
        args.setdefault("base_url", chat_server.base_url)
        model = OpenAIModel(ModelSpec(backend="openai", name=name, args=args))
        made.append(model)
        return model

    yield make
    for model in made:
        model.close()
