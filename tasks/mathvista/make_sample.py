"""Synthetic MathVista records in the schema of the Hugging Face dataset ``AI4Math/MathVista`` (split ``testmini``).

Fields, as the dataset card (revision d32e834, ``dataset_info.features``) and the authors'
``evaluation/calculate_score.py`` read them: ``pid``, ``question``, ``image`` (the image's path in the
authors' images.zip, ``images/<pid>.jpg``), ``decoded_image`` (the image), ``choices`` (a list of
strings, null for free-form questions), ``unit``, ``precision`` (float64, null unless the answer is a
float), ``answer`` (text), ``question_type`` (``multi_choice`` or ``free_form``), ``answer_type``
(``text``, ``integer``, ``float``, ``list``), ``metadata`` (a struct: category, context, grade,
img_height, img_width, language, skills (list), source, split, task) and ``query`` (the authors'
zero-shot prompt, written as ``evaluation/build_query.py`` builds it: the hint, "Question: ...", the
choices). The labels are from the real vocabulary; the questions and images are made up.

Two copies of the same records: ``mathvista/testmini.jsonl`` with ``decoded_image`` as a path under
``mathvista/`` (the local layout, ours) and ``mathvista/hf/`` (``data/testmini-00000-of-00001.parquet``
and a README.md card with the features), read with ``datasets.load_dataset(FOLDER, split="testmini")``
as the real dataset is by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import Card, info_card, shape_card

HINTS = {
    "multi_choice": "Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, D, at the end.",
    "integer": "Hint: Please answer the question requiring an integer answer and provide the final value, e.g., 1, 2, 3, at the end.",
    "float1": "Hint: Please answer the question requiring a floating-point number with one decimal place and provide the final value, e.g., 1.2, 1.3, 1.4, at the end.",
    "float2": "Hint: Please answer the question requiring a floating-point number with two decimal places and provide the final value, e.g., 1.23, 1.34, 1.45, at the end.",
    "list": "Hint: Please answer the question requiring a Python list as an answer and provide the final list, e.g., [1, 2, 3], [1.2, 1.3, 1.4], at the end.",
}


@dataclass(frozen=True)
class Item:
    pid: str
    question: str
    choices: list[str] | None
    unit: str | None
    precision: float | None
    answer: str
    answer_type: str
    task: str
    skills: list[str]
    category: str
    context: str
    grade: str
    source: str
    card: Card


def _items() -> list[Item]:
    return [
        Item("1", "Find the measure of angle x in the triangle.", ["30", "45", "60", "90"], None, None, "60", "text",
             "geometry problem solving", ["geometry reasoning", "algebraic reasoning"], "math-targeted-vqa",
             "geometry diagram", "high school", "Geometry3K", info_card(["ANGLE x", "60 60 60"], shape="triangle", color="orange")),
        Item("2", "Subtract all blue cubes. How many objects are left?", None, None, None, "3", "integer",
             "math word problem", ["arithmetic reasoning"], "math-targeted-vqa", "synthetic scene",
             "elementary school", "CLEVR-Math", info_card(["4 OBJECTS", "1 BLUE CUBE"], shape="square", color="blue")),
        Item("3", "What is the value of the largest bar?", None, None, 1.0, "7.5", "float",
             "figure question answering", ["statistical reasoning"], "general-vqa", "bar chart", "daily life",
             "ChartQA", info_card(["BARS", "2.5 7.5 4.0"])),
        Item("4", "How much money does Ann need to buy a pen and a ruler?", None, "$", 2.0, "1.45", "float",
             "math word problem", ["arithmetic reasoning", "numeric commonsense"], "math-targeted-vqa", "table",
             "elementary school", "TabMWP", info_card(["PEN $0.95", "RULER $0.50"])),
        Item("5", "Between which two years does the line reach its peak?", None, None, None, "[2007, 2008]", "list",
             "figure question answering", ["statistical reasoning"], "general-vqa", "line plot", "daily life",
             "FigureQA", info_card(["PEAK", "2007-2008"])),
        Item("6", "Is the shape in the image a circle?", ["Yes", "No"], None, None, "Yes", "text",
             "visual question answering", ["logical reasoning"], "general-vqa", "abstract scene", "daily life",
             "VQA2.0", shape_card("circle", "red")),
        Item("7", "What is the perimeter of the square?", None, "cm", None, "12", "integer",
             "geometry problem solving", ["geometry reasoning", "arithmetic reasoning"], "math-targeted-vqa",
             "geometry diagram", "elementary school", "UniGeo", info_card(["SIDE 3 cm"], shape="square", color="green")),
        Item("8", "Which shape has the most sides?", ["triangle", "square", "pentagon"], None, None, "pentagon", "text",
             "textbook question answering", ["scientific reasoning"], "math-targeted-vqa", "scientific figure",
             "high school", "TQA", info_card(["3 4 5 SIDES"], shape="diamond", color="purple")),
    ]


def query_of(item: Item) -> str:
    """build_query.py create_one_query, zero-shot: the hint, the question (with its unit), the choices."""
    if item.choices is not None:
        hint = HINTS["multi_choice"]
    elif item.answer_type == "float":
        hint = HINTS["float1" if item.precision == 1 else "float2"]
    else:
        hint = HINTS[item.answer_type]
    question = f"Question: {item.question}" + (f" (Unit: {item.unit})" if item.unit else "")
    parts = [hint, question]
    if item.choices is not None:
        parts.append("\n".join(["Choices:", *(f"({chr(ord('A') + i)}) {c}" for i, c in enumerate(item.choices))]))
    return "\n".join(parts)


FEATURES_CARD = """\
dataset_info:
  features:
  - name: pid
    dtype: string
  - name: question
    dtype: string
  - name: image
    dtype: string
  - name: decoded_image
    dtype: image
  - name: choices
    sequence: string
  - name: unit
    dtype: string
  - name: precision
    dtype: float64
  - name: answer
    dtype: string
  - name: question_type
    dtype: string
  - name: answer_type
    dtype: string
  - name: metadata
    struct:
    - name: category
      dtype: string
    - name: context
      dtype: string
    - name: grade
      dtype: string
    - name: img_height
      dtype: int64
    - name: img_width
      dtype: int64
    - name: language
      dtype: string
    - name: skills
      sequence: string
    - name: source
      dtype: string
    - name: split
      dtype: string
    - name: task
      dtype: string
  - name: query
    dtype: string
