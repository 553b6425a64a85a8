"""``n`` for repeats on an API that takes it (issue 37): ``--gen-kwargs n=3`` on ``openai:`` runs
a sampling task's documents 3 times, as ``--repeats 3`` does, but sends each document's prompt
once with ``n: 3`` and scores repeat r with choice r. The call's usage is counted once; the cache
keys each choice apart, so a rerun sends nothing and a longer run sends only the new documents.
A server that answers fewer choices than asked fails the missing repeats, naming it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mmtasks.cli import main
from mmtasks.core.request import GenerationConfig, Request
from mmtasks.core.conversation import Message
from tests.chat_server import ChatServer

DOCS = [{"id": f"q{i}", "question": f"Is {i} a question?", "answer": "yes"} for i in range(4)]
#: choice 1 of every call is wrong: repeats 0 and 2 score 100, repeat 1 scores 0
CHOICES = ["yes (choice 0)", "no (choice 1)", "yes (choice 2)"]


def _folder(root: Path, generation: str = "{do_sample: true, temperature: 0.8, max_new_tokens: 8}") -> tuple[Path, Path]:
    tasks = root / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "sampled_qa.yaml").write_text(
        "task: sampled_qa\n"
        "dataset:\n  local: {dir: qa, file: qa.jsonl}\n  required_fields: {question: str, answer: str}\n"
        "prompt:\n  user: \"{{ doc.question }}\"\n"
        f"generation: {generation}\n"
        "target: \"{{ doc.answer }}\"\n"
        "answer: {space: [yes, no]}\n"
        "metrics:\n  - {name: acc, function: exact_match, primary: true}\n")
    data = root / "data" / "qa"
    data.mkdir(parents=True)
    (data / "qa.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return tasks, root / "data"


def _reply(body: dict) -> Any:
    n = body.get("n", 1)
    return CHOICES[:n] if n > 1 else "yes (one reply)"


def _run(root: Path, server: ChatServer, *more: str, out: str = "out") -> int:
    tasks, data = root / "tasks", root / "data"
    return main(["--tasks", "sampled_qa", "--include-path", str(tasks), "--model", "openai:test-model",
                 "--model-args", f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY,concurrency=4",
                 "--data-dir", str(data), "--output-path", str(root / out), "--cache-dir", str(root / "cache"),
                 "--no-progress", "--seed", "10", *more])


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_TEST_KEY", "sk-test-not-a-real-key-000")


def test_n_draws_the_repeats_in_one_call_each_and_scores_each_choice(tmp_path: Path) -> None:
    _folder(tmp_path)
    with ChatServer(reply=_reply) as server:
        assert _run(tmp_path, server, "--gen-kwargs", "n=3") == 0
        bodies = server.bodies
    # one call per document, n=3 in the body; no seed (repeat 0's, the plain run's)
    assert len(bodies) == 4 and all(b["n"] == 3 and "seed" not in b for b in bodies)
    out = tmp_path / "out"
    rows = [json.loads(line) for line in (out / "samples" / "sampled_qa.jsonl").read_text().splitlines()]
    assert Counter(r["repeat"] for r in rows) == Counter({0: 4, 1: 4, 2: 4})
    assert all(r["responses"][0] == CHOICES[r["repeat"]] for r in rows)
    results = json.loads((out / "results.json").read_text())
    assert results["repeats"]["sampled_qa"]["per_repeat"] == [100.0, 0.0, 100.0]
    assert results["results"]["sampled_qa"]["acc"] == pytest.approx(200 / 3)
    assert results["generation"]["sampled_qa"]["model"]["n"] == 3  # recorded as sent
    # the usage of each call once: the prompt paid once per document, every choice's completion
    wire = [json.loads(json.dumps(b)) for b in bodies]
    prompt = sum(sum(len(json.dumps(m.get("content", "")).split()) for m in b["messages"]) for b in wire)
    completion = 4 * sum(len(c.split()) for c in CHOICES)
    tokens = results["tokens"]["sampled_qa"]["model"]
    assert (tokens["prompt"], tokens["completion"]) == (prompt, completion), tokens


def test_a_pool_of_endpoints_draws_each_documents_repeats_in_one_call(tmp_path: Path) -> None:
    """``base_url=[A,B]``: a document's repeats take their choices of one call on one endpoint, as
    with one endpoint (before, each endpoint coalesced only its own repeats: the least-outstanding
    choice spread a document's repeats over both, and each sent its own call with n=3)."""
    _folder(tmp_path)
    servers = [ChatServer(reply=_reply), ChatServer(reply=_reply)]
    for server in servers:
        server.model_card = {"root": "/models/one-model"}
        server.start()
    try:
        urls = "[" + ",".join(server.base_url for server in servers) + "]"
        code = main(["--tasks", "sampled_qa", "--include-path", str(tmp_path / "tasks"), "--model", "openai:test-model",
                     "--model-args", f"base_url={urls},api_key_env=MMTASKS_TEST_KEY,concurrency=4",
                     "--data-dir", str(tmp_path / "data"), "--output-path", str(tmp_path / "out"),
                     "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--seed", "10", "--gen-kwargs", "n=3"])
        bodies = [b for server in servers for b in server.bodies]
    finally:
        for server in servers:
            server.close()
    assert code == 0
    assert len(bodies) == 4 and all(b["n"] == 3 for b in bodies)  # one call per document, over both
    rows = [json.loads(line) for line in (tmp_path / "out" / "samples" / "sampled_qa.jsonl").read_text().splitlines()]
    assert all(r["responses"][0] == CHOICES[r["repeat"]] for r in rows) and len(rows) == 12
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["repeats"]["sampled_qa"]["per_repeat"] == [100.0, 0.0, 100.0]
    per = results["run_stats"]["endpoints"]["model"]
    assert sum(e["replies"] for e in per.values()) == 12 and not any(e["failed"] for e in per.values())


def test_a_rerun_sends_nothing_and_a_longer_run_only_the_new_documents(tmp_path: Path) -> None:
    _folder(tmp_path)
    with ChatServer(reply=_reply) as server:
        assert _run(tmp_path, server, "--gen-kwargs", "n=3", "--limit", "2", out="first") == 0
        assert server.calls == 2
        assert _run(tmp_path, server, "--gen-kwargs", "n=3", out="second") == 0
        assert server.calls == 4  # the two documents the first run did not have, one call each
        assert _run(tmp_path, server, "--gen-kwargs", "n=3", out="third") == 0
        assert server.calls == 4
    rows = [json.loads(line) for line in (tmp_path / "third" / "samples" / "sampled_qa.jsonl").read_text().splitlines()]
    assert all(r["responses"][0] == CHOICES[r["repeat"]] for r in rows) and len(rows) == 12


def test_a_server_that_answers_one_choice_fails_the_other_repeats_naming_it(tmp_path: Path) -> None:
    _folder(tmp_path)
    with ChatServer(reply=lambda body: "yes (n ignored)") as server:
        assert _run(tmp_path, server, "--gen-kwargs", "n=3", "--no-cache") == 1  # failures: exit 1 (no --allow-failures)
        assert server.calls == 4  # one call per document still: the short answer is not asked again
    rows = [json.loads(line) for line in (tmp_path / "out" / "samples" / "sampled_qa.jsonl").read_text().splitlines()]
    assert {r["repeat"] for r in rows if r["responses"][0] == "yes (n ignored)"} == {0}
    failed = [r for r in rows if r["repeat"] > 0]
    assert len(failed) == 8
    assert all("the server answered 1 of the n=3 replies asked for" in json.dumps(r) for r in failed)


def test_n_on_a_greedy_task_is_dropped(tmp_path: Path) -> None:
    _folder(tmp_path, "{temperature: 0.0, max_new_tokens: 8}")
    with ChatServer(reply=_reply) as server:
        assert _run(tmp_path, server, "--gen-kwargs", "n=3", "--no-cache") == 0
        bodies = server.bodies
    assert len(bodies) == 4 and all("n" not in b for b in bodies)


@pytest.mark.parametrize(("more", "words"), [
    (["--repeats", "2"], "--repeats 2 and n=3 (task 'sampled_qa') ask for different numbers of replies per document"),
    (["--batch"], "n=3 (task 'sampled_qa') draws several replies per call, which --batch does not send"),
])
def test_n_against_repeats_or_batch_is_one_line(more: list[str], words: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    _folder(tmp_path)
    with ChatServer(reply=_reply) as server:
        code = _run(tmp_path, server, "--gen-kwargs", "n=3", *more)
        calls = server.calls
    err = capsys.readouterr().err
    assert code == 2 and words in err and calls == 0, err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err


def test_the_choice_keys_the_cache_apart_only_when_set() -> None:
    plain = Request((Message.text("user", "hi"),), GenerationConfig(temperature=0.8, n=3))
    first, second = (Request(plain.messages, plain.generation, choice=c) for c in (0, 1))
    assert len({plain.content_key(), first.content_key(), second.content_key()}) == 3
    # a request without a choice keeps the key it had before the field existed
    import hashlib

    payload = {"messages": [{"role": "user", "parts": [{"t": "hi"}]}], "generation": plain.generation.cache_fields(),
               "attempt": 0}
    assert plain.content_key() == hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def test_gemini_draws_the_repeats_as_candidates_of_one_call(tmp_path: Path) -> None:
    """Gemini's ``candidate_count`` (the SDK's GenerateContentConfig, validated by the server):
    the same repeats as on openai, one generateContent call per document."""
    pytest.importorskip("google.genai")
    from tests.provider_servers import GeminiServer

    _folder(tmp_path)

    def reply(body: dict) -> Any:
        n = body.get("generationConfig", {}).get("candidateCount", 1)
        return CHOICES[:n] if n > 1 else "yes (one reply)"

    with GeminiServer(models=("gemini-test",), reply=reply, api_key="sk-test-not-a-real-key-000") as server:
        code = main(["--tasks", "sampled_qa", "--include-path", str(tmp_path / "tasks"), "--model", "gemini:gemini-test",
                     "--model-args", f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY,max_retries=0",
                     "--data-dir", str(tmp_path / "data"), "--output-path", str(tmp_path / "out"), "--no-cache",
                     "--no-progress", "--gen-kwargs", "n=3"])
        bodies = server.bodies
    assert code == 0
    assert len(bodies) == 4 and all(b["generationConfig"]["candidateCount"] == 3 for b in bodies)
    rows = [json.loads(line) for line in (tmp_path / "out" / "samples" / "sampled_qa.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and all(r["responses"][0] == CHOICES[r["repeat"]] for r in rows)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["repeats"]["sampled_qa"]["per_repeat"] == [100.0, 0.0, 100.0]
    assert results["tokens"]["sampled_qa"]["model"]["completion"] == 4 * sum(len(c.split()) for c in CHOICES)
