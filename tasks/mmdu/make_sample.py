"""Synthetic MMDU dialogues in the official ``benchmark.json`` schema (shared/specs/mmdu.md).

``image`` holds author-style absolute paths (as in the released file); only
their file names exist under ``images/``. The n-th ``<ImageHere>`` of a
dialogue is ``image[n - 1]``. The dialogues cover a first turn without an
image, turns that bring zero, one or two images, and later turns that refer
back to "Image1". The reference answers agree with what the images show.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sample_data.common import write_json
from sample_data.drawing import BACKGROUNDS, Card, Label, Shape, info_card

#: Two made-up author directories; a loader must resolve by file name only.
_AUTHOR_DIRS = ("/mnt/petrel/mmdu_annotation/pics", "/home/annotator/MMDU/images/batch2")


def bar_chart(title: str, values: dict[str, int], color: str) -> Card:
    """Vertical bars with their value on top and their name below."""
    width, height, base = 40 + 44 * len(values), 180, 150
    shapes, labels = [], [Label(8, 6, title, 2)]
    top = max(values.values())
    for k, (name, value) in enumerate(values.items()):
        x0 = 24 + 44 * k
        bar = round(100 * value / top)
        shapes.append(Shape("rect", color, (x0, base - bar, x0 + 28, base)))
        labels.append(Label(x0 + 2, base - bar - 12, str(value)))
        labels.append(Label(x0 + 2, base + 6, name))
    return Card(width, height, background=BACKGROUNDS[4], shapes=shapes, labels=labels)


def scene(shapes: list[tuple[str, str]], background: int = 0) -> Card:
    """Shapes (shape, colour) side by side, like objects on a table."""
    size = 48
    shapes_drawn = [Shape(shape, color, (10 + k * (size + 12), 40, 10 + k * (size + 12) + size, 40 + size))
                    for k, (shape, color) in enumerate(shapes)]
    return Card(20 + len(shapes) * (size + 12), 128, background=BACKGROUNDS[background], shapes=shapes_drawn)


def floor_plan(rooms: list[tuple[str, int, str, tuple[int, int, int, int]]]) -> Card:
    """Rooms as coloured rectangles labelled with name and area (m2)."""
    shapes, labels = [], []
    for name, area, color, box in rooms:
        shapes.append(Shape("rect", color, box))
        labels.append(Label(box[0] + 4, box[1] + 4, name))
        labels.append(Label(box[0] + 4, box[1] + 18, f"{area} M2"))
    return Card(200, 160, background=BACKGROUNDS[1], shapes=shapes, labels=labels, text_color=(255, 255, 255))


def plant(week: int, height_cm: int, flower: bool = False) -> Card:
    """A bean plant in a pot: a stem whose height follows ``height_cm``."""
    stem = 5 * height_cm
    shapes = [Shape("rect", "orange", (70, 170, 110, 200)),
              Shape("rect", "green", (87, 170 - stem, 93, 170)),
              Shape("diamond", "green", (93, 160 - stem // 2, 117, 176 - stem // 2))]
    if flower:
        shapes.append(Shape("circle", "pink", (78, 158 - stem, 102, 182 - stem)))
    return Card(180, 210, background=BACKGROUNDS[3], shapes=shapes,
                lines=[f"WEEK {week}", f"HEIGHT {height_cm} CM"])


@dataclass(frozen=True)
class Dialogue:
    id: str
    images: list[tuple[str, Card]]  # (file name, drawing)
    turns: list[tuple[str, str]]  # (user text with <ImageHere>, reference answer)


def _dialogues() -> list[Dialogue]:
    return [
        Dialogue(
            "mmdu_sample_01",
            [("s01_sales_2023.jpg", bar_chart("SALES 2023", {"JAN": 12, "FEB": 30, "MAR": 22, "APR": 18}, "blue")),
             ("s01_sales_2024.jpg", bar_chart("SALES 2024", {"JAN": 15, "FEB": 24, "MAR": 35, "APR": 20}, "orange"))],
            [("I'm preparing a short lesson on reading bar charts. What should my students look at first "
              "when they meet a new bar chart?",
              "Start with the title and the axis labels, so that you know what is measured and in which unit. "
              "Then check the scale of the value axis, and only then compare the bars: the tallest, the "
              "shortest, and any bar that breaks the pattern."),
             ("Image1: <ImageHere>. Here is the chart from my first slide. Which month has the highest bar in "
              "Image1, and what value does it show?",
              "In Image1, titled SALES 2023, February has the highest bar with a value of 30. January is the "
              "lowest at 12; March shows 22 and April 18."),
             ("Image2: <ImageHere>. This is the same chart one year later. Compare Image1 and Image2: which "
              "month changed the most?",
              "Image2 (SALES 2024) shows JAN 15, FEB 24, MAR 35 and APR 20. Compared with Image1, March changed "
              "the most: it rose by 13, from 22 to 35. February is the only month that fell, from 30 to 24, "
              "and it loses its place as the best month to March."),
             ("Write two quiz questions about Image1 and Image2 for my students, with the answers.",
              "1. Which month had the highest sales in 2023 (Image1), and which in 2024 (Image2)? Answer: "
              "February with 30 in 2023, March with 35 in 2024. 2. By how much did April's sales change between "
              "the two years? Answer: they rose by 2, from 18 to 20.")],
        ),
        Dialogue(
            "mmdu_sample_02",
            [("s02_table_a.jpg", scene([("circle", "red"), ("square", "blue"), ("triangle", "yellow")])),
             ("s02_table_b.jpg", scene([("circle", "green"), ("star", "red"), ("diamond", "blue")], 2)),
             ("s02_table_c.jpg", scene([("star", "yellow"), ("square", "black")], 3))],
            [("Image1: <ImageHere>. Image2: <ImageHere>. Describe both images and list the shapes you see in "
              "each, with their colours.",
              "Image1 shows three shapes in a row on a light background: a red circle, a blue square and a "
              "yellow triangle. Image2 also shows three shapes: a green circle, a red star and a blue diamond."),
             ("Which colours appear in both Image1 and Image2?",
              "Red and blue appear in both: red is the circle in Image1 and the star in Image2; blue is the "
              "square in Image1 and the diamond in Image2. Yellow appears only in Image1 and green only in Image2."),
             ("Image3: <ImageHere>. Does Image3 contain a kind of shape that also appears in Image1 or Image2?",
              "Yes. Image3 shows a yellow star and a black square. The square also appears in Image1, where it "
              "is blue, and the star appears in Image2, where it is red. Both kinds of shape occur earlier, but "
              "in different colours.")],
        ),
        Dialogue(
            "mmdu_sample_03",
            [("s03_gate_sign.jpg", info_card(["WELCOME TO", "LAKE PARK", "OPEN 6-22"], shape="triangle", color="green")),
             ("s03_boat_sign.jpg", info_card(["BOAT RENT", "40 RMB/H"], shape="diamond", color="blue")),
             ("s03_tea_sign.jpg", info_card(["TEA HOUSE", "200 M ->"], shape="circle", color="orange"))],
            [("Image1: <ImageHere>. We are at the gate of a park. What does this sign tell visitors?",
              "The sign in Image1 reads 'WELCOME TO LAKE PARK' and 'OPEN 6-22': the park is called Lake Park "
              "and it is open from 6:00 to 22:00."),
             ("Image2: <ImageHere>. Image3: <ImageHere>. We saw these two signs inside the park. What can we do "
              "there, and what does it cost?",
              "Image2 advertises boat rental at 40 RMB per hour. Image3 points to a tea house 200 metres ahead; "
              "it does not give any price."),
             ("We have 100 RMB for the boat. How many full hours can we rent it?",
              "At 40 RMB per hour (Image2), 100 RMB pays for two full hours, which cost 80 RMB, and 20 RMB are "
              "left over."),
             ("The park closes at the time on the first sign. If we start rowing at 20:30, can we use both hours?",
              "No. Image1 says the park is open until 22:00, so starting at 20:30 leaves one and a half hours; "
              "a two-hour rental would end at 22:30, after closing time."),
             ("Summarise our plan for the evening in two sentences.",
              "Enter Lake Park before it closes at 22:00 and rent a boat for one hour at 40 RMB, starting no "
              "later than 21:00. Afterwards walk the 200 metres to the tea house shown in Image3.")],
        ),
        Dialogue(
            "mmdu_sample_04",
            [("s04_cafe_one.jpg", info_card(["CAFE ONE", "LATTE 28", "BAGEL 12"])),
             ("s04_cafe_two.jpg", info_card(["CAFE TWO", "LATTE 25", "BAGEL 16"], shape="circle", color="black"))],
            [("Image1: <ImageHere>. Image2: <ImageHere>. These are the price lists of two cafes. Which one "
              "sells a latte more cheaply?",
              "Cafe Two (Image2) sells a latte for 25, three less than Cafe One (Image1), where it costs 28."),
             ("If I buy two lattes and one bagel, how much do I pay at each cafe, and which is cheaper overall?",
              "At Cafe One: 2 x 28 + 12 = 68. At Cafe Two: 2 x 25 + 16 = 66. Cafe Two is cheaper overall by 2, "
              "even though its bagel costs 4 more.")],
        ),
        Dialogue(
            "mmdu_sample_05",
            [("s05_plan_before.jpg", floor_plan([("LIVING", 30, "blue", (6, 6, 124, 100)),
                                                 ("KITCHEN", 8, "orange", (128, 6, 194, 60)),
                                                 ("BED 1", 14, "purple", (6, 104, 124, 154)),
                                                 ("BATH", 5, "green", (128, 64, 194, 154))])),
             ("s05_plan_after.jpg", floor_plan([("LIVING", 24, "blue", (6, 6, 84, 100)),
                                                ("BED 2", 6, "red", (88, 6, 124, 100)),
                                                ("KITCHEN", 8, "orange", (128, 6, 194, 60)),
                                                ("BED 1", 14, "purple", (6, 104, 124, 154)),
                                                ("BATH", 5, "green", (128, 64, 194, 154))]))],
            [("Image1: <ImageHere>. This is the floor plan of the flat we want to rent. Which room is the "
              "largest, and how big is it?",
              "The living room is the largest room in Image1 with 30 m2. The bedroom (BED 1) has 14 m2, the "
              "kitchen 8 m2 and the bathroom 5 m2."),
             ("What is the total area of all rooms in Image1?",
              "30 + 14 + 8 + 5 = 57 m2."),
             ("Image2: <ImageHere>. The landlord sent a second plan after the renovation. What changed compared "
              "with Image1?",
              "In Image2 the living room shrank from 30 to 24 m2 and a new small room, BED 2 with 6 m2, was "
              "added next to it. The kitchen, BED 1 and the bathroom are unchanged, so the total is still 57 m2."),
             ("We are a family of three with a small child. Which plan suits us better, and why?",
              "The plan in Image2 suits you better: it has two bedrooms, so the child can have the 6 m2 BED 2 "
              "while the parents keep BED 1. The living room is smaller, but 24 m2 is still the largest room.")],
        ),
        Dialogue(
            "mmdu_sample_06",
            [("s06_bean_week1.jpg", plant(1, 4)),
             ("s06_bean_week3.jpg", plant(3, 11)),
             ("s06_bean_week6.jpg", plant(6, 19, flower=True))],
            [("Image1: <ImageHere>. My daughter keeps a diary of a bean plant. What does this first photo show?",
              "Image1 shows a young bean plant in an orange pot: a short green stem with one leaf. The label "
              "says WEEK 1 and HEIGHT 4 CM."),
             ("Image2: <ImageHere>. Two weeks later. How much did the plant grow since Image1?",
              "Image2 is labelled WEEK 3 with a height of 11 cm, so the plant grew 7 cm since Image1 (4 cm)."),
             ("What is the average growth per week between Image1 and Image2?",
              "7 cm over two weeks, so 3.5 cm per week on average."),
             ("Image3: <ImageHere>. This is week 6. What is new in Image3 apart from the height?",
              "Besides the height of 19 cm, the plant in Image3 has a pink flower at the top of the stem, which "
              "Image1 and Image2 do not show."),
             ("Did the plant grow faster between Image1 and Image2, or between Image2 and Image3?",
              "Faster between Image1 and Image2: 3.5 cm per week. Between Image2 and Image3 it grew 8 cm in three "
              "weeks, about 2.7 cm per week."),
             ("Suggest a title for her diary that mentions the flower.",
              "\"From 4 cm to the First Pink Flower: Six Weeks with My Bean Plant\"")],
        ),
    ]


def generate(root: Path) -> None:
    """Write ``root/benchmark.json`` and ``root/images/<file name>``."""
    records = []
    for number, dialogue in enumerate(_dialogues()):
        author_dir = _AUTHOR_DIRS[number % len(_AUTHOR_DIRS)]
        for name, card in dialogue.images:
            card.save(root / "images" / name)
        conversations = []
        for user, reference in dialogue.turns:
            conversations.append({"from": "user", "value": user})
            conversations.append({"from": "assistant", "value": reference})
        placeholders = sum(turn["value"].count("<ImageHere>") for turn in conversations)
        if placeholders != len(dialogue.images):
            raise ValueError(f"{dialogue.id}: {placeholders} <ImageHere> for {len(dialogue.images)} images")
        records.append({"id": dialogue.id,
                        "image": [f"{author_dir}/{name}" for name, _ in dialogue.images],
                        "conversations": conversations})
    write_json(root / "benchmark.json", records)
