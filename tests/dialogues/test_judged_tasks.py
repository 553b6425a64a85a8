"""Judged tasks outside the built-in benchmarks, run end to end against the loopback server:
``single_turn`` with a ``judge:`` (verdict fields -> metrics on the YAML's scale), a
judge that only returns garbage (judge failures counted once, generically, exit 1) for
``single_turn`` and for ``multi_turn`` with its default aggregator (``per_turn_mean``), and the load-time
checks of ``answer.parser_args`` and of the metrics a judged task declares."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mmtasks.cli import main
from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text

QUESTIONS = [("q1", "What colour is the sky?", "blue"), ("q2", "How many legs has a cat?", "four"),
             ("q3", "What is frozen water?", "ice")]

SINGLE = """\
task: judged_qa
dataset:
  local: {dir: qa, file: qa.jsonl}
  images_field: null
prompt: {user: "{{ doc.question }}"}
target: "{{ doc.answer }}"
answer: {parser: text}
judge:
  parser: json_object
  parser_args: {required: [score], ranges: {score: [1, 10]}}
  metrics: [score]
  report_factor: 10
  retries: 1
  prompt: "QUESTION {{ doc.question }} REFERENCE {{ reference }} ANSWER {{ answer }}"
metrics:
  - {name: score, primary: true}
"""

MULTI = """\
task: judged_dialogue
dataset:
  local: {dir: dialogues, file: dialogues.jsonl}
  images_field: null
protocol: multi_turn
judge:
  parser: json_object
  parser_args: {required: [score]}
  metrics: [score]
  retries: 1
  prompt: "QUESTION {{ question }} REFERENCE {{ reference }} ANSWER {{ answer }}"
metrics:
  - {name: score}
