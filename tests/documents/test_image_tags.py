"""Images named by tags in the text (``prompt.image_tags``) and template text kept as written
(``prompt.strip_around_images``), on a task built from YAML; and MUIRBench's prompt against
the authors' ``create_prompt`` (github.com/muirbench/MuirBench eval/utils/preprocess.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.config.task_config import TaskConfig
from mmtasks.config.yaml_loader import read_yaml, validate
from mmtasks.core.conversation import Image, Text
from mmtasks.errors import ConfigError, DataError
from mmtasks.task import Task
from tests.builders import write_image

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample"


def make_task(tmp_path: Path, records: list[dict[str, Any]], prompt: str, n_images: int = 3) -> Task:
    data = tmp_path / "data" / "bench"
    (data / "img").mkdir(parents=True, exist_ok=True)
    for k in range(n_images):
        write_image(data / "img" / f"{k + 1}.png", color=(40 * k, 10, 10))
    (data / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    yaml_file = tmp_path / "bench.yaml"
    yaml_file.write_text("task: bench\ndataset: {local: {dir: bench, file: bench.jsonl}, images_field: images}\n"
                         f"prompt:\n{prompt}", encoding="utf-8")
    return Task(load_config(yaml_file), yaml_file)


def load_config(yaml_file: Path) -> TaskConfig:
    return validate(TaskConfig, read_yaml(yaml_file), file=yaml_file)


def rendered(task: Task, tmp_path: Path) -> list[list[str]]:
    """Each document's user message: text parts as they are, images as their file names."""
    out = []
    for doc in task.documents(tmp_path / "data"):
        (message,) = task.state(doc).messages
        out.append([p.text if isinstance(p, Text) else f"<{Path(str(p.path)).name}>" for p in message.parts])
    return out


IMGS = ["img/1.png", "img/2.png", "img/3.png"]


def test_numbered_tags_are_replaced_in_place_by_the_image_they_name(tmp_path: Path) -> None:
    records = [{"id": "a", "images": IMGS, "q": "Compare <image 2> with <image 1>.", "opts": ["<image 3>", "none"]},
               # a tag used twice places its image twice; image 3 is named by no tag: it comes first
               {"id": "b", "images": IMGS, "q": "<image 1> and again <image 1>?", "opts": ["x", "y"]}]
    task = make_task(tmp_path, records, "  image_tags: {pattern: '<image (\\d+)>'}\n"
                     "  user: |-\n    {{ doc.q }}\n    {% for o in doc.opts %}\n    - {{ o }}\n    {% endfor %}\n")
    assert rendered(task, tmp_path) == [
        ["Compare ", "<2.png>", " with ", "<1.png>", ".\n- ", "<3.png>", "\n- none\n"],
        ["<2.png>", "<3.png>", "<1.png>", " and again ", "<1.png>", "?\n- x\n- y\n"],
    ]


def test_tags_without_a_group_take_the_images_in_order(tmp_path: Path) -> None:
    records = [{"id": "a", "images": IMGS, "q": "<image><image> then <image>"}]
    task = make_task(tmp_path, records, "  image_tags: {pattern: '<image>'}\n  user: 'Q: {{ doc.q }}'\n")
    assert rendered(task, tmp_path) == [["Q: ", "<1.png>", "<2.png>", " then ", "<3.png>"]]


def test_base_zero_and_untagged_images_dropped(tmp_path: Path) -> None:
    records = [{"id": "a", "images": IMGS, "q": "[img0] vs [img2]"}]
    task = make_task(tmp_path, records, "  image_tags: {pattern: '\\[img(\\d)\\]', base: 0, untagged: drop}\n"
                     "  user: '{{ doc.q }}'\n")
    assert rendered(task, tmp_path) == [["<1.png>", " vs ", "<3.png>"]]


def test_a_tag_naming_a_missing_image_is_an_error_naming_the_document_and_field(tmp_path: Path) -> None:
    records = [{"id": "ok", "images": IMGS, "q": "<image 3>"}, {"id": "bad-doc", "images": IMGS[:2], "q": "see <image 3>"}]
    task = make_task(tmp_path, records, "  image_tags: {pattern: '<image (\\d+)>'}\n  user: '{{ doc.q }}'\n")
    docs = list(task.documents(tmp_path / "data"))
    task.state(docs[0]).messages
    with pytest.raises(DataError) as err:
        task.state(docs[1]).messages
    message = str(err.value)
    assert "bad-doc" in message and "prompt.user" in message and "bench.jsonl" in message
    assert "'<image 3>' names image 3, but the document has 2 images" in message


def test_more_in_order_tags_than_images_is_an_error(tmp_path: Path) -> None:
    records = [{"id": "d1", "images": IMGS[:1], "q": "<image> <image>"}]
    task = make_task(tmp_path, records, "  image_tags: {pattern: '<image>'}\n  user: '{{ doc.q }}'\n")
    (doc,) = task.documents(tmp_path / "data")
    with pytest.raises(DataError, match="names image 2, but the document has 1 image"):
        task.state(doc).messages


@pytest.mark.parametrize("tags, problem", [
    ("{pattern: '<image (\\d+)> (\\d+)'}", "at most one capture group"),
    ("{pattern: 'x*'}", "must not match the empty string"),
    ("{pattern: '<image ('}", "not a regular expression"),
])
def test_bad_patterns_are_load_errors(tmp_path: Path, tags: str, problem: str) -> None:
    yaml_file = tmp_path / "bench.yaml"
    yaml_file.write_text(f"task: bench\ndataset: {{local: {{dir: b, file: b.jsonl}}}}\nprompt:\n  image_tags: {tags}\n",
                         encoding="utf-8")
    with pytest.raises(ConfigError, match=problem) as err:
        load_config(yaml_file)
    assert "prompt.image_tags.pattern" in str(err.value)


