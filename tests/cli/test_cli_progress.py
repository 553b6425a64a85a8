"""Progress never looks hung: request counts move while documents do not, plain lines reach a
redirected stderr during the run, and a resumed run says how much came from the cache."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

from mmtasks.core.conversation import Message
from mmtasks.core.request import GenerationConfig, Reply, Request
from mmtasks.core.sample import Sample
from mmtasks.progress import Progress
from tests.chat_server import ChatServer
from tests.cli_process import SAMPLE, cli_env, run_cli, start_cli, wait_until

REQUEST = Request((Message.text("user", "hi"),), GenerationConfig())


def _sample(task: str = "t") -> Sample:
    return Sample(task=task, doc_id="d", doc_index=0)


def test_plain_lines_count_requests_before_any_document_finishes():
    out = io.StringIO()
    progress = Progress(total=4, stream=out, tty=False, interval=0.05)
    for reply in (Reply(text="a"), Reply(text="b", cached=True), Reply.failure("boom")):
        progress.reply(REQUEST, reply)
    wait_until(lambda: "progress:" in out.getvalue(), timeout=60, what="a progress line")  # a hang guard
    first = out.getvalue().splitlines()[0]
    assert first.startswith("mmtasks: progress: 0/4 documents (0%), 3 requests (1 cached), 1 failed"), first
    assert "ETA ? (no document finished yet)" in first
    progress.advance(_sample())
    progress.close()
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("mmtasks: done: 1/4 documents (25%), 3 requests (1 cached), 1 failed"), last


def test_eta_from_finished_documents():
    progress = Progress(total=4, stream=io.StringIO(), tty=False, interval=60)
    progress._started = time.monotonic() - 10  # 1 of 4 documents in 10 s: 30 s to go
    progress.advance(_sample())
    assert re.search(r"ETA 30s$", progress.line())
    progress.close()


def test_terminal_bar_redraws_as_replies_arrive():
    out = io.StringIO()
    progress = Progress(total=2, stream=out, tty=True)
    progress._last_draw = 0.0
    progress.reply(REQUEST, Reply(text="a"))
    assert "0/2" in out.getvalue() and "1 requests" in out.getvalue()
    progress.close()


def test_disabled_progress_writes_nothing():
    out = io.StringIO()
    progress = Progress(total=2, enabled=False, stream=out, tty=False, interval=0.01)
    progress.reply(REQUEST, Reply(text="a"))
    time.sleep(0.05)
    progress.close()
    assert out.getvalue() == ""


def test_redirected_stderr_shows_progress_lines_before_the_run_ends(tmp_path: Path):
    """A multi-turn task (MMDU: every document finishes in the last wave) against a slow server,
    stderr going to a file: request counts show up while the run is still going."""
    with ChatServer(latency=0.4) as server:
        env = cli_env(server.base_url, MMTASKS_PROGRESS_INTERVAL="0.2")
        run = start_cli(["--tasks", "mmdu", "--model", "openai:test-model", "--judge", "random", "--data-dir", str(SAMPLE),
                         "--no-cache", "--output-path", str(tmp_path / "out")], env, tmp_path / "logs")
        try:
            wait_until(lambda: re.search(r"progress: 0/6 documents \(0%\), [1-9]\d* requests", run.stderr) is not None,
                       timeout=90, what="a progress line counting requests")
            assert run.process.poll() is None, "the run ended before its first progress line"
        finally:
            assert run.wait(120) == 0, run.stderr
    assert re.search(r"mmtasks: done: 6/6 documents \(100%\), \d+ requests", run.stderr), run.stderr


def test_resumed_run_says_how_many_replies_came_from_the_cache(tmp_path: Path):
    with ChatServer() as server:
        env = cli_env(server.base_url)
        args = ["--tasks", "realbench_ranking_easy", "--model", "openai:test-model", "--data-dir", str(SAMPLE),
                "--cache-dir", str(tmp_path / "cache"), "--allow-failures", "--no-progress"]
        first = run_cli(args, env, tmp_path / "logs")
        assert first.process.returncode == 0, first.stderr
        assert "from the response cache" not in first.stderr
        second = run_cli(args, env, tmp_path / "logs")
        assert second.process.returncode == 0, second.stderr
    assert "mmtasks: 9 of 9 replies came from the response cache" in second.stderr, second.stderr
    assert "0 requests sent, 9 replies from the cache" in second.stdout, second.stdout
