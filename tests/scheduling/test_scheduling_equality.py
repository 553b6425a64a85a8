"""The barrier-free scheduler against the wave scheduler.

``FakeAPI`` is an API-like backend (``supports_async``): its reply to a request is
a function of the request alone (target, task, text, images), and each reply takes a
latency drawn from the request's hash, so replies arrive in an order unlike the
waves'. The same tasks run through both engines (the wave engine is forced by
turning ``supports_async`` off) must write byte-identical samples files and
results.json (all but the timing fields ``date`` and ``run_stats.total_evaluation_time_s``),
and count the same waves and requests sent, cached and failed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from mmtasks.cache.response_cache import ResponseCache
from mmtasks.config.run_config import RunConfig
from mmtasks.core.conversation import Message
from mmtasks.core.request import Reply, Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.errors import ModelError
from mmtasks.models.base import ChatModel, ModelSpec, register_model
from mmtasks.runner import evaluate
from mmtasks.scheduling.scheduler import Scheduler

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "sample"

_MMDU_SCORES = ("Creativity", "Richness", "Visual Perception", "Logical Coherence", "Answer Accuracy",
                "Image Relationship Understanding", "Overall Score")
_REALBENCH_ANSWERS = ("A", "The answer is B", "C", "[1, 2]", "3", "I am not sure", "D", "[2, 1, 3]", "2", "0")


def _digest(request: Request) -> bytes:
    return hashlib.sha256(f"{request.target}\n{request.content_key()}".encode()).digest()


def answer(request: Request) -> Reply:
    """The fake API's reply: a function of the request only (so both engines get the same)."""
    h = _digest(request)
    if h[1] < 26:  # about 10 % of requests fail, as an API's 500 would
        return Reply.failure("HTTP 500: injected")
    text = request.messages[-1].plain_text
    if request.target == "judge":
        if request.task.startswith("mmdu"):
            scores = {k: h[2 + i] % 11 for i, k in enumerate(_MMDU_SCORES)}
            return Reply(text=f"Fine.\n{scores!r}" if h[9] > 25 else "no scores here")
        return Reply(text=f'Close.\n{{"score": {h[2] % 5 + 1}, "matched_items": 1, "model_items": 2, '
                          f'"named_images": [{h[3] % 3 + 1}], "refused": {str(h[4] > 200).lower()}}}')
    if request.target == "notetaker" or text.startswith("You are taking notes"):
        turn = re.search(r"\(turn (\d+)\)", text)
        return Reply(text=f'Notes.\n{{"user_info": {{"last_turn": {turn.group(1) if turn else 0}}}, "k": {h[5]}}}')
    if request.task.startswith("realbench"):
        return Reply(text=_REALBENCH_ANSWERS[h[6] % len(_REALBENCH_ANSWERS)])
    return Reply(text=f"own reply {h[7]} to: {text[-30:]}")


