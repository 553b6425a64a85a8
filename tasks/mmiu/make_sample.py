"""Synthetic MMIU records in the schema of the Hugging Face dataset ``FanqingM/MMIU-Benchmark`` (split test).

Fields (its dataset card; read the same way by OpenGVLab/InternVL's
``internvl_chat/eval/mmiu/evaluate_mmiu.py`` and the authors' ``evaluate.py``):
``task`` (one of 52), ``visual_input_component``, ``source``, ``options`` (one
string, "A: ...\\nB: ..."), ``question``, ``context`` (the task description,
ending with the choices), ``input_image_path`` (paths inside the image zips,
``./<relation>/<task>/<file>``: the first folder is the image relation, one of
7) and ``output`` (the correct letter). The records have no id field: a
document is known by its position.

Two copies of the same records: ``mmiu/mmiu.jsonl`` with the images under
``mmiu/<relation>/<task>/`` as the unzipped zips lay them out (``--data-dir``),
and ``mmiu/hf/`` (``data/test-00000-of-00001.parquet``) holding the same
records; as on the Hub, the images stay outside the parquet, in the relation
folders, and the paths are read relative to the working directory. The task
names of the 2D/3D-spatial, semantic ones are MMIU's; ``temporal_ordering`` and
``next_image_prediction`` are illustrative.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sample_data.common import save_cards, write_jsonl
from sample_data.drawing import Card, info_card, shapes_row
from sample_data.hub import write_hub_folder

#: the seven image relations (the folders of the dataset's image zips)
RELATIONS = ["2D-spatial", "3D-spatial", "Continuous-temporal", "Discrete-temporal", "High-level-obj-semantic",
             "High-level-sub-semantic", "Low-level-semantic"]


def _row(shapes: list[tuple[str, str]], background: int = 0) -> Card:
    return shapes_row(shapes, size=36, gap=8, top=30, background=background)


@dataclass(frozen=True)
class Item:
    relation: str
    task: str
    visual_input_component: str
    source: str
    question: str
    description: str
    options: list[str]
    output: str
    cards: list[Card]


def _items() -> list[Item]:
    return [
        Item("2D-spatial", "jigsaw_puzzle_solving", "natural image", "synthetic",
             "Which piece completes the first image?", "You are given a picture with a missing piece and candidates.",
             ["the second image", "the third image"], "B",
             [info_card(["PUZZLE"], shape="square", color="blue"), _row([("circle", "red")]),
              _row([("square", "blue")], 1)]),
        Item("2D-spatial", "jigsaw_puzzle_solving", "natural image", "synthetic",
             "Which piece completes the first image?", "You are given a picture with a missing piece and candidates.",
             ["the second image", "the third image", "neither"], "A",
             [info_card(["PUZZLE"], shape="star", color="yellow"), _row([("star", "yellow")], 2),
              _row([("diamond", "green")], 3)]),
        Item("2D-spatial", "ravens_progressive_matrices", "synthetic image", "synthetic",
             "Which shape completes the pattern?", "The first image shows a pattern with a missing cell.",
             ["circle", "square", "triangle", "star"], "C",
             [_row([("circle", "black"), ("square", "black"), ("circle", "black")], 4)]),
        Item("3D-spatial", "threeD_Depth_Estimation", "natural image", "synthetic",
             "Which shape is closer to the camera?", "The two images show the same scene from two views.",
             ["the circle", "the square"], "A",
             [_row([("circle", "red"), ("square", "blue")]), _row([("square", "blue"), ("circle", "red")], 1)]),
        Item("Continuous-temporal", "temporal_ordering", "video frame", "synthetic",
             "In which order were the frames taken?", "The images are frames of one video, shuffled.",
             ["1, 2, 3", "2, 3, 1", "3, 1, 2", "3, 2, 1"], "D",
             [_row([("circle", "green")] * 3), _row([("circle", "green")] * 2, 1), _row([("circle", "green")], 2)]),
        Item("Discrete-temporal", "next_image_prediction", "natural image", "synthetic",
             "Which image comes next?", "The first two images show a sequence; the candidates follow.",
             ["the third image", "the fourth image"], "A",
             [_row([("square", "orange")]), _row([("square", "orange")] * 2, 1),
              _row([("square", "orange")] * 3, 2), _row([("circle", "purple")], 3)]),
        Item("High-level-obj-semantic", "spot_the_diff", "natural image", "spot-the-diff",
             "What is different between the two images?", "Spot the difference between the two images.",
             ["the colour of the circle", "the number of squares", "nothing"], "A",
             [_row([("circle", "red"), ("square", "blue")]), _row([("circle", "green"), ("square", "blue")])]),
        Item("High-level-sub-semantic", "emotion_recognition_expw", "natural image", "expw",
             "Which emotion do the faces share?", "Look at the faces in the images.",
             ["happy", "sad", "angry", "surprised"], "A",
             [info_card([":-)"], shape="circle", color="yellow"), info_card([":D"], shape="circle", color="orange")]),
        Item("Low-level-semantic", "forensic_detection_blink", "natural image and synthetic image", "blink",
             "Which image is most likely to be a real photograph?",
             "You are a judge in a photography competition, and now you are given the four images. Please examine "
             "the details and tell which one of them is most likely to be a real photograph.",
             ["the first image", "the second image", "the third image", "the fourth image"], "C",
             [_row([("star", "pink")]), _row([("star", "pink")], 1), _row([("star", "pink")], 2),
              _row([("star", "pink")], 3)]),
    ]


FEATURES = {"task": "string", "visual_input_component": "string", "source": "string", "options": "string",
            "question": "string", "context": "string", "input_image_path": "list:string", "output": "string"}


def generate(root: Path) -> None:
    records = []
    seen: dict[str, int] = {}
    for item in _items():
        assert item.relation in RELATIONS, item.task
        n = seen.get(item.task, 0)
        seen[item.task] = n + 1
        names = [f"{item.task}_{n}_{k}.jpg" for k in range(len(item.cards))]
        paths = save_cards(root, f"{item.relation}/{item.task}", item.cards, names)
        options = "\n".join(f"{chr(ord('A') + k)}: {text}" for k, text in enumerate(item.options))
        assert item.output in [chr(ord("A") + k) for k in range(len(item.options))], item.task
        records.append({
            "task": item.task, "visual_input_component": item.visual_input_component, "source": item.source,
            "options": options, "question": item.question,
            "context": f"{item.description} Select from the following choices.\n{options}",
            "input_image_path": [f"./{p}" for p in paths], "output": item.output,
        })
    write_jsonl(root / "mmiu.jsonl", records)
    write_hub_folder(root / "hf", split="test", features=FEATURES, rows=records, title="MMIU (synthetic sample)",
                     body="Synthetic records in the schema of the Hugging Face dataset FanqingM/MMIU-Benchmark, for "
                          "tests and demos of mmtasks. Generated by scripts/make_sample_data.py; no real benchmark "
                          "data. As on the Hub, the images are not in the parquet: input_image_path names them "
                          "inside the relation folders (./<relation>/<task>/), read from the working directory.")
