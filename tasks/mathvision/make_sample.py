"""Synthetic MATH-Vision records in the schema of the Hugging Face dataset ``MathLLMs/MathVision`` (splits
``test`` and ``testmini``).

Fields, as the dataset card (revision aa89a4a, ``dataset_info.features``) and the authors'
``evaluation/evaluate.py`` read them: ``id``, ``question`` (ending with the tag ``<image1>``, as the
real questions do), ``options`` (five option texts, the letters ``A`` .. ``E`` themselves when the
image shows the options, or empty for a free-form question), ``image`` (``images/<id>.jpg``),
``decoded_image`` (the image), ``answer`` (a letter, or the value: a number, LaTeX, a tuple),
``solution`` (null here), ``level`` (1-5) and ``subject`` (one of the 16). Subjects and levels from
the real vocabulary; the questions and images are made up.

Two copies of the same records: ``mathvision/<split>.jsonl`` with ``decoded_image`` as a path under
``mathvision/`` (the local layout, ours) and ``mathvision/hf/`` (``data/<split>-00000-of-00001.parquet``
and a README.md card), read with ``datasets.load_dataset(FOLDER, split=...)`` as the real dataset is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import Card, info_card, shape_card


@dataclass(frozen=True)
class Item:
    split: str
    id: str
    question: str
    options: list[str]
    answer: str
    level: int
    subject: str
    card: Card


def _items() -> list[Item]:
    return [
        Item("testmini", "1", "How many squares can you see in the picture?\n<image1>", ["3", "4", "5", "6", "7"], "C", 1,
             "counting", info_card(["5 SQUARES"], shape="square", color="blue")),
        Item("testmini", "2", "Which of the pictures shows the shape seen from above?\n<image1>", ["A", "B", "C", "D", "E"],
             "B", 3, "logic", info_card(["A B C D E"], shape="circle", color="red")),
        Item("testmini", "3", "Which number do you have to write in the last daisy?\n<image1>", [], "61", 2, "arithmetic",
             info_card(["48 - 61"])),
        Item("testmini", "4", "The equilateral triangle has height 3. How long is its side?\n<image1>", [], "2\\sqrt{3}", 5,
             "metric geometry - length", info_card(["HEIGHT 3"], shape="triangle", color="green")),
        Item("testmini", "5", "Which point lies on both lines?\n<image1>", [], "(1,2)", 4, "analytic geometry",
             info_card(["y=2x", "y=x+1"])),
        Item("test", "6", "How many edges does the graph have?\n<image1>", ["1", "2", "3", "4", "5"], "E", 2, "graph theory",
             info_card(["5 EDGES"], shape="star", color="orange")),
        Item("test", "7", "In how many ways can the two cards be coloured?\n<image1>", [], "12", 3, "combinatorics",
             shape_card("diamond", "purple")),
    ]


CARD_FEATURES = """\
dataset_info:
  features:
  - name: id
    dtype: string
  - name: question
    dtype: string
  - name: options
    sequence: string
  - name: image
    dtype: string
  - name: decoded_image
    dtype: image
  - name: answer
    dtype: string
  - name: solution
    dtype: string
  - name: level
    dtype: int64
  - name: subject
    dtype: string
configs:
- config_name: default
  data_files:
  - split: test
    path: data/test-*
  - split: testmini
    path: data/testmini-*
"""


def _features() -> Any:
    import datasets  # the [datasets] extra; only this writer needs it

    string = datasets.Value("string")
    return datasets.Features({"id": string, "question": string, "options": datasets.Sequence(string), "image": string,
                              "decoded_image": datasets.Image(), "answer": string, "solution": string,
                              "level": datasets.Value("int64"), "subject": string})


def generate(root: Path) -> None:
    import datasets

    datasets.disable_progress_bars()
    by_split: dict[str, list[dict[str, Any]]] = {"test": [], "testmini": []}
    for item in _items():
        (path,) = save_cards(root, "images", [item.card], names=[f"{item.id}.jpg"])
        by_split[item.split].append({"id": item.id, "question": item.question, "options": item.options, "image": path,
                                     "decoded_image": path, "answer": item.answer, "solution": None,
                                     "level": item.level, "subject": item.subject})
    hub = root / "hf"
    for split, records in by_split.items():
        write_jsonl(root / f"{split}.jsonl", records)
        rows = [{**r, "decoded_image": {"bytes": (root / r["decoded_image"]).read_bytes(), "path": Path(r["image"]).name}}
                for r in records]
        parquet = hub / "data" / f"{split}-00000-of-00001.parquet"
        parquet.parent.mkdir(parents=True, exist_ok=True)
        columns = {name: [row[name] for row in rows] for name in rows[0]}
        datasets.Dataset.from_dict(columns, features=_features()).to_parquet(str(parquet), write_statistics=False)
    (hub / "README.md").write_text(
        f"---\n{CARD_FEATURES}---\n\n# MATH-Vision (synthetic sample)\n\nSynthetic records in the layout of the Hugging "
        "Face dataset MathLLMs/MathVision (splits test and testmini), for tests and demos of mmtasks. Generated by "
        "scripts/make_sample_data.py; no real benchmark data.\n", encoding="utf-8", newline="\n")
