"""Tokens and cost (issue 37): the price table, results.json's ``tokens`` and ``cost`` per task and
component, the results table's lines, and ``--max-cost`` stopping a run that the same command
resumes from the cache. Figures computed by hand from models/prices.yaml's rows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mmtasks.cli import main
from mmtasks.models.prices import PriceTable, load_prices
from mmtasks.results.costs import MAX_COST_EXIT, TokenLedger, cost_summary, priced
from mmtasks.models.base import ModelSpec
from mmtasks.core.request import Reply, Request

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
SAMPLE = REPO / "data" / "sample"
KEY = "sk-loopback-test-key-0123456789"
MODEL, JUDGE = "claude-sonnet-4-5-20250929", "claude-haiku-4-5"


def test_the_price_table_finds_rows_by_name_and_dated_snapshot() -> None:
    table = load_prices()
    assert table.find("openai", "gpt-4o").input == 2.50
    assert table.find("openai", "gpt-4o-2024-05-13").input == 5.00  # its own row, not gpt-4o's
    assert table.find("anthropic", "claude-sonnet-4-5-20250929").models[0] == "claude-sonnet-4-5"
    assert table.find("gemini", "models/gemini-2.5-flash").output == 2.50
    assert table.find("openai", "qwen2-vl-7b") is None  # a served open model: no price
    assert table.find("hf", "gpt-4o") is None  # a local backend pays no provider
    for row in table.prices:  # every row dated, sourced, with the batch factor its provider publishes
        assert row.source.startswith("https://") and row.as_of.year >= 2025 and row.batch == 0.5, row


def test_cost_by_hand() -> None:
    table = load_prices()
    gpt4o = table.find("openai", "gpt-4o")
    # 800 uncached prompt tokens at 2.50, 200 cached at 1.25, 100 completion at 10.00 per million
    assert table.cost(gpt4o, prompt=1000, cached=200, completion=100) == pytest.approx(0.00325)
    assert table.cost(gpt4o, prompt=1000, cached=200, completion=100, batch=True) == pytest.approx(0.001625)
    pro = table.find("gemini", "gemini-2.5-pro")
    assert table.cost(pro, prompt=1000, completion=1000) == pytest.approx((1000 * 1.25 + 1000 * 10.0) / 1e6)
    # a prompt over 200k tokens: the whole request at the long-context rates
    assert table.cost(pro, prompt=300_000, completion=1000) == pytest.approx((300_000 * 2.5 + 1000 * 15.0) / 1e6)
    old = table.find("openai", "gpt-4-0613")  # no cached-input price: cached tokens billed as input
    assert table.cost(old, prompt=100, cached=50, completion=0) == pytest.approx(100 * 30.0 / 1e6)


def test_an_unpriced_component_has_a_null_cost_and_a_note_never_zero() -> None:
    table = load_prices()
    prices = {"model": priced(ModelSpec(backend="hf", name="org/tiny"), table),
              "judge": priced(ModelSpec(backend="openai", name="gpt-4o-mini"), table)}
    ledger = TokenLedger(table, prices)
    ledger(Request(messages=(), task="t", target="model"), Reply(text="a", prompt_tokens=10, completion_tokens=2))
    ledger(Request(messages=(), task="t", target="judge"), Reply(text="7", prompt_tokens=1000, completion_tokens=10))
    cost = cost_summary(ledger.to_json(), prices, table)
    assert cost["total"] is None and cost["tasks"]["t"]["total"] is None
    assert cost["components"]["model"]["total"] is None
    assert cost["components"]["judge"]["total"] == pytest.approx((1000 * 0.15 + 10 * 0.60) / 1e6)
    assert cost["notes"] == ["model: hf:org/tiny runs on its own hardware: no per-token price (cost null)"]
    # a priced component one of whose replies came without counts: null too
    ledger(Request(messages=(), task="t", target="judge"), Reply(text="8"))
    cost = cost_summary(ledger.to_json(), prices, table)
    assert cost["components"]["judge"]["total"] is None
    assert "judge: 1 replies without token counts" in cost["notes"][1]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    pytest.importorskip("anthropic")
    from tests.mmdu_data import judge_reply, scores
    from tests.provider_servers import AnthropicServer

    monkeypatch.setenv("MMTASKS_TEST_KEY", KEY)
    with AnthropicServer(api_key=KEY, models=(MODEL, JUDGE), strict_models=True) as srv:
        def reply(body: dict) -> Any:
            if body["model"] == JUDGE:
                return judge_reply(scores(7, 7, 7, 7, 7, 7, 8))
            return {"content": "model answer here", "thinking": "think", "stop_reason": "end_turn", "cached": 3}

        srv.reply = reply
        yield srv


def command(srv: Any, out: Path, cache: Path, *more: str) -> list[str]:
    args = f"base_url={srv.base_url},api_key_env=MMTASKS_TEST_KEY,max_retries=0"
    return ["--tasks", "mmdu", "--data-dir", str(SAMPLE), "--cache-dir", str(cache), "--no-progress",
            "--output-path", str(out), "--model", f"anthropic:{MODEL}", "--model-args", args,
            "--judge", f"anthropic:{JUDGE}", "--judge-args", args, "--max-live", "1", *more]


def usd(row: dict[str, int], rates: tuple[float, float, float]) -> float:
    """A component's cost from its token totals: (prompt - cached) at input, cached, completion at output."""
    inp, cached, out = rates
    return ((row["prompt"] - row["cached"]) * inp + row["cached"] * cached + row["completion"] * out) / 1e6


