"""Synthetic CharXiv records in the schema of ``princeton-nlp/CharXiv`` (split ``validation``).

Fields (one row per chart, as lmms-eval's ``lmms_eval/tasks/charxiv/utils.py`` and other readers of
the Hub copy read them): ``image`` (the chart), ``category`` (the arXiv domain: ``cs``, ``econ`` ...),
``year``, ``original_figure_path``, ``original_id``, ``figure_path``, ``num_subplots``,
``subplot_row``, ``subplot_col`` and ``subplot_loc`` (where the descriptive questions look: row 0
for a single plot, a row and a column in a grid, or ``subplot_loc`` a phrase when the subplots do not
form a grid, the row and column then empty), ``descriptive_q1`` .. ``descriptive_q4`` (the template
ids 1-19 of the authors' ``DESCRIPTIVE_RESP_INST``) with ``descriptive_a1`` .. ``descriptive_a4``,
and ``reasoning_q``, ``reasoning_q_source`` (1-3: GPT-sourced, GPT-inspired, completely human),
``reasoning_a`` and ``reasoning_a_type`` (1-4: the answer type, the authors' ``inst_category``).
These are the authors' ``data/descriptive_val.json``, ``reasoning_val.json`` and
``image_metadata_val.json`` joined per figure (github.com/princeton-nlp/CharXiv). ``year`` is
written as the authors' metadata holds it (``"20"`` .. ``"23"``); its type on the Hub was not
checked here (ours). The charts, questions and answers are ours.

Two copies of the same records:

- ``charxiv/charxiv.jsonl`` with ``image`` a path under ``images/`` (the local format:
  ``--data-dir``);
- ``charxiv/hf/``: a Hub-style dataset folder (``data/validation-00000-of-00001.parquet``) with
  ``image`` an ``Image`` feature holding the same bytes.
"""

from __future__ import annotations

from pathlib import Path

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import Card, Label, Shape
from sample_data.hub import embedded, write_hub_folder


def _charts() -> list[Card]:
    return [
        Card(160, 120, shapes=[Shape("rect", "blue", (20, 60, 45, 100)), Shape("rect", "red", (60, 30, 85, 100)),
                               Shape("rect", "green", (100, 80, 125, 100))],
             labels=[Label(8, 4, "SALES 2020", 2)]),
        Card(200, 140, shapes=[Shape("rect", "blue", (10, 20, 90, 60)), Shape("rect", "red", (110, 20, 190, 60)),
                               Shape("rect", "green", (10, 80, 90, 120)), Shape("rect", "orange", (110, 80, 190, 120))],
             labels=[Label(8, 4, "GDP", 2)]),
        Card(160, 150, shapes=[Shape("triangle", "orange", (40, 10, 120, 50)), Shape("circle", "blue", (60, 60, 100, 90)),
                               Shape("rect", "green", (30, 100, 130, 140))],
             labels=[Label(8, 4, "FIELD", 2)]),
    ]


#: one row per chart: the fields of the Hub's schema, the image aside
_ROWS: list[dict] = [
    {"category": "cs", "year": "20", "original_figure_path": "arXiv_src_2004_001/2004/2004.00001/figures/sales.jpg",
     "original_id": "2004.00001", "figure_path": "images/0.jpg", "num_subplots": 1,
     "subplot_row": 0, "subplot_col": 0, "subplot_loc": None,
     "descriptive_q1": 1, "descriptive_q2": 4, "descriptive_q3": 11, "descriptive_q4": 18,
     "descriptive_a1": "Sales 2020", "descriptive_a2": "0", "descriptive_a3": "Not Applicable", "descriptive_a4": "1 by 1",
     "reasoning_q": "Which bar is the tallest?", "reasoning_q_source": 1, "reasoning_a": "red", "reasoning_a_type": 1},
    {"category": "econ", "year": "22", "original_figure_path": "arXiv_src_2203_002/2203/2203.00002/figures/gdp.jpg",
     "original_id": "2203.00002", "figure_path": "images/1.jpg", "num_subplots": 4,
     "subplot_row": 1, "subplot_col": 2, "subplot_loc": None,
     "descriptive_q1": 2, "descriptive_q2": 10, "descriptive_q3": 13, "descriptive_q4": 19,
     "descriptive_a1": "Year", "descriptive_a2": "2", "descriptive_a3": "GDP, CPI", "descriptive_a4": "4",
     "reasoning_q": "What is the ratio of the red area to the blue area?", "reasoning_q_source": 3,
     "reasoning_a": "0.25", "reasoning_a_type": 4},
    {"category": "physics", "year": "23", "original_figure_path": "arXiv_src_2301_003/2301/2301.00003/figures/field.jpg",
     "original_id": "2301.00003", "figure_path": "images/2.jpg", "num_subplots": 3,
     "subplot_row": None, "subplot_col": None, "subplot_loc": "the bottom subplot",
     "descriptive_q1": 7, "descriptive_q2": 12, "descriptive_q3": 16, "descriptive_q4": 17,
     "descriptive_a1": "1.5", "descriptive_a2": "Not Applicable", "descriptive_a3": "Increases then stabilizes",
     "descriptive_a4": "9",
     "reasoning_q": "What is the highest value on the y-axis of the top subplot?", "reasoning_q_source": 2,
     "reasoning_a": "12", "reasoning_a_type": 3},
]

FEATURES = {
    "image": "image", "category": "string", "year": "string", "original_figure_path": "string", "original_id": "string",
    "figure_path": "string", "num_subplots": "int64", "subplot_row": "int64", "subplot_col": "int64",
    "subplot_loc": "string",
    **{f"descriptive_q{i}": "int64" for i in range(1, 5)}, **{f"descriptive_a{i}": "string" for i in range(1, 5)},
    "reasoning_q": "string", "reasoning_q_source": "int64", "reasoning_a": "string", "reasoning_a_type": "int64",
}


def generate(root: Path) -> None:
    paths = save_cards(root, "images", _charts(), [Path(r["figure_path"]).name for r in _ROWS])
    records = [{"image": path, **row} for row, path in zip(_ROWS, paths, strict=True)]
    write_jsonl(root / "charxiv.jsonl", records)
    rows = [{**r, "image": embedded(root, r["image"])} for r in records]
    write_hub_folder(root / "hf", split="validation", features=FEATURES, rows=rows,
                     title="CharXiv (synthetic sample)",
                     body="Synthetic records in the schema of the Hugging Face dataset princeton-nlp/CharXiv (split "
                          "validation), for tests and demos of mmtasks. Generated by scripts/make_sample_data.py; no "
                          "real benchmark data.")