def test_text_beside_images_is_kept_as_written_unless_the_task_strips_it(tmp_path: Path) -> None:
    records = [{"id": "a", "images": IMGS[:2]}]
    template = "  user: |-\n    Look:\n    {{ image(0) }}\n    \n    {{ image(1) }}\n    Which?\n"
    kept = make_task(tmp_path, records, template)
    assert rendered(kept, tmp_path) == [["Look:\n", "<1.png>", "\n\n", "<2.png>", "\nWhich?"]]
    stripped = make_task(tmp_path, records, "  strip_around_images: true\n" + template)
    assert rendered(stripped, tmp_path) == [["Look:", "<1.png>", "<2.png>", "Which?"]]


# --- MUIRBench: the authors' create_prompt ---------------------------------------------------

HINT = "Hint: Please provide the correct option letter, such as A, B, C, D, directly."
NONE = "None of the choices provided"

#: create_prompt(sample, use_hint=True) of eval/utils/preprocess.py for each sample document,
#: written out by hand from that function: "Question: {question}", then "Choices:" and one
#: "({letter}) {option}" line per option, the hint, "Answer:", joined by "\n" and stripped.
#: The record's "<image>" placeholders are kept here as text: each must be an image part, in order.
AUTHORS_PROMPTS = {
    "muir_sample_1": "Question: How many circles are there in total in <image> and <image>?\nChoices:\n"
                     f"(A) 2\n(B) 3\n(C) 4\n(D) {NONE}\n{HINT}\nAnswer:",
    "muir_sample_2": "Question: How many circles are there in total in <image> and <image>?\nChoices:\n"
                     f"(A) 2\n(B) 4\n(C) 5\n(D) {NONE}\n{HINT}\nAnswer:",
    "muir_sample_3": "Question: Which image shows the same shape in the same colour as <image>?\nChoices:\n"
                     f"(A) <image>\n(B) <image>\n(C) <image>\n(D) {NONE}\n{HINT}\nAnswer:",
    "muir_sample_4": "Question: The images show a sprout on different days: <image> <image> <image> In which order "
                     "were they taken, from the earliest to the latest?\nChoices:\n"
                     f"(A) 1, 2, 3\n(B) 2, 3, 1\n(C) 3, 1, 2\n(D) 2, 1, 3\n(E) {NONE}\n{HINT}\nAnswer:",
    "muir_sample_5": "Question: Which image is different from the other three?\nChoices:\n"
                     "(A) The first image\n(B) The second image\n(C) The third image\n(D) The fourth image\n"
                     f"(E) {NONE}\n{HINT}\nAnswer:",
    "muir_sample_6": "Question: <image> Which caption describes the image?\nChoices:\n"
                     f"(A) A red star\n(B) A blue star\n(C) A red circle\n{HINT}\nAnswer:",
    "muir_sample_7": "Question: Which two of <image> <image> <image> show a shape of the same colour?\nChoices:\n"
                     "(A) The first and the second\n(B) The first and the third\n(C) The second and the third\n"
                     f"(D) All three\n(E) No two of them\n(F) {NONE}\n{HINT}\nAnswer:",
    "muir_sample_8": "Question: <image> and <image> show the same table from the front and from the back. "
                     "How many different shapes stand on the table?\nChoices:\n"
                     f"(A) 1\n(B) 2\n(C) 3\n(D) 4\n(E) {NONE}\n{HINT}\nAnswer:",
    "muir_sample_9": "Question: The cards tell a short story: <image> <image> What happens in the story?\nChoices:\n"
                     f"(A) The shop opens\n(B) The shop closes\n(C) It starts to rain\n(D) {NONE}\n{HINT}\nAnswer:",
}


@pytest.mark.parametrize("task_name", ["muirbench", "muirbench_strict"])
def test_muirbench_prompt_is_the_authors_create_prompt_with_images_at_their_placeholders(task_name: str) -> None:
    registry = TaskRegistry.discover()
    config, path = registry.load(task_name)
    task = Task(config, path)
    seen = set()
    for doc in task.documents(SAMPLE):
        (message,) = task.state(doc).messages
        parts = message.parts
        images = [p for p in parts if isinstance(p, Image)]
        assert [Path(str(p.path)).name for p in images] == [f"{k}.jpg" for k in range(1, len(doc.images) + 1)]
        expected = AUTHORS_PROMPTS[doc.doc_id]
        if "<image>" in expected:
            text = "".join("<image>" if isinstance(p, Image) else p.text for p in parts)
        else:  # no placeholder (muir_sample_5): every image before the text (ours)
            assert all(isinstance(p, Image) for p in parts[:len(images)])
            text = "".join(p.text for p in parts[len(images):])
        assert text == expected, doc.doc_id
        seen.add(doc.doc_id)
    assert seen == set(AUTHORS_PROMPTS)


def test_the_literal_filter_reads_a_string_holding_a_list() -> None:
    from mmtasks.errors import TemplateError
    from mmtasks.templates import render

    template = "{% for o in doc.options | literal %}({{ 'ABC'[loop.index0] }}) {{ o }}\n{% endfor %}"
    assert render(template, {"doc": {"options": "['x, y', \"it's\"]"}}) == "(A) x, y\n(B) it's\n"
    assert render("{{ doc.n | literal }}", {"doc": {"n": [1, 2]}}) == "[1, 2]"  # not a string: as it is
    with pytest.raises(TemplateError, match="template failed"):
        render("{{ doc.options | literal }}", {"doc": {"options": "__import__('os')"}})
