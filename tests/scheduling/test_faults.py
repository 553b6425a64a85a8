"""Failures are data, not crashes: a run of MMDU (judged) and a RealBench task against a
loopback server that answers some calls with 429, 500, hangs past the client's timeout,
malformed bodies, dropped connections and unparseable judge replies.

Shown: retries with backoff (Retry-After and the timeout are waited out), each request
sent exactly as often as its faults require, failures counted per task in results.json
and visible in the samples, no sample lost or duplicated, exit status 1 with a summary
unless --allow-failures, and a second run that sends only what had failed.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text
from tests.cli_process import SAMPLE, cli_env, read_samples, run_cli
from tests.mmdu_data import judge_reply, scores
from tests.realbench_oracle import UNSURE, RealBenchOracle, stable_hash

pytestmark = pytest.mark.slow

MODEL, JUDGE = "test-model", "judge-model"
MAX_RETRIES = 2  # three attempts per request
TIMEOUT = 0.5
RETRY_AFTER = 0.3

# MMDU sample questions (the start of a turn's user text) -> the fault they meet
Q_429 = "I'm preparing a short lesson"            # mmdu_sample_01 turn 1: 429 once, Retry-After 0.3 s
Q_500_TWICE = "Describe both imag"                 # mmdu_sample_02 turn 1: 500 twice
Q_HANG = "We are at the gate of a park"            # mmdu_sample_03 turn 1: no answer within the timeout, once
Q_GARBAGE = "These are the pric"                   # mmdu_sample_04 turn 1: a body that is not JSON, once
Q_FAILS = "What is the total area of all rooms"    # mmdu_sample_05 turn 2: 500 on every attempt
J_UNPARSEABLE = "Two weeks later"                  # mmdu_sample_06 turn 2: the judge never gives scores
J_UNPARSEABLE_ONCE = "average growth per week"     # mmdu_sample_06 turn 3: the judge gives scores on the re-ask
J_GARBAGE_BODY = "Does Image3 contain"             # mmdu_sample_02 turn 3: judge call answered with a malformed body, once
J_FAILS = "Here is the chart from my first slide"  # mmdu_sample_01 turn 2: judge call gets 500 on every attempt
MARKER = "<ImageHere>"


def _ranking_text(doc_id: str) -> str:
    lines = (SAMPLE / "realbench" / "ranking_easy.jsonl").read_text(encoding="utf-8").splitlines()
    return next(r["text"] for r in map(json.loads, lines) if r["id"] == doc_id)


# RealBench ranking_easy documents (their text) -> fault
R_FAILS = _ranking_text("rank-e-003")        # 500 on every attempt
R_UNPARSEABLE = _ranking_text("rank-e-002")  # never a letter
R_DISCONNECT = _ranking_text("rank-e-001")   # connection dropped once


def question_of(text: str, questions: list[str]) -> str:
    """The MMDU question a request is about: a model turn carries it without its image
    markers (the images are separate parts), a judge request verbatim."""
    return next(q for q in questions if q in text or q.replace(MARKER, "") in text)


def full(start: str, questions: list[str]) -> str:
    """The MMDU question containing ``start``."""
    (q,) = [q for q in questions if start in q]
    return q


class ScriptedServer:
    """Replies: RealBench from the oracle; MMDU turns "Answer: <question start>"; the judge
    scores derived from the question (or no scores, for the J_UNPARSEABLE* turns)."""

    def __init__(self) -> None:
        self.oracle = RealBenchOracle(unsure_every=1 << 40)  # right or wrong, never unsure
        self.judge_asked: Counter[str] = Counter()

    def __call__(self, body: dict) -> str:
        text = last_user_text(body)
        if body["model"] == JUDGE:
            if J_UNPARSEABLE in text:
                return "I am unable to rate this answer."
            if J_UNPARSEABLE_ONCE in text:
                self.judge_asked[J_UNPARSEABLE_ONCE] += 1
                if self.judge_asked[J_UNPARSEABLE_ONCE] == 1:
                    return "Scores: {'Creativity': 7, 'Richness':"
            h = stable_hash(text.split("[The Start of Assistant")[0])
            return judge_reply(scores(*(3 + (h >> k) % 7 for k in range(7))))
        if "image-text note" in text:
            return UNSURE if R_UNPARSEABLE in text else self.oracle(body)
        return "Answer: " + " ".join(text.split()[:12])


def mmdu_questions() -> list[str]:
    records = json.loads((SAMPLE / "mmdu" / "benchmark.json").read_text(encoding="utf-8"))
    return [c["value"] for r in records for c in r["conversations"][::2]]


def inject_faults(server: ChatServer) -> None:
    def model_turn(start: str):
        return lambda b: b["model"] == MODEL and start in last_user_text(b)

    def judge_of(start: str):
        return lambda b: b["model"] == JUDGE and start in last_user_text(b)

    server.inject(429, 1, match=model_turn(Q_429), retry_after=RETRY_AFTER)
    server.inject(500, 2, match=model_turn(Q_500_TWICE))
    server.inject("hang", 1, match=model_turn(Q_HANG), hang_seconds=30)
    server.inject("garbage", 1, match=model_turn(Q_GARBAGE))
    server.inject(500, MAX_RETRIES + 1, match=model_turn(Q_FAILS))
    server.inject("garbage", 1, match=judge_of(J_GARBAGE_BODY))
    server.inject(500, MAX_RETRIES + 1, match=judge_of(J_FAILS))
    server.inject(500, MAX_RETRIES + 1, match=R_FAILS)
    server.inject("disconnect", 1, match=R_DISCONNECT)


def args(out: Path, cache: Path, *extra: str) -> list[str]:
    fast = f"max_retries={MAX_RETRIES},timeout={TIMEOUT},concurrency=8"
    return ["--tasks", "mmdu,realbench_ranking_easy", "--model", f"openai:{MODEL}", "--model-args", fast,
            "--judge", f"openai:{JUDGE}", "--judge-args", fast, "--data-dir", str(SAMPLE),
            "--output-path", str(out), "--cache-dir", str(cache), "--no-progress", *extra]


def chat_calls(server: ChatServer, since: int = 0) -> list:
    return [c for c in server.log[since:] if c.path.endswith("/chat/completions")]


def test_faults_are_retried_counted_and_resent_only_when_failed(tmp_path: Path) -> None:
    questions = mmdu_questions()
    with ChatServer(reply=ScriptedServer(), models=(MODEL, JUDGE)) as server:
        inject_faults(server)
        env = cli_env(server.base_url)
        run = run_cli(args(tmp_path / "out", tmp_path / "cache"), env, tmp_path / "logs")
        calls = chat_calls(server)

        # -- exit status and the summary
        assert run.process.returncode == 1, run.stderr
        assert "Traceback" not in run.stderr
        assert "Some requests did not produce a scored answer" in run.stderr
        assert "mmdu: request_failures=1, judge_failures=2" in run.stderr
        assert "realbench_ranking_easy: request_failures=1, unparsed=1" in run.stderr
        assert "pass --allow-failures" in run.stderr

        # -- each request sent exactly as often as its faults require (no duplicates, no give-up too early)
        model_turns = Counter(question_of(c.prompt, questions) for c in calls if c.body["model"] == MODEL and "image-text note" not in c.prompt)
        judged = Counter(question_of(c.prompt, questions) for c in calls if c.body["model"] == JUDGE)
        expected_model = Counter({q: 1 for q in questions})
        for start, n in ((Q_429, 2), (Q_500_TWICE, 3), (Q_HANG, 2), (Q_GARBAGE, 2), (Q_FAILS, 3)):
            expected_model[full(start, questions)] = n
        assert model_turns == expected_model
        expected_judge = Counter({q: 1 for q in questions if Q_FAILS not in q})  # a failed turn is not judged
        for start, n in ((J_UNPARSEABLE, 4), (J_UNPARSEABLE_ONCE, 2), (J_GARBAGE_BODY, 2), (J_FAILS, 3)):
            expected_judge[full(start, questions)] = n  # judge retries: 3 re-asks after the first
        assert judged == expected_judge
        ranking = Counter(c.prompt for c in calls if "image-text note" in c.prompt)
        by_doc = {doc: sum(n for p, n in ranking.items() if doc in p) for doc in (R_FAILS, R_UNPARSEABLE, R_DISCONNECT)}
        assert by_doc == {R_FAILS: 3, R_UNPARSEABLE: 6, R_DISCONNECT: 2}  # 6: the first ask and 5 re-asks

        # -- backoff: the client waited for Retry-After and for its timeout before trying again
        def gap(start: str, model: str) -> float:
            first, second = [c for c in calls if c.body["model"] == model and start in c.prompt][:2]
            return second.started - (first.finished if first.status is not None else first.started)

        assert gap(Q_429, MODEL) >= RETRY_AFTER - 0.02
        assert gap(Q_HANG, MODEL) >= TIMEOUT - 0.02
        hung = next(c for c in calls if Q_HANG in c.prompt)
        assert hung.fault == "hang" and hung.status is None

        # -- counted per task in results.json
        res = json.loads((tmp_path / "out" / "results.json").read_text())
        assert res["problems"] == {"mmdu": {"request_failures": 1, "unparsed": 0, "judge_failures": 2},
                                   "realbench_ranking_easy": {"request_failures": 1, "unparsed": 1, "judge_failures": 0}}
        assert res["n-samples"]["mmdu"]["judged_turns"] == len(questions) - 3
        rb = res["results"]["realbench_ranking_easy"]
        assert not {"failures", "unparsed"} & set(rb)  # counters live in problems only
        assert rb["acc_all"] == pytest.approx(rb["acc"] * 8 / 9)  # the failed document counts as 0 only in _all
        assert res["run_stats"]["failed"] == {"model": 2, "judge": 1}

        # -- visible in the samples; every document exactly once, in order
        mmdu = read_samples(tmp_path / "out", "mmdu")
        assert [s["doc_id"] for s in mmdu] == [f"mmdu_sample_{i:02d}" for i in range(1, 7)]
        turns = {t["question"]: t for s in mmdu for t in s["extra"]["turns"]}
        assert len(turns) == len(questions) and sum(len(s["responses"]) for s in mmdu) == len(questions)
        failed_turn = turns[full(Q_FAILS, questions)]
        assert failed_turn["status"] == "request_failure" and failed_turn["response"] is None
        assert "failed after 3 attempts: HTTP 500" in failed_turn["error"]
        assert turns[full(J_UNPARSEABLE, questions)]["judge_error"] == "judge reply could not be parsed"
        assert "HTTP 500" in turns[full(J_FAILS, questions)]["judge_error"]
        assert turns[full(J_UNPARSEABLE_ONCE, questions)]["status"] == "judged"
        statuses = Counter(t["status"] for t in turns.values())
        assert statuses == {"judged": len(questions) - 3, "judge_failure": 2, "request_failure": 1}
        judge_entries = [j for s in mmdu for j in s["judge"]]
        assert len(judge_entries) == len(questions) - 1  # one per answered turn
        sample6 = mmdu[5]
        (never,) = [j for j in sample6["judge"] if j["turn"] == 2]
        assert never["fields"] is None and len(never["replies"]) == 4
        rows = read_samples(tmp_path / "out", "realbench_ranking_easy")
        assert [r["doc_id"] for r in rows] == [f"rank-e-{i:03d}" for i in range(1, 10)]
        failed_row = rows[2]
        assert failed_row["responses"] == [None] and "HTTP 500" in failed_row["failures"][0]
        assert failed_row["metrics"] == {"acc": None}
        assert rows[1]["unparsed"] and rows[1]["responses"] == [UNSURE] * 6

        # -- the same command again: only what had failed is sent (failures are not cached)
        succeeded = {json.dumps(c.body, sort_keys=True) for c in calls if c.status == 200 and c.fault is None}
        mark = len(server.log)
        again = run_cli(args(tmp_path / "out", tmp_path / "cache", "--allow-failures"), env, tmp_path / "logs")
        assert again.process.returncode == 0, again.stderr
        assert "mmdu: judge_failures=1" in again.stderr and "accepted (--allow-failures)" in again.stderr  # reported, accepted
        assert "exit status 1" not in again.stderr
        resent = chat_calls(server, mark)
        assert not [c for c in resent if json.dumps(c.body, sort_keys=True) in succeeded]
        sent_questions = sorted((c.body["model"], question_of(c.prompt, questions) if "image-text note" not in c.prompt else "rank-e-003")
                                for c in resent)
        q5 = [q for q in questions if q in [t["question"] for t in mmdu[4]["extra"]["turns"]]]
        # the failed turn, and the later turns of its dialogue (their history changed); judged: the
        # failed turn now answered and the judge call that had failed; the later turns' judge calls
        # are unchanged (same question, reference and answer) and come from the cache
        assert sent_questions == sorted([(MODEL, q5[1]), (MODEL, q5[2]), (MODEL, q5[3]), (MODEL, "rank-e-003"),
                                         (JUDGE, q5[1]), (JUDGE, full(J_FAILS, questions))])
        res2 = json.loads((tmp_path / "out" / "results.json").read_text())
        assert res2["problems"]["mmdu"] == {"request_failures": 0, "unparsed": 0, "judge_failures": 1}  # the unparseable judge stays
        assert res2["problems"]["realbench_ranking_easy"] == {"request_failures": 0, "unparsed": 1, "judge_failures": 0}
