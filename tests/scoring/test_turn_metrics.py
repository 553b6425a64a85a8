"""Per-turn metrics on ``multi_turn``: a YAML-only task scored by chrF and exact match against
each turn's reference, with no judge and beside a judge, run through the loopback chat server.
Every expected number is computed by hand below (chrF from sacrebleu's definition)."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from mmtasks.cli import main
from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text

# Two dialogues; the model's reply to each question is scripted; "Say pq" fails (HTTP 400).
DIALOGUES = {
    "d1": [("Say abc", "abc", "abc"), ("Say abd", "abd", "abc"), ("Say pq", "pq", None)],
    "d2": [("Say abcd", "abcd", "a b"), ("Say xyz", "xyz", "ab")],
}

# chrF (sacrebleu defaults: character n-grams 1-6, whitespace removed, beta 2; the precisions and
# recalls are averaged over the orders where both texts have n-grams, then F = 5PR / (4P + R)):
# - "abc" vs "abc": identical -> 100
# - "abc" vs "abd": order 1: 2 of 3 match (P = R = 2/3); order 2: ab of {ab, bc} vs {ab, bd}
#   (P = R = 1/2); order 3: abc vs abd (P = R = 0); orders 4-6 have no n-grams.
#   P = R = (2/3 + 1/2 + 0) / 3 = 7/18 -> F = 7/18 -> 700/18
# - "a b" -> "ab" vs "abcd": order 1: P = 2/2, R = 2/4; order 2: P = 1/1, R = 1/3; order 3: the
#   answer has none. P = 1, R = (1/2 + 1/3) / 2 = 5/12 -> F = 5 * 5/12 / (4 + 5/12) = 25/53 -> 2500/53
# - "ab" vs "xyz": no character in common -> 0
CHRF = {("d1", 1): Fraction(100), ("d1", 2): Fraction(700, 18), ("d2", 1): Fraction(2500, 53), ("d2", 2): Fraction(0)}
EXACT = {("d1", 1): 100, ("d1", 2): 0, ("d2", 1): 0, ("d2", 2): 0}
#: the judge stub's score of a turn: the length of its reference
JUDGE = {("d1", 1): 3, ("d1", 2): 3, ("d2", 1): 4, ("d2", 2): 3}

TASK = """\
task: turn_metrics
dataset:
  local: {{dir: dialogues, file: dialogues.jsonl}}
  images_field: null
protocol: multi_turn
{judge}metrics:
  - {{name: chrf, function: chrf, primary: true}}
  - {{name: em, function: exact_match}}
{judge_metric}"""

JUDGE_BLOCK = """\
judge:
  parser: json_object
  parser_args: {required: [score]}
  metrics: [score]
  retries: 0
  prompt: "QUESTION {{ question }} REFERENCE {{ reference }} ANSWER {{ answer }}"
