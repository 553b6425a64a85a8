"""Without a network, loading Hub weights fails in seconds with one line naming the fixes
(not minutes of retries), cached weights still load, and every log line prints once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli_process import REPO, SAMPLE


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _offline_env(tmp_path: Path) -> dict[str, str]:
    """An unreachable Hub (a closed loopback port: refused at once) and an empty HF cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "TRANSFORMERS_", "MMTASKS_"))}
    env.update({"HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}", "HF_HOME": str(tmp_path / "hf"),
                "PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache")})
    return env


def test_headline_command_without_network_fails_fast_with_one_line(tmp_path):
    pytest.importorskip("transformers")
    # "fast": one refused connection and no download retries (the process limit is a hang guard only)
    proc = subprocess.run(
        [sys.executable, "-m", "mmtasks", "--tasks", "realbench_ranking_hard", "--model", "hf:Qwen/Qwen2-VL-72B-Instruct",
         "--data-dir", str(SAMPLE), "--output-path", str(tmp_path / "out")],
        cwd=tmp_path, env=_offline_env(tmp_path), capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("mmtasks: error: field '--model': hf model 'Qwen/Qwen2-VL-72B-Instruct'"), line
    assert "cannot be reached" in line and "hf download Qwen/Qwen2-VL-72B-Instruct" in line
    assert "HF_HUB_OFFLINE=1" in line and "hf:/path/to/weights" in line


def test_offline_judge_is_reported_under_judge(tmp_path):
    pytest.importorskip("transformers")
    proc = subprocess.run(
        [sys.executable, "-m", "mmtasks", "--tasks", "mmdu", "--model", "random", "--judge", "hf:org/judge-not-cached",
         "--data-dir", str(SAMPLE), "--no-progress"],
        cwd=tmp_path, env=_offline_env(tmp_path), capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mmtasks: error: field '--judge': judge hf:org/judge-not-cached: "), proc.stderr


def _snapshot(hf_home: Path, repo: str) -> Path:
    """The HF cache layout for ``repo`` at one revision (what `hf download` leaves behind)."""
    revision = "0123456789abcdef0123456789abcdef01234567"
    root = hf_home / "hub" / ("models--" + repo.replace("/", "--"))
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text(revision)
    return root / "snapshots" / revision


def test_cached_weights_load_while_the_hub_is_unreachable(tmp_path):
    pytest.importorskip("transformers")
    from tests.tiny_checkpoints import build_text_model

    build_text_model(_snapshot(tmp_path / "hf", "mmtasks-test/tiny-chat"))
    script = textwrap.dedent("""
        import logging, sys
        from mmtasks import logs
        logs.configure()
        from mmtasks.core.conversation import Message
        from mmtasks.core.request import GenerationConfig, Request
        from mmtasks.models.base import ModelSpec, load_model
        model = load_model(ModelSpec(backend="hf", name="mmtasks-test/tiny-chat"))
        [reply] = model.generate_all([Request((Message.text("user", "hello"),), GenerationConfig(max_new_tokens=4, temperature=0.0))])
        print("REPLY-OK" if reply.ok else reply.error)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=_offline_env(tmp_path),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "REPLY-OK" in proc.stdout, proc.stdout + proc.stderr
    notice = [line for line in proc.stderr.splitlines() if "cannot be reached" in line]
    assert len(notice) == 1 and "loading mmtasks-test/tiny-chat from the local cache" in notice[0], proc.stderr


def test_library_log_lines_print_once(tmp_path):
    """huggingface_hub attaches its own handler and also propagates: under the CLI's handler
    each of its warnings (the retry lines) printed twice."""
    pytest.importorskip("huggingface_hub")
    script = textwrap.dedent("""
        from mmtasks import logs
        logs.configure()
        from huggingface_hub.utils import logging as hub_logging
        logs.adopt_library_loggers()
        hub_logging.get_logger("huggingface_hub.utils._http").warning("Retrying in 1s [Retry 1/5].")
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=_offline_env(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("Retrying in 1s") == 1, proc.stderr


def test_library_info_lines_only_under_verbose(tmp_path):
    """The openai SDK's retry notes (INFO, its logger set to INFO by the backend) stay out of a
    plain run's stderr; mmtasks' own notices and everyone's warnings stay in."""
    script = textwrap.dedent("""
        import logging, sys
        from mmtasks import logs
        logs.configure(verbose=sys.argv[1] == "v")
        logging.getLogger("openai").setLevel(logging.INFO)
        logging.getLogger("openai._base_client").info("Retrying request in 0.4 seconds")
        logging.getLogger("openai._base_client").warning("a library warning")
        logging.getLogger("mmtasks.runner").info("3 of 9 replies came from the response cache")
    """)
    plain, verbose = (subprocess.run([sys.executable, "-c", script, flag], cwd=tmp_path, env=_offline_env(tmp_path),
                                     capture_output=True, text=True, timeout=300, check=True).stderr for flag in ("-", "v"))
    assert plain.splitlines() == ["WARNING openai._base_client: a library warning",
                                  "mmtasks: 3 of 9 replies came from the response cache"]
    assert "INFO openai._base_client: Retrying request in 0.4 seconds" in verbose
