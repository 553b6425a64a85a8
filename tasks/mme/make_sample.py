"""Synthetic MME records in the schema of the Hugging Face dataset ``lmms-lab/MME`` (split ``test``).

Fields (as lmms-eval's ``tasks/mme/utils.py`` reads them): ``question_id`` (the image: both
questions about one image share it), ``image``, ``question`` (ending with the authors' instruction
"Please answer yes or no."), ``answer`` (``Yes`` or ``No``: each image has one of each, as in the
authors' eval_tool files) and ``category`` (one of the 14 subtasks, as calculation.py names them).

One image per subtask and a second one for ``existence``: 15 images, 30 questions, so every
subtask and both sums have data. Two copies of the same records:

- ``mme/mme.jsonl`` with ``image`` as a path under ``images/`` (the local format: ``--data-dir``);
- ``mme/hf/``: a Hub-style dataset folder (``data/test-00000-of-00001.parquet``, ``image`` an
  ``Image`` feature with the same bytes), read with ``datasets.load_dataset(FOLDER, split="test")``
  like the real dataset.

The pictures and questions are ours (cards with a word or a shape); the ``question_id`` file names
are illustrative.
"""

from __future__ import annotations

from pathlib import Path

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import info_card
from sample_data.hub import embedded, write_hub_folder

ASK = " Please answer yes or no."

#: (category, image name, card lines, shape, colour, the question answered Yes, the one answered No)
IMAGES = [
    ("existence", "000000000001.jpg", ["A CIRCLE"], "circle", "red",
     "Is there a circle in this image?", "Is there a train in this image?"),
    ("existence", "000000000002.jpg", ["A STAR"], "star", "blue",
     "Is there a star in this image?", "Is there a circle in this image?"),
    ("count", "000000000003.jpg", ["ONE SQUARE"], "square", "green",
     "Is there only one square in the image?", "Are there two squares in the image?"),
    ("position", "000000000004.jpg", ["SHAPE BELOW"], "triangle", "red",
     "Is the triangle below the text?", "Is the triangle above the text?"),
    ("color", "000000000005.jpg", ["COLOUR"], "circle", "yellow",
     "Is there a yellow circle in the image?", "Is there a purple circle in the image?"),
    ("posters", "tt0000006.jpg", ["THE SQUARE", "A FILM"], None, None,
     "Is this movie titled The Square?", "Is this movie titled The Circle?"),
    ("celebrity", "tt0000007_shot_0001_img_0.jpg", ["ANNA"], None, None,
     "Is the actor inside the red bounding box named Anna?", "Is the actor inside the red bounding box named Bob?"),
    ("scene", "Places365_val_00000008.jpg", ["BEACH"], None, None,
     "Is this picture captured in a place of beach?", "Is this picture captured in a place of forest?"),
    ("landmark", "0000000000000009.jpg", ["TOWER"], None, None,
     "Is this a photo of the Tower?", "Is this a photo of the Bridge?"),
    ("artwork", "10010.jpg", ["STILL LIFE"], "diamond", "orange",
     "Is this artwork titled Still Life?", "Is this artwork titled Landscape?"),
    ("OCR", "0011.jpg", ["OPEN"], None, None,
     "Is the word in the image \"OPEN\"?", "Is the word in the image \"CLOSED\"?"),
    ("commonsense_reasoning", "0012.png", ["RAIN", "UMBRELLA?"], None, None,
     "Should I take an umbrella when it rains?", "Should I leave the umbrella at home when it rains?"),
    ("numerical_calculation", "0013.png", ["2 + 3 ="], None, None,
     "Is the answer to the arithmetic question in the image 5?", "Is the answer to the arithmetic question in the image 6?"),
    ("text_translation", "0014.png", ["BONJOUR"], None, None,
     "Is it appropriate to translate the text in the image into English as 'hello'?",
     "Is it appropriate to translate the text in the image into English as 'goodbye'?"),
    ("code_reasoning", "0015.png", ["print(1 + 1)"], None, None,
     "The image shows a python code. Is the output of the code '2'?",
     "The image shows a python code. Is the output of the code '11'?"),
]

FEATURES = {"question_id": "string", "image": "image", "question": "string", "answer": "string", "category": "string"}


def generate(root: Path) -> None:
    records = []
    for category, name, lines, shape, colour, yes_q, no_q in IMAGES:
        (path,) = save_cards(root, f"images/{category}", [info_card(lines, shape=shape, color=colour)],
                             names=[Path(name).with_suffix(".jpg").name])
        qid = f"{category}/{name}"
        for question, answer in ((yes_q, "Yes"), (no_q, "No")):
            records.append({"question_id": qid, "image": path, "question": question + ASK, "answer": answer,
                            "category": category})
    write_jsonl(root / "mme.jsonl", records)
    rows = [{**r, "image": embedded(root, r["image"])} for r in records]
    write_hub_folder(root / "hf", split="test", features=FEATURES, rows=rows, title="MME (synthetic sample)",
                     body="Synthetic records in the schema of the Hugging Face dataset lmms-lab/MME, for tests and "
                          "demos of mmtasks. Generated by scripts/make_sample_data.py; no real benchmark data.")
