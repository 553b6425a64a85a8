"""Synthetic BLINK records in the schema of the Hugging Face dataset ``BLINK-Benchmark/BLINK`` (split val).

BLINK has one dataset config per subtask (14). Fields, as the authors' evaluation
code reads them (github.com/zeyofu/BLINK_Benchmark ``eval/test_benchmark.py``)
and as lmms-eval's ``tasks/blink/utils.py`` does: ``idx`` (``val_<Subtask>_<n>``),
``question``, ``sub_task``, ``image_1`` .. ``image_4`` (1-4 images, the unused
ones null), ``choices`` (the option texts; lettered (A), (B) ... in order),
``answer`` (the correct letter written "(A)"), ``prompt`` (the full text the
authors send to the model) and ``explanation``.

Two copies of the same records:

- ``blink/<Subtask>.jsonl`` with ``image_k`` as paths under ``images/`` (the
  local format: ``--data-dir``);
- ``blink/hf/``: a Hub-style dataset folder with one config per subtask
  (``<Subtask>/val-00000-of-00001.parquet``, ``image_k`` as ``Image`` features
  holding the same bytes), read with ``datasets.load_dataset(FOLDER, SUBTASK,
  split="val")`` like the real dataset.

The wording of ``prompt`` ("Select from the following choices." and one "(X)
option" line per choice) is illustrative: the task sends the record's prompt
as it is, whatever it says.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import BACKGROUNDS, Card, Label, Shape, info_card, shapes_row
from sample_data.hub import embedded, write_hub_configs

#: the 14 subtasks (the dataset's config names, the authors' eval/test_benchmark.py list)
SUBTASKS = ["Art_Style", "Functional_Correspondence", "Multi-view_Reasoning", "Relative_Reflectance",
            "Visual_Correspondence", "Counting", "IQ_Test", "Object_Localization", "Semantic_Correspondence",
            "Visual_Similarity", "Forensic_Detection", "Jigsaw", "Relative_Depth", "Spatial_Relation"]
IMAGE_FIELDS = ["image_1", "image_2", "image_3", "image_4"]


def _shapes(shapes: list[tuple[str, str]], background: int = 0, labels: list[Label] | None = None) -> Card:
    return shapes_row(shapes, size=40, gap=10, top=30, background=background, labels=labels)


def _points(names: str, background: int = 0) -> Card:
    """A card with labelled points (A, B, C, D or REF) on a shape, as BLINK's visual prompts."""
    labels = [Label(12 + 26 * k, 10 + 18 * (k % 2), name, 1) for k, name in enumerate(names.split())]
    return Card(120, 96, background=BACKGROUNDS[background], shapes=[Shape("rect", "blue", (20, 50, 100, 80))],
                labels=labels)


@dataclass(frozen=True)
class Item:
    sub_task: str
    n: int
    question: str
    choices: list[str]
    answer: str
    cards: list[Card]