class FakeAPI(ChatModel):
    """An API-like backend: ``agenerate`` answers after a latency of 0-19 ms from the request's hash."""

    supports_async = True
    instances: list["FakeAPI"] = []

    def __init__(self, spec: ModelSpec, context=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(spec, context)
        self.in_flight = self.max_in_flight = self.calls = 0
        FakeAPI.instances.append(self)

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        for i, request in enumerate(requests):
            self.calls += 1
            yield i, answer(request)

    async def agenerate(self, request: Request) -> Reply:
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(_digest(request)[0] % 20 / 1000)
            return answer(request)
        finally:
            self.in_flight -= 1


register_model("fakeapi", FakeAPI)


def run(tmp: Path, name: str, *, barrier_free: bool, monkeypatch: pytest.MonkeyPatch, **kw) -> tuple[dict, dict[str, bytes]]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(FakeAPI, "supports_async", barrier_free)
    out = tmp / name
    config = RunConfig(data_dir=DATA, output_path=out, cache_dir=tmp / f"{name}-cache", progress=False,
                       allow_failures=True, **kw)
    evaluate(config)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    results.pop("date", None)
    results["run_stats"].pop("total_evaluation_time_s", None)  # a timing field
    samples = {p.name: p.read_bytes() for p in sorted((out / "samples").iterdir())}
    return results, samples


CASES = {
    "single_turn": dict(tasks=["realbench"], model="fakeapi:m"),
    "multi_turn_judged": dict(tasks=["mmdu"], model="fakeapi:m", judge="fakeapi:judge"),
    "replay_probe_judged": dict(tasks=["mmrc"], model="fakeapi:m", judge="fakeapi:judge"),
    "replay_probe_notetaking": dict(tasks=["mmrc"], model="fakeapi:m", judge="fakeapi:judge", strategy="notetaking"),
    "local_model_api_judge": dict(tasks=["mmdu"], model="random", judge="fakeapi:judge"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_barrier_free_writes_what_waves_write(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kw = CASES[case]
    waves_results, waves_samples = run(tmp_path, "waves", barrier_free=False, monkeypatch=monkeypatch, **kw)
    free_results, free_samples = run(tmp_path, "free", barrier_free=True, monkeypatch=monkeypatch, **kw)
    assert free_samples.keys() == waves_samples.keys() and free_samples
    for name in waves_samples:
        assert free_samples[name] == waves_samples[name], name
    assert free_results == waves_results
    # not a trivial run: requests were sent and some failed (failures are data in both)
    stats = waves_results["run_stats"]
    assert sum(stats["sent"].values()) > 10 and sum(stats["failed"].values()) > 0


def test_second_run_is_served_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kw = CASES["multi_turn_judged"]
    first, samples = run(tmp_path, "a", barrier_free=True, monkeypatch=monkeypatch, **kw)
    out = tmp_path / "b"
    evaluate(RunConfig(data_dir=DATA, output_path=out, cache_dir=tmp_path / "a-cache", progress=False, allow_failures=True, **kw))
    again = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {p.name: p.read_bytes() for p in (out / "samples").iterdir()} == samples
    # only failed requests (never cached) are sent again
    assert again["run_stats"]["sent"] == first["run_stats"]["failed"]
    assert sum(again["run_stats"]["cached"].values()) == sum(first["run_stats"]["sent"].values()) - sum(first["run_stats"]["failed"].values())


# -- the scheduler itself, on hand-made dialogues --------------------------------------------
def ask(name: str, latencies: Sequence[float]) -> Dialogue:
    """A dialogue of one request per turn; each request's meta says how long its reply takes."""
    replies = []
    for turn, latency in enumerate(latencies):
        msg = Message.text("user", f"{name} turn {turn}")
        (reply,) = yield [Request(messages=(msg,), task="t", doc_id=name, position=turn, meta={"latency": latency})]
        replies.append(reply.text)
    return Sample(task="t", doc_id=name, doc_index=0, responses=replies)


class Timed(ChatModel):
    """Answers ``echo: <text>`` after ``meta['latency']`` seconds; logs (event, text, time)."""

    supports_async = True

    def __init__(self) -> None:
        super().__init__(ModelSpec(backend="timed", name="t"))
        self.log: list[tuple[str, str, float]] = []
        self.in_flight = self.max_in_flight = 0

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        time.sleep(max(r.meta["latency"] for r in requests))
        for i, r in enumerate(requests):
            yield i, Reply(text="echo: " + r.messages[-1].plain_text)

    async def agenerate(self, request: Request) -> Reply:
        text = request.messages[-1].plain_text
        self.log.append(("sent", text, time.monotonic()))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await asyncio.sleep(request.meta["latency"])
        self.in_flight -= 1
        self.log.append(("replied", text, time.monotonic()))
        return Reply(text="echo: " + text)


class HeldUntilFast(Timed):
    """The "slow" dialogue's reply is held until the "fast" dialogue's fifth turn has been
    answered: a scheduler that waited for the slowest reply of a wave before the next turn would
    never get there (the 60 s hang guard then lets it go, and ``released`` records that)."""

    def __init__(self) -> None:
        super().__init__()
        self.fast_replies = 0
        self.released: bool | None = None
        self._fast_done: asyncio.Event | None = None

    async def agenerate(self, request: Request) -> Reply:
        if self._fast_done is None:
            self._fast_done = asyncio.Event()
        if request.messages[-1].plain_text.startswith("slow"):
            try:
                await asyncio.wait_for(self._fast_done.wait(), 60)
                self.released = True
            except asyncio.TimeoutError:
                self.released = False
        reply = await super().agenerate(request)
        if request.messages[-1].plain_text.startswith("fast"):
            self.fast_replies += 1
            if self.fast_replies == 5:
                self._fast_done.set()
        return reply


def test_a_slow_reply_holds_back_only_its_own_dialogue() -> None:
    model = HeldUntilFast()
    samples = list(Scheduler(models={"model": model}).run([ask("slow", [0.0]), ask("fast", [0.0] * 5)]))
    assert [s.doc_id for s in samples] == ["fast", "slow"]
    assert samples[0].responses == [f"echo: fast turn {k}" for k in range(5)]
    assert model.released is True  # all 5 fast turns went out and came back while the slow reply was pending
    order = [(e, text) for e, text, _ in model.log]
    slow_reply = order.index(next(x for x in order if x[0] == "replied" and x[1].startswith("slow")))
    assert all(i < slow_reply for i, (e, text) in enumerate(order) if text.startswith("fast"))


def test_waves_wait_for_the_slowest() -> None:
    model = Timed()
    sched = Scheduler(models={"model": model}, barrier_free=False)
    samples = list(sched.run([ask("slow", [0.05]), ask("fast", [0.01] * 3)]))
    assert [s.doc_id for s in samples] == ["slow", "fast"] and sched.stats.waves == 3


def test_every_request_is_in_flight_at_once_and_waves_counted_as_rounds() -> None:
    model = Timed()
    replies: list[tuple[str, str | None]] = []
    sched = Scheduler(models={"model": model}, on_reply=lambda req, rep: replies.append((req.doc_id, rep.text)))
    finished: list[str] = []
    sched.on_finish = lambda s: finished.append(s.doc_id)
    samples = list(sched.run(ask(f"d{k}", [0.05, 0.01, 0.02]) for k in range(40)))
    assert model.max_in_flight == 40 and len(samples) == 40 and finished == [s.doc_id for s in samples]
    assert len(replies) == 120 and sched.stats.waves == 3 and sched.stats.sent == {"model": 120}


def test_max_live_bounds_the_dialogues_in_flight() -> None:
    model = Timed()
    sched = Scheduler(models={"model": model}, max_live=3)
    samples = list(sched.run(ask(f"d{k}", [0.01, 0.01]) for k in range(10)))
    assert len(samples) == 10 and model.max_in_flight <= 3
    assert sched.stats.waves == 8  # like waves: 4 groups of live dialogues (3+3+3+1) x 2 turns


def test_missing_model_and_identical_requests(tmp_path: Path) -> None:
    model = Timed()
    cache = ResponseCache(tmp_path)

    def judged(name: str) -> Dialogue:
        msg = Message.text("user", "same question")
        a, b = yield [Request(messages=(msg,), meta={"latency": 0.05}),
                      Request(messages=(msg,), target="judge", meta={"latency": 0.05})]
        return Sample(task="t", doc_id=name, doc_index=0, responses=[a.text, b.text], failures=[b.error or ""])

    sched = Scheduler(models={"model": model}, cache=cache)
    samples = list(sched.run([judged("x"), judged("y")]))
    assert [s.responses for s in samples] == [["echo: same question", None]] * 2
    assert samples[0].failures == ["no judge model configured for this run"]
    assert sched.stats.sent == {"model": 1} and model.max_in_flight == 1  # the identical request joined the one in flight
    assert cache.count() == 1
    cache.close()


def test_interrupted_run_resumes_from_the_cache(tmp_path: Path) -> None:
    """Ctrl-C after 5 replies: those 5 (and any reply that arrived in the same instant) are in
    the cache, the rest were cancelled; the next run sends only the others and gets the same
    samples as an uninterrupted run."""
    def dialogues() -> list[Dialogue]:
        return [ask(f"d{k}", [0.01 * (k % 4 + 1), 0.02]) for k in range(6)]

    seen = []

    def stop_after_five(request: Request, reply: Reply) -> None:
        seen.append(request)
        if len(seen) == 5:
            raise KeyboardInterrupt

    cache = ResponseCache(tmp_path / "c")
    model = Timed()
    with pytest.raises(KeyboardInterrupt):
        list(Scheduler(models={"model": model}, cache=cache, on_reply=stop_after_five).run(dialogues()))
    arrived = cache.count()
    assert 5 <= arrived < 12
    again = Scheduler(models={"model": Timed()}, cache=cache)
    resumed = sorted(again.run(dialogues()), key=lambda s: s.doc_id)
    assert again.stats.cached == {"model": arrived} and again.stats.sent == {"model": 12 - arrived}
    reference = sorted(Scheduler(models={"model": Timed()}).run(dialogues()), key=lambda s: s.doc_id)
    assert [s.responses for s in resumed] == [s.responses for s in reference]
    cache.close()


def test_a_fatal_backend_error_stops_the_run() -> None:
    class Rejected(Timed):
        async def agenerate(self, request: Request) -> Reply:
            raise ModelError("the API key was rejected")

    with pytest.raises(ModelError, match="rejected"):
        list(Scheduler(models={"model": Rejected()}).run([ask("a", [0.01])]))


def test_a_protocol_error_stops_the_run() -> None:
    def broken() -> Dialogue:
        yield [Request(messages=(Message.text("user", "hi"),), meta={"latency": 0.0})]
        raise ValueError("protocol bug")

    with pytest.raises(ValueError, match="protocol bug"):
        list(Scheduler(models={"model": Timed()}).run([broken()]))


def test_local_model_keeps_batches_beside_an_api_judge() -> None:
    class Local(ChatModel):
        def __init__(self) -> None:
            super().__init__(ModelSpec(backend="local", name="l"))
            self.batches: list[int] = []

        def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
            self.batches.append(len(requests))
            for i, r in enumerate(requests):
                yield i, Reply(text="local: " + r.messages[-1].plain_text)

    def judged(name: str) -> Dialogue:
        (a,) = yield [Request(messages=(Message.text("user", name),), meta={"latency": 0.0})]
        (b,) = yield [Request(messages=(Message.text("user", "judge " + name),), target="judge", meta={"latency": 0.02})]
        return Sample(task="t", doc_id=name, doc_index=0, responses=[a.text, b.text])

    local, judge = Local(), Timed()
    sched = Scheduler(models={"model": local, "judge": judge})
    samples = list(sched.run(judged(f"d{k}") for k in range(16)))
    assert local.batches == [16] and judge.max_in_flight == 16
    assert sorted(s.responses for s in samples)[0] == ["local: d0", "echo: judge d0"]
