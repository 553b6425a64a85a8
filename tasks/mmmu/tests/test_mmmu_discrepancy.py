"""The lmms-eval / VLMEvalKit gap on MMMU val, reproduced by the variants on replies built to exercise
its three causes.

lmms-eval's docs/advanced/mmmu-eval-discrepancy.md (commit 75571cfe) measures Qwen3-VL on MMMU val
(900 questions) at 50.67 in lmms-eval and 54.78 in VLMEvalKit, and sorts the 39 questions judged
differently: 19 VLMEvalKit false positives (FP-A: a lone option letter near the end, FP-B: an option
text, FP-C: the GPT judge taking a wrong open answer for the standard one), 10 GPT-judge recoveries
(lmms-eval's rule finds nothing and guesses wrong, the judge reads the right option), 2 open
questions right through the "answer vs Other Answers" conversion, 2 random divergences and 6
questions lmms-eval's rule reads right and VLMEvalKit does not.

Here: 900 questions in one subject, replayed, the matcher a scripted loopback server (VLMEvalKit's
judge): 448 questions every rule reads right ("B" for gold B), 413 every rule reads wrong (373
multiple choice answered with another letter, 40 open questions answered "I cannot tell", which the
judge puts under "Other Answers"), and the 39 differential questions in the doc's counts (the FP
split 7/6/6 over FP-A/FP-B/FP-C is ours: the doc gives none). Expected, by hand:

- ``lmms_eval``: 448 + 2 random divergences (its guess right) + 6 = 456 -> 50.67 (the doc's figure);
- ``vlmevalkit`` with the judge: 448 + 19 + 10 + 2 = 479 -> 53.22; without it (exact matching, "Z"):
  448 + FP-A 7 + FP-B 6 + 2 open = 463 -> 51.44;
- the gap: +23 questions, +2.56 points, VLMEvalKit higher. The doc's own figures differ by 37 questions
  (4.11 points): its table accounts for 31 - 8 = 23 of them.

The same replies go through the peers' code verbatim (lmms-eval's mmmu_process_results and
evaluate_mmmu, VLMEvalKit's mcq_vanilla_eval with a judge answering as the loopback does): their
verdicts equal the variants', question by question.
"""

from __future__ import annotations

import ast
import json
import random
from pathlib import Path
from typing import Any

import pytest
from mmmu_peers import ScriptedJudge, lmms_eval_verdicts, load, vlmevalkit_hits

OPTIONS = ["a circle", "a square", "a triangle", "a star"]
LETTERS = "ABCD"
SEED_LMMS_EVAL, SEED_AUTHORS = 0, 42


def draw(seed: int, doc_id: str) -> str:
    """The variants' guess for a document (lmms-eval: seed 0; the authors: 42)."""
    return random.Random(f"{seed}:{doc_id}").choice(LETTERS)


def build() -> tuple[list[dict[str, Any]], list[str], list[str], dict[str, str]]:
    """The records, the replies, each question's case, and the judge's answer to each reply it is asked about."""
    docs: list[dict[str, Any]] = []
    replies: list[str] = []
    cases: list[str] = []
    judge: dict[str, str] = {}

    def add(case: str, reply: str, *, gold: str | None = None, open_gold: str | None = None, judged: str | None = None) -> None:
        k = len(docs) + 1
        doc_id = f"validation_Art_{k}"
        if open_gold is not None:
            doc = {"question": f"Question {k}: how many sides?", "options": "[]", "answer": open_gold, "question_type": "open"}
        else:
            doc = {"question": f"Question {k}: which shape is shown?", "options": str(OPTIONS), "answer": gold,
                   "question_type": "multiple-choice"}
        docs.append({"id": doc_id, **doc, "explanation": "", "img_type": "[]", "topic_difficulty": "Easy",
                     "subfield": "Drawing", **{f"image_{i}": None for i in range(1, 8)}})
        replies.append(reply)
        cases.append(case)
        if judged is not None:
            judge[reply] = judged

    def doc_id() -> str:
        return f"validation_Art_{len(docs) + 1}"

    for k in range(448):
        gold = LETTERS[k % 4]
        add("both right", gold, gold=gold)
    for k in range(373):
        gold = LETTERS[k % 4]
        add("both wrong", LETTERS[(k + 1) % 4], gold=gold)
    for k in range(40):
        add("both wrong (open)", "I cannot tell", open_gold=str(10 + k), judged="B")
    for k in range(7):   # FP-A: the model rejects B/C/D, VLMEvalKit reads the lone letter; lmms-eval the "A " of "DNA "
        gold = "BCD"[k % 3]
        add("FP-A", f"Not {gold}, since DNA replicates", gold=gold, judged=gold)
    for k in range(6):   # FP-B: the model rejects an option, VLMEvalKit reads its text; lmms-eval the "A " of "DNA "
        gold = "BCD"[k % 3]
        add("FP-B", f"DNA says: it is not {OPTIONS[LETTERS.index(gold)]}", gold=gold)
    for k in range(6):   # FP-C: a wrong open answer the judge takes for the standard one
        add("FP-C", f"roughly {100 + k + 1}", open_gold=str(100 + k), judged="A")
    for k in range(10):  # the judge reads a reply no rule reads; lmms-eval's guess misses
        gold = LETTERS[(LETTERS.index(draw(SEED_LMMS_EVAL, doc_id())) + 1) % 4]
        add("judge recovery", f"the figure of item {k} has four equal sides", gold=gold, judged=gold)
    for k in range(2):   # the open answer right: VLMEvalKit reads option A (the answer); lmms-eval scores no open question right
        add("open A/B", str(200 + k), open_gold=str(200 + k))
    for k in range(2):   # no rule reads it, the judge names none: lmms-eval's guess is right, VLMEvalKit's "Z" wrong
        add("random divergence", f"hard to say for item {k}, sorry", gold=draw(SEED_LMMS_EVAL, doc_id()), judged="Z")
    for k in range(6):   # lmms-eval's "(B)" is right; VLMEvalKit sees three letters and its judge names none
        gold = LETTERS[k % 4]
        others = [x for x in LETTERS if x != gold][:2]
        add("lmms-eval right", f"({gold}) is right; {others[0]} and {others[1]} are not", gold=gold, judged="Z")
    assert len(docs) == 900
    return docs, replies, cases, judge


