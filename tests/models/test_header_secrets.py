"""Finding 3 of issue 23: header values are secrets.

``default_headers={"api-key": KEY}`` (the header Azure takes its key in) used to land verbatim in
results.json, leaderboard.json and the page, and the response cache's model identity; a key a
server echoed was redacted in the samples but stored raw in ``responses.sqlite``. Now header
values are ``***`` (names kept) wherever a run publishes or stores them, replies are redacted
before the cache stores them, and a results.json written before this rule publishes none either."""

from __future__ import annotations

import json
import secrets
import shutil
from pathlib import Path

import pytest

import mmtasks
from mmtasks.leaderboard.cli import main as leaderboard_main
from mmtasks.models.base import ModelSpec
from mmtasks.results.schema import parse_results
from mmtasks.secrets import public_args
from tests.chat_server import ChatServer
from tests.cli_process import SAMPLE

ROOT = Path(__file__).resolve().parents[2]


def files_holding(roots: list[Path], needle: str) -> list[str]:
    return [str(p) for root in roots for p in sorted(root.rglob("*")) if p.is_file() and needle.encode() in p.read_bytes()]


def test_a_header_key_is_sent_but_never_published_or_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    key = f"azure-key-{secrets.token_hex(16)}"
    out, cache, board = tmp_path / "run", tmp_path / "cache", tmp_path / "board"
    # a careless server: every reply quotes the key it was sent
    with ChatServer(reply=lambda body: f"(1) - served for api-key {key}") as server:
        mmtasks.evaluate(tasks="realbench_ranking_easy", model="openai:test-model",
                         model_args={"base_url": server.base_url, "default_headers": {"api-key": key}, "max_retries": 0},
                         data_dir=SAMPLE, output_path=out, cache_dir=cache, limit=2)
        sent = [{k.lower(): v for k, v in c.headers.items()}.get("api-key") for c in server.log]
    assert sent and set(sent) == {key}  # the header still does its job
    assert leaderboard_main(["build", str(out), "--out", str(board), "--no-paper"]) == 0
    printed = capsys.readouterr()
    # before: results.json, leaderboard.json/.js and responses.sqlite (identity and reply) held it
    assert files_holding([out, cache, board], key) == []
    assert key not in printed.out + printed.err
    config = json.loads((out / "results.json").read_text())["config"]
    assert config["model_args"]["default_headers"] == {"api-key": "***"}  # the name is kept
    cached = (cache / "responses.sqlite").read_bytes()
    assert b"served for api-key ***" in cached or b"served for api-key ***" in (cache / "responses.sqlite-wal").read_bytes()


def test_a_results_file_written_before_publishes_no_header_value(tmp_path: Path) -> None:
    run = tmp_path / "old-run"
    shutil.copytree(ROOT / "tests" / "fixtures" / "runs" / "qwen2vl7b-realbench-2025-11-26", run)
    data = json.loads((run / "results.json").read_text())
    data["config"]["model_args"] = {"default_headers": {"api-key": "q7z3x"}}  # short: no length rule can find it
    data["config"]["judge_args"] = {"default_headers": {"Authorization": "Bearer tok"}}
    data["config"]["model_spec"] = {"backend": "openai", "name": "x", "args": {"default_headers": {"api-key": "q7z3x"}}}
    (run / "results.json").write_text(json.dumps(data))
    config = parse_results(data).config
    assert config.model_args == {"default_headers": {"api-key": "***"}} and config.judge_args == {"default_headers": {"Authorization": "***"}}
    assert config.model_spec == {"backend": "openai", "name": "x", "args": {"default_headers": {"api-key": "***"}}}
    assert leaderboard_main(["build", str(run), "--out", str(tmp_path / "board"), "--no-paper"]) == 0
    assert files_holding([tmp_path / "board"], "q7z3x") == [] and files_holding([tmp_path / "board"], "Bearer tok") == []


def test_header_values_are_not_in_the_cache_identity_their_names_are() -> None:
    a = ModelSpec(backend="openai", name="m", args={"default_headers": {"api-key": "k1"}})
    b = ModelSpec(backend="openai", name="m", args={"default_headers": {"api-key": "k2"}})
    c = ModelSpec(backend="openai", name="m", args={"default_headers": {"x-other": "k1"}})
    assert "k1" not in a.identity() and a.identity() == b.identity() != c.identity()
    assert public_args({"default_headers": {"a": "1"}, "dtype": "bf16"}) == {"default_headers": {"a": "***"}, "dtype": "bf16"}