def test_tokens_and_cost_per_task_and_component_and_a_resumed_run_pays_nothing_again(
        server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    assert main(command(server, out, cache)) == 0, capsys.readouterr().err
    table_text = capsys.readouterr().out
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    samples = [json.loads(line) for line in (out / "samples" / "mmdu.jsonl").read_text(encoding="utf-8").splitlines()]
    model, judge = results["tokens"]["mmdu"]["model"], results["tokens"]["mmdu"]["judge"]
    # the model's totals are the sum of what each sample recorded per reply
    for kind in ("prompt", "completion", "cached"):
        assert model[kind] == sum(t[kind] for s in samples for t in s["tokens"]), kind
    sent = sum(1 for c in server.log if c.path == "/v1/messages")
    assert model["replies"] + judge["replies"] == sent and not results["run_stats"]["tokens_from_cache"]
    assert model["completion"] == 4 * model["replies"]  # "model answer here" + "think": the server's word count
    assert model["cached"] == 3 * model["replies"] and judge["prompt"] > 0
    # cost by hand from models/prices.yaml: sonnet 4.5 3.00/0.30/15.00, haiku 4.5 1.00/0.10/5.00
    want_model, want_judge = usd(model, (3.0, 0.3, 15.0)), usd(judge, (1.0, 0.1, 5.0))
    cost = results["cost"]
    assert cost["components"]["model"]["total"] == pytest.approx(want_model, abs=1e-6)
    assert cost["components"]["judge"]["total"] == pytest.approx(want_judge, abs=1e-6)
    assert cost["total"] == pytest.approx(want_model + want_judge, abs=1e-6) == results["run_stats"]["cost_sent"]["total"]
    assert cost["tasks"]["mmdu"]["total"] == cost["total"]
    assert cost["components"]["model"]["price"]["source"].startswith("https://")
    assert f"model {model['prompt']:,} in / {model['completion']:,} out" in table_text
    assert f"cost: USD {cost['total']:.4f}" in table_text
    # the same command again: every reply from the cache, the same tokens and total, nothing sent
    assert main(command(server, out, cache)) == 0
    again = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert sum(1 for c in server.log if c.path == "/v1/messages") == sent
    assert again["run_stats"]["tokens_from_cache"]["mmdu"]["model"] == model["replies"]
    assert again["run_stats"]["cost_sent"]["total"] == 0.0
    # what the replies cost is the results' (equal whether they came from the cache or not); what this
    # run paid is its run_stats'
    assert again["tokens"] == results["tokens"] and again["cost"] == cost


def test_max_cost_stops_the_run_and_the_same_command_resumes_sending_nothing_twice(
        server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    # the first reply (a model turn) costs more than this: the run stops after it
    code = main(command(server, out, cache, "--max-cost", "0.000001"))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == MAX_COST_EXIT == 3
    assert len(err) == 1 and err[0].startswith("mmtasks: error: stopped at --max-cost 1e-06 before sending more"), err
    assert "resumes" in err[0]
    first = [json.dumps(c.body, sort_keys=True) for c in server.log if c.path == "/v1/messages"]
    assert len(first) == 1  # one dialogue in flight (--max-live 1): nothing sent after the limit
    assert main(command(server, out, cache)) == 0, capsys.readouterr().err
    bodies = [json.dumps(c.body, sort_keys=True) for c in server.log if c.path == "/v1/messages"]
    assert len(bodies) == len(set(bodies))  # no request sent twice: the first run's reply came from the cache
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["run_stats"]["tokens_from_cache"]["mmdu"]["model"] == 1


def test_max_cost_refuses_a_component_without_a_price_before_any_request(
        server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = command(server, tmp_path / "out", tmp_path / "cache", "--max-cost", "5")
    args[args.index("--judge") + 1] = "random"
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--max-cost" in err[0] and "judge: random runs on its own hardware" in err[0], err
    assert not server.log


def test_a_price_table_row_without_a_source_is_refused(tmp_path: Path) -> None:
    from mmtasks.errors import ConfigError
    from mmtasks.models.prices import load_prices as load

    path = tmp_path / "prices.yaml"
    path.write_text("prices:\n  - {provider: openai, models: [x], input: 1, output: 2, as_of: 2025-01-01}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load(path)
    assert "source" in str(info.value) and str(path) in str(info.value)
    assert isinstance(load_prices(), PriceTable)