def prediction_of(prompt: str) -> str:
    """The reply a matcher prompt (VLMEvalKit's build_prompt) asks about."""
    return prompt[prompt.rindex("\nAnswer: ") + len("\nAnswer: "):prompt.rindex("\nYour output: ")]


#: the authors' rule (the task's headline) guesses with seed 42 where it reads nothing: FP-A (no " B "
#: in "Not B, since ..."), the judge recoveries and the random divergences; its draw per document,
#: worked out once and written here (the gold beside it). With --matcher the judge's option replaces
#: the guess (FP-A and the recoveries: right); a "Z" leaves it (the random divergences: C, right).
AUTHORS_DRAWS = {  # id number -> (gold, the seed-42 draw)
    862: ("B", "D"), 863: ("C", "A"), 864: ("D", "D"), 865: ("B", "B"), 866: ("C", "D"), 867: ("D", "D"), 868: ("B", "B"),
    881: ("A", "B"), 882: ("D", "B"), 883: ("D", "C"), 884: ("A", "D"), 885: ("A", "A"), 886: ("C", "D"), 887: ("A", "A"),
    888: ("C", "A"), 889: ("C", "A"), 890: ("C", "D"), 893: ("C", "C"), 894: ("C", "C"),
}
#: the headline: 448 + FP-B 6 (option text, 7 words) + open A/B 2 + lmms-eval right 6 = 462, and
#: the guesses: with --matcher FP-A 7 + recoveries 10 + the 2 right draws = 481 (53.44); without it
#: the 8 right draws (864, 865, 867, 868, 885, 887, 893, 894) = 470 (52.22)
HEADLINE = {"judged": 481, "exact": 470}

#: (lmms_eval, vlmevalkit with the judge, vlmevalkit without it) per case, by hand
EXPECTED = {
    "both right": (True, True, True), "both wrong": (False, False, False), "both wrong (open)": (False, False, False),
    "FP-A": (False, True, True), "FP-B": (False, True, True), "FP-C": (False, True, False),
    "judge recovery": (False, True, False), "open A/B": (False, True, True), "random divergence": (True, False, False),
    "lmms-eval right": (True, False, False),
}


def test_the_random_divergences_draw_the_gold_and_the_recoveries_miss_it() -> None:
    docs, _, cases, _ = build()
    for doc, case in zip(docs, cases):
        if case == "random divergence":
            assert draw(SEED_LMMS_EVAL, doc["id"]) == doc["answer"]
        if case == "judge recovery":
            assert draw(SEED_LMMS_EVAL, doc["id"]) != doc["answer"]


def test_the_authors_draws_are_the_documented_ones() -> None:
    docs, _, cases, _ = build()
    guessed = {int(d["id"].rsplit("_", 1)[1]): (d["answer"], draw(SEED_AUTHORS, d["id"]))
               for d, c in zip(docs, cases) if c in ("FP-A", "judge recovery", "random divergence")}
    assert guessed == AUTHORS_DRAWS


