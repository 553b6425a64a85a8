"""Fidelity to the papers (issue 13): MMRC's sampling, explicit answers in the parsers, MMRC's
refusal precision and Algorithm 1 probes, MMDU's official API input, coverage, RealBench's
combined images and secondary metrics. Expected values are worked out by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.task import Task
from tests.chat_server import ChatServer
from tasks.mmrc.tests.test_mmrc_e2e import make_reply, run_in_process


def load(name: str, **kw: object) -> Task:
    config, path = TaskRegistry.discover().load(name)
    return Task(config, path, **kw)  # type: ignore[arg-type]


# --- 1. MMRC samples with each model's default settings (paper Appendix G) -----------------

def test_mmrc_model_decodes_in_default_mode_and_the_judge_greedily() -> None:
    task = load("mmrc")
    assert task.config.generation.temperature is None and task.config.generation.do_sample is None
    assert task.config.generation.sampling_mode() == "default"
    assert task.config.generation.max_new_tokens == 256
    assert task.config.judge is not None and task.config.judge.generation.sampling_mode() == "greedy"


def test_mmrc_sends_no_temperature_to_an_openai_server(chat_server: ChatServer, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    chat_server.models = ("test-model", "judge-model")
    chat_server.reply = make_reply()
    assert run_in_process(chat_server, tmp_path, monkeypatch) == 0
    model = [b for b in chat_server.bodies if b["model"] == "test-model"]
    judge = [b for b in chat_server.bodies if b["model"] == "judge-model"]
    assert model and judge
    assert all("temperature" not in b and "top_p" not in b for b in model)
    assert all(b["temperature"] == 0.0 for b in judge)


# --- 2. parsers prefer an explicit answer over the first number or letter --------------------

def test_explicit_answers_win_over_the_first_number_or_letter() -> None:
    from mmtasks.scoring.parsers import IntegerSetArgs, choice, ChoiceArgs, integer, integer_set, true_false
    from tests.plugins import plugin
    realbench, _ = plugin("realbench")
    retrieval_multi, retrieval_single = realbench.retrieval_multi, realbench.retrieval_single
    mmrc_answer = plugin("mmrc")[0].answers.mmrc_answer

    # "共2张" counts the images named before it: the set is {1, 3}, not {1, 2, 3}.
    assert integer_set("图1和图3，共2张", {}, IntegerSetArgs()) == [1, 3]
    assert retrieval_multi("图1和图3，共2张") == [1, 3]
    # "9 images" is a count, "the answer is image 3" the answer.
    assert integer("There are 9 images; the answer is image 3", {}) == 3
    assert retrieval_single("There are 9 images; the answer is image 3") == 3
    # The first standalone letter is A; the stated answer is C.
    assert choice("A. 2,3,1 is wrong; the answer is C", {}, ChoiceArgs(letters=["A", "B", "C", "D"])) == "C"
    assert mmrc_answer("A. 2,3,1 is wrong; the answer is C",
                       {"format": "choice", "options": {"A": "x", "B": "y", "C": "z"}}) == "C"
    # A negated true/false word flips it.
    assert true_false("not true") == "false"
    assert true_false("That is not wrong.") == "true"
    assert true_false("这不是真的") == "false"
    assert mmrc_answer("not true", {"format": "tf"}) == "false"
    # An explicit statement that does not parse falls back to the whole reply.
    assert integer("Image 4. The answer is below.", {}) == 4
    # The last explicit statement wins ("答案是" too).
    assert integer_set("Initially the answer is 2; after checking, the final answer: 1 and 5", {}, IntegerSetArgs()) == [1, 5]
    assert retrieval_single("答案是图二") == 2


# --- 3. MMRC refusal precision: every AR question expects a refusal (paper §3.1) -------------

def _mmrc():
    from tests.plugins import plugin
    from mmtasks import registry
    mod, path = plugin("mmrc")
    return mod, registry.aggregators.get("mmrc", plugins=[path]).fn


def _ar(verdict: dict | None, **extra: object) -> dict:
    rec = {"ability": "AR", "format": "open", "response": "an answer", "metrics": {}, "verdict": verdict,
           "judge_failed": verdict is None}
    rec.update(extra)
    return rec


def test_an_ar_question_without_refuse_expects_a_refusal() -> None:
    mod, aggregate = _mmrc()
    rec = {"id": "c", "turns": [{"user": "hi"}], "questions": [
        {"ability": "ar", "question": "What is my flight number?", "answer": "You did not say."},
        {"ability": "AR", "question": "Where do I live?", "answer": "Paris.", "refuse": False},
        {"ability": "MR", "question": "Who am I?", "answer": "Ann."}]}
    qs = mod.record.mmrc_record(rec)["questions"]
    assert [q["refuse"] for q in qs] == [True, False, None]
    from mmtasks.core.sample import Sample
    # Three AR questions: refuse missing + refused (counts, hit), refuse true + answered (counts,
    # miss), refuse false (not in RP). RP = 100 * 1 / 2 = 50 (before: the missing refuse was
    # skipped, RP = 0 / 1 = 0).
    questions = [_ar({"score": 5, "refused": True}), _ar({"score": 1, "refused": False}, refuse=True),
                 _ar({"score": 4, "refused": False}, refuse=False)]
    result = aggregate(None, [Sample(task="mmrc", doc_id="c", doc_index=0, extra={"questions": questions})], 0)
    assert result.metrics["rp"] == pytest.approx(50.0)
    assert result.counts["rp_questions"] == 2 and result.counts["rp_scored"] == 2


def test_rp_is_never_silently_null() -> None:
    from mmtasks.core.sample import Sample
    _, aggregate = _mmrc()
    # The only AR question's judge failed: RP is null, and the counts and coverage say why.
    s = Sample(task="mmrc", doc_id="c", doc_index=0, judge_failures=1,
               extra={"questions": [_ar(None, refuse=True)]})
    result = aggregate(None, [s], 0)
    assert result.metrics["rp"] is None
    assert result.counts["rp_questions"] == 1 and result.counts["rp_scored"] == 0
    assert result.coverage["unscored"] == {"judge_failure": 1}


# --- 4. MMRC probes: Algorithm 1 (Appendix K) to the letter ---------------------------------

def test_algorithm1_probes_keep_the_questions_and_drop_the_answers(chat_server: ChatServer, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks.mmrc.tests.test_mmrc_e2e import RECORDS, by_kind, messages, outputs, probes_in_order, text_of

    chat_server.models = ("test-model", "judge-model")
    chat_server.reply = make_reply()
    assert run_in_process(chat_server, tmp_path, monkeypatch, "--history", "reference", "--probe", "algorithm1") == 0
    results, samples = outputs(tmp_path)
    probes = by_kind(chat_server, "probe")
    assert len(probes) == sum(len(r["questions"]) for r in RECORDS)
    for rec in RECORDS:
        mine = probes_in_order(probes, rec, "reference")
        n = 2 * len(rec["turns"])
        for k, call in enumerate(mine):
            msgs = messages(call)
            # history, then questions 1..k+1 as consecutive user messages: no answers in between.
            assert len(msgs) == n + k + 1
            assert [m["role"] for m in msgs[n:]] == ["user"] * (k + 1)
            for j in range(k + 1):
                assert rec["questions"][j]["question"] in text_of(msgs[n + j])
        assert samples[rec["id"]]["extra"]["probe"] == "algorithm1"
    assert results["config"]["probe"] == "algorithm1"


# --- 5. MMDU as the authors' API scripts send it (model_generation/GPT4o_gen_ans.py) ---------

def test_mmdu_api_sends_text_with_markers_then_images_default_temperature_4096(chat_server: ChatServer,
                                                                                 tmp_path: Path) -> None:
    from tests.mmdu_data import MARKER, tag, write_mmdu
    from tests.dialogues.test_multi_turn import JUDGE, MODEL, assert_images, body_for, model_bodies, run_cli, server_reply

    chat_server.models = (MODEL, JUDGE)
    chat_server.reply = server_reply
    write_mmdu(tmp_path, [[2, 0, 1]])
    proc = run_cli(chat_server, tmp_path, "--output-path", str(tmp_path / "run"), tasks="mmdu_api")
    assert proc.returncode == 0, proc.stderr
    models = model_bodies(chat_server)
    assert len(models) == 3
    for body in models:
        assert body["max_tokens"] == 4096 and "temperature" not in body and "top_p" not in body
    # Turn 1: one text part, the question verbatim with both markers, then the two images.
    first = body_for(models, 0, 1)["messages"][1]["content"]
    assert [p["type"] for p in first] == ["text", "image_url", "image_url"]
    assert first[0]["text"] == f"Image1: {MARKER}. Image2: {MARKER}. {tag(0, 1)} Question 1 of dialogue 0?"
    assert_images(first, 0, [0, 1])
    # Turn 3: the history keeps turn 1's images; its own message ends with the third image.
    msgs = body_for(models, 0, 3)["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert_images(msgs[-1]["content"], 0, [2])
    assert msgs[-1]["content"][0]["text"].count(MARKER) == 1 and msgs[-1]["content"][0]["text"].startswith("Image3: ")


# --- 6. coverage is part of every score -------------------------------------------------------

OVERFLOW_MESSAGE = "This model's maximum context length is 128 tokens. However, you requested 4096 tokens."


def test_a_run_with_failures_reports_coverage_and_all_variants(chat_server: ChatServer, tmp_path: Path) -> None:
    """MMDU, two dialogues (3 + 2 turns), through the openai backend against the loopback server:
    turn 2 of dialogue 0 does not fit the context (HTTP 400 context_length_exceeded), turn 1 of
    dialogue 1 fails with HTTP 500 on every try. The judge scores the 3 other turns 7 on each
    dimension and 8 overall (tests/dialogues/test_multi_turn.py's server).

    By hand: coverage 3 of 5 turns = 60%; unscored request_failure 1, context_overflow 1.
    overall = micro over the judged turns = 10 * (8+8+8)/3 = 80; overall_all = 10 * 24/5 = 48;
    creativity = 70, creativity_all = 10 * 21/5 = 42."""
    from tests.chat_wire import last_user_text
    from tests.mmdu_data import tag, write_mmdu
    from tests.dialogues.test_multi_turn import JUDGE, MODEL, run_cli, server_reply

    chat_server.models = (MODEL, JUDGE)
    chat_server.reply = server_reply
    write_mmdu(tmp_path, [[1, 0, 1], [1, 0]])

    def model_turn(t: str):
        return lambda body: body["model"] == MODEL and t in last_user_text(body)

    chat_server.inject(400, times=20, match=model_turn(tag(0, 2)), message=OVERFLOW_MESSAGE, code="context_length_exceeded")
    chat_server.inject(500, times=20, match=model_turn(tag(1, 1)))
    out = tmp_path / "run"
    proc = run_cli(chat_server, tmp_path, "--output-path", str(out), "--allow-failures")
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["coverage"]["mmdu"] == {"unit": "turns", "scored": 3, "total": 5, "percent": 60.0,
                                           "unscored": {"request_failure": 1, "context_overflow": 1}}
    r = results["results"]["mmdu"]
    assert r["overall"] == pytest.approx(80.0) and r["overall_all"] == pytest.approx(48.0)
    assert r["creativity"] == pytest.approx(70.0) and r["creativity_all"] == pytest.approx(42.0)
    assert results["problems"]["mmdu"] == {"request_failures": 1, "unparsed": 0, "judge_failures": 0, "context_overflow": 1}
    # the context overflow was not retried: one call for it
    assert len([c for c in chat_server.log if c.status == 400]) == 1
    # the results table shows the coverage, marked, and the _all values
    lines = [" ".join(line.split()) for line in proc.stdout.splitlines()]
    assert "! coverage (turns) 60.0% 3/5" in lines and "overall_all 48.00" in lines
    assert "! context_overflow 1" in lines and any(line.startswith("! coverage under 100%") for line in lines)


def test_truncation_drops_the_oldest_exchanges_until_the_turn_fits(chat_server: ChatServer, tmp_path: Path) -> None:
    """--truncate oldest_turns: a request of more than 4 messages overflows, so turn 3 (system +
    2 exchanges + the question = 6 messages) is sent again without the first exchange (4 messages)
    and answered; its record says dropped_turns 1. Coverage is then 3 of 3."""
    from tests.mmdu_data import tag, write_mmdu
    from tests.dialogues.test_multi_turn import JUDGE, MODEL, body_for, model_bodies, run_cli, server_reply

    chat_server.models = (MODEL, JUDGE)
    chat_server.reply = server_reply
    write_mmdu(tmp_path, [[1, 0, 1]])
    chat_server.inject(400, times=20, match=lambda b: b["model"] == MODEL and len(b["messages"]) > 4,
                       message=OVERFLOW_MESSAGE, code="context_length_exceeded")
    out = tmp_path / "run"
    proc = run_cli(chat_server, tmp_path, "--output-path", str(out), "--truncate", "oldest_turns")
    assert proc.returncode == 0, proc.stderr
    ok = [b for b in model_bodies(chat_server) if len(b["messages"]) <= 4]
    assert len(ok) == 3
    third = body_for(ok, 0, 3)["messages"]
    assert [m["role"] for m in third] == ["system", "user", "assistant", "user"]
    assert tag(0, 2) in json.dumps(third[1]) and tag(0, 1) not in json.dumps(third)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["coverage"]["mmdu"]["scored"] == 3 and results["coverage"]["mmdu"]["unscored"] == {}
    sample = json.loads((out / "samples" / "mmdu.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert [t.get("dropped_turns", 0) for t in sample["extra"]["turns"]] == [0, 0, 1]
    assert sample["extra"]["truncated_turns"] == 1 and sample["failures"] == []


# --- 7. RealBench --image-mode combined: captions drawn on the tiles, a prompt that agrees ------

def test_combined_prompt_does_not_label_the_picture_image_1(tmp_path: Path) -> None:
    from tasks.realbench.tests.test_realbench_e2e import run, samples

    run(tmp_path, "c", "--model", "random", "--image-mode", "combined", tasks="realbench_ranking_hard")
    row = samples(tmp_path, "c", "realbench_ranking_hard")[0]
    content = row["prompt"][0]["content"]
    text = "".join(p["text"] for p in content if p["type"] == "text")
    n = text.split("(The ", 1)[1].split(" images", 1)[0]
    assert f'each image captioned "Image 1" to "Image {n}" at its bottom' in text
    assert "Image 1:" not in text and "numbered from 1" not in text
    assert [p["type"] for p in content].count("image") == 1 and content[-1]["type"] == "image"


def test_combined_tiles_carry_drawn_captions() -> None:
    from PIL import Image as PIL

    from mmtasks.core.pixels import caption_tile, combine

    red, blue, small = PIL.new("RGB", (200, 100), "red"), PIL.new("RGB", (200, 100), "blue"), PIL.new("RGB", (50, 50), "green")
    grid = combine([red, blue, small])
    # 2 columns (ceil(sqrt(3))), cells 200x100, 8 px apart: 408 x 208.
    assert grid.size == (408, 208)
    # Caption text: max(12, 4% of 200 = 8) = 12 px, padding max(2, round(4.5)) = 4 (Python rounds half to even).
    # Its black box is centred at the bottom of each tile; the top-left corner keeps the image.
    assert grid.getpixel((0, 0)) == (255, 0, 0) and grid.getpixel((100, 99)) == (0, 0, 0)
    assert grid.getpixel((208, 0)) == (0, 0, 255) and grid.getpixel((308, 99)) == (0, 0, 0)
    box = grid.crop((60, 75, 140, 100))
    pixels = [box.getpixel((x, y)) for x in range(box.width) for y in range(box.height)]
    assert (255, 255, 255) in pixels  # the white text is drawn
    assert grid.getpixel((0, 99)) == (255, 0, 0)  # the box is narrower than the tile
    # A 50x50 tile (under 64 px) gets no caption.
    assert grid.getpixel((25, 108 + 49)) == (0, 128, 0)
    # The inputs are left untouched.
    assert red.getpixel((100, 99)) == (255, 0, 0)
    # The two captions read differently: "Image 1" and "Image 2" differ in their last glyph.
    one = caption_tile(PIL.new("RGB", (200, 100), "red"), 1).crop((60, 75, 140, 100)).tobytes()
    two = caption_tile(PIL.new("RGB", (200, 100), "red"), 2).crop((60, 75, 140, 100)).tobytes()
    assert one != two


# --- 7b. RealBench secondary metrics -------------------------------------------------------

def test_generative_realbench_tasks_report_character_rouge_l_and_chrf() -> None:
    for name in ("realbench_extraction_easy", "realbench_extraction_hard", "realbench_reasoning_easy", "realbench_reasoning_hard"):
        task = load(name)
        assert list(task.metric_fns) == ["rouge_l", "rouge_l_char", "chrf"], name
        assert [m.name for m in task.config.metrics if m.primary] == ["rouge_l"]
    fns = load("realbench_extraction_easy").metric_fns
    # "豆腐汤" against "豆腐": LCS 2 characters, P = 2/3, R = 1, F1 = 2 * (2/3) / (5/3) = 0.8.
    assert fns["rouge_l_char"]("豆腐汤", "豆腐", {"id": "d"}) == pytest.approx(80.0)


# score() is 0 or 100 (percent)
@pytest.mark.parametrize(("reply", "contains", "exact"), [
    ("No relevant content mentioned.", 100.0, 100.0),
    ("Answer: no relevant content mentioned", 100.0, 100.0),
    ("未提及相关内容。", 100.0, 100.0),
    ("No relevant content mentioned. But the price is 5 yuan.", 100.0, 0.0),
    ("The images show a menu.", 0.0, 0.0),
])
def test_unanswerable_exact_phrase_beside_contains(reply: str, contains: float, exact: float) -> None:
    task = load("realbench_unanswerable")
    parsed = task.parser(reply, {})
    assert task.metric_fns["acc"](parsed, "x", {}) == contains
    assert task.metric_fns["exact_acc"](parsed, "x", {}) == exact


def test_mmrc_truncation_drops_the_oldest_exchanges_of_each_probe(chat_server: ChatServer, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """--truncate oldest_turns on MMRC (reference history, independent probes): a model request
    of more than 12 messages overflows. A probe is 2 * turns + 1 messages, so mmrc-001 (4 turns:
    9) and mmrc-002 (5: 11) fit, and a longer one drops exchanges until it has 11 messages:
    mmrc-003 (7 turns: 15) drops 2, mmrc-004 (8: 17) 3, mmrc-005 (10: 21) 5, mmrc-006 (11: 23) 6,
    for each of its questions."""
    from tasks.mmrc.tests.test_mmrc_e2e import RECORDS, outputs

    chat_server.models = ("test-model", "judge-model")
    chat_server.reply = make_reply()
    chat_server.inject(400, times=1000, match=lambda b: b["model"] == "test-model" and len(b["messages"]) > 12,
                       message=OVERFLOW_MESSAGE, code="context_length_exceeded")
    assert run_in_process(chat_server, tmp_path, monkeypatch, "--history", "reference", "--truncate", "oldest_turns") == 0
    results, samples = outputs(tmp_path)
    expected = {"mmrc-001": 0, "mmrc-002": 0, "mmrc-003": 2, "mmrc-004": 3, "mmrc-005": 5, "mmrc-006": 6}
    for rec in RECORDS:
        dropped = samples[rec["id"]]["extra"].get("dropped_turns", {})
        n = expected[rec["id"]]
        assert dropped == ({f"question {k + 1}": n for k in range(len(rec["questions"]))} if n else {}), rec["id"]
        assert samples[rec["id"]]["failures"] == []
    assert results["coverage"]["mmrc"]["unscored"] == {}
