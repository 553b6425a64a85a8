"""A scoring variant's own matcher prompt (``variants[].matcher_prompt``, with ``matcher: true``): the
replies the variant's parser reads nothing from are shown to the task's matcher model in the peer's
words, not the task's; the model, labels and none label stay the task's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.dialogues.matching import matcher_request
from mmtasks.preflight import preflight

TASK = '''task: vm
dataset:
  local: {dir: vm, file: vm.jsonl}
  images_field: null
prompt: {user: "{{ doc.question }}"}
answer:
  parser: choice
  parser_args: {options_field: options}
  matcher:
    prompt_file: ours.txt
    question: "{{ doc.question }} (ours)"
    options: "{% for o in doc.options %}({{ 'AB'[loop.index0] }}) {{ o }} {% endfor %}"
    prompt: "Q: {{ question }} O: {{ options }} R: {{ prediction }}"
metrics:
  - {name: acc, function: choice_acc, primary: true}
variants:
  - name: peer
    matcher: true
    matcher_prompt: MATCHER_PROMPT
'''


def _task(tmp_path: Path, matcher_prompt: str, *, matcher: bool = True) -> Path:
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    text = TASK.replace("MATCHER_PROMPT", matcher_prompt)
    (tasks / "vm.yaml").write_text(text if matcher else text.replace("    matcher: true\n", ""), encoding="utf-8")
    (tasks / "ours.txt").write_text("OURS\n", encoding="utf-8")
    (tasks / "peer.txt").write_text("PEER:\n\n", encoding="utf-8")
    data = tmp_path / "data" / "vm"
    data.mkdir(parents=True, exist_ok=True)
    (data / "vm.jsonl").write_text(json.dumps({"id": "d1", "question": "Which?", "options": ["red", "blue"],
                                               "answer": "B"}) + "\n", encoding="utf-8")
    return tasks


def _prompt(tmp_path: Path, matcher_prompt: str) -> tuple[str, str]:
    tasks = _task(tmp_path, matcher_prompt)
    task = preflight(["vm"], include_paths=[tasks], data_dir=tmp_path / "data").tasks[0]
    state = task.state(next(iter(task.documents(tmp_path / "data"))))
    (variant,) = task.variants
    own = matcher_request(state, "the second", position=0, variant=variant)
    theirs = matcher_request(state, "the second", position=0)
    assert own.target == theirs.target == "matcher" and own.meta == theirs.meta  # the task's labels and Z
    return own.messages[-1].parts[0].text, theirs.messages[-1].parts[0].text  # type: ignore[union-attr]


def test_the_variants_prompt_replaces_the_tasks(tmp_path: Path) -> None:
    own, theirs = _prompt(tmp_path, '{prompt_file: peer.txt, options: "{% for o in doc.options %}{{ o }}; {% endfor %}", '
                                    'prompt: "question {{ question }}? options {{ options }} answer {{ prediction }}"}')
    assert theirs == "OURS\nQ: Which? (ours) O: (A) red (B) blue  R: the second"
    # its own file and template, its own options; the question left out: the task's template
    assert own == "PEER:\n\nquestion Which? (ours)? options red; blue;  answer the second"


def test_a_prompt_alone_has_no_prefix(tmp_path: Path) -> None:
    own, _ = _prompt(tmp_path, '{question: "{{ doc.question }}", prompt: "{{ question }} | {{ prediction }}"}')
    assert own == "Which? | the second"


@pytest.mark.parametrize(("matcher_prompt", "matcher", "key", "words"), [
    ("{prompt: x}", False, "variants.0", "set matcher: true too"),
    ("{question: x}", True, "variants.0.matcher_prompt", "needs a prompt or a prompt_file"),
    ("{prompt_file: nowhere.txt}", True, "variants[0].matcher_prompt.prompt_file", "matcher prompt file"),
])
def test_a_wrong_matcher_prompt_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], matcher_prompt: str,
                                                    matcher: bool, key: str, words: str) -> None:
    tasks = _task(tmp_path, matcher_prompt, matcher=matcher)
    assert main(["check", "--tasks", "vm", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "vm.yaml" in err and key in err and words in err, err
