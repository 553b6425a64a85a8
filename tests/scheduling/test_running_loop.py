"""API backends called from code that already runs an asyncio event loop (a Jupyter cell,
an async web app, playwright's sync API): the barrier-free engine's own loop cannot run in
that thread, so it runs in a worker thread; results are those of a run outside any loop."""

from __future__ import annotations

import asyncio
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

import mmtasks
from mmtasks.cli import Terminated, _on_sigterm
from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data" / "sample"


def reply(body: dict) -> str:
    if body["model"] == "judge-model":
        return "8 6\nThe first assistant is more precise."  # LLaVA-Bench's judge: two scores first
    return f"B, from: {last_user_text(body)[-20:]}"


def evaluate(server: ChatServer, **options: Any) -> mmtasks.api.EvaluationResult:
    args = {"base_url": server.base_url, "max_retries": 0}
    return mmtasks.evaluate(tasks="realbench_ranking_easy,llava_bench_wild", model="openai:test-model",
                            judge="openai:judge-model", data_dir=DATA, limit=3, use_cache=False,
                            model_args=args, judge_args=args, **options)


def outcome(result: mmtasks.api.EvaluationResult) -> dict:
    return {"results": result["results"], "problems": result["problems"],
            "samples": {task: sorted((s.doc_id, tuple(s.responses), str(s.parsed), tuple(sorted(s.metrics.items())))
                                     for s in samples) for task, samples in result.samples.items()}}


@pytest.mark.timeout(120)
def test_evaluate_inside_a_running_event_loop(chat_server: ChatServer) -> None:
    # Before: run_until_complete raised "Cannot run the event loop while another loop is running",
    # and the clean-up retried run_until_complete forever (the run hung until killed: "terminated (SIGTERM)").
    chat_server.models = ("test-model", "judge-model")
    chat_server.reply = reply
    outside = evaluate(chat_server)

    async def inside() -> mmtasks.api.EvaluationResult:
        await asyncio.sleep(0)
        return evaluate(chat_server)

    assert outcome(asyncio.run(inside())) == outcome(outside)
    judged = outside["results"]["llava_bench_wild"]
    assert outside.problems == {} and judged  # every request answered, every verdict read
    assert not [t for t in threading.enumerate() if t.name == "mmtasks-scheduler"]


@pytest.mark.timeout(120)
def test_sigterm_inside_a_running_event_loop_stops_the_run(chat_server: ChatServer, tmp_path: Path) -> None:
    # The CLI's SIGTERM handler raises Terminated in the main thread, which waits for the worker
    # thread running the engine's loop: the worker's step ends with it (requests cancelled, loop
    # closed) and Terminated reaches the caller.
    arrived, release = threading.Event(), threading.Event()

    def blocking(body: dict) -> str:
        arrived.set()
        release.wait()
        return "A"

    chat_server.models = ("test-model", "judge-model")
    chat_server.reply = blocking
    main = threading.main_thread().ident
    assert main is not None and threading.current_thread() is threading.main_thread()

    def terminate_when_a_request_arrives() -> None:
        if arrived.wait(60):
            signal.pthread_kill(main, signal.SIGTERM)

    async def inside() -> None:
        evaluate(chat_server, output_path=tmp_path / "out")

    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    killer = threading.Thread(target=terminate_when_a_request_arrives)
    killer.start()
    try:
        with pytest.raises(Terminated):
            asyncio.run(inside())
    finally:
        signal.signal(signal.SIGTERM, previous)
        release.set()
        killer.join()
    assert arrived.is_set()
    assert not [t for t in threading.enumerate() if t.name == "mmtasks-scheduler"]


@pytest.mark.timeout(120)
def test_ctrl_c_inside_a_running_event_loop_cancels_the_requests_in_flight(chat_server: ChatServer, tmp_path: Path) -> None:
    """Issue 41, finding 9: Ctrl-C during ``evaluate()`` inside ``asyncio.run`` (a notebook, an async
    app) did nothing: the runner's SIGINT handler only cancels its main task, which waits in a plain
    call, so the run went on waiting for its requests (60 s and more with a slow server). Now the
    waiting caller gets KeyboardInterrupt, the requests in flight are cancelled and their connections
    closed: the server sees each hung request's client go away (it never answers them)."""
    arrived = threading.Event()

    def arrival(body: dict) -> float:
        arrived.set()
        return 0.0

    chat_server.models = ("test-model", "judge-model")
    chat_server.latency = arrival
    chat_server.inject("hang", times=1_000, hang_seconds=3_600)  # no answer within the test's life
    main = threading.main_thread().ident
    assert main is not None and threading.current_thread() is threading.main_thread()

    def interrupt_when_a_request_arrives() -> None:
        if arrived.wait(60):
            signal.pthread_kill(main, signal.SIGINT)

    async def inside() -> None:
        evaluate(chat_server, output_path=tmp_path / "out")

    killer = threading.Thread(target=interrupt_when_a_request_arrives)
    killer.start()
    try:
        with pytest.raises(KeyboardInterrupt):  # before: nothing, the run waited on its requests
            asyncio.run(inside())
    finally:
        killer.join()
    hung = [call for call in chat_server.log if call.fault == "hang"]
    assert hung and all(call.status is None for call in hung)  # none was answered
    settled = threading.Event()
    for _ in range(3_000):  # a hang guard on the server noticing the closed connections, never the outcome
        if chat_server.in_flight == 0:
            break
        settled.wait(0.01)
    assert chat_server.in_flight == 0  # every hung request's client went away: cancelled
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # asyncio.run's handler was put back, then removed
    assert not [t for t in threading.enumerate() if t.name == "mmtasks-scheduler"]
