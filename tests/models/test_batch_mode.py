"""``--batch`` on OpenAI's Batch API, Anthropic's Message Batches and Gemini's Batch Mode (issue 37) against loopback
servers of their endpoints (tests/batch_server.py): the wave's requests in one JSONL batch, results into the same
response cache, a run stopped while its batch is pending resumes the same batch with no request
sent twice (counted on the server), an expired entry is retried in a new batch, and the cost
shows the batch discount."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mmtasks.cli import main
from mmtasks.models.openai_batch import OpenAIBatchModel
from tests.batch_server import BatchServer

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
SAMPLE = REPO / "data" / "sample"
KEY = "sk-loopback-test-key-0123456789"


def command(server: BatchServer, tmp_path: Path, *more: str) -> list[str]:
    return ["--tasks", "muirbench", "--data-dir", str(SAMPLE), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
            "--output-path", str(tmp_path / "out"), "--model", "openai:gpt-4o", "--batch", "--batch-poll-s", "0",
            "--model-args", f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY,max_retries=0,timeout=20", *more]


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_TEST_KEY", KEY)


def results(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))


def test_one_batch_per_wave_and_the_cost_at_half_price(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with BatchServer(models=("gpt-4o",)) as server:
        assert main(command(server, tmp_path)) == 0, capsys.readouterr().err
        assert len(server.batches) == 1 and len(server.sent) == 9 and set(server.sent.values()) == {1}
        assert not any(path.endswith("/chat/completions") for _, path in server.log)  # nothing sent interactively
        data = results(tmp_path)
        tokens = data["tokens"]["muirbench"]["model"]
        assert tokens["replies"] == 9 and tokens["prompt"] > 0
        # gpt-4o: 2.50 input, 10.00 output per million; the Batch API at half price
        full = (tokens["prompt"] * 2.5 + tokens["completion"] * 10.0) / 1e6
        assert data["cost"]["components"]["model"]["batch"] is True
        assert data["cost"]["total"] == pytest.approx(full * 0.5, abs=1e-6)
        # the replies are in the response cache: the same command sends nothing
        assert main(command(server, tmp_path)) == 0
        assert len(server.batches) == 1 and results(tmp_path)["run_stats"]["tokens_from_cache"]["muirbench"]["model"] == 9


def test_a_run_stopped_while_its_batch_is_pending_resumes_the_same_batch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    with BatchServer(models=("gpt-4o",)) as server:
        server.released = False  # the batch stays in_progress
        monkeypatch.setattr(OpenAIBatchModel, "MAX_POLLS", 3)
        code = main(command(server, tmp_path))
        err = capsys.readouterr().err
        assert code != 0 and "still pending after 3 polls" in err, err
        assert len(server.batches) == 1
        server.released = True
        monkeypatch.setattr(OpenAIBatchModel, "MAX_POLLS", 100)
        assert main(command(server, tmp_path)) == 0, capsys.readouterr().err
        assert len(server.batches) == 1  # the same batch polled again, none submitted
        assert len(server.sent) == 9 and set(server.sent.values()) == {1}  # zero requests sent twice
        assert results(tmp_path)["tokens"]["muirbench"]["model"]["replies"] == 9


@pytest.mark.slow
def test_a_run_killed_with_sigkill_while_its_batch_is_pending_resumes_it_sending_nothing_twice(tmp_path: Path) -> None:
    """A real kill (SIGKILL of the ``mmtasks`` process, no clean-up of any kind) while the batch is
    in progress: the batch id was persisted when it was submitted, so the rerun polls the same
    batch and uploads nothing (each request line counted on the server)."""
    import signal

    from tests.cli_process import cli_env, run_cli, start_cli, wait_until

    with BatchServer(models=("gpt-4o",)) as server:
        server.released = False  # the batch stays in_progress
        env = cli_env(server.base_url, MMTASKS_TEST_KEY=KEY)
        run = start_cli(command(server, tmp_path), env, tmp_path / "logs")
        try:
            def polled() -> bool:  # the batch submitted, then polled at least twice: the id is on disk
                with server.lock:
                    ids = list(server.batches)
                    return len(ids) == 1 and sum(1 for m, p in server.log if m == "GET" and ids[0] in p) >= 2

            wait_until(polled, timeout=120, what="the batch submitted and polled")
            run.process.send_signal(signal.SIGKILL)
            assert run.wait(30) == -signal.SIGKILL
        finally:
            if run.process.poll() is None:
                run.process.kill()
        assert len(server.batches) == 1 and len(server.sent) == 9
        server.released = True
        again = run_cli(command(server, tmp_path), env, tmp_path / "logs")
        assert again.process.returncode == 0, again.stderr
        assert len(server.batches) == 1  # the same batch polled again, none submitted
        assert len(server.sent) == 9 and set(server.sent.values()) == {1}  # zero requests sent twice
    assert results(tmp_path)["tokens"]["muirbench"]["model"]["replies"] == 9


def test_an_expired_entry_is_retried_in_a_new_batch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with BatchServer(models=("gpt-4o",)) as server:
        server.expire = lambda body: not server.expired  # the first entry of the first batch expires
        assert main(command(server, tmp_path)) == 0, capsys.readouterr().err
        assert len(server.batches) == 2 and len(server.batches["batch_1"]["lines"]) == 1
        retried = server.batches["batch_1"]["lines"][0]["custom_id"]
        assert server.expired == {retried} and server.sent[retried] == 2
        assert sorted(server.sent.values()) == [1] * 8 + [2]
        data = results(tmp_path)
        assert data["tokens"]["muirbench"]["model"]["replies"] == 9
        assert not data["problems"]["muirbench"].get("request_failures")


def test_batch_on_a_backend_without_one_is_refused_before_any_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--tasks", "muirbench", "--data-dir", str(SAMPLE), "--model", "random", "--batch", "--no-progress"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--batch" in err[0] and "has no batch mode" in err[0], err


def test_mmdu_model_and_judge_batched_wave_by_wave(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Multi-turn: each turn of every dialogue is one batch, then the judge's calls; the discount
    on both components."""
    from tests.mmdu_data import judge_reply, scores

    with BatchServer(models=("gpt-4o", "gpt-4o-mini")) as server:
        server.reply = lambda body: judge_reply(scores(7, 7, 7, 7, 7, 7, 8)) if body["model"] == "gpt-4o-mini" else "an answer"
        args = f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY,max_retries=0,timeout=20"
        code = main(["--tasks", "mmdu", "--data-dir", str(SAMPLE), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                     "--output-path", str(tmp_path / "out"), "--model", "openai:gpt-4o", "--model-args", args,
                     "--judge", "openai:gpt-4o-mini", "--judge-args", args, "--batch", "--judge-batch", "--batch-poll-s", "0"])
        assert code == 0, capsys.readouterr().err
        data = results(tmp_path)
        assert data["results"]["mmdu"]["overall"] == pytest.approx(80.0)
        models = [{line["body"]["model"] for line in b["lines"]} for b in server.batches.values()]
        assert all(len(m) == 1 for m in models)  # a batch holds one component's wave
        turns = max(len(s["responses"]) for s in map(json.loads, (tmp_path / "out" / "samples" / "mmdu.jsonl").read_text().splitlines()))
        assert sum(m == {"gpt-4o"} for m in models) == turns  # one batch per turn
        assert set(server.sent.values()) == {1}
        cost = data["cost"]["components"]
        assert cost["model"]["batch"] is True and cost["judge"]["batch"] is True
        judge = data["tokens"]["mmdu"]["judge"]
        assert cost["judge"]["total"] == pytest.approx((judge["prompt"] * 0.15 + judge["completion"] * 0.60) / 1e6 * 0.5, abs=1e-6)


