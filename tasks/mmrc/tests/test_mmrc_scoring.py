"""MMRC scoring: the judge-verdict parser, choice / true-false parsing, and the aggregator's
EP, IMP, RP, Overall, failure counts and breakdowns against hand-computed values."""

from __future__ import annotations

import math

import pytest

from mmtasks.dialogues.judging import ask_judge
from mmtasks.core.sample import Sample
from mmtasks.core.request import Reply, Request
from mmtasks import registry
from mmtasks.scoring.aggregation import count_problems
from mmtasks.scoring.bootstrap import bootstrap_stderr
from mmtasks.scoring.json_reply import last_json_object
from tests.plugins import plugin

mmrc, MMRC = plugin("mmrc")
question_values, judge_verdict, parse_choice, parse_tf = mmrc.scoring.question_values, mmrc.verdicts.judge_verdict, mmrc.answers.parse_choice, mmrc.answers.parse_tf
AGGREGATE = registry.aggregators.get("mmrc", plugins=[MMRC]).fn


def verdict_parser(ability: str):
    """The registered ``mmrc_judge`` verdict parser, for a question of ``ability``."""
    spec = registry.verdict_parsers.get("mmrc_judge", plugins=[MMRC])
    return lambda text: spec.fn(text, {"question": {"ability": ability}})

# --- the judge's reply ---------------------------------------------------------


def test_last_json_object_takes_the_last_top_level_object() -> None:
    text = 'Looking at {"a": 1} the answer... ```json\n{"score": 4, "named_images": [1, 3], "x": {"y": 2}}\n```'
    assert last_json_object(text) == {"score": 4, "named_images": [1, 3], "x": {"y": 2}}
    assert last_json_object("no object {here") is None
    assert last_json_object('[1, 2] {"broken": } {"score": 2}') == {"score": 2}


@pytest.mark.parametrize(("reply", "ok"), [
    ('Good answer.\n{"score": 5}', True),
    ('{"score": 3.5}', True),
    ('{"score": 0}', True),
    ('{"score": 6}', False),           # out of the 0-5 scale
    ('{"score": -1}', False),
    ('{"score": true}', False),        # a boolean is not a score
    ('{"score": "4"}', False),         # nor a string
    ('Score: 4', False),               # no JSON object
    ('{"points": 4}', False),          # no score field
])
def test_judge_verdict_scores(reply: str, ok: bool) -> None:
    assert (judge_verdict(reply) is not None) is ok


def test_verdict_fields_per_ability() -> None:
    ie, im, ar, cr = (verdict_parser(a) for a in ("IE", "IM", "AR", "CR"))
    assert ie('{"score": 4, "matched_items": 2, "model_items": 3}') == {"score": 4, "matched_items": 2, "model_items": 3}
    assert ie('{"score": 4}') is None                                            # IE needs the item counts
    assert ie('{"score": 4, "matched_items": 4, "model_items": 3}') is None      # more matched than stated
    assert ie('{"score": 4, "matched_items": 1.5, "model_items": 3}') is None
    assert im('{"score": 3, "named_images": [2, 4]}') is not None
    assert im('{"score": 3, "named_images": "2"}') is None
    assert im('{"score": 3, "named_images": [0]}') is None                       # numbers are 1-based
    assert ar('{"score": 5, "refused": true}') is not None
    assert ar('{"score": 5, "refused": "yes"}') is None
    assert ar('{"score": 5}') is None
    assert cr('{"score": 2}') == {"score": 2}


def test_ask_judge_reasks_with_the_per_request_parser_then_records_a_failure() -> None:
    requests = [Request(messages=()), Request(messages=())]
    gen = ask_judge(requests, [verdict_parser("IE"), verdict_parser("CR")], retries=1)
    first = next(gen)
    assert [r.attempt for r in first] == [0, 0] and all(r.target == "judge" for r in first)
    # IE lacks its item counts (re-asked); CR's reply is complete.
    second = gen.send([Reply(text='{"score": 4}'), Reply(text='{"score": 4}')])
    assert len(second) == 1 and second[0].attempt == 1
    with pytest.raises(StopIteration) as stop:
        gen.send([Reply(text="I give it a four.")])
    ie, cr = stop.value.value
    assert not ie.ok and ie.replies == ['{"score": 4}', "I give it a four."]
    assert cr.ok and cr.fields == {"score": 4}


