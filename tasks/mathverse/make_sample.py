"""Synthetic MathVerse records in the schema of the Hugging Face dataset ``AI4Math/MathVerse`` (config and
split ``testmini``, the repository's ``testmini.parquet``).

Fields, as the authors' README ("Data Usage") and ``output_templates/output_testmini.json`` (github.com/
ZrrSkywalker/MathVerse at 937b090) list them: ``sample_index``, ``problem_index`` (text), ``problem_version``
(``Text Dominant``, ``Text Lite``, ``Vision Intensive``, ``Vision Dominant``, ``Vision Only``),
``question`` (empty for Vision Only: the question is in the diagram), ``image``, ``answer`` (a letter for
``multi-choice``, else the value), ``question_type`` (``multi-choice`` or ``free-form``), ``metadata``
(split, source, subject, subfield), ``query_wo``, ``query_cot`` and ``question_for_eval`` (added on the Hub
in 96641f2). One problem in all five versions (only its Vision Only record is evaluated) and four more
Vision Only problems; subjects and subfields from the real vocabulary, the problems and images made up.

Two copies: ``mathverse/testmini.jsonl`` (``image`` a path under ``mathverse/``, the local layout, ours) and
``mathverse/hf/`` (``testmini.parquet`` and a README.md card with the config ``testmini``), read with
``datasets.load_dataset(FOLDER, "testmini", split="testmini")`` as the real dataset is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import Card, info_card

WO_FREE = "According to the question shown in the image, please directly answer the question and provide the final value, e.g., 1, 2.5, 300."
WO_MC = "According to the question shown in the image, please directly answer the question and provide the correct option letter, e.g., A, B, C, D."
COT_FREE = ("According to the question shown in the image, please first conduct reasoning, and then answer the question and "
            "provide the final value, e.g., 1, 2.5, 300, at the end.")
COT_MC = ("According to the question shown in the image, please first conduct reasoning, and then answer the question and "
          "provide the correct option letter, e.g., A, B, C, D, at the end.")


@dataclass(frozen=True)
class Problem:
    problem_index: str
    question: str
    answer: str
    question_type: str
    source: str
    subject: str
    subfield: str
    card: Card


def _problems() -> list[Problem]:
    return [
        Problem("1", "A can has a height of 13 cm and a radius of 3 cm. Find the length of the longest straw that fits "
                "inside, rounded down to the nearest cm.", "14", "free-form", "Geo3D_collected", "Solid Geometry",
                "Length", info_card(["H=13 R=3", "L=?"], shape="square", color="blue")),
        Problem("2", "As shown in the figure, angle A is 40 and AB = AC. Find angle B.\nChoices:\nA:40\nB:70\nC:100\nD:140",
                "B", "multi-choice", "GeoQA+", "Plane Geometry", "Angle",
                info_card(["A=40 AB=AC", "A:40 B:70"], shape="triangle", color="green")),
        Problem("3", "Find the slope of the line shown.", "2", "free-form", "VQA2.0", "Functions", "Coordinate",
                info_card(["(0,1) (1,3)"])),
        Problem("4", "Write the equation of the line shown.", "y=2x+1", "free-form", "FunctionQA", "Functions", "Expression",
                info_card(["LINE", "(0,1) (1,3)"], shape="diamond", color="red")),
        Problem("5", "Which is the area of the square?\nChoices:\nA:9\nB:12\nC:16\nD:25", "A", "multi-choice", "GeoQA+",
                "Plane Geometry", "Area", info_card(["SIDE 3", "A:9 B:12"], shape="square", color="orange")),
    ]


VERSIONS = ["Text Dominant", "Text Lite", "Vision Intensive", "Vision Dominant", "Vision Only"]


def _record(problem: Problem, version: str, sample_index: int, image: str) -> dict[str, Any]:
    mc = problem.question_type == "multi-choice"
    vision_only = version == "Vision Only"
    question = "" if vision_only else problem.question
    if vision_only:
        wo, cot = (WO_MC, COT_MC) if mc else (WO_FREE, COT_FREE)
    else:
        hint = "provide the correct option letter, e.g., A, B, C, D" if mc else "provide the final value, e.g., 1, 2.5, 300"
        wo = f"Please directly answer the question and {hint}.\nQuestion: {question}"
        cot = f"Please first conduct reasoning, and then answer the question and {hint}, at the end.\nQuestion: {question}"
    return {"sample_index": str(sample_index), "problem_index": problem.problem_index, "problem_version": version,
            "question": question, "image": image, "answer": problem.answer, "question_type": problem.question_type,
            "metadata": {"split": "testmini", "source": problem.source, "subject": problem.subject,
                         "subfield": problem.subfield},
            "query_wo": wo, "query_cot": cot, "question_for_eval": problem.question}


CARD = """\
---
configs:
- config_name: testmini
  data_files:
  - split: testmini
    path: testmini.parquet
dataset_info:
  config_name: testmini
  features:
  - name: sample_index
    dtype: string
  - name: problem_index
    dtype: string
  - name: problem_version
    dtype: string
  - name: question
    dtype: string
  - name: image
    dtype: image
  - name: answer
    dtype: string
  - name: question_type
    dtype: string
  - name: metadata
    struct:
    - name: split
      dtype: string
    - name: source
      dtype: string
    - name: subject
      dtype: string
    - name: subfield
      dtype: string
  - name: query_wo
    dtype: string
  - name: query_cot
    dtype: string
  - name: question_for_eval
    dtype: string
---

# MathVerse (synthetic sample)

Synthetic records in the layout of the Hugging Face dataset AI4Math/MathVerse (config and split testmini,
testmini.parquet), for tests and demos of mmtasks. Generated by scripts/make_sample_data.py; no real
benchmark data.
"""


def generate(root: Path) -> None:
    import datasets  # the [datasets] extra; only this writer needs it

    datasets.disable_progress_bars()
    records: list[dict[str, Any]] = []
    for problem in _problems():
        versions = VERSIONS if problem.problem_index == "1" else ["Vision Only"]
        (image,) = save_cards(root, "images", [problem.card], names=[f"image_{problem.problem_index}.png"])
        for version in versions:
            records.append(_record(problem, version, 100 + len(records), image))
    write_jsonl(root / "testmini.jsonl", records)
    string = datasets.Value("string")
    features = datasets.Features({
        "sample_index": string, "problem_index": string, "problem_version": string, "question": string,
        "image": datasets.Image(), "answer": string, "question_type": string,
        "metadata": {"split": string, "source": string, "subject": string, "subfield": string},
        "query_wo": string, "query_cot": string, "question_for_eval": string})
    rows = [{**r, "image": {"bytes": (root / r["image"]).read_bytes(), "path": Path(r["image"]).name}} for r in records]
    hub = root / "hf"
    hub.mkdir(parents=True, exist_ok=True)
    columns = {name: [row[name] for row in rows] for name in features}
    datasets.Dataset.from_dict(columns, features=features).to_parquet(str(hub / "testmini.parquet"),
                                                                      write_statistics=False)
    (hub / "README.md").write_text(CARD, encoding="utf-8", newline="\n")