def test_the_peers_code_gives_the_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    """lmms-eval's and VLMEvalKit's own code on the replies: the hand-computed verdicts per case."""
    pytest.importorskip("pandas")
    docs, replies, cases, judge = build()
    guesses = {d["id"]: draw(SEED_LMMS_EVAL, d["id"]) for d in docs}
    lmms = lmms_eval_verdicts(docs, replies)
    # lmms-eval's guess returns the GUESSED marker: the seed-0 draw decides, as the variant draws it
    lmms_right = [right if parsed != "<random>" else guesses[d["id"]] == d["answer"] for d, (parsed, right) in zip(docs, lmms)]
    scripted = ScriptedJudge(lambda prompt: judge.get(prediction_of(prompt), "Z"))
    with_judge = vlmevalkit_hits(docs, replies, scripted)
    exact = vlmevalkit_hits(docs, replies)
    for case, a, b, c in zip(cases, lmms_right, with_judge, exact):
        assert (a, bool(b), bool(c)) == EXPECTED[case], case
    assert (sum(lmms_right), sum(with_judge), sum(exact)) == (456, 479, 463)
    assert len(scripted.prompts) == 40 + 6 + 10 + 2 + 6  # what can_infer reads nothing in


def test_the_variants_reproduce_the_gap(tmp_path: Path, chat_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A replayed run with the loopback judge as --matcher: the variants' figures and per-question
    verdicts are the hand-computed ones, and VLMEvalKit's judge prompt is its build_prompt verbatim."""
    from mmtasks.cli import main
    from tests.chat_wire import last_user_text

    docs, replies, cases, judge = build()
    folder = tmp_path / "data" / "mmmu"
    folder.mkdir(parents=True)
    (folder / "Art.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "mmmu_val_art", "doc_id": d["id"], "responses": [r]}) + "\n"
                            for d, r in zip(docs, replies)), encoding="utf-8")
    def answer(body: dict[str, Any]) -> str:  # the judge; "pong" to the client's probe
        text = last_user_text(body)
        return judge.get(prediction_of(text), "Z") if "\nYour output: " in text else "pong"

    chat_server.reply = answer
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    base = ["--tasks", "mmmu_val_art", "--data-dir", str(tmp_path / "data"), "--model", f"replay:{pred}", "--no-progress",
            "--allow-failures"]  # the headline's guesses count as problems
    assert main([*base, "--output-path", str(tmp_path / "judged"), "--matcher", "openai:matcher-model"]) == 0
    assert main([*base, "--output-path", str(tmp_path / "exact")]) == 0
    judged = json.loads((tmp_path / "judged" / "results.json").read_text())
    exact = json.loads((tmp_path / "exact" / "results.json").read_text())
    lmms = judged["variants"]["mmmu_val_art"]["lmms_eval"]["metrics"]["acc"]
    vlm = judged["variants"]["mmmu_val_art"]["vlmevalkit"]["metrics"]["acc"]
    assert lmms == pytest.approx(100 * 456 / 900)            # 50.67, the doc's lmms-eval figure
    assert vlm == pytest.approx(100 * 479 / 900)             # 53.22
    assert vlm - lmms == pytest.approx(100 * 23 / 900)       # +2.56 points, VLMEvalKit higher
    assert exact["variants"]["mmmu_val_art"]["vlmevalkit"]["metrics"]["acc"] == pytest.approx(100 * 463 / 900)
    assert exact["variants"]["mmmu_val_art"]["lmms_eval"]["metrics"]["acc"] == pytest.approx(100 * 456 / 900)
    assert judged["results"]["mmmu_val_art"]["acc"] == pytest.approx(100 * HEADLINE["judged"] / 900)
    assert exact["results"]["mmmu_val_art"]["acc"] == pytest.approx(100 * HEADLINE["exact"] / 900)
    assert judged["variants"]["mmmu_val_art"]["lmms_eval"]["coverage"]["guessed"] == 10 + 2

    samples = {json.loads(line)["doc_id"]: json.loads(line)
               for line in next((tmp_path / "judged").rglob("*mmmu_val_art*.jsonl")).read_text().splitlines()}
    for doc, case in zip(docs, cases):
        variants = samples[doc["id"]]["extra"]["variants"]
        got = (variants["lmms_eval"]["metrics"]["acc"] == 100.0, variants["vlmevalkit"]["metrics"]["acc"] == 100.0)
        assert got == EXPECTED[case][:2], (case, doc["id"])
    # the judge was asked about each reply once: the 64 can_infer reads nothing in, and the 7 FP-A
    # replies the authors' rule would guess for (it reads no " B " in "Not B, since ...")
    asked = [last_user_text(b) for b in chat_server.bodies if "\nYour output: " in last_user_text(b)]
    assert len(asked) == 64 + 7
    mc = load("multiple_choice_e8e78f0")
    first_open = next(d for d, c in zip(docs, cases) if c == "FP-C")
    reply = replies[docs.index(first_open)]
    choices = {"A": first_open["answer"], "B": "Other Answers"}
    assert mc.build_prompt(first_open["question"], mc.build_option_str(choices), reply) in asked
    first_mc = next(d for d, c in zip(docs, cases) if c == "judge recovery")
    reply = replies[docs.index(first_mc)]
    choices = dict(zip(LETTERS, ast.literal_eval(first_mc["options"])))
    assert mc.build_prompt(first_mc["question"], mc.build_option_str(choices), reply) in asked
