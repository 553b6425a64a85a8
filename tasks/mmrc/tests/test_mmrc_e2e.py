"""MMRC end to end through the CLI against the loopback chat server (tests/chat_server.py),
on the committed sample data: what the model, the note taker and the judge were sent.

The server answers the model with ``own reply to: <tail of the last user text>``, the note
taker with a JSON note naming the turn, and the judge with a fixed verdict, so every check
reads the requests the server logged: the replayed history (own replies vs reference), the
images of each turn, the note in the probes, waves (calls of one wave overlap in time, waves
do not), independent vs cumulative probes, judge re-asks and failures.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mmtasks.cli import main
from tests.chat_server import ChatServer
from tests.chat_wire import Call, last_user_text

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "data" / "sample"
RECORDS = [json.loads(line) for line in (DATA / "mmrc" / "mmrc.jsonl").read_text(encoding="utf-8").splitlines()]
BY_FIRST_TURN = {rec["turns"][0]["user"]: rec for rec in RECORDS}
MAX_TURNS = max(len(r["turns"]) for r in RECORDS)
N_QUESTIONS = sum(len(r["questions"]) for r in RECORDS)
LATENCY = 0.15

VERDICT = 'The answer is close to the reference.\n{"score": 4, "matched_items": 1, "model_items": 2, "named_images": [2], "refused": true}'
NOTE_PROMPT = "You are taking notes"
#: how a choice question's probe ends (probe_prompt in tasks/mmrc/_base.yaml)
CHOICE_INSTRUCTION = "Answer with the letter of the correct option."
#: the AR question of mmrc-001, which the judge never scores in the failure test
UNJUDGEABLE = "What is the number of our flight to Lakeside Town?"


def make_reply(unjudgeable: str | None = None) -> Callable[[dict], str]:
    """The server's answers; the judge gives no verdict for questions containing ``unjudgeable``."""
    def reply(body: dict) -> str:
        text = last_user_text(body)
        if body["model"] == "judge-model":
            return "I cannot decide." if unjudgeable and unjudgeable in text else VERDICT
        if text.startswith(NOTE_PROMPT):
            turn = int(re.search(r"\(turn (\d+)\)", text).group(1))  # type: ignore[union-attr]
            return f'Notes updated.\n{{"user_info": {{"last_turn": {turn}}}, "purpose": "trip"}}'
        if text.rstrip().endswith(CHOICE_INSTRUCTION):
            return "I choose B."  # a parseable letter: an unparsed answer would be a problem (exit 1)
        return own_reply(text)

    return reply


def own_reply(user_text: str) -> str:
    return "own reply to: " + user_text[-30:]


# --- reading the server's log ------------------------------------------------------

def messages(call: Call) -> list[dict]:
    return call.body["messages"]


def text_of(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content if p["type"] == "text")


def n_images(message: dict) -> int:
    content = message["content"]
    return 0 if isinstance(content, str) else sum(1 for p in content if p["type"] == "image_url")


def chat_calls(server: ChatServer) -> list[Call]:
    return [c for c in server.log if c.method == "POST" and c.status == 200]


def conversation_of(call: Call) -> dict:
    first_user = next(text_of(m) for m in messages(call) if m["role"] == "user")
    return next(rec for turn1, rec in BY_FIRST_TURN.items() if turn1 in first_user)


def kind_of(call: Call) -> str:
    """judge, note, turn (a replay turn) or probe."""
    if call.body["model"] == "judge-model":
        return "judge"
    if last_user_text(call.body).startswith(NOTE_PROMPT):
        return "note"
    rec = conversation_of(call)
    users = [m for m in messages(call) if m["role"] == "user"]
    k = len(users)
    if k <= len(rec["turns"]) and text_of(users[-1]).endswith(rec["turns"][k - 1]["user"]):
        return "turn"
    return "probe"


def by_kind(server: ChatServer, kind: str) -> list[Call]:
    return [c for c in chat_calls(server) if kind_of(c) == kind]


def one_wave(calls: list[Call]) -> bool:
    """Sent together: every call started before any of them finished."""
    return max(c.started for c in calls) < min(c.finished for c in calls if c.finished is not None)


