"""Synthetic MMStar records in the schema of the Hugging Face dataset ``Lin-Chen/MMStar``.

That dataset (config ``val``, split ``val``, 1,500 rows) has the features ``index`` (int64),
``question`` (the question, then its options inline: "\\nOptions: A: ..., B: ..., C: ..., D: ..."),
``image`` (an ``Image``), ``answer`` (the letter), ``category`` (one of 6 core capabilities),
``l2_category`` (one of 18 axes) and ``meta_info`` (``source``, ``split``, ``image_path``), as its
dataset card lists them and the authors' README and lmms-eval's ``tasks/mmstar/utils.py`` read them.

Two copies: ``mmstar/mmstar.jsonl`` (``image`` a path under ``images/``: ours) and ``mmstar/hf/``
(``val/val-00000-of-00001.parquet``, read with ``datasets.load_dataset(FOLDER, "val", split="val")``;
the real repository holds one ``mmstar.parquet``). Eight questions: one per core capability, two
more in math (the axes unequal, so a mean of axis means differs from the question mean), one with
two options and one whose option holds a comma. The texts and ``meta_info`` values are illustrative;
the category and axis names are the benchmark's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import Card, info_card, shape_card, shapes_row
from sample_data.hub import embedded

LETTERS = "ABCD"


@dataclass(frozen=True)
class Item:
    index: int
    question: str
    options: list[str]
    answer: str
    category: str
    l2: str
    card: Card


def _items() -> list[Item]:
    return [
        Item(0, "What is the main topic of the image?", ["a shape", "a city", "a beach", "a forest"], "A",
             "coarse perception", "image scene and topic", shape_card("circle", "red")),
        Item(1, "How many shapes are in the image?", ["1", "2", "3", "4"], "B",
             "fine-grained perception", "object counting",
             shapes_row([("square", "green"), ("triangle", "blue")], size=40, gap=12, top=28)),
        Item(2, "Which option describes the relation of the shapes correctly?",
             ["The square is left of the star, and below it.", "The star is left of the square."], "A",
             "instance reasoning", "cross-instance relation reasoning",
             shapes_row([("square", "orange"), ("star", "pink")], size=40, gap=12, top=28)),
        Item(3, "What does the diagram show next?", ["DAY 2", "DAY 4", "DAY 3", "DAY 1"], "C",
             "logical reasoning", "diagram reasoning", info_card(["DAY 1", "DAY 2"])),
        Item(4, "Which colour absorbs the most light?", ["white", "yellow", "pink", "black"], "D",
             "science & technology", "biology & chemistry & physics", shape_card("square", "black", 1)),
        Item(5, "How many sides does the shape have?", ["3", "4", "5", "6"], "B",
             "math", "geometry", shape_card("square", "blue", 2)),
        Item(6, "How many corners does the shape have?", ["3", "4", "5", "0"], "A",
             "math", "geometry", shape_card("triangle", "green", 3)),
        Item(7, "What is 2 + 3?", ["4", "5", "6", "7"], "B",
             "math", "numeric commonsense and calculation", info_card(["2 + 3 = ?"])),
    ]


def _question(item: Item) -> str:
    options = ", ".join(f"{LETTERS[i]}: {text}" for i, text in enumerate(item.options))
    return f"{item.question}\nOptions: {options}"


def generate(root: Path) -> None:
    records = []
    for item in _items():
        (path,) = save_cards(root, "images", [item.card], [f"{item.index}.jpg"])
        records.append({"index": item.index, "question": _question(item), "image": path, "answer": item.answer,
                        "category": item.category, "l2_category": item.l2,
                        "meta_info": {"source": "synthetic", "split": "val", "image_path": f"images/{item.index}.jpg"}})
    write_jsonl(root / "mmstar.jsonl", records)
    _write_hub(root / "hf", [{**r, "image": embedded(root, r["image"])} for r in records])


def _write_hub(folder: Path, rows: list[dict[str, Any]]) -> None:
    """``val/val-00000-of-00001.parquet`` with the Hub's features (``meta_info`` a struct) and its card."""
    import datasets

    datasets.disable_progress_bars()
    string = datasets.Value("string")
    features = datasets.Features({
        "index": datasets.Value("int64"), "question": string, "image": datasets.Image(), "answer": string,
        "category": string, "l2_category": string,
        "meta_info": {"source": string, "split": string, "image_path": string}})
    path = folder / "val" / "val-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = {name: [row[name] for row in rows] for name in features}
    datasets.Dataset.from_dict(columns, features=features).to_parquet(str(path), write_statistics=False)
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: val\n  data_files:\n  - split: val\n    path: val/val-*\n---\n\n"
        "# MMStar (synthetic sample)\n\nSynthetic records in the schema of the Hugging Face dataset Lin-Chen/MMStar "
        "(config val, split val), for tests and demos of mmtasks. Generated by scripts/make_sample_data.py; "
        "no real benchmark data.\n", encoding="utf-8", newline="\n")