configs:
- config_name: default
  data_files:
  - split: testmini
    path: data/testmini-*
"""


def _features() -> Any:
    import datasets  # the [datasets] extra; only this writer needs it

    string = datasets.Value("string")
    return datasets.Features({
        "pid": string, "question": string, "image": string, "decoded_image": datasets.Image(),
        "choices": datasets.Sequence(string), "unit": string, "precision": datasets.Value("float64"),
        "answer": string, "question_type": string, "answer_type": string,
        "metadata": {"category": string, "context": string, "grade": string, "img_height": datasets.Value("int64"),
                     "img_width": datasets.Value("int64"), "language": string, "skills": datasets.Sequence(string),
                     "source": string, "split": string, "task": string},
        "query": string,
    })


def generate(root: Path) -> None:
    records: list[dict[str, Any]] = []
    for item in _items():
        (path,) = save_cards(root, "images", [item.card], names=[f"{item.pid}.jpg"])
        records.append({
            "pid": item.pid, "question": item.question, "image": path, "decoded_image": path,
            "choices": item.choices, "unit": item.unit, "precision": item.precision, "answer": item.answer,
            "question_type": "multi_choice" if item.choices is not None else "free_form",
            "answer_type": item.answer_type,
            "metadata": {"category": item.category, "context": item.context, "grade": item.grade,
                         "img_height": item.card.height, "img_width": item.card.width, "language": "english",
                         "skills": item.skills, "source": item.source, "split": "testmini", "task": item.task},
            "query": query_of(item),
        })
    write_jsonl(root / "testmini.jsonl", records)

    import datasets

    datasets.disable_progress_bars()
    rows = [{**r, "decoded_image": {"bytes": (root / r["decoded_image"]).read_bytes(), "path": Path(r["image"]).name}}
            for r in records]
    hub = root / "hf"
    parquet = hub / "data" / "testmini-00000-of-00001.parquet"
    parquet.parent.mkdir(parents=True, exist_ok=True)
    columns = {name: [row[name] for row in rows] for name in rows[0]}
    datasets.Dataset.from_dict(columns, features=_features()).to_parquet(str(parquet), write_statistics=False)
    (hub / "README.md").write_text(
        f"---\n{FEATURES_CARD}---\n\n# MathVista (synthetic sample)\n\nSynthetic records in the layout of the Hugging "
        "Face dataset AI4Math/MathVista (split testmini), for tests and demos of mmtasks. Generated by "
        "scripts/make_sample_data.py; no real benchmark data.\n", encoding="utf-8", newline="\n")
