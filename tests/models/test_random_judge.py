"""The random judge answers any judge (issue 27): its chance-level verdict is drawn from the
judge's declared space (fields, ranges, choices; a ``{kind: verdict}`` without fields takes the
verdict parser's own, e.g. ``json_object``'s ``required`` and ``ranges``); the preflight runs the
judge's parser on such a placeholder verdict, so a judge that cannot read its own declared shape
is a ``check`` error; every key of every ``*.space`` block is checked at load.

The ConvBench-like shape (tests/shapes/judged_conversation: three judged turns about one image,
a ``{"score": n}`` JSON verdict) is run with ``replay:`` (model and judge) to a hand-computed
score, and with ``--model random --judge random`` to the end."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.dialogues.replay_probe import ReplayProbeArgs
from mmtasks.models.random_model import random_verdict
from mmtasks.scoring.verdicts import JsonObjectArgs, json_object, json_object_space

SHAPE = (Path(__file__).resolve().parents[2] / "tests") / "shapes" / "judged_conversation"
TASK = "judged_conversation"


def copy_shape(tmp_path: Path, **replace: str) -> Path:
    folder = tmp_path / "shape"
    shutil.copytree(SHAPE, folder)
    yaml_file = folder / f"{TASK}.yaml"
    text = yaml_file.read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    yaml_file.write_text(text, encoding="utf-8")
    return folder


def run(folder: Path, out: Path, *args: str) -> tuple[int, dict]:
    code = main(["--tasks", TASK, "--include-path", str(folder), "--data-dir", str(folder / "data"),
                 "--output-path", str(out), "--no-cache", "--no-progress", *args])
    return code, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_replayed_conversation_scores_as_computed_by_hand(tmp_path: Path) -> None:
    code, res = run(SHAPE, tmp_path / "out", "--model", f"replay:{SHAPE / 'model_replies.jsonl'}",
                    "--judge", f"replay:{SHAPE / 'judge_replies.jsonl'}")
    assert code == 1  # one judge failure, counted (exit 1 without --allow-failures)
    # judge_replies.jsonl, by dialogue: c1 7 5 9 | c2 3 4 6 | c3 10 8 2 | c4 1 (11: out of range,
    # re-asked, a judge failure) 5 | c5 6 6 6 | c6 9 (after prose) 7 4 (after "Score:")
    # 17 judged turns summing to 21 + 13 + 20 + 6 + 18 + 20 = 98
    result = res["results"][TASK]
    assert result["score"] == pytest.approx(98 / 17)
    assert result["score_all"] == pytest.approx(98 / 18)  # the failed turn counted as 0
    # per dialogue: 7, 13/3, 20/3, 3, 6, 20/3
    assert result["score_macro"] == pytest.approx((7 + 13 / 3 + 20 / 3 + 3 + 6 + 20 / 3) / 6)
    assert res["problems"][TASK]["judge_failures"] == 1
    assert res["coverage"][TASK]["scored"] == 17 and res["coverage"][TASK]["total"] == 18
    # per turn: (7+3+10+1+6+9)/6, (5+4+8+6+7)/5, (9+6+2+5+6+4)/6
    turns = res["breakdowns"][TASK]["turn"]
    assert [turns[k]["score"] for k in ("1", "2", "3")] == pytest.approx([36 / 6, 30 / 5, 32 / 6])


def test_random_judge_answers_a_json_score_judge_to_the_end(tmp_path: Path) -> None:
    """Before: judge.space {kind: verdict} gave {} and all 18 turns failed ("judge reply could
    not be parsed") while check said no problems."""
    code, res = run(SHAPE, tmp_path / "out", "--model", "random", "--judge", "random")
    assert code == 0
    assert res["problems"][TASK] == {"request_failures": 0, "unparsed": 0, "judge_failures": 0}
    assert res["coverage"][TASK]["scored"] == 18
    assert 1 <= res["results"][TASK]["score"] <= 10
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples" / f"{TASK}.jsonl").read_text().splitlines()]
    scores = [turn["scores"]["score"] for s in samples for turn in s["extra"]["turns"]]
    assert len(scores) == 18 and all(isinstance(v, int) and 1 <= v <= 10 for v in scores)


@pytest.mark.parametrize("space, shown", [
    ("{kind: verdict, format: json, fields: {rating: [1, 10]}}", '{"rating":'),
    ("{kind: text}", ""),
    ("{kind: verdict, fields: {score: {choices: [good, bad]}}}", '{"score": "'),  # format: json, from the parser
])
def test_a_judge_that_cannot_read_its_declared_shape_is_a_check_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                      space: str, shown: str) -> None:
    folder = copy_shape(tmp_path, **{"space: {kind: verdict}": f"space: {space}"})
    code = main(["check", "--tasks", TASK, "--include-path", str(folder), "--data-dir", str(folder / "data")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "field 'judge.space'" in err and "judge parser 'json_object' cannot read a verdict" in err and shown in err
    assert "document 'c1'" in err


@pytest.mark.parametrize("old, new, field, message", [
    ("space: {kind: verdict}", "space: {kidn: verdict}", "judge.space.kidn", "did you mean 'kind'?"),
    ("space: {kind: verdict}", "space: {kind: verdict, fromat: json}", "judge.space.fromat", "did you mean 'format'?"),
    ("space: {kind: verdict}", "space: {kind: verdict, format: jsn}", "judge.space.format", "did you mean 'json'?"),
    ("space: {kind: verdict}", "space: {kind: verdict, fields: {score: {choice: [1, 2]}}}", "judge.space.fields.score.choice",
     "did you mean 'choices'?"),
    ("space: {kind: verdict}", "space: {kind: verdict, fields: {score: boool}}", "judge.space.fields.score", "did you mean 'bool'?"),
    ("space: {kind: verdict}", "space: {kind: verdict, fields: {score: [1]}}", "judge.space.fields.score", "a range is [low, high]"),
    ("protocol: multi_turn", "protocol: multi_turn\nanswer: {space: {kind: text, sorce_text: x}}", "answer.space.sorce_text",
     "did you mean 'source_text'?"),
    ("protocol: multi_turn", "protocol: multi_turn\nanswer: {space: {kind: text, choices: [a, b]}}", "answer.space.choices",
     "does not apply to a 'text' space"),
])
def test_unknown_keys_of_a_space_are_load_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 old: str, new: str, field: str, message: str) -> None:
    folder = copy_shape(tmp_path, **{old: new})
    code = main(["check", "--tasks", TASK, "--include-path", str(folder), "--data-dir", str(folder / "data")])
    err = capsys.readouterr().err
    assert code == 2 and f"field '{field}'" in err and message in err, err


def test_a_protocol_space_is_checked_like_the_others() -> None:
    with pytest.raises(ValueError, match="choise: unknown key \\(did you mean 'choices'\\?\\)"):
        ReplayProbeArgs.model_validate({"probe_prompt": "x", "probe_space": {"kind": "choice", "choise": ["A"]}})


def test_json_object_declares_its_fields_and_ranges() -> None:
    args = JsonObjectArgs(required=["score", "reason"], ranges={"score": (1, 10), "confidence": (0, 0.5)})
    assert json_object_space({}, args) == {"kind": "verdict", "format": "json",
                                           "fields": {"score": [1, 10], "reason": [0, 1], "confidence": [0, 0.5]}}
    rng = random.Random(3)
    for _ in range(50):
        reply = random_verdict(rng, json_object_space({}, args), n_images=1)
        fields = json_object(reply, {}, args)
        assert fields is not None
        assert isinstance(fields["score"], int) and 1 <= fields["score"] <= 10
        assert isinstance(fields["confidence"], float) and 0 <= fields["confidence"] <= 0.5


def test_random_verdict_draws_choices_and_ranges() -> None:
    space = {"kind": "verdict", "format": "json",
             "fields": {"label": {"choices": ["A", "B", "tie"]}, "n": [2, 3], "k": [0, "n"], "ok": "bool"}}
    seen = set()
    rng = random.Random(0)
    for _ in range(60):
        values = json.loads(random_verdict(rng, space, n_images=1).splitlines()[-1])
        assert values["label"] in ("A", "B", "tie") and values["n"] in (2, 3) and 0 <= values["k"] <= values["n"]
        assert isinstance(values["ok"], bool)
        seen.add(values["label"])
    assert seen == {"A", "B", "tie"}
