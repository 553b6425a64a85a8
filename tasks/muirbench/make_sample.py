"""Synthetic MUIRBench records in the schema of the Hugging Face dataset ``MUIRBENCH/MUIRBENCH``.

Fields (as read by the authors' evaluation code and by lmms-eval's
``tasks/muirbench/utils.py``): ``idx``, ``task``, ``image_relation``,
``image_type``, ``question``, ``options`` (a list of strings; the letters
A, B, C... are their positions), ``answer`` (the correct letter) and
``image_list`` (the images). ``<image>`` in the question or in an option marks
where the next image of ``image_list`` goes; a question without any puts all
its images before the text.

Two copies of the same records:

- ``muirbench/muirbench.jsonl`` with ``image_list`` as paths under ``images/``
  (the local format: ``--data-dir``);
- ``muirbench/hf/``: a Hub-style dataset folder (``data/test-00000-of-00001.parquet``,
  ``image_list`` a list of ``Image`` features with the same bytes), read with
  ``datasets.load_dataset(FOLDER, split="test")`` like the real dataset.

The records cover 3 to 6 options, 2 to 4 images, images inside the options,
a question without placeholders, and an unanswerable variant whose correct
option is "None of the choices provided" (the benchmark's pairwise design).
The task names are MUIRBench's; the ``image_relation`` and ``image_type``
strings are illustrative.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import BACKGROUNDS, Card, Shape, info_card, shapes_row
from sample_data.hub import embedded, write_hub_folder

NONE_OF_THEM = "None of the choices provided"


def shapes_card(shapes: list[tuple[str, str]], background: int = 0) -> Card:
    """Shapes (kind, colour) in a row."""
    return shapes_row(shapes, size=44, gap=10, top=26, background=background)


def plant_card(height: int) -> Card:
    """A sprout whose stem grows with ``height`` (1-3)."""
    stem = 18 * height
    return Card(96, 110, background=BACKGROUNDS[3], shapes=[
        Shape("rect", "orange", (34, 86, 62, 104)),
        Shape("rect", "green", (46, 86 - stem, 50, 86)),
        Shape("diamond", "green", (50, 80 - stem, 66, 92 - stem)),
    ])


@dataclass(frozen=True)
class Item:
    idx: str
    task: str
    image_relation: str
    image_type: str
    question: str
    options: list[str]
    answer: str
    cards: list[Card]


def _items() -> list[Item]:
    return [
        Item("muir_sample_1", "Counting", "Independent", "Drawings",
             "How many circles are there in total in <image> and <image>?",
             ["2", "3", "4", NONE_OF_THEM], "B",
             [shapes_card([("circle", "red"), ("square", "blue")]),
              shapes_card([("circle", "green"), ("circle", "yellow"), ("triangle", "red")], 1)]),
        # the unanswerable variant of muir_sample_1: the right count is no longer an option
        Item("muir_sample_2", "Counting", "Independent", "Drawings",
             "How many circles are there in total in <image> and <image>?",
             ["2", "4", "5", NONE_OF_THEM], "D",
             [shapes_card([("circle", "red"), ("square", "blue")]),
              shapes_card([("circle", "green"), ("circle", "yellow"), ("triangle", "red")], 1)]),
        Item("muir_sample_3", "Visual Retrieval", "Partial-Similarity", "Drawings",
             "Which image shows the same shape in the same colour as <image>?",
             ["<image>", "<image>", "<image>", NONE_OF_THEM], "C",
             [shapes_card([("star", "purple")]), shapes_card([("star", "yellow")], 2),
              shapes_card([("diamond", "purple")], 2), shapes_card([("star", "purple")], 4)]),
        Item("muir_sample_4", "Ordering", "Temporal", "Drawings",
             "The images show a sprout on different days: <image> <image> <image> "
             "In which order were they taken, from the earliest to the latest?",
             ["1, 2, 3", "2, 3, 1", "3, 1, 2", "2, 1, 3", NONE_OF_THEM], "D",
             [plant_card(2), plant_card(1), plant_card(3)]),
        Item("muir_sample_5", "Difference Spotting", "Partial-Similarity", "Drawings",
             "Which image is different from the other three?",
             ["The first image", "The second image", "The third image", "The fourth image", NONE_OF_THEM], "B",
             [shapes_card([("square", "blue"), ("circle", "red")]), shapes_card([("square", "blue"), ("circle", "green")]),
              shapes_card([("square", "blue"), ("circle", "red")]), shapes_card([("square", "blue"), ("circle", "red")])]),
        Item("muir_sample_6", "Image-Text Matching", "Independent", "Drawings",
             "<image> Which caption describes the image?",
             ["A red star", "A blue star", "A red circle"], "A",
             [shapes_card([("star", "red")])]),
        Item("muir_sample_7", "Attribute Similarity", "Complementary", "Drawings",
             "Which two of <image> <image> <image> show a shape of the same colour?",
             ["The first and the second", "The first and the third", "The second and the third",
              "All three", "No two of them", NONE_OF_THEM], "C",
             [shapes_card([("triangle", "orange")]), shapes_card([("square", "pink")], 1),
              shapes_card([("circle", "pink")], 2)]),
        Item("muir_sample_8", "Scene Understanding", "Multiview", "Slides",
             "<image> and <image> show the same table from the front and from the back. "
             "How many different shapes stand on the table?",
             ["1", "2", "3", "4", NONE_OF_THEM], "C",
             [shapes_card([("circle", "red"), ("square", "blue"), ("triangle", "green")], 4),
              shapes_card([("triangle", "green"), ("square", "blue"), ("circle", "red")], 4)]),
        Item("muir_sample_9", "Cartoon Understanding", "Narrative", "Slides",
             "The cards tell a short story: <image> <image> What happens in the story?",
             ["The shop opens", "The shop closes", "It starts to rain", NONE_OF_THEM], "B",
             [info_card(["SHOP", "OPEN 9-18"], shape="square", color="green"),
              info_card(["SHOP", "CLOSED"], shape="square", color="black")]),
    ]


FEATURES = {
    "idx": "string", "task": "string", "image_relation": "string", "image_type": "string",
    "question": "string", "options": "list:string", "answer": "string", "image_list": "list:image",
}


def generate(root: Path) -> None:
    records = []
    for item in _items():
        paths = save_cards(root, f"images/{item.idx}", item.cards)
        n_placeholders = item.question.count("<image>") + sum(o.count("<image>") for o in item.options)
        assert n_placeholders in (0, len(paths)), item.idx
        assert 0 <= ord(item.answer) - ord("A") < len(item.options), item.idx
        records.append({
            "idx": item.idx, "task": item.task, "image_relation": item.image_relation, "image_type": item.image_type,
            "question": item.question, "options": item.options, "answer": item.answer, "image_list": paths,
        })
    write_jsonl(root / "muirbench.jsonl", records)
    rows = [{**r, "image_list": [embedded(root, rel) for rel in r["image_list"]]} for r in records]
    write_hub_folder(root / "hf", split="test", features=FEATURES, rows=rows, title="MUIRBench (synthetic sample)",
                     body="Synthetic records in the schema of the Hugging Face dataset MUIRBENCH/MUIRBENCH, "
                          "for tests and demos of mmtasks. Generated by scripts/make_sample_data.py; "
                          "no real benchmark data.")