"""


def write(tmp_path: Path, judged: bool, extra_metric: str = "") -> Path:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    text = TASK.format(judge=JUDGE_BLOCK if judged else "",
                       judge_metric="  - {name: score}\n" if judged else "") + extra_metric
    (tasks / "turn_metrics.yaml").write_text(text, encoding="utf-8")
    data = tmp_path / "data" / "dialogues"
    data.mkdir(parents=True)
    lines = []
    for doc, turns in DIALOGUES.items():
        conv = []
        for question, reference, _ in turns:
            conv += [{"from": "user", "value": question}, {"from": "assistant", "value": reference}]
        lines.append(json.dumps({"id": doc, "conversations": conv}) + "\n")
    (data / "dialogues.jsonl").write_text("".join(lines), encoding="utf-8")
    return tasks


def replies(body: dict) -> str:
    text = last_user_text(body)
    if body["model"] == "judge-model":
        reference = re.search(r"REFERENCE (\w+)", text)
        return json.dumps({"score": len(reference.group(1)) if reference else 0})
    return {q: r for turns in DIALOGUES.values() for q, _, r in turns}.get(text, "pong")  # "ping": the start-up probe


def run(tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch, judged: bool) -> tuple[int, dict]:
    tasks = write(tmp_path, judged)
    server.reply = replies
    server.inject(400, times=1, match="Say pq")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    out = tmp_path / "out"
    args = ["--tasks", "turn_metrics", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data"),
            "--model", "openai:mm-model", "--model-args", "max_retries=0", "--output-path", str(out),
            "--no-cache", "--no-progress"]
    if judged:
        args += ["--judge", "openai:judge-model", "--judge-args", "max_retries=0"]
    code = main(args)
    return code, json.loads((out / "results.json").read_text(encoding="utf-8"))


def expected(values: dict[tuple[str, int], Fraction | int]) -> dict[str, float]:
    """Headline (micro over the 4 scored turns), macro (per dialogue, then over dialogues), and
    _all (the failed 5th turn counted as 0)."""
    by_doc = {d: [Fraction(v) for (doc, _), v in values.items() if doc == d] for d in DIALOGUES}
    total = sum(Fraction(v) for v in values.values())
    return {"micro": float(total / 4), "macro": float(sum(sum(v) / len(v) for v in by_doc.values()) / 2),
            "all": float(total / 5)}


@pytest.mark.parametrize("judged", [False, True], ids=["no_judge", "with_judge"])
def test_per_turn_chrf_and_exact_match(tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch,
                                       judged: bool) -> None:
    code, res = run(tmp_path, chat_server, monkeypatch, judged)
    assert code == 1  # the failed turn is a counted problem
    r = res["results"]["turn_metrics"]
    chrf, em = expected(CHRF), expected(EXACT)
    # hand-computed: chrF micro = (100 + 700/18 + 2500/53 + 0) / 4 = 46.5147...
    assert r["chrf"] == pytest.approx(46.51467, abs=1e-4)
    assert (r["chrf"], r["chrf_micro"], r["chrf_macro"], r["chrf_all"]) == pytest.approx(
        (chrf["micro"], chrf["micro"], chrf["macro"], chrf["all"]))
    assert (em["micro"], em["macro"], em["all"]) == (25.0, 25.0, 20.0)
    assert (r["em"], r["em_macro"], r["em_all"]) == pytest.approx((em["micro"], em["macro"], em["all"]))
    assert res["coverage"]["turn_metrics"] == {"unit": "turns", "scored": 4, "total": 5, "percent": 80.0,
                                               "unscored": {"request_failure": 1}}
    assert res["problems"]["turn_metrics"]["request_failures"] == 1
    assert res["configs"]["turn_metrics"]["aggregator"] == "per_turn_mean"
    turn_rows = res["breakdowns"]["turn_metrics"]["turn"]
    assert turn_rows["1"]["em"] == pytest.approx(50.0) and turn_rows["1"]["n"] == 2
    assert turn_rows["3"] == {"chrf": None, "em": None, **({"score": None} if judged else {}), "n": 0}
    samples = {json.loads(line)["doc_id"]: json.loads(line)
               for line in (tmp_path / "out" / "samples" / "turn_metrics.jsonl").read_text().splitlines()}
    per_turn = {(d, t["turn"]): t.get("metrics") for d, s in samples.items() for t in s["extra"]["turns"]}
    for key, value in CHRF.items():
        assert per_turn[key]["chrf"] == pytest.approx(float(value)) and per_turn[key]["em"] == EXACT[key]
    assert per_turn[("d1", 3)] is None  # the failed turn is never scored
    if judged:
        judge = expected(JUDGE)
        assert (r["score"], r["score_macro"], r["score_all"]) == pytest.approx((3.25, judge["macro"], 13 / 5))
    else:
        assert "score" not in r and not any(c.body["model"] == "judge-model" for c in chat_server.log if c.body)


@pytest.mark.parametrize(("extra", "field", "message"), [
    ("  - {name: acc}\n", "metrics[2].name", "'acc' is not one that aggregator 'per_turn_mean' reports"),
    ("  - {name: f, function: no_such_metric}\n", "metrics[2].function", "no_such_metric"),
    ("  - {name: m, function: chrf, aggregation: corpus}\n", "metrics[2].aggregation", "needs an evaluate: metric"),
    ("  - {name: m, function: chrf, key: score}\n", "metrics[2].key", "applies to evaluate: metrics only"),
])
def test_a_metric_the_protocol_cannot_produce_is_a_load_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               extra: str, field: str, message: str) -> None:
    tasks = write(tmp_path, judged=False, extra_metric=extra)
    code = main(["--tasks", "turn_metrics", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data"),
                 "--model", "random", "--no-cache", "--no-progress", "--output-path", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "turn_metrics.yaml" in err and f"field '{field}'" in err and message in err
    assert not (tmp_path / "out" / "results.json").exists()


def test_a_judge_field_without_a_judge_run_leaves_its_all_unknown(tmp_path: Path, chat_server: ChatServer,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A judged task run with --predict-only: chrF is scored, the judge's field has no value and
    its _all is None (nothing to count as 0), never 0.0."""
    tasks = write(tmp_path, judged=True)
    chat_server.reply = lambda body: "pq" if last_user_text(body) == "Say pq" else replies(body)
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    out = tmp_path / "out"
    code = main(["--tasks", "turn_metrics", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data"),
                 "--model", "openai:mm-model", "--model-args", "max_retries=0", "--output-path", str(out),
                 "--no-cache", "--no-progress", "--predict-only", "--limit", "1"])
    assert code == 0
    r = json.loads((out / "results.json").read_text())["results"]["turn_metrics"]
    assert r["score"] is None and r["score_all"] is None
    # d1 only: chrF over its 3 answered turns ("Say pq" answered this time, "pq" == "pq": 100)
    assert r["chrf"] == pytest.approx(float((100 + Fraction(700, 18) + 100) / 3))