"""


def write_tasks(tmp_path: Path, **replace: str) -> Path:
    tasks = tmp_path / "tasks"
    tasks.mkdir(parents=True)
    single = SINGLE
    for old, new in replace.items():
        single = single.replace(old, new)
    (tasks / "judged_qa.yaml").write_text(single, encoding="utf-8")
    (tasks / "judged_dialogue.yaml").write_text(MULTI, encoding="utf-8")
    (tmp_path / "data" / "qa").mkdir(parents=True)
    (tmp_path / "data" / "qa" / "qa.jsonl").write_text(
        "".join(json.dumps({"id": i, "question": q, "answer": a}) + "\n" for i, q, a in QUESTIONS), encoding="utf-8")
    (tmp_path / "data" / "dialogues").mkdir(parents=True)
    conv = [{"from": "user", "value": "Hello?"}, {"from": "assistant", "value": "Hi."},
            {"from": "user", "value": "Name a fruit."}, {"from": "assistant", "value": "Apple."}]
    (tmp_path / "data" / "dialogues" / "dialogues.jsonl").write_text(
        json.dumps({"id": "d1", "conversations": conv}) + "\n", encoding="utf-8")
    return tasks


def judge_reply(good: bool):
    """The model echoes; the judge gives {"score": <length of the answer's reference> } or garbage."""

    def reply(body: dict) -> str:
        text = last_user_text(body)
        if body["model"] != "judge-model":
            return f"my answer to: {text}"
        if not good:
            return "I would rather not give a score."
        reference = re.search(r"REFERENCE (\w+)", text)
        return f'Fine. {{"score": {len(reference.group(1)) if reference else 1}}}'

    return reply


def run(tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch, task: str, good: bool) -> tuple[int, dict]:
    server.models = ("test-model", "judge-model")
    server.reply = judge_reply(good)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    out = tmp_path / "out"
    code = main(["--tasks", task, "--include-path", str(tmp_path / "tasks"), "--data-dir", str(tmp_path / "data"),
                 "--model", "openai:test-model", "--judge", "openai:judge-model", "--output-path", str(out),
                 "--no-cache", "--no-progress"])
    return code, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_single_turn_judge_scores_on_the_yaml_scale(tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tasks(tmp_path)
    code, res = run(tmp_path, chat_server, monkeypatch, "judged_qa", good=True)
    assert code == 0
    # scores 4 ("blue"), 4 ("four"), 3 ("ice"), x10 (report_factor): (40 + 40 + 30) / 3
    assert res["results"]["judged_qa"]["score"] == pytest.approx(110 / 3)
    assert res["problems"]["judged_qa"] == {"request_failures": 0, "unparsed": 0, "judge_failures": 0}
    judged = [c for c in chat_server.log if c.body and c.body["model"] == "judge-model"]
    assert len(judged) == 3 and all("ANSWER my answer to: " in last_user_text(c.body) for c in judged)
    sample = json.loads((tmp_path / "out" / "samples" / "judged_qa.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert sample["extra"]["verdict"] == {"score": 4} and sample["metrics"] == {"score": 40.0}


@pytest.mark.parametrize("task", ["judged_qa", "judged_dialogue"])
def test_a_garbage_judge_is_counted_and_fails_the_run(tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch, task: str) -> None:
    write_tasks(tmp_path)
    code, res = run(tmp_path, chat_server, monkeypatch, task, good=False)
    assert code == 1
    # every judge call was asked twice (retries: 1) and gave no verdict: 3 answers, or 2 turns
    expected = 3 if task == "judged_qa" else 2
    assert res["problems"][task] == {"request_failures": 0, "unparsed": 0, "judge_failures": expected}
    assert sum(1 for c in chat_server.log if c.body and c.body["model"] == "judge-model") == 2 * expected
    assert res["results"][task]["score"] is None  # never scored as if it were a verdict
    # multi_turn's default aggregator (per_turn_mean) counts turns
    unit, n = ("documents", 3) if task == "judged_qa" else ("turns", 2)
    assert res["coverage"][task] == {"unit": unit, "scored": 0, "total": n, "percent": 0.0,
                                     "unscored": {"judge_failure": n}}
    assert res["results"][task]["score_all"] == 0.0  # every judged unit failed: counted as 0


def test_load_time_checks_of_judged_tasks(tmp_path: Path, chat_server: ChatServer, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--tasks", "judged_qa", "--model", "openai:test-model", "--judge", "openai:judge-model", "--no-cache", "--no-progress"]
    cases = [
        ({"answer: {parser: text}": "answer: {parser: text, parser_args: {strip: true}}"},
         "answer.parser_args.strip", "takes no arguments"),
        ({"parser_args: {required: [score], ranges": "parser_args: {requird: [score], ranges"},
         "judge.parser_args.requird", "unknown key"),
        ({"  metrics: [score]\n": ""}, "metrics[0].name", "'score' is not one that aggregator 'per_sample_mean' reports"),
    ]
    for k, (replace, field, message) in enumerate(cases):
        folder = tmp_path / str(k)
        write_tasks(folder, **replace)
        code = main([*base, "--include-path", str(folder / "tasks"), "--data-dir", str(folder / "data")])
        err = capsys.readouterr().err
        assert code == 2 and field in err and message in err, err
    assert chat_server.calls == 0  # checked before any request


def test_results_hold_the_declared_metrics_only(tmp_path: Path) -> None:
    """mmrc_ar declares ar, rp and exact_match: those are reported (no null metrics of the other
    abilities), counters go to problems and n-samples."""
    sample = Path(__file__).resolve().parents[2] / "data" / "sample"
    out = tmp_path / "out"
    assert main(["--tasks", "mmrc_ar", "--model", "random", "--judge", "random", "--data-dir", str(sample),
                 "--output-path", str(out), "--no-cache", "--no-progress"]) == 0
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    reported = res["results"]["mmrc_ar"]
    assert set(reported) == {"alias", "ar", "ar_stderr", "ar_all", "rp", "rp_stderr", "rp_all",
                                "exact_match", "exact_match_stderr", "exact_match_all"}
    assert reported["ar"] is not None and reported["rp"] is not None  # (the sample's AR questions are all open: no exact match)
    assert res["problems"]["mmrc_ar"] == {"request_failures": 0, "unparsed": 0, "judge_failures": 0}
    assert res["n-samples"]["mmrc_ar"]["n_questions"] == res["n-samples"]["mmrc_ar"]["scored_questions"] > 0
