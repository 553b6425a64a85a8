"""Answers read against their declared text space (issue 27): the ``label`` parser (the default
``text`` parser under ``answer.space: [True, False]``), ``choice`` with word labels,
``exact_match`` with lm-evaluation-harness's options, targets checked against the space, and
the NLVR2 shape (``tests/shapes/nlvr2_true_false``) run to its hand-computed score."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.config.task_config import AnswerConfig
from mmtasks.config.yaml_loader import read_yaml
from mmtasks.errors import ConfigError, DataError
from mmtasks.scoring import parsers as p
from mmtasks.scoring import text_metrics as tm
from mmtasks.task import Task
from mmtasks.config.task_config import TaskConfig

SHAPE = (Path(__file__).resolve().parents[2] / "tests") / "shapes" / "nlvr2_true_false"
TF = ["True", "False"]


# --- reading a reply onto a space ------------------------------------------------------------

@pytest.mark.parametrize(("reply", "label"), [
    ("true", "True"),
    ("FALSE", "False"),
    ("**False**", "False"),
    ("True\n\nThe left image shows two dogs, so false would be wrong.", "True"),  # the leading statement wins
    ("True. The right image ...", "True"),
    ("  'False'  ", "False"),
    ("__true__", "True"),
    ("- False", "False"),
    ("Answer: **FALSE**.", "False"),                  # answer wrapping, emphasis, final period
    ("The answer is: True", "True"),
    ("I thought True at first, but the answer is False.", "False"),  # an explicit answer is read first
    ("ＴＲＵＥ", "True"),                              # fullwidth folded
    ("The statement is true.", None),                 # begins with no label: unparsed, not a guess
    ("Ture", None),
    ("Truely so", None),                              # not the word True
    ("", None),
])
def test_read_label_onto_true_false(reply: str, label: str | None) -> None:
    assert p.read_label(reply, TF) == label


def test_read_label_keeps_the_spaces_spelling_and_prefers_the_longest_label() -> None:
    space = ["no", "not sure", "yes"]
    assert p.read_label("Not sure, the image is dark", space) == "not sure"
    assert p.read_label("No, not sure", space) == "no"
    assert p.read_label("YES!", space) == "yes"
    assert p.read_label("Left image.", ["left image", "right image", "both"]) == "left image"
    assert p.read_label("是", ["是", "否"]) == "是" and p.read_label("是的", ["是", "否"]) is None


def test_label_key_folds_case_emphasis_and_edge_punctuation() -> None:
    assert p.label_key("**FALSE**.") == "false"
    assert p.label_key("  `Not   sure`?! ") == "not sure"
    assert p.label_key("«Yes»") == "yes"


def test_label_lists_are_checked() -> None:
    assert p.label_list([True, False], "labels") == ["True", "False"]   # YAML booleans: their Python spelling
    assert p.label_list(["a", "yes", 3], "labels") == ["A", "yes", "3"]
    with pytest.raises(ValueError, match="read the same"):
        p.label_list(["Yes", "yes."], "labels")
    with pytest.raises(ValueError, match="letter or digit"):
        p.label_list(["**"], "labels")
    with pytest.raises(ValueError, match="non-empty list"):
        p.label_list([], "labels")


def test_label_parser_takes_a_list_or_a_record_field() -> None:
    fixed = p.bind("label", {"labels": [True, False]})
    assert fixed("**false**", {}) == "False" and fixed("maybe", {}) is None
    per_doc = p.bind("label", {"labels_field": "choices"})
    assert per_doc("Left.", {"id": "d", "choices": ["left", "right"]}) == "left"
    assert per_doc("right", {"id": "d", "choices": "['left', 'right']"}) == "right"    # a string holding a list
    with pytest.raises(DataError) as err:
        per_doc("left", {"id": "d7", "choices": "left or right"})
    assert err.value.doc_id == "d7" and err.value.field == "choices"
    with pytest.raises(ConfigError, match="one of them"):
        p.bind("label", {})
    with pytest.raises(ConfigError, match="one of them"):
        p.bind("label", {"labels": ["a"], "labels_field": "x"})


# --- choice with word labels -----------------------------------------------------------------

def test_choice_takes_word_labels() -> None:
    tf = p.bind("choice", {"letters": [True, False]})
    assert tf("It is **FALSE**, since ...", {}) == "False"          # first standalone label, any case
    assert tf("true", {}) == "True"
    assert tf("Untrue and falsehood", {}) is None                   # inside longer words: none
    yes_no = p.bind("choice", {"options_field": "options"})
    doc = {"id": "y1", "options": {"yes": "there is", "no": "there is not"}}
    assert yes_no("Yesterday I'd have said no.", doc) == "no"
    assert yes_no("The answer is yes", doc) == "yes"
    mixed = p.bind("choice", {"letters": ["A", "B", "both"]})
    assert mixed("Both, really", {}) == "both" and mixed("I pick B", {}) == "B" and mixed("b", {}) == "B"
    assert mixed("a bear", {}) is None                              # a lowercase article is no letter
    assert p.bind("choice", {"letters": ["True", "False"], "fallback": "random"})("hmm", {"id": "g"}) in TF


# --- exact_match with lm-eval's options --------------------------------------------------------

def test_exact_match_plain_and_with_lm_eval_options() -> None:
    em = tm.exact_match
    assert em("True", "True", {}) == 100.0 and em(" True ", "True", {}) == 100.0
    assert em("true", "True", {}) == 0.0
    assert em("true", "True", {}, tm.ExactMatchArgs(ignore_case=True)) == 100.0
    # punctuation (string.punctuation) removed from both: "**false!**" -> "false"
    assert em("**false!**", "false", {}, tm.ExactMatchArgs(ignore_punctuation=True)) == 100.0
    # regexes first, then case: "The Paris" -> "Paris" -> "paris"
    args = tm.ExactMatchArgs(regexes_to_ignore=[r"\b(?:The|the|A|a) "], ignore_case=True)
    assert em("The Paris", "paris", {}, args) == 100.0
    # lm-eval's order: the regex runs before lower-casing, so "THE " is not removed
    assert em("THE Paris", "paris", {}, args) == 0.0
    assert em("room 12", "room", {}, tm.ExactMatchArgs(ignore_numbers=True)) == 100.0
    assert em(None, "True", {}, tm.ExactMatchArgs(ignore_case=True)) == 0.0
    with pytest.raises(ValueError, match="not a regular expression"):
        tm.ExactMatchArgs(regexes_to_ignore=["("])


def _task(tmp_path: Path, yaml_text: str) -> Task:
    (tmp_path / "t.yaml").write_text(yaml_text, encoding="utf-8")
    return Task(TaskConfig.model_validate(read_yaml(tmp_path / "t.yaml")), tmp_path / "t.yaml")


BASE = "task: t\ndataset: {local: {dir: d, file: f.jsonl}}\n"


def test_metric_args_are_validated_when_the_task_loads(tmp_path: Path) -> None:
    task = _task(tmp_path, BASE + "metrics: [{name: em, function: exact_match, args: {ignore_case: true}}]\n")
    assert task.metric_fns["em"]("TRUE", "true", {}) == 100.0
    with pytest.raises(ConfigError) as err:
        _task(tmp_path, BASE + "metrics: [{name: em, function: exact_match, args: {ignore_cases: true}}]\n")
    assert err.value.field == "metrics[0].args.ignore_cases" and "did you mean 'ignore_case'" in str(err.value)
    with pytest.raises(ConfigError) as err:
        _task(tmp_path, BASE + "metrics: [{name: em, function: exact_match, args: {regexes_to_ignore: ['(']}}]\n")
    assert err.value.field == "metrics[0].args.regexes_to_ignore"
    with pytest.raises(ConfigError, match="takes no args") as err:
        _task(tmp_path, BASE + "metrics: [{name: b, function: bleu, args: {x: 1}}]\n")
    assert err.value.field == "metrics[0].args"


# --- the declared space in the task ---------------------------------------------------------

def test_yaml_keeps_yes_and_no_as_words_and_a_list_is_a_text_space(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("a: [yes, no, on, True, false]\nb: Yes\n", encoding="utf-8")
    assert read_yaml(tmp_path / "s.yaml") == {"a": ["yes", "no", "on", True, False], "b": "Yes"}
    assert AnswerConfig.model_validate({"space": [True, False]}).space == {"kind": "choice", "choices": TF}
    assert AnswerConfig.model_validate({"space": ["yes", "no"]}).space == {"kind": "choice", "choices": ["yes", "no"]}
    task = _task(tmp_path, BASE + "answer: {space: [yes, no]}\nmetrics: [{name: acc, function: exact_match}]\n")
    assert task.parser.name == "label" and task.parser("YES.", {}) == "yes"


def test_the_text_parser_cannot_read_onto_a_templated_space(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        _task(tmp_path, BASE + "answer: {space: {kind: choice, choices: '{{ doc.labels | tojson }}'}}\n"
                               "metrics: [{name: acc, function: exact_match}]\n")
    assert err.value.field == "answer.space.choices" and "labels_field" in (err.value.hint or "")
    with pytest.raises(ConfigError) as err:
        _task(tmp_path, BASE + "answer: {space: [Yes, yes]}\nmetrics: [{name: acc, function: exact_match}]\n")
    assert err.value.field == "answer.space.choices" and "read the same" in err.value.message


# --- the NLVR2 shape, end to end ------------------------------------------------------------

def _run(*args: str) -> int:
    return main(["--tasks", "nlvr2_true_false", "--no-progress", *args])


def test_nlvr2_shape_replayed_scores_as_computed_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    code = _run("--include-path", str(SHAPE / "tasks"), "--data-dir", str(SHAPE / "data"),
                "--model", f"replay:{SHAPE / 'replies.jsonl'}", "--output-path", str(tmp_path / "out"), "--allow-failures")
    assert code == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    # n1 "true", n2 "FALSE", n3 "**False**", n4 "True\n\nThe left image ...", n5 "True.", n6 "Answer: false",
    # n7 "The answer is **True**": each the gold label (7 right); n8 states no label: unparsed, scored 0.
    # 7 / 8 = 87.5 (the old strict exact match read only n5 and n7: 25.0).
    assert results["results"]["nlvr2_true_false"]["acc"] == 87.5
    assert results["problems"]["nlvr2_true_false"]["unparsed"] == 1
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples" / "nlvr2_true_false.jsonl").read_text().splitlines()]
    parsed = {s["doc_id"]: s["parsed"] for s in samples}
    assert parsed == {"n1": "True", "n2": "False", "n3": "False", "n4": "True", "n5": "True", "n6": "False",
                      "n7": "True", "n8": None}
    assert {s["target"] for s in samples} == set(TF)


def test_nlvr2_shape_runs_with_the_random_model_and_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    code = _run("--include-path", str(SHAPE / "tasks"), "--data-dir", str(SHAPE / "data"),
                "--model", "random", "--judge", "random", "--output-path", str(tmp_path / "out"))
    assert code == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples" / "nlvr2_true_false.jsonl").read_text().splitlines()]
    assert len(samples) == 8 and all(s["parsed"] in TF for s in samples)   # the random model answers inside the space
    hits = sum(s["parsed"] == s["target"] for s in samples)
    assert results["results"]["nlvr2_true_false"]["acc"] == 100.0 * hits / 8


def _copy_with_labels(tmp_path: Path, labels: dict[str, object]) -> Path:
    copy = tmp_path / "shape"
    shutil.copytree(SHAPE, copy)
    records = copy / "data" / "nlvr2" / "records.jsonl"
    lines = []
    for line in records.read_text().splitlines():
        rec = json.loads(line)
        rec["label"] = labels.get(rec["id"], rec["label"])
        lines.append(json.dumps(rec))
    records.write_text("\n".join(lines) + "\n")
    return copy


def test_check_refuses_a_target_outside_the_space(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = _copy_with_labels(tmp_path, {"n3": "Ture"})
    code = main(["check", "--tasks", "nlvr2_true_false", "--include-path", str(copy / "tasks"), "--data-dir", str(copy / "data")])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "records.jsonl:3" in err and "document 'n3'" in err and "field 'target'" in err
    assert "'Ture' is outside the answer space" in err and "the answer space is True, False" in err


def test_a_target_is_scored_in_the_spaces_spelling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    copy = _copy_with_labels(tmp_path, {"n1": "true", "n2": "FALSE"})
    code = _run("--include-path", str(copy / "tasks"), "--data-dir", str(copy / "data"), "--limit", "2",
                "--model", f"replay:{copy / 'replies.jsonl'}", "--output-path", str(tmp_path / "out"))
    assert code == 0
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples" / "nlvr2_true_false.jsonl").read_text().splitlines()]
    assert [(s["target"], s["metrics"]["acc"]) for s in samples] == [("True", 100.0), ("False", 100.0)]


def test_another_parser_under_a_text_space_reads_onto_it(tmp_path: Path) -> None:
    task = _task(tmp_path, BASE + "answer: {parser: true_false, space: [True, False]}\nmetrics: [{name: acc, function: exact_match}]\n")
    assert task.parser.name == "true_false"
    assert task.parser("Yes, it is.", {}) == "True" and task.parser("That is wrong.", {}) == "False"   # true_false's words
    assert task.parser("maybe", {}) is None
    assert task.metric_fns["acc"](task.parser("correct", {}), "True", {}) == 100.0
    # a parser's answer outside the space is unparsed; a guess stays a guess in the space's spelling
    letters = _task(tmp_path, BASE + "answer: {parser: choice, parser_args: {letters: [A, B, C], fallback: random}, space: [A, B]}\n"
                                      "metrics: [{name: acc, function: choice_acc}]\n")
    assert letters.parser("C", {"id": "x"}) is None and letters.parser("b", {"id": "x"}) == "B"
    assert p.onto_labels(p.Guess("b"), ["A", "B"]) == "B" and p.is_guess(p.onto_labels(p.Guess("b"), ["A", "B"]))
    assert p.onto_labels(3, ["A"]) == 3 and p.onto_labels(None, ["A"]) is None