# --- choice and true/false answers ---------------------------------------------

OPTIONS = {"A": "220 dollars", "B": "290 dollars", "C": "360 dollars", "D": "480 dollars"}


@pytest.mark.parametrize(("answer", "letter"), [
    ("B", "B"), ("(C)", "C"), ("B. 290 dollars", "B"), ("The answer is: D", "D"),
    ("A good estimate is option B.", "B"),      # the article "A" is not a choice
    ("I would pick C because of the tour.", "C"),
    ("You have 290 dollars left.", "B"),        # quotes one option's text
    ("Looking at the budget, I think the answer is A.", "A"),
    ("I am not sure.", None),
])
def test_parse_choice(answer: str, letter: str | None) -> None:
    assert parse_choice(answer, OPTIONS) == letter


@pytest.mark.parametrize(("answer", "value"), [
    ("True.", "true"), ("False, you moved it to June.", "false"), ("No, it is in June.", "false"),
    ("Yes", "true"), ("That is incorrect.", "false"), ("对", "true"), ("不对，是六月。", "false"), ("Maybe?", None),
])
def test_parse_tf(answer: str, value: str | None) -> None:
    assert parse_tf(answer) == value


def exact_match(answer: str, fmt: str, gold: str, options: dict[str, str] | None) -> tuple[str | None, float | None]:
    """The registered parser ``mmrc_answer`` then metric ``mmrc_exact_match``, as a task runs them."""
    question = {"format": fmt, "answer": gold, "options": options}
    parsed = registry.parsers.get("mmrc_answer", plugins=[MMRC]).fn(answer, question)
    return parsed, registry.metrics.get("mmrc_exact_match", plugins=[MMRC])(parsed, gold, question)


def test_exact_match_scores_unparsable_as_zero_and_open_as_not_applicable() -> None:
    assert exact_match("B", "choice", "B", OPTIONS) == ("B", 1.0)
    assert exact_match("no idea", "choice", "B", OPTIONS) == (None, 0.0)
    assert exact_match("false", "tf", "false", None) == ("false", 1.0)
    assert exact_match("It is true", "tf", "false", None) == ("true", 0.0)
    assert exact_match("The answer is: anything.", "open", "x", None) == ("anything", None)  # open: the text, no exact match


# --- aggregation, by hand ----------------------------------------------------------

def _q(ability: str, verdict: dict | None, exact_match: float | None = None, **extra: object) -> dict:
    """A question record as replay_probe writes it: the question's fields, then the protocol's."""
    rec = {"ability": ability, "format": "open", "images": None, "refuse": None, "updates": None,
           "response": "an answer", "parsed": None, "metrics": {"exact_match": exact_match},
           "verdict": verdict, "judge_failed": verdict is None}
    rec.update(extra)
    return rec


def _sample(index: int, questions: list[dict], length: str, failures: list[str] | None = None) -> Sample:
    return Sample(task="mmrc", doc_id=f"c{index}", doc_index=index, breakdown={"length": length},
                  extra={"questions": questions}, failures=failures or [],
                  judge_failures=sum(1 for q in questions if q["judge_failed"] and q["response"] is not None))


