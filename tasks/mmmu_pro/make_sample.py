"""Synthetic MMMU-Pro records in the schema of the Hugging Face dataset ``MMMU/MMMU_Pro``.

Two configs, split ``test`` (as the authors' ``mmmu-pro/infer/infer_*.py`` and lmms-eval's
``tasks/mmmu_pro/utils.py`` read them):

- ``standard (10 options)``: ``id`` (``test_<Subject>_<n>``), ``question``, ``options`` (a string
  holding a Python list of up to 10 options), ``explanation``, ``image_1`` .. ``image_7`` (empty
  when unused), ``img_type`` (a string holding a list), ``answer`` (the letter),
  ``topic_difficulty`` and ``subject``; ``<image k>`` in the question or an option is ``image_k``;
- ``vision``: ``id``, ``image`` (a screenshot of the question and its options), ``options``,
  ``answer`` and ``subject``.

Two copies of the same records: ``mmmu_pro/standard.jsonl`` and ``mmmu_pro/vision.jsonl`` with the
images as paths under ``images/`` (the local format: ``--data-dir``), and two Hub-style folders,
``hf_standard/`` (config ``standard (10 options)``) and ``hf_vision/`` (config ``vision``), read with
``datasets.load_dataset(FOLDER, CONFIG, split="test")`` like the real dataset.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import Card, info_card, shape_card
from sample_data.hub import embedded, write_hub_configs

IMAGE_FIELDS = [f"image_{k}" for k in range(1, 8)]
STANDARD_CONFIG, VISION_CONFIG = "standard (10 options)", "vision"



@dataclass(frozen=True)
class Item:
    id: str
    subject: str
    question: str
    options: list[str]
    answer: str
    cards: list[Card]
    difficulty: str = "Easy"
    img_type: str = "Diagrams"


def _standard() -> list[Item]:
    ten = [str(v) for v in (12, 15, 18, 21, 24, 27, 30, 33, 36, 39)]
    return [
        Item("test_Math_1", "Math", "<image 1> What is the sum of the two numbers on the card?", ten, "D",
             [info_card(["9 + 12"])], img_type="Tables"),
        # images as options, shuffled: <image 2> comes before <image 1> (the authors' README note)
        Item("test_Art_1", "Art", "Which image shows a red circle?",
             ["<image 2>", "<image 1>", "<image 3>", "A blue square", "A green triangle", "A yellow star",
              "A purple diamond", "An orange circle", "A red square", "None of them"], "B",
             [shape_card("circle", "red", size=96), shape_card("square", "blue", 1, size=96),
              shape_card("star", "yellow", 2, size=96)],
             difficulty="Medium", img_type="Paintings"),
        Item("test_History_1", "History", "<image 1> and <image 2> give the years of two treaties. Which one is older?",
             ["The first", "The second", "Both are of the same year", "Neither", "The cards do not say",
              "The first, by ten years", "The second, by ten years", "Both are after 1900", "Both are before 1500",
              "It cannot be known"], "B",
             [info_card(["TREATY 1", "1815"]), info_card(["TREATY 2", "1648"])], difficulty="Hard",
             img_type="Screenshots"),
        # fewer than ten options (some MMMU-Pro questions keep fewer)
        Item("test_Biology_1", "Biology", "<image 1> How many legs does the drawn insect have?",
             ["4", "6", "8", "10"], "B", [info_card(["INSECT", "LEGS: 6"])]),
    ]


def _vision() -> list[Item]:
    return [
        Item("test_Math_1", "Math", "", ["12", "15", "18", "21", "24"], "D",
             [info_card(["What is 9 + 12?", "A. 12  B. 15", "C. 18  D. 21", "E. 24"], scale=1)]),
        Item("test_Geography_1", "Geography", "", ["North", "South", "East", "West"], "C",
             [info_card(["The sun rises in the", "A. North  B. South", "C. East   D. West"], scale=1)]),
        Item("test_Chemistry_1", "Chemistry", "", ["H2O", "CO2", "NaCl", "O2", "N2", "CH4"], "A",
             [info_card(["Which is water?", "A. H2O  B. CO2  C. NaCl", "D. O2   E. N2   F. CH4"], scale=1)]),
    ]


STANDARD_FEATURES = {
    "id": "string", "question": "string", "options": "string", "explanation": "string",
    **{f: "image" for f in IMAGE_FIELDS},
    "img_type": "string", "answer": "string", "topic_difficulty": "string", "subject": "string",
}
VISION_FEATURES = {"id": "string", "image": "image", "options": "string", "answer": "string", "subject": "string"}


def generate(root: Path) -> None:
    standard = []
    for item in _standard():
        paths = save_cards(root, f"images/standard/{item.id}", item.cards)
        text = item.question + "".join(item.options)
        assert all(f"<image {k}>" in text for k in range(1, len(paths) + 1)), item.id
        assert 0 <= ord(item.answer) - ord("A") < len(item.options) <= 10, item.id
        standard.append({
            "id": item.id, "question": item.question, "options": repr(item.options), "explanation": "?",
            **{f: (paths[k] if k < len(paths) else None) for k, f in enumerate(IMAGE_FIELDS)},
            "img_type": repr([item.img_type]), "answer": item.answer, "topic_difficulty": item.difficulty,
            "subject": item.subject,
        })
    vision = []
    for item in _vision():
        (path,) = save_cards(root, f"images/vision/{item.id}", item.cards)
        assert 0 <= ord(item.answer) - ord("A") < len(item.options), item.id
        vision.append({"id": item.id, "image": path, "options": repr(item.options), "answer": item.answer,
                       "subject": item.subject})
    write_jsonl(root / "standard.jsonl", standard)
    write_jsonl(root / "vision.jsonl", vision)
    body = ("Synthetic records in the schema of the Hugging Face dataset MMMU/MMMU_Pro (config {config}, split "
            "test), for tests and demos of mmtasks. Generated by scripts/make_sample_data.py; no real benchmark data.")
    write_hub_configs(root / "hf_standard", split="test", features=STANDARD_FEATURES,
                      configs={STANDARD_CONFIG: [{**r, **{f: embedded(root, r[f]) if r[f] else None for f in IMAGE_FIELDS}}
                                                 for r in standard]},
                      title="MMMU-Pro standard (synthetic sample)", body=body.format(config=STANDARD_CONFIG),
                      statistics=False)
    write_hub_configs(root / "hf_vision", split="test", features=VISION_FEATURES,
                      configs={VISION_CONFIG: [{**r, "image": embedded(root, r["image"])} for r in vision]},
                      title="MMMU-Pro vision (synthetic sample)", body=body.format(config=VISION_CONFIG),
                      statistics=False)