def _items() -> list[Item]:
    return [
        Item("Art_Style", 1, "Which image shares the same style as the reference image?",
             ["the second image", "the third image"], "(A)",
             [info_card(["REF"], shape="star", color="purple"), info_card(["X"], shape="star", color="purple"),
              info_card(["Y"], shape="square", color="green")]),
        Item("Art_Style", 2, "Which image shares the same style as the reference image?",
             ["the second image", "the third image"], "(B)",
             [info_card(["REF"], shape="circle", color="orange"), info_card(["X"], shape="diamond", color="blue"),
              info_card(["Y"], shape="circle", color="orange")]),
        Item("Counting", 1, "How many circles are in the image?", ["1", "2", "3", "4"], "(C)",
             [_shapes([("circle", "red"), ("circle", "green"), ("square", "blue"), ("circle", "yellow")])]),
        Item("Counting", 2, "How many squares are in the image?", ["0", "1", "2", "3"], "(B)",
             [_shapes([("circle", "red"), ("square", "blue")], 1)]),
        Item("Forensic_Detection", 1, "Which image is most likely to be a real photograph?",
             ["the first image", "the second image", "the third image", "the fourth image"], "(D)",
             [_shapes([("star", "pink")]), _shapes([("star", "pink")], 1), _shapes([("star", "pink")], 2),
              _shapes([("star", "pink")], 3)]),
        Item("Functional_Correspondence", 1,
             "Which point on the second image is used for the same action as the reference point on the first image?",
             ["Point A", "Point B", "Point C", "Point D"], "(A)", [_points("REF"), _points("A B C D", 1)]),
        Item("IQ_Test", 1, "Which shape comes next in the row?", ["circle", "square", "triangle", "star"], "(B)",
             [_shapes([("circle", "black"), ("square", "black"), ("circle", "black")], 4)]),
        Item("Jigsaw", 1, "Which piece fits the missing part of the first image?",
             ["the second image", "the third image"], "(B)",
             [info_card(["PUZZLE"], shape="square", color="green"), _shapes([("triangle", "red")]),
              _shapes([("square", "green")], 2)]),
        Item("Multi-view_Reasoning", 1,
             "The images are taken from the same scene; is the camera moving left or right?",
             ["left", "right"], "(A)", [_shapes([("circle", "red"), ("square", "blue")]),
                                        _shapes([("square", "blue"), ("triangle", "green")])]),
        Item("Object_Localization", 1, "Which box contains the yellow star?", ["box A", "box B"], "(B)",
             [_shapes([("circle", "red"), ("star", "yellow")], 0, [Label(12, 8, "A", 1), Label(62, 8, "B", 1)])]),
        Item("Relative_Depth", 1, "Which point is closer to the camera?", ["A", "B"], "(A)", [_points("A B", 2)]),
        Item("Relative_Reflectance", 1, "Which point has darker surface color?", ["A", "B", "About the same"],
             "(C)", [_points("A B", 3)]),
        Item("Semantic_Correspondence", 1,
             "Which point on the second image corresponds to the reference point on the first image?",
             ["Point A", "Point B", "Point C", "Point D"], "(C)", [_points("REF"), _points("A B C D", 2)]),
        Item("Spatial_Relation", 1, "Is the circle to the left of the square?", ["yes", "no"], "(A)",
             [_shapes([("circle", "orange"), ("square", "purple")], 3)]),
        Item("Visual_Correspondence", 1,
             "Which point on the second image is the same as the reference point on the first image?",
             ["Point A", "Point B", "Point C", "Point D"], "(D)", [_points("REF", 1), _points("A B C D", 3)]),
        Item("Visual_Similarity", 1, "Which image is more similar to the reference image?",
             ["the second image", "the third image"], "(A)",
             [_shapes([("diamond", "green")]), _shapes([("diamond", "green")], 1), _shapes([("star", "red")], 2)]),
    ]


def prompt_of(question: str, choices: list[str]) -> str:
    letters = "ABCDE"
    return "\n".join([question, "Select from the following choices."]
                     + [f"({letters[k]}) {choice}" for k, choice in enumerate(choices)])


FEATURES = {"idx": "string", "question": "string", "sub_task": "string",
            **{field: "image" for field in IMAGE_FIELDS},
            "choices": "list:string", "answer": "string", "prompt": "string", "explanation": "string"}


def generate(root: Path) -> None:
    by_task: dict[str, list[dict]] = {name: [] for name in SUBTASKS}
    for item in _items():
        idx = f"val_{item.sub_task}_{item.n}"
        paths = save_cards(root, f"images/{idx}", item.cards)
        assert 1 <= len(paths) <= 4 and 2 <= len(item.choices) <= 5, idx
        assert item.answer in [f"({chr(ord('A') + k)})" for k in range(len(item.choices))], idx
        images = {field: (paths[k] if k < len(paths) else None) for k, field in enumerate(IMAGE_FIELDS)}
        by_task[item.sub_task].append({
            "idx": idx, "question": item.question, "sub_task": item.sub_task.replace("_", " "), **images,
            "choices": item.choices, "answer": item.answer, "prompt": prompt_of(item.question, item.choices),
            "explanation": "",
        })
    for name, records in by_task.items():
        assert records, name
        write_jsonl(root / f"{name}.jsonl", records)
    configs = {name: [{**r, **{f: (embedded(root, r[f]) if r[f] else None) for f in IMAGE_FIELDS}} for r in records]
               for name, records in by_task.items()}
    write_hub_configs(root / "hf", split="val", features=FEATURES, configs=configs, title="BLINK (synthetic sample)",
                      body="Synthetic records in the schema of the Hugging Face dataset BLINK-Benchmark/BLINK "
                           "(one config per subtask, split val), for tests and demos of mmtasks. Generated by "
                           "scripts/make_sample_data.py; no real benchmark data.")