@pytest.fixture
def samples() -> list[Sample]:
    # Conversation 1 (5 turns, bucket [4,6)):
    c1 = [
        _q("IE", {"score": 4, "matched_items": 2, "model_items": 3}),                # EP 2/3
        _q("CR", {"score": 5}, format="choice", parsed="B", exact_match=1.0),
        _q("IU", {"score": 2}, format="tf", parsed="true", exact_match=0.0, updates=1),
        _q("IM", {"score": 3, "named_images": [1, 4]}, images=[1, 2]),          # IMP 1/2
        _q("MR", {"score": 4}),
        _q("AR", {"score": 5, "refused": True}, refuse=True),                        # refused as expected
    ]
    # Conversation 2 (10 turns, bucket [9,12)):
    c2 = [
        _q("IE", {"score": 1, "matched_items": 0, "model_items": 0}),                # states no item: EP 0
        _q("CR", None, judge_error="judge reply could not be parsed"),                # judge failure: unscored
        _q("IU", {"score": 4}, updates=2),
        _q("IM", {"score": 5, "named_images": [2, 3]}, images=[2, 3]),          # IMP 1
        _q("MR", {"score": 2}),
        _q("AR", {"score": 1, "refused": False}, refuse=True),                       # did not refuse
        _q("AR", {"score": 4, "refused": False}, refuse=False),                      # answerable: not in RP
        _q("IM", {"score": 2, "named_images": [1]}, images=None),               # no gold images: no IMP
    ]
    # Conversation 3 broke during the replay: its question was never answered.
    c3 = [_q("IE", None, response=None, judge_failed=False)]
    return [_sample(0, c1, "[4,6)"), _sample(1, c2, "[9,12)"), _sample(2, c3, "[4,6)", failures=["turn 2: HTTP 500"])]


def test_question_values() -> None:
    assert question_values(_q("IE", {"score": 4, "matched_items": 2, "model_items": 3})) == {"ie": 4.0, "ep": 2 / 3}
    assert question_values(_q("IE", {"score": 0, "matched_items": 0, "model_items": 0})) == {"ie": 0.0, "ep": 0.0}
    assert question_values(_q("AR", {"score": 3, "refused": True}, refuse=False)) == {"ar": 3.0}
    assert question_values(_q("CR", None, exact_match=1.0, format="choice")) == {"exact_match": 1.0}


def test_aggregate_by_hand(samples: list[Sample]) -> None:
    result = AGGREGATE(None, samples, 0)  # type: ignore[arg-type]
    m = result.metrics
    assert m["ie"] == pytest.approx((4 + 1) / 2)
    assert m["cr"] == pytest.approx(5.0)                # the judge failure is not scored as 0
    assert m["iu"] == pytest.approx((2 + 4) / 2)
    assert m["im"] == pytest.approx((3 + 5 + 2) / 3)
    assert m["mr"] == pytest.approx((4 + 2) / 2)
    assert m["ar"] == pytest.approx((5 + 1 + 4) / 3)
    overall = (2.5 + 5.0 + 3.0 + 10 / 3 + 3.0 + 10 / 3) / 6
    assert m["overall"] == pytest.approx(overall)
    assert m["ep"] == pytest.approx((2 / 3 + 0) / 2)
    assert m["imp"] == pytest.approx((1 / 2 + 1) / 2)
    assert m["rp"] == pytest.approx(50.0)               # 1 of the 2 questions that expect a refusal
    assert m["exact_match"] == pytest.approx(0.5)
    assert result.counts == {"n_questions": 15, "scored_questions": 13, "unanswered_questions": 1, "note_unparsed": 0,
                             "rp_questions": 2, "rp_scored": 2}
    assert count_problems(samples) == {"request_failures": 1, "unparsed": 0, "judge_failures": 1}
    assert result.coverage == {"unit": "questions", "scored": 13, "total": 15, "unscored": {"request_failure": 1, "judge_failure": 1}}
    assert result.n_samples == 3
    # stderrs: bootstrap of the per-question values; overall combines the six.
    assert m["ep_stderr"] == pytest.approx(bootstrap_stderr([2 / 3, 0.0], seed=0))
    assert m["rp_stderr"] == pytest.approx(bootstrap_stderr([100.0, 0.0], seed=0))
    six = [m[f"{a}_stderr"] for a in ("ie", "cr", "iu", "im", "mr", "ar")]
    assert m["overall_stderr"] == pytest.approx(math.sqrt(sum(s * s for s in six)) / 6)
    assert all(result.higher_is_better[k] for k in ("overall", "ep", "imp", "rp"))