def anthropic_command(server: BatchServer, tmp_path: Path, *more: str) -> list[str]:
    return ["--tasks", "muirbench", "--data-dir", str(SAMPLE), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
            "--output-path", str(tmp_path / "out"), "--model", "anthropic:claude-haiku-4-5", "--batch", "--batch-poll-s", "0",
            "--model-args", f"base_url={server.base_url.removesuffix('/v1')},api_key_env=MMTASKS_TEST_KEY,max_retries=0,timeout=20",
            *more]


def test_anthropic_message_batches_stopped_resumed_expired_retried_and_half_price(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("anthropic")
    from mmtasks.models.anthropic_batch import AnthropicBatchModel
    from tests.batch_server import AnthropicBatchServer

    with AnthropicBatchServer(models=("claude-haiku-4-5",)) as server:
        server.released = False
        server.expire = lambda params: not server.expired  # the first entry expires once
        monkeypatch.setattr(AnthropicBatchModel, "MAX_POLLS", 2)
        code = main(anthropic_command(server, tmp_path))
        err = capsys.readouterr().err
        assert code != 0 and "still pending after 2 polls" in err, err
        assert len(server.batches) == 1
        server.released = True
        monkeypatch.setattr(AnthropicBatchModel, "MAX_POLLS", 100)
        assert main(anthropic_command(server, tmp_path)) == 0, capsys.readouterr().err
        # the pending batch polled again (not sent again); only the expired entry went into a second one
        assert len(server.batches) == 2 and len(server.batches["msgbatch_1"]["lines"]) == 1
        assert sorted(server.sent.values()) == [1] * 8 + [2]
        data = results(tmp_path)
        tokens = data["tokens"]["muirbench"]["model"]
        assert tokens["replies"] == 9 and not data["problems"]["muirbench"].get("request_failures")
        # claude-haiku-4-5: 1.00 input, 5.00 output per million; Message Batches at half price
        assert data["cost"]["total"] == pytest.approx((tokens["prompt"] * 1.0 + tokens["completion"] * 5.0) / 1e6 * 0.5, abs=1e-6)


def test_gemini_batch_mode_stopped_resumed_failed_entry_retried_and_half_price(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("google.genai")
    from mmtasks.models.gemini_batch import GeminiBatchModel
    from tests.batch_server import GeminiBatchServer

    with GeminiBatchServer(models=("gemini-2.5-flash",)) as server:
        server.released = False
        server.expire = lambda request: not server.expired  # the first entry fails once (503)
        monkeypatch.setattr(GeminiBatchModel, "MAX_POLLS", 2)
        args = ["--tasks", "muirbench", "--data-dir", str(SAMPLE), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                "--output-path", str(tmp_path / "out"), "--model", "gemini:gemini-2.5-flash", "--batch", "--batch-poll-s", "0",
                "--model-args", f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY,max_retries=0,timeout=20"]
        code = main(args)
        err = capsys.readouterr().err
        assert code != 0 and "still pending after 2 polls" in err, err
        server.released = True
        monkeypatch.setattr(GeminiBatchModel, "MAX_POLLS", 100)
        assert main(args) == 0, capsys.readouterr().err
        assert len(server.batches) == 2 and len(server.batches["batch-1"]["lines"]) == 1
        assert sorted(server.sent.values()) == [1] * 8 + [2]
        data = results(tmp_path)
        tokens = data["tokens"]["muirbench"]["model"]
        assert tokens["replies"] == 9 and not data["problems"]["muirbench"].get("request_failures")
        # gemini-2.5-flash: 0.30 input, 2.50 output per million; Batch Mode at half price
        assert data["cost"]["total"] == pytest.approx((tokens["prompt"] * 0.3 + tokens["completion"] * 2.5) / 1e6 * 0.5, abs=1e-6)


def test_a_batched_model_judged_by_an_interactive_judge_still_sends_whole_waves(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], chat_server: Any) -> None:
    """With an interactive API judge the scheduler would hand the batched model whatever was queued
    when it was idle (a first batch of one request): a run with a batch model goes wave by wave."""
    from tests.mmdu_data import judge_reply, scores

    chat_server.models = ("gpt-4o-mini",)
    chat_server.reply = lambda body: judge_reply(scores(7, 7, 7, 7, 7, 7, 8))
    with BatchServer(models=("gpt-4o",)) as server:
        server.reply = lambda body: "an answer"
        code = main(["--tasks", "mmdu", "--data-dir", str(SAMPLE), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                     "--output-path", str(tmp_path / "out"), "--model", "openai:gpt-4o", "--batch", "--batch-poll-s", "0",
                     "--model-args", f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY,max_retries=0,timeout=20",
                     "--judge", "openai:gpt-4o-mini",
                     "--judge-args", f"base_url={chat_server.base_url},api_key_env=MMTASKS_TEST_KEY,max_retries=0"])
        assert code == 0, capsys.readouterr().err
        samples = [json.loads(line) for line in (tmp_path / "out" / "samples" / "mmdu.jsonl").read_text().splitlines()]
        turns = max(len(s["responses"]) for s in samples)
        assert len(server.batches) == turns  # one batch per turn, each holding every dialogue's turn
        assert len(server.batches["batch_0"]["lines"]) == len(samples)


def test_max_cost_reached_inside_a_batch_keeps_the_whole_batch_and_resumes_sending_nothing_twice(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A batch is paid whole when it ends: --max-cost reached at its first reply stops the run after
    every reply of the batch is in the cache, so the same command sends none of them again."""
    with BatchServer(models=("gpt-4o",)) as server:
        assert main(command(server, tmp_path, "--max-cost", "0.000001")) == 3
        assert "stopped at --max-cost" in capsys.readouterr().err
        assert main(command(server, tmp_path)) == 0, capsys.readouterr().err
        assert len(server.batches) == 1 and set(server.sent.values()) == {1}
        assert results(tmp_path)["run_stats"]["tokens_from_cache"]["muirbench"]["model"] == 9
