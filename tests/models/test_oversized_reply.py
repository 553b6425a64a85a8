"""Finding 8 of issue 23: a reply too large for the judge is a judge failure of that document.

A 5M-character reply (under the 32 MB response cap) used to make the judge template "too
costly": the run exited 2 even with --allow-failures, the message blamed the task YAML, and
every resume replayed the cached reply and aborted again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.dialogues.judging import MAX_JUDGED_CHARS
from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
HUGE = "word " * 1_000_000  # 5,000,000 characters


def run(server: ChatServer, tmp_path: Path, task: str, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "out"
    code = main(["--tasks", task, "--model", "openai:test-model", "--judge", "openai:judge-model", "--data-dir", str(SAMPLE),
                 "--output-path", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra])
    return code, json.loads((out / "results.json").read_text())


@pytest.fixture
def server(chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> ChatServer:
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    chat_server.models = ("test-model", "judge-model")
    return chat_server


def test_a_reply_too_large_for_the_judge_fails_only_its_document(server: ChatServer, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    asked: list[int] = []
    state = {"first": True}

    def first_huge(body: dict) -> str:
        if body["model"] == "judge-model":
            asked.append(len(last_user_text(body)))
            return "8 4\nFine."
        if state["first"]:
            state["first"] = False
            return HUGE
        return "A short answer."

    server.reply = first_huge
    code, results = run(server, tmp_path, "llava_bench_wild", "--limit", "3")
    assert code == 1  # a counted judge failure, not exit 2 (before: exit 2, "template is too costly", blaming the YAML)
    assert results["problems"]["llava_bench_wild"]["judge_failures"] == 1
    assert results["n-samples"]["llava_bench_wild"]["effective"] == 3 and len(asked) == 2
    assert results["results"]["llava_bench_wild"]["relative_score"] == 50.0  # the two others: 4 / 8
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples" / "llava_bench_wild.jsonl").read_text().splitlines()]
    failed = [s for s in samples if s["judge"] and s["judge"][0]["fields"] is None]
    assert len(failed) == 1 and "too large for a judge prompt" in failed[0]["judge"][0]["error"]
    assert all(n < MAX_JUDGED_CHARS for n in asked)
    capsys.readouterr()
    # the resume replays the cached huge reply, and goes on the same way (before: aborted again)
    code, again = run(server, tmp_path, "llava_bench_wild", "--limit", "3", "--allow-failures")
    assert code == 0 and again["problems"]["llava_bench_wild"]["judge_failures"] == 1
    assert sum(again["run_stats"]["sent"].values()) == 0


def test_an_earlier_turn_too_large_for_the_judges_conversation(server: ChatServer, tmp_path: Path) -> None:
    turns: list[int] = []

    def reply(body: dict) -> str:
        if body["model"] == "judge-model":
            return 'Fine. {"score": 3, "matched_items": 1, "model_items": 1, "named_images": [1], "refused": false}'
        turns.append(1)
        return HUGE if len(turns) == 1 else "Noted."

    server.reply = reply
    code, results = run(server, tmp_path, "mmrc", "--limit", "1", "--allow-failures")
    assert code == 0
    assert results["problems"]["mmrc"]["judge_failures"] >= 1  # the questions whose judge sees the conversation
