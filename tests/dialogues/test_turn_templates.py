"""Model-in-the-loop turns in YAML (issue 40, item 11): ``multi_turn``'s ``protocol_args.turns``
are templates rendered when each turn is asked, so a follow-up quotes the model's earlier reply
(``{{ replies[0] }}``) and the record's fields; ``check`` refuses an undefined name in any turn
template with one line naming the file, the document and the turn's key. The shape
``tests/shapes/follow_up`` is the example ``docs/authors/protocols.md`` shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
SHAPE = ROOT / "tests" / "shapes" / "follow_up"
YAML = (SHAPE / "tasks" / "follow_up.yaml").read_text(encoding="utf-8")


def test_a_follow_up_quotes_the_models_reply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert main(["--tasks", "follow_up", "--no-progress", "--include-path", str(SHAPE / "tasks"), "--data-dir",
                 str(SHAPE / "data"), "--model", f"replay:{SHAPE / 'replies.jsonl'}", "--output-path", str(out),
                 "--allow-failures"]) == 0
    samples = {s["doc_id"]: s for s in map(json.loads, (out / "samples" / "follow_up.jsonl").read_text().splitlines())}
    second = [t["question"] for t in samples["s2"]["extra"]["turns"]][1]
    assert second == 'You answered: "There are 4 squares.". Now count only the blue squares.'  # before: sent literally
    assert samples["s2"]["prompt"][-1] == {"role": "user", "content": [{"type": "text", "text": second}]}
    first = samples["s1"]["prompt"][0]["content"]
    assert [p["type"] for p in first] == ["image", "text"]  # {{ image(0) }} placed the record's image
    assert {d: s["target"] for d, s in samples.items()} == {"s1": ["3", "2"], "s2": ["4", "3"], "s3": ["2", "1"]}
    results = json.loads((out / "results.json").read_text())
    # turn 1: s1 3/3, s2 4/4 right, s3 3 for 2 wrong; turn 2: s1 2/2, s2 3/3 right, s3 "I am not sure." unparsed
    # (scored 0): 4 of 6 turns; dialogues 100, 100, 0
    metrics = results["results"]["follow_up"]
    assert metrics["acc"] == pytest.approx(400 / 6) and metrics["acc_macro"] == pytest.approx(200 / 3)
    assert results["coverage"]["follow_up"] == {"unit": "turns", "scored": 6, "total": 6, "percent": 100.0,
                                                "unscored": {}, "unparsed": 1}


@pytest.mark.parametrize(("swap", "field", "message"), [
    ("{{ reply_1 }}", "protocol_args.turns[1].user", "'reply_1' is undefined"),
    ("{{ replies[1] }}", "protocol_args.turns[1].user", "no element 1"),   # only one reply before turn 2
    ("{{ replies[0] }", "protocol_args.turns[1].user", "template syntax error"),
])
def test_check_refuses_an_undefined_name_in_a_turn(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   swap: str, field: str, message: str) -> None:
    (tmp_path / "follow_up_bad.yaml").write_text(
        YAML.replace("task: follow_up", "task: follow_up_bad").replace("{{ replies[0] }}", swap), encoding="utf-8")
    assert main(["check", "--tasks", "follow_up_bad", "--include-path", str(tmp_path), "--data-dir",
                 str(SHAPE / "data")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"field '{field}'" in err[0] and message in err[0] and "follow_up_bad.yaml" in err[0], err


def test_a_scored_turn_needs_a_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "no_reference.yaml").write_text(
        YAML.replace("task: follow_up", "task: no_reference").replace('      reference: "{{ doc.of_colour }}"\n', ""),
        encoding="utf-8")
    assert main(["check", "--tasks", "no_reference", "--include-path", str(tmp_path), "--data-dir",
                 str(SHAPE / "data")]) == 2
    assert "field 'protocol_args.turns[1].reference'" in capsys.readouterr().err


def test_the_protocols_page_shows_the_example() -> None:
    page = (ROOT / "docs" / "authors" / "protocols.md").read_text(encoding="utf-8")
    body = YAML.split("\ntask: ", 1)[1]
    assert "task: " + body in page  # the page's example is the tested file


def test_an_unparsed_turn_left_unscored_is_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``answer.unparsed: unscored`` on turns: s3's unread second reply has no score and coverage
    says why (before: an unexplained unscored turn, so no coverage at all)."""
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "unscored.yaml").write_text(
        YAML.replace("task: follow_up", "task: follow_up_unscored").replace(
            "answer: {parser: integer}", "answer: {parser: integer, unparsed: unscored}"), encoding="utf-8")
    replies = tmp_path / "replies.jsonl"
    replies.write_text((SHAPE / "replies.jsonl").read_text().replace('"follow_up"', '"follow_up_unscored"'))
    out = tmp_path / "out"
    assert main(["--tasks", "follow_up_unscored", "--no-progress", "--include-path", str(tmp_path), "--data-dir",
                 str(SHAPE / "data"), "--model", f"replay:{replies}", "--output-path", str(out),
                 "--allow-failures"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["coverage"]["follow_up_unscored"] == {"unit": "turns", "scored": 5, "total": 6, "percent": 500 / 6,
                                                         "unscored": {"unparsed": 1}}
    assert results["results"]["follow_up_unscored"]["acc"] == pytest.approx(80.0)  # 4 of the 5 scored turns
