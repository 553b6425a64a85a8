"""Finding 7 of issue 23: the cache knows what answered.

A server restarted on the same URL with the same served name but other weights used to get the
old checkpoint's answers from the cache; the only sign was "0 requests sent, 9 replies from the
cache". Now an API model's cache identity holds what ``/models`` says is served under the name
(its id, owner, vLLM's ``root``/``parent``, a ``created`` that is not the listing's own time) and
``model_revision=``; and the results footer names the cache's share whenever it is over 0."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.models.openai_api import served_identity
from mmtasks.report import results_table_lines
from tests.chat_server import ChatServer

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def run(server: ChatServer, tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str], *model_args: str) -> tuple[dict, str]:
    out = tmp_path / name
    main(["--tasks", "realbench_ranking_easy", "--limit", "3", "--model", "openai:test-model",
          "--model-args", ",".join([f"base_url={server.base_url}", *model_args]), "--data-dir", str(SAMPLE),
          "--output-path", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    return json.loads((out / "results.json").read_text())["run_stats"], capsys.readouterr().out


def sent(stats: dict) -> int:
    return sum(stats["sent"].values())


def test_a_server_restarted_on_other_weights_is_asked_again(chat_server: ChatServer, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    chat_server.model_card = {"root": "/ckpt/step-1000", "created": 1_700_000_000}
    first, _ = run(chat_server, tmp_path, "a", capsys)
    assert sent(first) == 3
    again, table = run(chat_server, tmp_path, "b", capsys)
    assert sent(again) == 0  # the same weights: served from the cache, and the footer says so
    assert "3 of 3 replies (100%) came from the response cache (--no-cache asks again)" in table
    chat_server.model_card = {"root": "/ckpt/step-2000", "created": 1_700_000_000}  # same URL and name, other weights
    other, _ = run(chat_server, tmp_path, "c", capsys)
    assert sent(other) == 3  # before: 0 sent, 3 replies of step-1000 from the cache
    chat_server.model_card = {"root": "/ckpt/step-2000", "created": 1_700_000_000}
    revised, _ = run(chat_server, tmp_path, "d", capsys, "model_revision=retrained-2")
    assert sent(revised) == 3  # what /models cannot tell, model_revision= does


def test_a_listing_time_stamp_is_not_a_checkpoint(chat_server: ChatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch) -> None:
    """vLLM stamps each /models entry with the time of the answer: that must not make every run a miss."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    chat_server.model_card = {"created": int(time.time()), "owned_by": "vllm", "root": "Qwen/Qwen2-VL-7B-Instruct"}
    run(chat_server, tmp_path, "a", capsys)
    chat_server.model_card = {**chat_server.model_card, "created": int(time.time()) + 1}
    again, _ = run(chat_server, tmp_path, "b", capsys)
    assert sent(again) == 0


def test_served_identity_fields() -> None:
    now = 1_800_000_000.0
    entry = {"id": "m", "object": "model", "created": 1_700_000_000, "owned_by": "org", "root": "/w", "parent": None,
             "max_model_len": 4096, "permission": [{"x": 1}]}
    assert served_identity(entry, now) == {"id": "m", "created": 1_700_000_000, "owned_by": "org", "root": "/w"}
    assert "created" not in served_identity({**entry, "created": int(now) - 3}, now)
    assert served_identity("not a dict", now) == {} and served_identity({"id": True, "root": ["x"]}, now) == {}


def test_the_footer_names_the_cache_share_only_when_over_zero() -> None:
    results = {"results": {}, "config": {"model": "m"}, "run_stats": {"sent": {"model": 6}, "cached": {"model": 2}}}
    assert any(line.startswith("2 of 8 replies (25%) came from the response cache") for line in results_table_lines(results))
    results["run_stats"]["cached"] = {"model": 0}
    assert not any("response cache" in line for line in results_table_lines(results))