def test_random_guesses_on_turns_are_counted(tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A choice parser with ``fallback: random`` on multi_turn: the guessed turn is scored (its
    letter is one of the document's) and counted as ``guessed`` in problems and coverage."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "turn_choice.yaml").write_text("""\
task: turn_choice
dataset: {local: {dir: dialogues, file: dialogues.jsonl}, images_field: null}
protocol: multi_turn
answer: {parser: choice, parser_args: {letters: [A, B], rule: mmmu, fallback: random}}
metrics: [{name: em, function: exact_match}]
""")
    (tmp_path / "data" / "dialogues").mkdir(parents=True)
    conv = [{"from": "user", "value": "First: A or B?"}, {"from": "assistant", "value": "A"},
            {"from": "user", "value": "Second: A or B?"}, {"from": "assistant", "value": "B"}]
    (tmp_path / "data" / "dialogues" / "dialogues.jsonl").write_text(json.dumps({"id": "c1", "conversations": conv}) + "\n")
    chat_server.reply = lambda body: {"First: A or B?": "(A)", "Second: A or B?": "no idea"}.get(last_user_text(body), "pong")
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    out = tmp_path / "out"
    main(["--tasks", "turn_choice", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data"),
          "--model", "openai:mm-model", "--model-args", "max_retries=0", "--output-path", str(out), "--no-cache", "--no-progress"])
    res = json.loads((out / "results.json").read_text())
    assert res["problems"]["turn_choice"]["guessed"] == 1
    assert res["coverage"]["turn_choice"]["guessed"] == 1 and res["coverage"]["turn_choice"]["scored"] == 2
    turns = json.loads((out / "samples" / "turn_choice.jsonl").read_text().splitlines()[0])["extra"]["turns"]
    assert turns[0]["parsed"] == "A" and turns[0]["metrics"] == {"em": 100.0} and not turns[0].get("guessed")
    assert turns[1]["guessed"] is True and turns[1]["parsed"] in ("A", "B")
    assert turns[1]["metrics"]["em"] == (100.0 if turns[1]["parsed"] == "B" else 0.0)
