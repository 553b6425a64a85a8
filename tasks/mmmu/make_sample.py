"""Synthetic MMMU validation records in the schema of the Hugging Face dataset ``MMMU/MMMU``.

Fields (as read by the authors' ``mmmu/run_llava.py`` and ``mmmu/utils/data_utils.py``, and by
lmms-eval's ``tasks/mmmu/utils.py``): ``id`` (``validation_<Subject>_<n>``), ``question``,
``options`` (a string holding a Python list; ``"[]"`` for open questions), ``explanation``,
``image_1`` .. ``image_7`` (empty when unused), ``img_type`` (a string holding a list),
``answer`` (the letter for multiple choice, the text for open questions), ``topic_difficulty``,
``question_type`` (``multiple-choice`` or ``open``) and ``subfield``. ``<image k>`` in the question
or in an option marks where ``image_k`` goes.

Every one of the 30 subjects (the dataset's configs) has at least one record, so that every task
of the group ``mmmu_val`` has data. Two copies of the same records:

- ``mmmu/<Subject>.jsonl`` with ``image_k`` as paths under ``images/`` (the local format:
  ``--data-dir``);
- ``mmmu/hf/``: a Hub-style dataset folder, one config per subject
  (``<Subject>/validation-00000-of-00001.parquet``, ``image_k`` ``Image`` features with the same
  bytes), read with ``datasets.load_dataset(FOLDER, SUBJECT, split="validation")`` like the real one.

The records cover multiple-choice questions with the image in the question, images as the
options, two images in the question, open questions with a number, a word and a list of accepted
answers (``"['24/7', '3.429']"``, as MMMU's answer_dict_val.json lists three of its answers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sample_data.common import rng_for, save_cards, write_jsonl
from sample_data.drawing import Card, info_card, shape_card
from sample_data.hub import embedded, write_hub_configs

#: the disciplines and their subjects (mmmu/utils/data_utils.py DOMAIN_CAT2SUB_CAT)
DISCIPLINES = {
    "Art and Design": ["Art", "Art_Theory", "Design", "Music"],
    "Business": ["Accounting", "Economics", "Finance", "Manage", "Marketing"],
    "Science": ["Biology", "Chemistry", "Geography", "Math", "Physics"],
    "Health and Medicine": ["Basic_Medical_Science", "Clinical_Medicine", "Diagnostics_and_Laboratory_Medicine",
                            "Pharmacy", "Public_Health"],
    "Humanities and Social Science": ["History", "Literature", "Sociology", "Psychology"],
    "Tech and Engineering": ["Agriculture", "Architecture_and_Engineering", "Computer_Science", "Electronics",
                             "Energy_and_Power", "Materials", "Mechanical_Engineering"],
}
SUBJECTS = sorted(s for subjects in DISCIPLINES.values() for s in subjects)
IMAGE_FIELDS = [f"image_{k}" for k in range(1, 8)]
SHAPE_KINDS = ["circle", "square", "triangle", "diamond", "star"]
COLOURS = ["red", "blue", "green", "yellow", "purple", "orange"]


@dataclass(frozen=True)
class Item:
    question: str
    options: list[str]
    answer: str
    cards: list[Card]
    question_type: str = "multiple-choice"
    img_type: list[str] = field(default_factory=lambda: ["Diagrams"])
    difficulty: str = "Easy"



def label_question(subject: str, n: int) -> Item:
    """The image in the question; the options are values written on it."""
    rng = rng_for(f"mmmu:{subject}:{n}")
    values = rng.sample(range(10, 99), 4)
    right = rng.randrange(4)
    title = subject.split("_")[0].upper()[:10]
    return Item(f"<image 1> What value does the card give for {title}?", [str(v) for v in values],
                "ABCD"[right], [info_card([title, str(values[right])])], img_type=["Tables"])


def shape_options(subject: str, n: int) -> Item:
    """Images as the options."""
    rng = rng_for(f"mmmu:{subject}:{n}")
    kinds = rng.sample(SHAPE_KINDS, 3)
    colours = rng.sample(COLOURS, 3)
    right = rng.randrange(3)
    article = "an" if colours[right][0] in "aeiou" else "a"
    return Item(f"Which image shows {article} {colours[right]} {kinds[right]}?", ["<image 1>", "<image 2>", "<image 3>"],
                "ABC"[right], [shape_card(k, c, b, size=96) for b, (k, c) in enumerate(zip(kinds, colours))],
                img_type=["Paintings"], difficulty="Medium")


def two_images(subject: str, n: int) -> Item:
    """Two images in the question."""
    rng = rng_for(f"mmmu:{subject}:{n}")
    first, second = rng.sample(range(6, 12), 2)
    answer = "A" if first < second else "B"
    return Item("<image 1> and <image 2> show the opening hours of two offices. Which one opens earlier?",
                ["The first", "The second", "Both open at the same time"], answer,
                [info_card(["OFFICE 1", f"OPEN {first}-18"]), info_card(["OFFICE 2", f"OPEN {second}-18"])],
                img_type=["Screenshots"], difficulty="Medium")


def sum_open(subject: str, n: int) -> Item:
    """An open question with a number for its answer."""
    rng = rng_for(f"mmmu:{subject}:{n}")
    a, b = rng.randrange(10, 60), rng.randrange(10, 60)
    return Item("<image 1> What is the sum of the two numbers on the card?", [], str(a + b),
                [info_card([f"{a} + {b}"])], question_type="open", img_type=["Tables"], difficulty="Hard")


def name_open(subject: str, n: int) -> Item:
    """An open question with a word for its answer."""
    rng = rng_for(f"mmmu:{subject}:{n}")
    kind = rng.choice(SHAPE_KINDS)
    return Item("Name the shape drawn in <image 1>.", [], kind, [shape_card(kind, rng.choice(COLOURS), size=96)],
                question_type="open", img_type=["Diagrams"])


#: the kind of each subject's record, in subject order, cycling
KINDS = [label_question, shape_options, two_images, sum_open, name_open]


def _items() -> dict[str, list[Item]]:
    items = {s: [KINDS[i % len(KINDS)](s, 1)] for i, s in enumerate(SUBJECTS)}
    # a second record in a few subjects: a list of accepted answers, the image in an option and
    # in the question at once, and a multiple-choice question with more options
    items["Math"].append(Item("What is 24 divided by 7? Give it as a fraction or as a decimal. <image 1>", [],
                              "['24/7', '3.429']", [info_card(["24 / 7 = ?"])], question_type="open",
                              img_type=["Mathematical Notations"], difficulty="Medium"))
    items["Physics"].append(Item("The arrow in <image 1> points along a force. Which diagram shows the same "
                                 "direction?", ["<image 2>", "<image 3>", "Neither of them"], "A",
                                 [info_card(["FORCE", "--->"]), info_card(["--->"]), info_card(["<---"])],
                                 img_type=["Diagrams"], difficulty="Hard"))
    items["Economics"].append(Item("<image 1> In which quarter were the sales highest?",
                                   ["Q1", "Q2", "Q3", "Q4", "The sales did not change"], "C",
                                   [info_card(["Q1 10", "Q2 12", "Q3 19", "Q4 15"])], img_type=["Tables"]))
    return items


def discipline_of(subject: str) -> str:
    return next(d for d, subjects in DISCIPLINES.items() if subject in subjects)


FEATURES = {
    "id": "string", "question": "string", "options": "string", "explanation": "string",
    **{f: "image" for f in IMAGE_FIELDS},
    "img_type": "string", "answer": "string", "topic_difficulty": "string", "question_type": "string",
    "subfield": "string",
}


def generate(root: Path) -> None:
    by_subject: dict[str, list[dict]] = {}
    for subject, items in _items().items():
        records = by_subject[subject] = []
        for n, item in enumerate(items, start=1):
            record_id = f"validation_{subject}_{n}"
            paths = save_cards(root, f"images/{record_id}", item.cards)
            assert 1 <= len(paths) <= 7, record_id
            text = item.question + "".join(item.options)
            assert all(f"<image {k}>" in text for k in range(1, len(paths) + 1)), record_id
            if item.question_type == "multiple-choice":
                assert 0 <= ord(item.answer) - ord("A") < len(item.options), record_id
            records.append({
                "id": record_id, "question": item.question, "options": repr(item.options), "explanation": "",
                **{f: (paths[k] if k < len(paths) else None) for k, f in enumerate(IMAGE_FIELDS)},
                "img_type": repr(item.img_type), "answer": item.answer, "topic_difficulty": item.difficulty,
                "question_type": item.question_type, "subfield": f"{subject.replace('_', ' ')} (synthetic)",
            })
        write_jsonl(root / f"{subject}.jsonl", records)
    configs = {s: [{**r, **{f: embedded(root, r[f]) if r[f] else None for f in IMAGE_FIELDS}} for r in rows]
               for s, rows in by_subject.items()}
    write_hub_configs(root / "hf", split="validation", features=FEATURES, configs=configs,
                      title="MMMU (synthetic sample)",
                      body="Synthetic records in the schema of the Hugging Face dataset MMMU/MMMU (one config per "
                           "subject, split validation), for tests and demos of mmtasks. Generated by "
                           "scripts/make_sample_data.py; no real benchmark data.", statistics=False)
