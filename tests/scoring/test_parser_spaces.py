"""A task that declares no ``answer.space`` gets its parser's (issue 40, "frictions"): a
``choice`` task's random baseline draws one of the document's own option letters (a ``label``
task's, one of its labels), where it drew a span of the prompt that the parser read no letter in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main

TASK = """\
task: pick_colour
dataset:
  local: {dir: colours, file: questions.jsonl}
  images_field: null
prompt:
  user: "{{ doc.question }}\\n{% for k, v in doc.options.items() %}{{ k }}. {{ v }}\\n{% endfor %}"
target: "field:answer"
answer: {parser: choice, parser_args: {options_field: options}}
metrics:
  - {name: acc, function: choice_acc}
"""

LABELS = """\
task: tell_side
dataset:
  local: {dir: colours, file: questions.jsonl}
  images_field: null
prompt:
  user: "{{ doc.question }} Answer left or right."
target: "{{ doc.side }}"
answer: {parser: label, parser_args: {labels: [left, right]}}
metrics:
  - {name: acc, function: exact_match}
"""


def _write(root: Path) -> None:
    (root / "tasks").mkdir(parents=True)
    (root / "tasks" / "pick_colour.yaml").write_text(TASK, encoding="utf-8")
    (root / "tasks" / "tell_side.yaml").write_text(LABELS, encoding="utf-8")
    data = root / "data" / "colours"
    data.mkdir(parents=True)
    rows = [{"id": f"q{i}", "question": "Which colour is warm? It is not a question of taste at all.",
             "options": dict(zip("ABCD", ["blue", "red", "grey", "green"])), "answer": "B", "side": "left"}
            for i in range(6)]
    (data / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_the_random_baseline_answers_from_the_parsers_space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    _write(tmp_path)
    out = tmp_path / "out"
    assert main(["--tasks", "pick_colour,tell_side", "--no-progress", "--include-path", str(tmp_path / "tasks"),
                 "--data-dir", str(tmp_path / "data"), "--model", "random", "--output-path", str(out)]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for task, labels in (("pick_colour", set("ABCD")), ("tell_side", {"left", "right"})):
        assert results["problems"][task]["unparsed"] == 0  # before: the random text spans went unparsed
        samples = [json.loads(line) for line in (out / "samples" / f"{task}.jsonl").read_text().splitlines()]
        assert {s["parsed"] for s in samples} <= labels and all(s["responses"][0] in labels for s in samples)


def test_by_field_cases_for_a_boolean_field(tmp_path: Path) -> None:
    """``by_field`` on a boolean field: YAML's bare ``true:``/``false:`` keys (and "True", "FALSE")
    match a JSON true/false (before: only the quoted strings "True"/"False" did, and a bare key was
    a load error)."""
    from mmtasks.errors import ConfigError
    from mmtasks.scoring.parsers import bind
    from mmtasks.config.yaml_loader import read_yaml

    (tmp_path / "a.yaml").write_text("cases: {true: {parser: integer}, false: {parser: text}}\nfield: open\n")
    args = read_yaml(tmp_path / "a.yaml")
    parse = bind("by_field", args)
    assert parse("It is 42.", {"open": True}) == 42 and parse("It is 42.", {"open": False}) == "It is 42"
    quoted = bind("by_field", {"field": "open", "cases": {"True": {"parser": "integer"}, "FALSE": {"parser": "text"}}})
    assert quoted("7 of them", {"open": True}) == 7 and quoted("7 of them", {"open": "false"}) == "7 of them"
    numbered = bind("by_field", {"field": "n", "cases": {1: {"parser": "integer"}}})
    assert numbered("3 cats", {"n": 1}) == 3
    with pytest.raises(ConfigError, match="two cases match the value 'true'"):
        bind("by_field", {"field": "open", "cases": {True: {"parser": "integer"}, "True": {"parser": "text"}}})
