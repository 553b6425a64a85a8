"""Resume: a run killed (SIGKILL) or interrupted (SIGINT) at any point and started again
with the same command sends no request whose reply had arrived, and ends with the
results and samples of an uninterrupted run.

The CLI runs as a subprocess against the loopback chat server of this process, whose
replies come from :class:`~tests.realbench_oracle.RealBenchOracle` (right, wrong and
unparseable-then-right answers, so there are re-asks and two waves). A
:class:`~tests.cli_process.Gate` lets the first N replies through and holds the rest;
once the N replies are committed to the cache the run is killed.
"""

from __future__ import annotations

import json
import signal
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from mmtasks.cli import main
from tests.chat_server import ChatServer
from tests.cli_process import (
    SAMPLE, Gate, cache_entries, cli_env, comparable_results, run_cli, samples_files, start_cli, wait_until,
)
from tests.realbench_oracle import RealBenchOracle

pytestmark = pytest.mark.slow

TASKS = ["realbench_ranking_easy", "realbench_ranking_hard", "realbench_retrieval_easy", "realbench_retrieval_hard",
         "realbench_unanswerable", "realbench_ranking_easy_shuffled"]
N_DOCS = 9 * len(TASKS)


def cli_args(out: Path, cache: Path) -> list[str]:
    return ["--tasks", ",".join(TASKS), "--model", "openai:test-model", "--model-args", "concurrency=4",
            "--data-dir", str(SAMPLE), "--output-path", str(out), "--cache-dir", str(cache), "--no-progress"]


def chat_prompts(server: ChatServer, since: int = 0) -> Counter[str]:
    return Counter(c.prompt for c in server.log[since:] if c.path.endswith("/chat/completions"))


@dataclass
class Reference:
    prompts: Counter[str]
    results: dict
    samples: dict[str, bytes]

    @property
    def total(self) -> int:
        return sum(self.prompts.values())


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """The uninterrupted run."""
    tmp = tmp_path_factory.mktemp("reference")
    with ChatServer(reply=RealBenchOracle()) as server:
        run = run_cli(cli_args(tmp / "out", tmp / "cache"), cli_env(server.base_url), tmp / "logs")
        assert run.process.returncode == 0, run.stderr
        prompts = chat_prompts(server)
    res = comparable_results(tmp / "out" / "results.json")
    # the scripted model makes the evaluation non-trivial: two waves, re-asks, right and wrong answers
    stats = json.loads((tmp / "out" / "results.json").read_text())["run_stats"]
    assert len(prompts) == N_DOCS and stats["waves"] == 2 and stats["sent"]["model"] > N_DOCS
    accs = [res["results"][t]["acc"] for t in TASKS if "acc" in res["results"][t]]
    assert any(0 < a < 100 for a in accs) and all(res["problems"][t]["unparsed"] == 0 for t in TASKS)
    return Reference(prompts, res, samples_files(tmp / "out"))


def interrupt_after(n_replies: int, sig: int, tmp: Path, server: ChatServer, gate: Gate) -> tuple[int, str]:
    """Start the run, let ``n_replies`` replies through, wait until they are all committed to the
    cache while the run waits on held requests, then send ``sig``. Returns (exit code, stderr)."""
    gate.limit = n_replies
    run = start_cli(cli_args(tmp / "out", tmp / "cache"), cli_env(server.base_url), tmp / "logs")
    try:
        wait_until(lambda: len(gate.delivered) == n_replies and gate.held > 0 and cache_entries(tmp / "cache") == n_replies,
                   timeout=60, what=f"{n_replies} replies cached with more requests waiting")
        run.process.send_signal(sig)
        code = run.wait(30)
    finally:
        if run.process.poll() is None:
            run.process.kill()
            run.wait(10)
        gate.release()
    return code, run.stderr


def resume_and_compare(tmp: Path, server: ChatServer, gate: Gate, reference: Reference) -> dict:
    """Run the same command again and check it against the uninterrupted run."""
    answered_before = Counter(gate.delivered)
    mark = len(server.log)
    run = run_cli(cli_args(tmp / "out", tmp / "cache"), cli_env(server.base_url), tmp / "logs")
    assert run.process.returncode == 0, run.stderr
    sent_now = chat_prompts(server, mark)
    # No request whose reply had arrived is sent again, and nothing is missing:
    # per prompt, replies received before the kill + requests sent now = the uninterrupted run.
    assert answered_before + sent_now == reference.prompts
    stats = json.loads((tmp / "out" / "results.json").read_text())["run_stats"]
    n_before = sum(answered_before.values())
    assert stats["sent"]["model"] == reference.total - n_before
    assert stats["cached"].get("model", 0) == n_before
    # identical results (but the date and the run's own counters) and byte-identical samples
    assert comparable_results(tmp / "out" / "results.json") == reference.results
    assert samples_files(tmp / "out") == reference.samples
    return stats