def test_breakdowns_by_length_and_updates(samples: list[Sample]) -> None:
    b = AGGREGATE(None, samples, 0).breakdowns  # type: ignore[arg-type]
    short, mid = b["length"]["[4,6)"], b["length"]["[9,12)"]
    assert short["ie"] == 4.0 and short["overall"] == pytest.approx((4 + 5 + 2 + 3 + 4 + 5) / 6)
    assert short["n"] == 7 and short["n_conversations"] == 2
    assert mid["cr"] is None and mid["overall"] is None and mid["ar"] == pytest.approx(2.5)
    assert list(b["length"]) == ["[4,6)", "[9,12)"]
    assert b["updates"] == {"1": {"iu": 2.0, "n": 1}, "2": {"iu": 4.0, "n": 1}}


def test_overall_needs_all_six_abilities() -> None:
    only_ie = [_sample(0, [_q("IE", {"score": 4, "matched_items": 1, "model_items": 1})], "[4,6)")]
    m = AGGREGATE(None, only_ie, 0).metrics  # type: ignore[arg-type]
    assert m["ie"] == 4.0 and m["overall"] is None and m["overall_stderr"] is None and m["cr"] is None


def test_paper_overall_is_the_mean_of_the_six() -> None:
    # Spec check: GPT-4o (4.35+4.38+4.28+4.12+4.31+3.06)/6 = 4.08
    rows = [_q(a, {"score": s, "matched_items": 0, "model_items": 0, "named_images": [], "refused": False})
            for a, s in zip(("IE", "CR", "IU", "IM", "MR", "AR"), (4.35, 4.38, 4.28, 4.12, 4.31, 3.06))]
    m = AGGREGATE(None, [_sample(0, rows, "[4,6)")], 0).metrics  # type: ignore[arg-type]
    assert round(m["overall"], 2) == 4.08



def test_the_random_judge_gives_every_ability_a_valid_verdict() -> None:
    """The verdict parser says what its verdicts look like (no ``judge.space`` restating the
    abilities' fields in the YAML), and a chance-level verdict drawn from it always parses."""
    import random

    from mmtasks.models.random_model import random_verdict

    spec = registry.verdict_parsers.get("mmrc_judge", plugins=[MMRC])
    rng = random.Random(0)
    for ability in mmrc.abilities.ABILITIES:
        space = spec.space({"question": {"ability": ability}})
        assert set(space["fields"]) == set(mmrc.abilities.ABILITIES[ability].verdict)
        for _ in range(20):
            assert verdict_parser(ability)(random_verdict(rng, space, n_images=3)) is not None, ability


def test_a_note_or_verdict_nested_past_the_decoder_is_a_counted_failure() -> None:
    """Issue 41, finding 8: a note taker replying ``{"a":`` 3,000 times made the JSON decoder
    raise RecursionError (only JSONDecodeError was caught): a traceback and no results. Now such a
    start fails like any other: no object, the note kept and counted unparsed; a judge's such
    reply is no verdict (re-asked, then a judge failure)."""
    from mmtasks.dialogues.notetaking import NoteBook, NoteSettings

    hostile = '{"a":' * 3_000
    assert last_json_object(hostile) is None  # before: RecursionError
    assert judge_verdict(hostile) is None
    book = NoteBook.start(NoteSettings(prompt="{{ note }}", initial={"user": "Li"}))
    book.update(1, Reply(text=hostile))
    assert (book.note, book.unparsed) == ({"user": "Li"}, 1)
    assert book.log[-1]["error"] == "note reply holds no JSON object; previous note kept"
    book.update(2, Reply(text=hostile[:50] + ' then {"user": "Wang"}'))
    assert (book.note, book.unparsed) == ({"user": "Wang"}, 1)
