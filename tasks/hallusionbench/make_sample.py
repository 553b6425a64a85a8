"""Synthetic HallusionBench records in the schema of the Hugging Face dataset ``lmms-lab/HallusionBench``.

Fields (the authors' ``HallusionBench.json``, commit 744007c, as lmms-eval's
``tasks/hallusion_bench/evaluate_hb.py`` and ``utils.py`` read them, plus ``image``): ``category``
(``VD`` visual dependent, ``VS`` visual supplement), ``subcategory``, ``visual_input`` (``0`` no figure,
``1`` the original figure, ``2`` an edited one), ``set_id``, ``figure_id`` (``0`` the original figure or,
for VS, no figure), ``sample_note``, ``question_id``, ``question``, ``gt_answer_details``, ``gt_answer``
(``1`` yes, ``0`` no), ``filename`` (the authors' path, null without a figure) and ``image``. The Hub
dataset has two splits: ``image`` (questions with a figure) and ``non_image`` (VS questions without it).

Three sets, 10 questions: a VD illusion asked about its original and its edited figure (2 questions
each), a VS chart asked without and with its figure (2 each), a VS map asked without its figure and
with an edited one (1 each). Two copies:

- ``hallusionbench/hallusionbench.jsonl`` with ``image`` a path under ``images/`` or null (the local
  format: ``--data-dir``);
- ``hallusionbench/hf/``: a Hub-style dataset folder (``data/image-00000-of-00001.parquet``,
  ``data/non_image-00000-of-00001.parquet``, ``image`` an ``Image`` feature with the same bytes, null in
  ``non_image``), read with ``datasets.load_dataset(FOLDER, split="image+non_image")``.

The figures, questions and notes are ours.
"""

from __future__ import annotations

from pathlib import Path

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import info_card, shapes_row
from sample_data.hub import _write_parquet, embedded

FEATURES = {"category": "string", "subcategory": "string", "visual_input": "string", "set_id": "string",
            "figure_id": "string", "sample_note": "string", "question_id": "string", "question": "string",
            "gt_answer_details": "string", "gt_answer": "string", "filename": "string", "image": "image"}

#: (category, subcategory, set_id, figure_id, visual_input, note, card or None, [(question_id, question, details, yes?)])
FIGURES = [
    ("VD", "illusion", "0", "0", "1", "circle", shapes_row([("circle", "orange"), ("circle", "orange")], size=30, gap=10, top=30),
     [("0", "Are the two orange circles the same size?", "The two orange circles are the same size.", True),
      ("1", "Is the right orange circle larger than the left one?", "The two orange circles are the same size.", False)]),
    ("VD", "illusion", "0", "1", "2", "circle", shapes_row([("circle", "orange"), ("square", "orange")], size=30, gap=10, top=30),
     [("0", "Are the two orange circles the same size?", "There is only one orange circle; the other shape is a square.", False),
      ("1", "Is the right orange circle larger than the left one?", "The right shape is a square, not a circle.", False)]),
    ("VS", "chart", "0", "0", "0", "sales", None,
     [("0", "Were the sales of 2020 higher than those of 2019?", "The sales of 2020 were higher than those of 2019.", True),
      ("1", "Were the sales of 2019 higher than those of 2020?", "The sales of 2020 were higher than those of 2019.", False)]),
    ("VS", "chart", "0", "1", "1", "sales", info_card(["SALES", "2019 10", "2020 14"]),
     [("0", "Were the sales of 2020 higher than those of 2019?", "The sales of 2020 were higher than those of 2019.", True),
      ("1", "Were the sales of 2019 higher than those of 2020?", "The sales of 2020 were higher than those of 2019.", False)]),
    ("VS", "map", "1", "0", "0", "capital", None,
     [("0", "Is Paris the capital of France?", "Paris is the capital of France.", True)]),
    ("VS", "map", "1", "1", "2", "capital", info_card(["CAPITAL", "LYON"]),
     [("0", "According to the image, is Paris the capital of France?", "The image gives Lyon as the capital.", False)]),
]


def generate(root: Path) -> None:
    records = []
    for category, sub, set_id, fig, visual, note, card, questions in FIGURES:
        path = None
        if card is not None:
            (path,) = save_cards(root, f"images/{category}/{sub}", [card], names=[f"{set_id}_{fig}.jpg"])
        for qid, question, details, yes in questions:
            records.append({"category": category, "subcategory": sub, "visual_input": visual, "set_id": set_id,
                            "figure_id": fig, "sample_note": note, "question_id": qid, "question": question,
                            "gt_answer_details": details, "gt_answer": "1" if yes else "0",
                            "filename": f"./{category}/{sub}/{set_id}_{fig}.png" if card is not None else None,
                            "image": path})
    write_jsonl(root / "hallusionbench.jsonl", records)
    for split, rows in (("image", [r for r in records if r["image"]]), ("non_image", [r for r in records if not r["image"]])):
        hub_rows = [{**r, "image": embedded(root, r["image"]) if r["image"] else None} for r in rows]
        _write_parquet(root / "hf" / "data" / f"{split}-00000-of-00001.parquet", FEATURES, hub_rows, statistics=False)
    card_lines = ["---", "dataset_info:", "  features:"]
    card_lines += [f"  - name: {name}\n    dtype: {kind}" for name, kind in FEATURES.items()]
    card_lines += ["configs:", "- config_name: default", "  data_files:",
                   "  - split: image\n    path: data/image-*", "  - split: non_image\n    path: data/non_image-*",
                   "---", "", "# HallusionBench (synthetic sample)", "",
                   "Synthetic records in the schema of the Hugging Face dataset lmms-lab/HallusionBench, for tests and demos "
                   "of mmtasks. Generated by scripts/make_sample_data.py; no real benchmark data.", ""]
    (root / "hf" / "README.md").write_text("\n".join(card_lines), encoding="utf-8", newline="\n")
