"""``--repeats K`` (issue 30): a task that samples runs each document K times with distinct seeds;
the results give the spread between repeats and the per-document reducers; the cache keys every
repeat apart, so a run killed with SIGKILL and started again re-sends nothing answered."""

from __future__ import annotations

import json
import signal
import statistics
from collections import Counter
from pathlib import Path

import pytest

from mmtasks.comparison.runs import compare
from tests.chat_server import ChatServer
from tests.cli_process import Gate, cache_entries, cli_env, run_cli, start_cli, wait_until

pytestmark = pytest.mark.slow

#: 4 questions; the "model" answers "yes" when its seed is even or absent, "no" when odd, and says
#: which seed it had. Repeat 0 is the plain run (no seed sent, as without --repeats); repeat r
#: sends --seed + r (11, 12)
DOCS = [{"id": f"q{i}", "question": f"Is {i} a question?", "answer": "yes"} for i in range(4)]


def _reply(body: dict) -> str:
    seed = body.get("seed")
    if not isinstance(seed, int):
        return "yes (no seed)"
    return ("yes" if seed % 2 == 0 else "no") + f" (seed {seed})"


def _folder(root: Path) -> tuple[Path, Path]:
    tasks = root / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "sampled_qa.yaml").write_text(
        "task: sampled_qa\n"
        "dataset:\n  local: {dir: qa, file: qa.jsonl}\n  required_fields: {question: str, answer: str}\n"
        "prompt:\n  user: \"{{ doc.question }}\"\n"
        "generation: {do_sample: true, temperature: 0.8, max_new_tokens: 8}\n"
        "target: \"{{ doc.answer }}\"\n"
        "answer: {space: [yes, no]}\n"
        "metrics:\n  - {name: acc, function: exact_match, primary: true}\n")
    data = root / "data" / "qa"
    data.mkdir(parents=True)
    (data / "qa.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return tasks, root / "data"


def _args(root: Path, tasks: Path, data: Path, repeats: int = 3) -> list[str]:
    return ["--tasks", "sampled_qa", "--include-path", str(tasks), "--model", "openai:test-model",
            "--model-args", "concurrency=2", "--data-dir", str(data), "--output-path", str(root / "out"),
            "--cache-dir", str(root / "cache"), "--no-progress", "--seed", "10", "--repeats", str(repeats)]


def test_three_repeats_three_answers_and_their_spread(tmp_path: Path) -> None:
    tasks, data = _folder(tmp_path)
    with ChatServer(reply=_reply) as server:
        run = run_cli(_args(tmp_path, tasks, data), cli_env(server.base_url), tmp_path / "logs")
        assert run.process.returncode == 0, run.stderr
        seeds = Counter(body.get("seed") for body in server.bodies)
    # the plain run's requests, then seeds 11 and 12: one request per document for each
    assert seeds == Counter({None: 4, 11: 4, 12: 4})
    out = tmp_path / "out"
    rows = [json.loads(line) for line in (out / "samples" / "sampled_qa.jsonl").read_text().splitlines()]
    by_doc: dict[str, list[str]] = {}
    for row in rows:
        by_doc.setdefault(row["doc_id"], []).append(row["responses"][0])
    assert all(len(set(replies)) == 3 for replies in by_doc.values()) and len(by_doc) == 4
    assert sorted(r["repeat"] for r in rows) == [0] * 4 + [1] * 4 + [2] * 4
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["repeats"] == 3
    # repeats 0 and 2 answer "yes": right; repeat 1 (seed 11) answers "no": wrong
    record = results["repeats"]["sampled_qa"]
    assert record["per_repeat"] == [100.0, 0.0, 100.0]
    assert record["sd"] == pytest.approx(statistics.stdev([100.0, 0.0, 100.0]))
    assert record["reducers"] == {"mean": pytest.approx(200 / 3), "majority": 100.0, "any_correct": 100.0}
    assert results["results"]["sampled_qa"]["acc"] == pytest.approx(200 / 3)
    # every document's three repeats are one cluster: all four documents score 2/3, so no spread
    assert results["results"]["sampled_qa"]["acc_stderr"] == pytest.approx(0.0)
    # compare averages a document's repeats
    assert compare(out, out).tasks[0].both == 4


def test_sigkill_then_resume_resends_nothing_answered(tmp_path: Path) -> None:
    tasks, data = _folder(tmp_path)
    gate = Gate(_reply)
    with ChatServer(reply=gate) as server:
        gate.limit = 7
        run = start_cli(_args(tmp_path, tasks, data), cli_env(server.base_url), tmp_path / "logs")
        try:
            wait_until(lambda: len(gate.delivered) == 7 and gate.held > 0 and cache_entries(tmp_path / "cache") == 7,
                       timeout=60, what="7 replies cached with more requests waiting")
            run.process.send_signal(signal.SIGKILL)
            assert run.wait(30) == -signal.SIGKILL
        finally:
            if run.process.poll() is None:
                run.process.kill()
            gate.release()
        mark = len(server.log)
        again = run_cli(_args(tmp_path, tasks, data), cli_env(server.base_url), tmp_path / "logs")
        assert again.process.returncode == 0, again.stderr
        sent_now = [c for c in server.log[mark:] if c.path.endswith("/chat/completions")]
    assert len(sent_now) == 12 - 7
    stats = json.loads((tmp_path / "out" / "results.json").read_text())["run_stats"]
    assert stats["sent"]["model"] == 5 and stats["cached"]["model"] == 7
    assert json.loads((tmp_path / "out" / "results.json").read_text())["repeats"]["sampled_qa"]["per_repeat"] == [100.0, 0.0, 100.0]