def kill_points(reference_total: int) -> list[int]:
    """The first reply; mid first wave; the first wave complete (re-asks held); mid second wave."""
    return [1, N_DOCS // 2, N_DOCS, N_DOCS + (reference_total - N_DOCS) // 2]


@pytest.mark.parametrize("point", range(4), ids=["first-reply", "mid-wave-1", "end-of-wave-1", "mid-wave-2"])
def test_sigkill_then_resume_equals_uninterrupted_run(point: int, reference: Reference, tmp_path: Path) -> None:
    n = kill_points(reference.total)[point]
    assert 0 < n < reference.total
    oracle = RealBenchOracle()
    gate = Gate(oracle)
    with ChatServer(reply=gate) as server:
        code, _ = interrupt_after(n, signal.SIGKILL, tmp_path, server, gate)
        assert code == -signal.SIGKILL
        out = tmp_path / "out"
        assert not (out / "results.json").exists()
        partial = sorted((out / "samples").glob("*.jsonl.partial"))
        if n >= N_DOCS:
            # dialogues that finished before the kill were streamed to the partial files
            assert sum(len(p.read_text().splitlines()) for p in partial) >= 1
            # a torn last line (a kill in the middle of a write) does not trouble the next run
            with partial[0].open("a") as fh:
                fh.write('{"task": "realbench_ranking_easy", "doc_id": "rank-e-0')
        resume_and_compare(tmp_path, server, gate, reference)
    assert not list((out / "samples").glob("*.partial")) and not list(out.glob(".*.tmp"))


@pytest.mark.parametrize(("sig", "code", "message"), [
    (signal.SIGINT, 130, "interrupted"),
    (signal.SIGTERM, 143, "terminated (SIGTERM)"),  # a batch scheduler's preemption
], ids=["ctrl-c", "sigterm"])
def test_interrupt_exits_with_a_resume_hint_and_resumes(sig: signal.Signals, code: int, message: str,
                                                        reference: Reference, tmp_path: Path) -> None:
    gate = Gate(RealBenchOracle())
    with ChatServer(reply=gate) as server:
        exit_code, stderr = interrupt_after(N_DOCS // 3, sig, tmp_path, server, gate)
        assert exit_code == code, stderr
        assert message in stderr and "run the same command again to resume" in stderr
        assert "Traceback" not in stderr
        assert cache_entries(tmp_path / "cache") == N_DOCS // 3
        resume_and_compare(tmp_path, server, gate, reference)


def test_no_cache_sends_everything_again(reference: Reference, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--no-cache neither reads nor writes the cache; --cache-dir picks the folder; cache info/clear."""
    with ChatServer(reply=RealBenchOracle()) as server:
        env = cli_env(server.base_url)
        first = run_cli(cli_args(tmp_path / "a", tmp_path / "cache"), env, tmp_path / "logs")
        assert first.process.returncode == 0, first.stderr
        entries = cache_entries(tmp_path / "cache")
        assert entries == reference.total
        mark = len(server.log)
        server.reply = RealBenchOracle()  # the scripted model starts afresh, as for the first run
        again = run_cli([*cli_args(tmp_path / "b", tmp_path / "cache"), "--no-cache"], env, tmp_path / "logs")
        assert again.process.returncode == 0, again.stderr
        assert sum(chat_prompts(server, mark).values()) == reference.total
        assert cache_entries(tmp_path / "cache") == entries
    capsys.readouterr()
    assert main(["cache", "info", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert f"entries: {entries}" in capsys.readouterr().out
    assert main(["cache", "clear", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert f"removed {entries} entries" in capsys.readouterr().out and cache_entries(tmp_path / "cache") == 0


def test_several_processes_share_one_cache(tmp_path: Path) -> None:
    """Three runs at once on one cache folder (SQLite WAL): all finish, every reply is stored once."""
    with ChatServer(reply=RealBenchOracle(unsure_every=1 << 40)) as server:
        env = cli_env(server.base_url)
        runs = [start_cli(["--tasks", task, "--model", "openai:test-model", "--data-dir", str(SAMPLE), "--no-progress",
                           "--output-path", str(tmp_path / f"out{i}"), "--cache-dir", str(tmp_path / "cache")], env, tmp_path / "logs")
                for i, task in enumerate(["realbench_ranking_easy", "realbench_ranking_hard", "realbench_retrieval_easy"])]
        for run in runs:
            assert run.wait(120) == 0, run.stderr
        assert server.calls == 27 and cache_entries(tmp_path / "cache") == 27


def test_one_model_name_at_two_endpoints_is_two_models(tmp_path: Path) -> None:
    """The cache key names the endpoint: a second server that serves a model under the same
    name (another vLLM deployment, another checkpoint) is asked, not answered from the cache."""
    args = ["--tasks", "realbench_ranking_easy", "--model", "openai:test-model", "--data-dir", str(SAMPLE), "--no-progress",
            "--cache-dir", str(tmp_path / "cache"), "--allow-failures"]
    with ChatServer(reply=RealBenchOracle(unsure_every=1 << 40)) as a, ChatServer(reply=lambda body: "B") as b:
        first = run_cli([*args, "--output-path", str(tmp_path / "a")], cli_env(a.base_url), tmp_path / "logs")
        second = run_cli([*args, "--output-path", str(tmp_path / "b")], cli_env(b.base_url), tmp_path / "logs")
        assert first.process.returncode == 0 and second.process.returncode == 0, second.stderr
        assert a.calls == 9 and b.calls == 9
        again = run_cli([*args, "--output-path", str(tmp_path / "a2")], cli_env(a.base_url), tmp_path / "logs")
        assert again.process.returncode == 0 and a.calls == 9  # each endpoint's replies stay cached
    assert comparable_results(tmp_path / "a2" / "results.json") == comparable_results(tmp_path / "a" / "results.json")
    assert comparable_results(tmp_path / "b" / "results.json")["results"] != comparable_results(tmp_path / "a" / "results.json")["results"]