def check_history(call: Call, rec: dict, assistant: str) -> None:
    """The replayed turns at the head of ``call``: each user turn with its own images, labelled
    with conversation-wide numbers, followed by the model's own reply or the recorded one."""
    msgs = messages(call)
    number = 0
    for k, turn in enumerate(rec["turns"][: len(msgs) // 2]):
        user, reply = msgs[2 * k], msgs[2 * k + 1]
        assert user["role"] == "user" and text_of(user).endswith(turn["user"])
        assert n_images(user) == len(turn["images"])
        labels = [int(n) for n in re.findall(r"Image (\d+):", text_of(user))]
        assert labels == list(range(number + 1, number + 1 + len(turn["images"])))
        number += len(turn["images"])
        expected = own_reply(text_of(user)) if assistant == "self" else turn["assistant"]
        assert reply == {"role": "assistant", "content": expected}


# --- running ------------------------------------------------------------------------

@pytest.fixture
def server(chat_server: ChatServer) -> ChatServer:
    chat_server.models = ("test-model", "judge-model")
    chat_server.reply = make_reply()
    chat_server.latency = LATENCY
    return chat_server


def cli_args(tmp_path: Path, *extra: str) -> list[str]:
    return ["--tasks", "mmrc", "--model", "openai:test-model", "--judge", "openai:judge-model",
            "--data-dir", str(DATA), "--output-path", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"),
            "--no-progress", *extra]


def outputs(tmp_path: Path) -> tuple[dict[str, Any], dict[str, dict]]:
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    lines = (tmp_path / "out" / "samples" / "mmrc.jsonl").read_text(encoding="utf-8").splitlines()
    samples = {s["doc_id"]: s for s in map(json.loads, lines)}
    return results, samples


def run_in_process(server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    return main(cli_args(tmp_path, *extra))


# --- the tests ------------------------------------------------------------------------

class Rendezvous:
    """Holds each reply until every call of its wave has reached the server, so that "sent
    together" is shown by events, not by a latency the client must beat on a loaded machine: a
    client that sent a wave's calls one after another would leave them waiting here (60 s), and
    :func:`one_wave` would then fail. Waves: turn 1 of every conversation with its note update;
    each later turn of a conversation with its note update; a conversation's probe questions."""

    def __init__(self, reply: Callable[[dict], str]) -> None:
        self.reply = reply
        self.arrived: dict[tuple[Any, ...], int] = {}
        self.cond = threading.Condition()
        #: waves whose calls did not all arrive within the hang guard (their replies then went out early)
        self.incomplete: list[tuple[Any, ...]] = []

    @staticmethod
    def wave_of(body: dict) -> tuple[tuple[Any, ...] | None, int]:
        call = Call(index=-1, method="POST", path="/v1/chat/completions", body=body, prompt="", started=0.0)
        kind = kind_of(call)
        if kind == "probe":
            rec = conversation_of(call)
            return ("probe", id(rec)), len(rec["questions"])
        if kind == "judge":  # a conversation's judge calls, one per question
            text = last_user_text(body)
            rec = next(r for r in RECORDS if any(q["question"] in text for q in r["questions"]))
            return ("judge", id(rec)), len(rec["questions"])
        if kind in ("note", "turn"):
            rec = conversation_of_any(call)
            if kind == "note":
                turn = int(re.search(r"\(turn (\d+)\)", last_user_text(body)).group(1))  # type: ignore[union-attr]
            else:
                turn = len([m for m in messages(call) if m["role"] == "user"])
            if turn == 1:
                return ("turn", 1), 2 * len(RECORDS)
            return ("turn", id(rec), turn), 2
        return None, 0

    def __call__(self, body: dict) -> str:
        wave, size = self.wave_of(body)
        if wave is not None:
            with self.cond:
                self.arrived[wave] = self.arrived.get(wave, 0) + 1
                self.cond.notify_all()
                # a hang guard, not a latency to beat: a wave that never completes fails the test below
                if not self.cond.wait_for(lambda: self.arrived[wave] >= size, timeout=600):
                    self.incomplete.append(wave)
        return self.reply(body)


def test_notetaking_run_through_python_m(server: ChatServer, tmp_path: Path) -> None:
    server.reply = rendezvous = Rendezvous(server.reply)
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key"}
    proc = subprocess.run([sys.executable, "-m", "mmtasks", *cli_args(tmp_path, "--strategy", "notetaking", "--model-args", "concurrency=64")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert rendezvous.incomplete == []  # every wave's calls were in flight together (events, not timing)
    results, samples = outputs(tmp_path)

    # Replay: the model answered every turn and its own replies are the history.
    turns = by_kind(server, "turn")
    assert len(turns) == sum(len(r["turns"]) for r in RECORDS)
    for call in turns:
        check_history(call, conversation_of(call), "self")

    # Note taking: one update per turn, from that turn (its images only) and the previous note.
    notes = by_kind(server, "note")
    assert len(notes) == len(turns) and all(c.body["model"] == "test-model" for c in notes)  # the model takes notes
    for call in notes:
        rec, prompt = conversation_of_note(call)
        turn = int(re.search(r"\(turn (\d+)\)", prompt).group(1))  # type: ignore[union-attr]
        assert rec["turns"][turn - 1]["user"] in prompt
        assert n_images(messages(call)[-1]) == len(rec["turns"][turn - 1]["images"])
        assert (f'"last_turn": {turn - 1}' in prompt) if turn > 1 else ("{}" in prompt)
    # The note update for turn i goes out with the model's reply to turn i, and both finish
    # before anything of that conversation's turn i + 1 (the openai backend is barrier-free:
    # another conversation's turn i may still be in flight). Turn 1 of every conversation goes
    # out at once. Waves (rounds): the replay turns, one probe round, one judge round.
    def wave(i: int) -> tuple[list[Call], list[Call]]:
        return ([c for c in notes if f"(turn {i})" in last_user_text(c.body)],
                [c for c in turns if len([m for m in messages(c) if m["role"] == "user"]) == i])

    for i in range(1, MAX_TURNS + 1):
        note_batch, turn_batch = wave(i)
        assert len(note_batch) == len(turn_batch) == sum(1 for r in RECORDS if len(r["turns"]) >= i)
        if i == 1:
            assert one_wave(note_batch + turn_batch)
        if i < MAX_TURNS:
            later = [c for batch in wave(i + 1) for c in batch]
            for rec in RECORDS:
                mine = [c for c in note_batch + turn_batch if conversation_of_any(c) is rec]
                mine_later = [c for c in later if conversation_of_any(c) is rec]
                if mine_later:
                    assert one_wave(mine) and max(c.finished for c in mine) <= min(c.started for c in mine_later)
    assert results["run_stats"]["waves"] == MAX_TURNS + 2

    # Probes: independent branches of the replayed history, each with the final note; a
    # conversation's questions all go out in one wave (the one after its last turn).
    probes = by_kind(server, "probe")
    assert len(probes) == N_QUESTIONS
    for rec in RECORDS:
        assert one_wave([c for c in probes if conversation_of(c) is rec])
    for call in probes:
        rec = conversation_of(call)
        assert len(messages(call)) == 2 * len(rec["turns"]) + 1
        check_history(call, rec, "self")
        last = text_of(messages(call)[-1])
        assert last.startswith("Notes about the user") and f'"last_turn": {len(rec["turns"])}' in last
        assert any(q["question"] in last for q in rec["questions"])

    # Judge: one call per question, a conversation's all in one wave; the verdict's fields give
    # the precision metrics.
    judged = by_kind(server, "judge")
    assert len(judged) == N_QUESTIONS
    for rec in RECORDS:
        assert one_wave([c for c in judged if any(q["question"] in last_user_text(c.body) for q in rec["questions"])])
    r = results["results"]["mmrc"]
    assert all(r[a] == 4.0 for a in ("ie", "cr", "iu", "im", "mr", "ar")) and r["overall"] == 4.0
    assert r["ep"] == 0.5 and r["rp"] == 100.0
    gold = [q["images"] for rec in RECORDS for q in rec["questions"] if q["ability"] == "IM"]
    assert r["imp"] == pytest.approx(sum((2 in g) / len(g) for g in gold) / len(gold))
    assert results["problems"]["mmrc"] == {"request_failures": 0, "unparsed": 0, "judge_failures": 0}
    assert set(results["breakdowns"]["mmrc"]) == {"length", "category", "updates"}
    # Every version of the note is in the samples.
    for rec in RECORDS:
        extra = samples[rec["id"]]["extra"]
        assert [e["turn"] for e in extra["notes"]] == list(range(1, len(rec["turns"]) + 1))
        assert extra["final_note"] == {"user_info": {"last_turn": len(rec["turns"])}, "purpose": "trip"}


def probes_in_order(probes: list[Call], rec: dict, history: str) -> list[Call]:
    """The probe calls of conversation ``rec``, in the order they were asked; each carries the
    conversation's ``history`` (``check_history``) and went out after the previous one's answer."""
    mine = sorted((c for c in probes if conversation_of(c) is rec), key=lambda c: len(messages(c)))
    for k, call in enumerate(mine):
        check_history(call, rec, history)
        if k:
            assert call.started >= mine[k - 1].finished  # one after another
    return mine


def conversation_of_note(call: Call) -> tuple[dict, str]:
    prompt = last_user_text(call.body)
    rec = next(r for r in RECORDS if any(t["user"] and t["user"] in prompt for t in r["turns"]))
    return rec, prompt


def conversation_of_any(call: Call) -> dict:
    return conversation_of_note(call)[0] if kind_of(call) == "note" else conversation_of(call)


def test_reference_history_with_cumulative_probes(server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rc = run_in_process(server, tmp_path, monkeypatch, "--history", "reference", "--probe", "cumulative")
    assert rc == 0
    results, samples = outputs(tmp_path)
    assert by_kind(server, "turn") == [] and by_kind(server, "note") == []  # no replay calls, no notes
    probes = by_kind(server, "probe")
    assert len(probes) == N_QUESTIONS
    for rec in RECORDS:
        mine = probes_in_order(probes, rec, "reference")
        n = 2 * len(rec["turns"])
        for k, call in enumerate(mine):
            msgs = messages(call)
            # The k-th question follows the earlier questions and the model's answers to them.
            assert len(msgs) == n + 2 * k + 1
            for j in range(k):
                asked, answered = msgs[n + 2 * j], msgs[n + 2 * j + 1]
                assert rec["questions"][j]["question"] in text_of(asked)
                assert answered["content"] == mine[j].reply
            assert rec["questions"][k]["question"] in text_of(msgs[-1])
            assert "Notes about the user" not in json.dumps(msgs)
        assert samples[rec["id"]]["responses"] == [c.reply for c in mine]
    assert results["run_stats"]["waves"] == max(len(r["questions"]) for r in RECORDS) + 1
    assert results["config"]["history"] == "reference" and results["config"]["probe"] == "cumulative"


def test_judge_failure_and_failed_turn_are_counted(server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server.latency = 0.0
    server.reply = make_reply(unjudgeable=UNJUDGEABLE)
    # mmrc-002's fourth turn fails (no retries): its replay stops and its questions stay unanswered.
    server.inject(500, times=1, match="I only have 2 eggs at home")
    rc = run_in_process(server, tmp_path, monkeypatch, "--model-args", "max_retries=0")
    assert rc == 1  # failures make the run fail unless --allow-failures
    results, samples = outputs(tmp_path)
    r, problems = results["results"]["mmrc"], results["problems"]["mmrc"]
    assert problems == {"request_failures": 1, "unparsed": 0, "judge_failures": 1}
    assert not {"judge_failures", "request_failures", "n_questions"} & set(r)  # counters are not metrics
    counts = results["n-samples"]["mmrc"]
    # The judge was asked once and re-asked three times for the question it never scored.
    asked = [c for c in by_kind(server, "judge") if UNJUDGEABLE in last_user_text(c.body)]
    assert len(asked) == 4
    failed = samples["mmrc-002"]
    assert len(failed["failures"]) == 1 and failed["failures"][0].startswith("turn 4: ")
    assert failed["responses"][-1] is None and len(failed["responses"]) == 4
    assert all(q["response"] is None and q["verdict"] is None for q in failed["extra"]["questions"])
    assert not [c for c in by_kind(server, "probe") if conversation_of(c)["id"] == "mmrc-002"]
    n_002 = len(RECORDS[1]["questions"])
    assert counts["n_questions"] == N_QUESTIONS and counts["unanswered_questions"] == n_002
    assert counts["scored_questions"] == N_QUESTIONS - n_002 - 1
    ar = [q for q in samples["mmrc-001"]["extra"]["questions"] if q["ability"] == "AR"][0]
    assert ar["judge_failed"] and ar["verdict"] is None and ar["judge_error"] == "judge reply could not be parsed"


def test_replay_of_a_notetaking_run_reproduces_it(server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """replay: answers the note taker from the recorded notes, so a note-taking run is rescored
    without any model or note-taker call (the judge's replies come from the cache)."""
    assert run_in_process(server, tmp_path, monkeypatch, "--strategy", "notetaking") == 0
    first, first_samples = outputs(tmp_path)
    recorded = tmp_path / "recorded"
    (tmp_path / "out").rename(recorded)
    server.reset()
    assert run_in_process(server, tmp_path, monkeypatch, "--strategy", "notetaking", "--model", f"replay:{recorded}") == 0
    again, again_samples = outputs(tmp_path)
    assert chat_calls(server) == []
    assert again["results"] == first["results"]
    for doc_id, sample in first_samples.items():
        assert again_samples[doc_id]["extra"]["notes"] == sample["extra"]["notes"]
        assert again_samples[doc_id]["responses"] == sample["responses"]
