"""Synthetic MMBench dev records, with their circular copies, in the layouts of the real data.

The real data hold each question once per circular shift of its options: the original at
``index`` i (< 1,000,000), the k-th shift at i + k * 1,000,000 with the options rotated by k and the
answer letter moved with its option (VLMEvalKit ``vlmeval/dataset/utils/multiple_choice.py``
``mcq_circular_eval`` groups them by ``index % 1e6``; lmms-eval's ``mmbench_evals.py`` the same).
A question of n options has n copies.

- v1.1 (``MMBench_DEV_EN_V11.jsonl``, ``MMBench_DEV_CN_V11.jsonl``): the columns of VLMEvalKit's
  TSVs ``MMBench_DEV_{EN,CN}_V11.tsv`` (``index, question, hint, A, B, C, D, answer, category,
  image, source, l2-category, comment, split``, as the HuggingFaceM4/MMBench mirror of the v1.0 TSV
  lists them), the base64 ``image`` written as a file path under ``images/`` (ours; what
  ``convert_tsv.py`` writes). Options a question lacks are null (NaN in the TSV).
- v1.0 (``MMBench_DEV_EN.jsonl``, ``MMBench_DEV_CN.jsonl`` and ``hf/``): the Hub dataset
  ``lmms-lab/MMBench`` that lmms-eval reads, configs ``en`` and ``cn``, split ``dev`` (features
  ``index, question, hint, answer, A, B, C, D, category, image (Image), source, L2-category,
  comment, split``, its dataset card). Ours: ``index`` is int64 in both configs (the Hub's ``en``
  config writes it as a string; the task reads either).

Three questions per file (4, 2 and 3 options: 9 rows); the texts, categories' pairing and the
``source``/``comment`` values are illustrative.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import Card, shape_card, shapes_row
from sample_data.hub import embedded, write_hub_configs

LETTERS = "ABCD"
OFFSET = 1_000_000


@dataclass(frozen=True)
class Question:
    index: int
    question: str
    hint: str | None
    options: list[str]
    answer: str
    category: str
    l2: str
    card: Card


def _questions(lang: str) -> list[Question]:
    en = lang == "en"
    return [
        Question(3, "What colour is the shape?" if en else "图中形状是什么颜色?", None,
                 ["red", "blue", "green", "yellow"] if en else ["红色", "蓝色", "绿色", "黄色"], "B",
                 "attribute_recognition", "finegrained_perception (instance-level)", shape_card("circle", "blue")),
        Question(17, "Is there a star in the image?" if en else "图中有星形吗?",
                 "The image shows one shape." if en else "图中只有一个形状。",
                 ["yes", "no"] if en else ["是", "否"], "A", "image_topic", "coarse_perception",
                 shape_card("star", "orange", 1)),
        Question(42, "Which shape is on the left?" if en else "左边是什么形状?", None,
                 ["circle", "triangle", "square"] if en else ["圆形", "三角形", "正方形"], "C",
                 "spatial_relationship", "finegrained_perception (cross-instance)",
                 shapes_row([("square", "green"), ("triangle", "red")], size=40, gap=12, top=28)),
    ]


def _copies(q: Question) -> list[tuple[int, list[str], str]]:
    """(index, options, answer) of each circular copy: the k-th rotates the options left by k."""
    n = len(q.options)
    gold = LETTERS.index(q.answer)
    return [(q.index + k * OFFSET, q.options[k:] + q.options[:k], LETTERS[(gold - k) % n]) for k in range(n)]


def _rows(root: Path, lang: str, version: str) -> list[dict[str, Any]]:
    rows = []
    for q in _questions(lang):
        (path,) = save_cards(root, f"images/{lang}", [q.card], [f"{q.index}.jpg"])
        for index, options, answer in _copies(q):
            row = {"index": index, "question": q.question, "hint": q.hint,
                   **{k: (options[i] if i < len(options) else None) for i, k in enumerate(LETTERS)},
                   "answer": answer, "category": q.category, "image": path, "source": "synthetic",
                   "l2-category": q.l2, "comment": None, "split": "dev"}
            if version == "v10":  # lmms-lab/MMBench's column name
                row["L2-category"] = row.pop("l2-category")
            rows.append(row)
    return rows


HUB_FEATURES = {"index": "int64", "question": "string", "hint": "string", "answer": "string",
                **{k: "string" for k in LETTERS}, "category": "string", "image": "image", "source": "string",
                "L2-category": "string", "comment": "string", "split": "string"}


def generate(root: Path) -> None:
    hub: dict[str, list[dict[str, Any]]] = {}
    for lang in ("en", "cn"):
        write_jsonl(root / f"MMBench_DEV_{lang.upper()}_V11.jsonl", _rows(root, lang, "v11"))
        v10 = _rows(root, lang, "v10")
        write_jsonl(root / f"MMBench_DEV_{lang.upper()}.jsonl", v10)
        hub[lang] = [{**r, "image": embedded(root, r["image"])} for r in v10]
    write_hub_configs(root / "hf", split="dev", features=HUB_FEATURES, configs=hub, statistics=False,
                      title="MMBench dev (synthetic sample)",
                      body="Synthetic records in the schema of the Hugging Face dataset lmms-lab/MMBench "
                           "(configs en and cn, split dev), each question with its circular copies, for tests "
                           "and demos of mmtasks. Generated by scripts/make_sample_data.py; no real benchmark data.")
