"""A pool of OpenAI-compatible endpoints (``base_url=[A,B,C]``): requests spread over the
replicas, a replica killed mid-run loses nothing (its requests go to the others), every
endpoint's counts are in results.json and in the end-of-run line, and the cache identity is the
served model's, not the URL: the same run against one other replica takes every reply from the cache."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.errors import ConfigError, ModelError
from mmtasks.models.base import ModelSpec, load_model, parse_args_string
from tests.chat_server import ChatServer

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
WEIGHTS = {"root": "/models/Qwen2-VL-7B-Instruct"}


def replica(**card: str) -> ChatServer:
    server = ChatServer()
    server.model_card = dict(card or WEIGHTS)
    return server.start()


def run(out: Path, cache: Path, base_url: str, *extra: str) -> int:
    return main(["--tasks", "realbench_ranking_easy,mmdu", "--model", "openai:test-model",
                 "--model-args", f"base_url={base_url},max_retries=0,concurrency=2", "--judge", "random", "--limit", "4",
                 "--data-dir", str(SAMPLE), "--output-path", str(out), "--cache-dir", str(cache), "--no-progress", *extra])


def test_a_replica_killed_mid_run_loses_nothing(tmp_path, capsys):
    a, b, c = replica(), replica(), replica()
    try:
        closing: list[threading.Thread] = []

        def b_dies(body: dict) -> bool:
            """From its second request on, B hangs up without an answer, and shuts down: the request
            it held must move to another replica (before, B answered it while closing, and whether any
            request moved depended on how fast the others were served)."""
            if b.calls < 2:
                return False
            if not closing:
                closing.append(threading.Thread(target=b.close, daemon=True))
                closing[0].start()
            return True

        b.inject("disconnect", times=10**6, match=b_dies)
        urls = [a.base_url, b.base_url, c.base_url]
        b_url = b.base_url
        assert run(tmp_path / "pool", tmp_path / "cache", "[" + ",".join(urls) + "]") == 0  # no failure: exit 0
        data = json.loads((tmp_path / "pool" / "results.json").read_text())
        stats = data["run_stats"]
        sent = stats["sent"]["model"]
        per = stats["endpoints"]["model"]
        assert list(per) == urls
        assert sum(e["replies"] for e in per.values()) == sent and not any(e["failed"] for e in per.values())
        assert per[b_url]["moved_away"] >= 1  # B died: at least one request moved from it to another
        assert per[a.base_url]["replies"] > 0 and per[c.base_url]["replies"] > 0
        assert not stats.get("failed", {}).get("model")
        err = capsys.readouterr().err
        assert f"model endpoints: {a.base_url} {per[a.base_url]['replies']} replies, 0 failed, 0 moved to others; " \
               f"{b_url} {per[b_url]['replies']} replies" in err
        for line in (tmp_path / "pool" / "samples" / "mmdu.jsonl").read_text().splitlines():
            assert not json.loads(line).get("failures"), line  # nothing lost
        # another replica of the same weights, alone: every reply from the pool run's cache
        d = replica()
        try:
            assert run(tmp_path / "again", tmp_path / "cache", d.base_url) == 0
            again = json.loads((tmp_path / "again" / "results.json").read_text())["run_stats"]
            assert again["cached"]["model"] == sent and not again.get("sent", {}).get("model")
            assert d.calls == 0  # only /v1/models was asked
        finally:
            d.close()
    finally:
        for server in (a, b, c):
            server.close()


def test_a_pool_needs_endpoints_that_name_their_weights(tmp_path):
    a, b, other = replica(), ChatServer().start(), replica(root="/models/another")  # b lists no 'root'
    c = ChatServer().start()
    try:
        model = load_model(ModelSpec(backend="openai", name="test-model", args={"base_url": [a.base_url, b.base_url]}))
        with pytest.raises(ConfigError, match="does not say which weights it serves"):
            model.check_ready()
        model.close()
        mixed = load_model(ModelSpec(backend="openai", name="test-model", args={"base_url": f"{a.base_url},{other.base_url}"}))
        with pytest.raises(ModelError, match="the pool's endpoints serve different models"):
            mixed.check_ready()
        mixed.close()
        named = load_model(ModelSpec(backend="openai", name="test-model",
                                     args={"base_url": f"[{b.base_url},{c.base_url}]", "cache_group": "q7b"}))
        named.check_ready()  # cache_group names what neither says
        assert "endpoint" not in named.identity and "q7b" in named.identity
        named.close()
    finally:
        for server in (a, b, c, other):
            server.close()


def test_the_command_line_takes_a_list_of_urls():
    assert parse_args_string("base_url=http://a:1/v1,http://b:2/v1,concurrency=4") == \
        {"base_url": ["http://a:1/v1", "http://b:2/v1"], "concurrency": 4}
    with pytest.raises(ConfigError, match="is not of the form key=value"):
        parse_args_string("concurrency=4,http://b:2/v1")


def test_one_endpoint_without_a_name_keeps_its_url_in_the_identity():
    with ChatServer() as server:
        model = load_model(ModelSpec(backend="openai", name="test-model", args={"base_url": server.base_url}))
        model.check_ready()
        assert server.base_url in model.identity
        model.close()
