"""Mantis-Eval from a copy of its folder on an include path, replayed replies scored by hand with the
authors' rules; the plugin's rules one by one; its Hub copy holds the local records."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_runs import (SAMPLE, package_unchanged, parts_of, plugin, read_jsonl, results_of, run_copy, samples_of)



@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mantis_eval"):
        yield


# --- Mantis-Eval --------------------------------------------------------------------------

#: doc id -> (reply, parsed, right); by the authors' get_prediction (mantis/benchmark/eval.py)
MANTIS_REPLIES = {
    "1": ("Final Answer: B", "B", True),                  # gold B: the text after "final answer:"
    "2": ("A", "A", True),                                # gold "(A)": brackets stripped from the gold
    "3": ("the third", "the third", True),               # first letter "T" names no option: the reply is
                                                          # compared with the gold option's text, "the third"
    "4": ("Because the colours match, yes.", "B", False),  # the first alphabetic character, "B"; gold A
    "5": ("There is a circle, a square and a star.\nFinal Answer: 3", "3", True),  # short answer "3"
    "6": ("Final Answer: OPEN sign", "OPEN sign", False),  # short answer "OPEN": not equal
    "7": ("(C)", "C", False),                             # gold D
}


def run_mantis(tmp_path: Path, *, hub: bool) -> Path:
    rows = [("mantis_eval_copy", d, r) for d, (r, _, _) in MANTIS_REPLIES.items()]
    proc, out = run_copy(tmp_path, "mantis_eval", "TIGER-Lab/Mantis-Eval", rows, hub=hub)
    assert proc.returncode == 0, proc.stderr  # every reply gets a verdict: nothing is unparsed
    results = results_of(out)
    res = results["results"]["mantis_eval_copy"]
    assert res["acc"] == pytest.approx(100 * 4 / 7)  # 1, 2, 3 and 5 right
    by_type = results["breakdowns"]["mantis_eval_copy"]["question_type"]
    # multi-choice 1, 2, 3 right of 1, 2, 3, 4, 7; short-answer 5 right of 5, 6
    assert {k: (v["acc"], v["n"]) for k, v in by_type.items()} == {"multi-choice": (pytest.approx(60.0), 5),
                                                                  "short-answer": (50.0, 2)}
    samples = samples_of(out, "mantis_eval_copy")
    assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, (_, p, _) in MANTIS_REPLIES.items()}
    assert {d: s["metrics"]["acc"] for d, s in samples.items()} == {d: 100.0 * ok for d, (_, _, ok) in MANTIS_REPLIES.items()}
    return out


def test_mantis_eval_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    out = run_mantis(tmp_path, hub=False)
    samples = samples_of(out, "mantis_eval_copy")
    mc = "\nAnswer with the option's letter from the given choices directly."
    # options without their own letter get "\n (A) ", the others are listed as they are
    assert parts_of(samples["1"]) == ["<img>", "<img>", " Which image shows more circles?\n (A) The first image\n"
                                      " (B) The second image" + mc]
    # the text between the tags as it is, newlines included
    assert parts_of(samples["2"]) == ["Image 1: ", "<img>", "\nImage 2: ", "<img>",
                                      "\nWhat do the two images have in common?\n A. Both show a star\n"
                                      " B. Both show a square\n C. Both are empty" + mc]
    # fewer tags than images: the untagged image first; the others where their tags are
    assert parts_of(samples["4"]) == ["<img>", "Compare it with ", "<img>",
                                      ". Are the shapes the same colour?\n (A) yes\n (B) no" + mc]
    # a short answer: the authors' short-answer template around the question
    assert parts_of(samples["6"]) == ["Given the images, answer the following short answer vqa question:\nQ: ", "<img>",
                                      ' What word is written on the sign?\nYou can first give your analysis, and then '
                                      'give your final answer as "Final Answer:"']
    assert parts_of(samples["3"])[:3] == ["<img>"] * 3  # no tag: the images first


def test_mantis_eval_from_the_hub_layout(tmp_path: Path) -> None:
    out = run_mantis(tmp_path, hub=True)
    assert parts_of(samples_of(out, "mantis_eval_copy")["7"])[:2] == ["<img>", "<img>"]




MANTIS_DOC_MC = {"question_type": "multi-choice", "options": ["red", "B. yellow", "(C) green"]}


@pytest.mark.parametrize(("reply", "gold", "parsed", "right"), [
    ("B", "B", "B", True),
    ("Final Answer: (B) yellow", "B", "B", True),         # after "final answer:", the first letter
    ("The answer is C", "(C)", "C", True),
    ("Answer: A", "A", "A", True),
    ("answer: c", "C", "C", True),                      # the letter upper-cased
    ("Blue", "A", "B", False),                          # the first alphabetic character, "B"
    ("red", "A", "red", True),                          # "R" names no option: text equals option A
    ("green", "C", "green", True),                      # option C's own "(C)" prefix removed
    ("yellow", "B", "yellow", True),                    # option B's own "B." prefix removed
    ("green.", "C", "green.", False),                   # the text must match exactly
    ("42", "A", "42", False),                           # no letter at all: the text, not option A
])
def test_mantis_multi_choice_rule(reply: str, gold: str, parsed: str, right: bool) -> None:
    registry, path = plugin("mantis_eval", "mantis_scoring.py")
    parse = registry.parsers.get("mantis_answer", plugins=[path]).fn
    correct = registry.metrics.get("mantis_correct", plugins=[path])
    correct = getattr(correct, "fn", correct)
    assert parse(reply, MANTIS_DOC_MC) == parsed
    assert correct(parsed, gold, MANTIS_DOC_MC) == (100.0 if right else 0.0)


@pytest.mark.parametrize(("reply", "gold", "right"), [
    ("Final Answer: 3", "3", True),
    ("I count them.\nfinal answer: Three", "three", True),  # case ignored
    ("3 shapes", "3", False),                                # no marker: the whole reply
    ("The answer is 3.", "3", False),                        # the period stays
])
def test_mantis_short_answer_rule(reply: str, gold: str, right: bool) -> None:
    registry, path = plugin("mantis_eval", "mantis_scoring.py")
    parse = registry.parsers.get("mantis_answer", plugins=[path]).fn
    correct = registry.metrics.get("mantis_correct", plugins=[path])
    correct = getattr(correct, "fn", correct)
    doc = {"question_type": "short-answer", "options": []}
    assert correct(parse(reply, doc), gold, doc) == (100.0 if right else 0.0)


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    undecoded = datasets.Image(decode=False)
    # images: a list of embedded images
    local = read_jsonl(SAMPLE / "mantis_eval" / "mantis_eval.jsonl")
    hub = datasets.load_dataset(str(SAMPLE / "mantis_eval" / "hf"), split="test").cast_column("images", [undecoded])
    assert [{k: v for k, v in r.items() if k != "images"} for r in hub] == [{k: v for k, v in r.items() if k != "images"} for r in local]
    assert [[i["bytes"] for i in r["images"]] for r in hub] == [[(SAMPLE / "mantis_eval" / p).read_bytes() for p in r["images"]] for r in local]
