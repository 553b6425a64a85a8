"""Synthetic Mantis-Eval records in the schema of the Hugging Face dataset ``TIGER-Lab/Mantis-Eval`` (split test).

Fields, as the authors write them (github.com/TIGER-AI-Lab/Mantis
``data/upload_test_dataset_to_hf.py``: ``create_hf_dataset``) and read them
(``mantis/benchmark/eval.py``): ``id``, ``question_type`` (``multi-choice`` or
``short-answer``), ``question`` (``<image>`` marks where an image goes; images
no tag names come first), ``images`` (a sequence of images), ``options`` (a
list of strings, empty for short answers; an option may carry its own letter,
"A. ..."), ``answer`` (the letter, sometimes "(B)", or the short answer),
``data_source`` and ``category``.

Two copies of the same records: ``mantis_eval/mantis_eval.jsonl`` with
``images`` as paths under ``images/`` (``--data-dir``), and ``mantis_eval/hf/``,
a Hub-style folder (``data/test-00000-of-00001.parquet``, ``images`` a list of
``Image`` features with the same bytes). The categories and data sources are
illustrative.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import BACKGROUNDS, Card, Shape, info_card
from sample_data.hub import embedded, write_hub_folder


def _row(shapes: list[tuple[str, str]], background: int = 0) -> Card:
    size, gap = 40, 10
    drawn = [Shape(kind, color, (gap + k * (size + gap), 28, gap + k * (size + gap) + size, 28 + size))
             for k, (kind, color) in enumerate(shapes)]
    return Card(max(96, gap + len(shapes) * (size + gap)), 96, background=BACKGROUNDS[background], shapes=drawn)


@dataclass(frozen=True)
class Item:
    id: str
    question_type: str
    question: str
    options: list[str]
    answer: str
    category: str
    data_source: str
    cards: list[Card]


def _items() -> list[Item]:
    return [
        Item("1", "multi-choice", "<image> <image> Which image shows more circles?",
             ["The first image", "The second image"], "B", "Counting", "synthetic",
             [_row([("circle", "red")]), _row([("circle", "green"), ("circle", "blue")], 1)]),
        # options that carry their own letters (the prompt then lists them as they are)
        Item("2", "multi-choice", "Image 1: <image>\nImage 2: <image>\nWhat do the two images have in common?",
             ["A. Both show a star", "B. Both show a square", "C. Both are empty"], "(A)", "Comparison", "synthetic",
             [_row([("star", "yellow")], 2), _row([("star", "purple"), ("circle", "red")], 3)]),
        # no tag: the images come before the text
        Item("3", "multi-choice", "Which of the three images is different from the others?",
             ["the first", "the second", "the third"], "C", "Difference", "synthetic",
             [_row([("square", "blue")]), _row([("square", "blue")], 1), _row([("triangle", "blue")], 2)]),
        # fewer tags than images: the untagged image comes first
        Item("4", "multi-choice", "Compare it with <image>. Are the shapes the same colour?",
             ["yes", "no"], "A", "Comparison", "synthetic",
             [_row([("diamond", "orange")]), _row([("circle", "orange")], 4)]),
        Item("5", "short-answer", "<image> <image> How many shapes are there in the two images together?",
             [], "3", "Counting", "synthetic",
             [_row([("circle", "red"), ("square", "green")]), _row([("star", "pink")], 1)]),
        Item("6", "short-answer", "<image> What word is written on the sign?", [], "OPEN", "OCR", "synthetic",
             [info_card(["OPEN"], shape="square", color="green")]),
        Item("7", "multi-choice", "<image><image> Which image is brighter?", ["the first image", "the second image",
             "both the same", "neither"], "D", "Comparison", "synthetic",
             [_row([("circle", "black")], 4), _row([("circle", "black")], 4)]),
    ]


FEATURES = {"id": "string", "images": "list:image", "question_type": "string", "question": "string",
            "options": "list:string", "answer": "string", "data_source": "string", "category": "string"}


def generate(root: Path) -> None:
    records = []
    for item in _items():
        paths = save_cards(root, f"images/{item.id}", item.cards)
        assert item.question.count("<image>") <= len(paths), item.id
        assert (item.question_type == "multi-choice") == bool(item.options), item.id
        records.append({"id": item.id, "question_type": item.question_type, "question": item.question,
                        "images": paths, "options": item.options, "answer": item.answer,
                        "data_source": item.data_source, "category": item.category})
    write_jsonl(root / "mantis_eval.jsonl", records)
    rows = [{**r, "images": [embedded(root, rel) for rel in r["images"]]} for r in records]
    write_hub_folder(root / "hf", split="test", features=FEATURES, rows=rows, title="Mantis-Eval (synthetic sample)",
                     body="Synthetic records in the schema of the Hugging Face dataset TIGER-Lab/Mantis-Eval, for "
                          "tests and demos of mmtasks. Generated by scripts/make_sample_data.py; no real benchmark "
                          "data.")
