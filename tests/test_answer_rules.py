"""MMMU's answer rules (github.com/MMMU-Benchmark/MMMU mmmu/utils/eval_utils.py; MUIRBench's
eval/utils/postprocess.py is the same choice rule) as the ``choice`` parser's ``rule: mmmu``, the
``open_answer`` parser, the ``open_answer_acc`` metric and the ``by_field`` parser. Every expected
value below is worked out by hand from the authors' functions (the steps are in the comments)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.documents.dataset import Document
from mmtasks.errors import ConfigError, DataError
from mmtasks.scoring.metrics import open_answer_acc
from mmtasks.scoring.parsers import ByFieldArgs, ChoiceArgs, bind, by_field, choice, is_guess, open_answer
from mmtasks.task import Task

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"

NONE = "None of the choices provided"
#: muir_sample_1 of the sample: options 2, 3, 4, "None of the choices provided" (A-D)
DOC = {"idx": "muir_sample_1", "options": ["2", "3", "4", NONE], "answer": "B"}

#: reply -> (the authors' letter, None where they draw a random one; the strict first-letter rule's)
TRICKY = {
    "(B)": ("B", "B"),
    # "." stripped from the ends, then " B " stands between the added spaces
    "B.": ("B", "B"),
    # two bracketed letters: the last one, (A), wins; the strict rule reads the explicit answer's first
    "The answer is (C), not (A).": ("A", "C"),
    # two spaced letters (" A " at 0, " B " at the end; "B?" is not spaced): the last, B
    "A or B? I would say B": ("B", "A"),
    # 5 words, not more than 5: the option text is not looked for, so a random letter
    NONE: (None, None),
    # 9 words: option text; only D's text is in the reply
    "I think it is none of the choices provided.": ("D", None),
    # option text: "3" (B) is in the reply, "2" and "4" are not
    "There are 3 circles, so the count is 3": ("B", None),
    # option text: "3", "4" and "2" all appear; "2" (A) last
    "The total is 3, not 4 or 2 as it might seem": ("A", None),
    # "." stripped leaves "B)": neither "(B)" nor " B ", one word: a random letter
    "B).": (None, "B"),
    "**B**": (None, "B"),
    # " A ", " D " and " B " (at the end); B last
    "A and D are both wrong; the answer is B": ("B", "B"),
    # lowercase letters are never matched by the authors' rule
    "b": (None, "B"),
    # "." stripped (":" is not at an end), " D "
    "The answer is: D.": ("D", "D"),
    "(A) 2\n(B) 3": ("B", "A"),
    # "'" stripped from both ends
    "'C'": ("C", "C"),
    "C!": ("C", "C"),
}


@pytest.mark.parametrize("reply", list(TRICKY))
def test_the_authors_choice_rule_and_the_strict_rule_on_tricky_replies(reply: str) -> None:
    authors, strict = TRICKY[reply]
    assert choice(reply, DOC, ChoiceArgs(rule="mmmu", id_field="idx")) == authors  # fallback none: unparsed
    assert choice(reply, DOC, ChoiceArgs()) == strict


def test_the_random_fallback_is_a_seeded_guess_per_document() -> None:
    args = ChoiceArgs(rule="mmmu", fallback="random", id_field="idx")
    guess = choice("**B**", DOC, args)
    # the documented draw: random.Random("<seed>:<document id>").choice(the document's letters)
    assert guess == random.Random("42:muir_sample_1").choice(["A", "B", "C", "D"])
    assert is_guess(guess) and not is_guess(choice("(B)", DOC, args))
    assert choice("no letter here", DOC, args) == guess  # the same document: the same letter
    other = choice("**B**", DOC, ChoiceArgs(rule="mmmu", fallback="random", id_field="idx", seed=7))
    assert other == random.Random("7:muir_sample_1").choice(["A", "B", "C", "D"])
    # guesses spread over the letters (chance level), they are not one fixed letter
    letters = {choice("?", {"idx": f"d{k}", "options": ["x", "y", "z"]}, args) for k in range(40)}
    assert letters == {"A", "B", "C"}
    with pytest.raises(DataError, match="answer.parser_args.id_field"):
        choice("?", {"options": ["x", "y"]}, args)


def test_options_as_a_string_holding_a_python_list() -> None:
    doc = {"id": "validation_Art_1", "options": "['Oil on canvas', 'Fresco', \"Tempera's\"]"}
    args = ChoiceArgs(rule="mmmu")
    assert choice("I am fairly sure that this one is a fresco painting", doc, args) == "B"
    assert choice("(C)", doc, args) == "C"
    assert choice("C", doc, ChoiceArgs()) == "C"
    with pytest.raises(DataError, match="options"):
        choice("A", {"id": "x", "options": "not a list"}, args)


def test_a_target_outside_options_written_as_a_string_names_their_letters() -> None:
    """The hint of a gold letter outside the options reads the options as the parser does."""
    task = Task(*TaskRegistry.discover().load("muirbench"))
    record = {"idx": "muir_x", "options": "['2', '3', '4']", "answer": "F"}
    doc = Document(index=0, doc_id="muir_x", record=record, images=(), source="x.jsonl", line=1)
    with pytest.raises(DataError, match="outside the answer space") as err:
        task.target(doc)
    assert err.value.hint == "the record's options (options) are A, B, C"


def test_muirbench_default_is_the_authors_rule_and_muirbench_strict_the_first_letter() -> None:
    registry = TaskRegistry.discover()
    tasks = {name: Task(*registry.load(name)) for name in ("muirbench", "muirbench_strict")}
    docs = {d.doc_id: d for d in tasks["muirbench"].documents(SAMPLE)}
    record = docs["muir_sample_1"].record
    for reply, (authors, strict) in TRICKY.items():
        parsed = tasks["muirbench"].parser(reply, record)
        if authors is None:
            assert is_guess(parsed) and parsed == random.Random("42:muir_sample_1").choice("ABCD"), reply
        else:
            assert parsed == authors and not is_guess(parsed), reply
        assert tasks["muirbench_strict"].parser(reply, record) == strict, reply


# --- open answers -----------------------------------------------------------------------------

#: reply -> the normalised predictions (parse_open_response), worked out by hand
OPEN = {
    # "is " leaves "3.14159" ("answer " leaves "is 3.14159": longer); the number, rounded to 2
    "The answer is 3.14159": [3.14],
    # no indicator: the whole reply; numbers "1,000" (with commas) and "000" (plain: the "1" is
    # followed by a comma); floats first
    "It costs 1,000 dollars": [0.0, 1000.0, "it costs 1,000 dollars"],
    # one character: " c" and "c "
    "the answer is c": [" c", "c "],
    # lines are cut at newlines; the first has no indicator ("=" counts only in the last line)
    "Step 1: x = 5\nSo the result is 10": [10.0],
    "x = 5": [5.0],
    # "." stripped, lower-cased, no indicator
    "I don't know.": ["i don't know"],
    "24/7 hours": [7.0, 24.0, "24/7 hours"],
    # "is " leaves "infinity", which float() reads (the authors' check_is_number): inf, kept and
    # spelled "inf" (samples are JSON); "nan" reads as NaN, which equals nothing: left out
    "The limit is infinity": ["inf"],
    "The limit is -Infinity": ["-inf"],
    "the answer is nan": [],
    # "infinite" is no number: text
    "The sum is infinite": ["infinite"],
}


@pytest.mark.parametrize("reply", list(OPEN))
def test_open_answer_parser(reply: str) -> None:
    assert open_answer(reply, {}) == OPEN[reply]


@pytest.mark.parametrize("reply, gold, right", [
    ("The answer is 3.14159", "3.14", True),
    ("The answer is 3.14159", "3.1416", True),     # both round to 3.14
    ("The answer is 3.14159", "3.15", False),
    ("It costs 1,000 dollars", "1000", True),
    ("It costs 1,000 dollars", "1,000", True),     # commas removed: 1000.0
    ("It costs 1,000 dollars", "dollars", True),   # a gold text inside the whole-reply candidate
    ("the answer is c", "C", True),                # " c" in " c"
    ("the answer is cat", "C", False),             # " c" and "c " are not in "cat"
    ("Step 1: x = 5\nSo the result is 10", "5", False),
    ("Step 1: x = 5\nSo the result is 10", "10", True),
    ("24/7 hours", "['24/7', '3.429']", True),     # a list of accepted answers, as a string
    ("the answer is 3.429", ["24/7", "3.429"], True),
    ("the answer is 3.44", ["24/7", "3.429"], False),
    ("Transformation.", "transformation", True),
    # eval_utils.py: normalize_str("infinity") is float("infinity") on both sides, and inf == inf
    ("The limit is infinity", "infinity", True),
    ("The limit is infinity", "inf", True),
    ("The answer is inf", "Infinity", True),
    ("The limit is -Infinity", "infinity", False),   # -inf is not inf
    ("The limit is infinity", "-infinity", False),
    ("The sum is infinite", "infinity", False),     # text "infinite"; the gold is the number inf
    ("The limit is infinity", "in", False),         # a number: compared as one, never as text
])
def test_open_answer_acc(reply: str, gold: Any, right: bool) -> None:
    assert open_answer_acc(open_answer(reply, {}), gold, {"id": "d"}) == (100.0 if right else 0.0)


def test_open_answer_acc_scores_a_letter_exactly_and_nothing_as_zero() -> None:
    assert open_answer_acc("B", "B", {}) == 100.0
    assert open_answer_acc("B", "C", {}) == 0.0
    assert open_answer_acc(None, "C", {}) == 0.0


# --- by_field: MMMU's question types ----------------------------------------------------------

MMMU_CASES = {"field": "question_type",
              "cases": {"multiple-choice": {"parser": "choice", "parser_args": {"rule": "mmmu", "fallback": "random"}}},
              "default": {"parser": "open_answer"}}


def test_by_field_picks_the_parser_by_the_documents_field() -> None:
    args = ByFieldArgs.model_validate(MMMU_CASES)
    mc = {"id": "validation_Math_1", "question_type": "multiple-choice", "options": "['1', '2', '3']"}
    open_q = {"id": "validation_Math_2", "question_type": "open", "options": "[]"}
    assert by_field("(C)", mc, args) == "C"
    assert by_field("so x = 2", open_q, args) == [2.0]
    strict = ByFieldArgs.model_validate({**MMMU_CASES, "default": None})
    with pytest.raises(DataError, match="no parser for 'open'"):
        by_field("2", open_q, strict)


def test_by_field_checks_its_parsers_when_the_task_loads() -> None:
    bad = {**MMMU_CASES, "cases": {"multiple-choice": {"parser": "choise"}}}
    with pytest.raises(ConfigError, match="answer.parser_args.cases.multiple-choice.parser"):
        bind("by_field", bad, file="t.yaml")
    bad_args = {**MMMU_CASES, "cases": {"multiple-choice": {"parser": "choice", "parser_args": {"rule": "mmu"}}}}
    with pytest.raises(ConfigError, match="t.yaml.*answer.parser_args.cases.multiple-choice.parser_args.rule"):
        bind("by_field", bad_args, file="t.yaml")
