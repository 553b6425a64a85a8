"""Fidelity to the papers (issue 13): MMRC's sampling, explicit answers in the parsers, MMRC's
refusal precision and Algorithm 1 probes, MMDU's official API input, coverage, RealBench's
combined images and secondary metrics. Expected values are worked out by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.task import Task
from tests.chat_server import ChatServer
from tests.test_mmrc_e2e import make_reply, run_in_process


def load(name: str, **kw: object) -> Task:
    config, path = TaskRegistry.discover().load(name)
    return Task(config, path, **kw)  # type: ignore[arg-type]


# --- 1. MMRC samples with each model's default settings (paper Appendix G) -----------------

def test_mmrc_model_decodes_in_default_mode_and_the_judge_greedily() -> None:
    task = load("mmrc")
    assert task.config.generation.temperature is None and task.config.generation.do_sample is None
    assert task.config.generation.sampling_mode() == "default"
    assert task.config.generation.max_new_tokens == 256
    assert task.config.judge is not None and task.config.judge.generation.sampling_mode() == "greedy"


def test_mmrc_sends_no_temperature_to_an_openai_server(chat_server: ChatServer, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    chat_server.models = ("test-model", "judge-model")
    chat_server.reply = make_reply()
    assert run_in_process(chat_server, tmp_path, monkeypatch) == 0
    model = [b for b in chat_server.bodies if b["model"] == "test-model"]
    judge = [b for b in chat_server.bodies if b["model"] == "judge-model"]
    assert model and judge
    assert all("temperature" not in b and "top_p" not in b for b in model)
    assert all(b["temperature"] == 0.0 for b in judge)
