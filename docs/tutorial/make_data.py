"""Write the tutorial's data: data/my_bench/colours.jsonl and its images (solid colour squares).

    python docs/tutorial/make_data.py [OUT_DIR]      # default: docs/tutorial/data

Six records; each shows two or three squares of which exactly one is red, and asks which.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PIL import Image

COLOURS = {"red": (220, 30, 30), "blue": (30, 60, 220), "green": (30, 160, 60), "yellow": (230, 200, 20)}
OPTIONS = ["red", "blue", "green", "yellow"]  # the colour question's options, lettered A-D
# each record: the colours of its images, in order
RECORDS = [
    ["red", "blue"],
    ["blue", "red"],
    ["green", "yellow", "red"],
    ["red", "green", "blue"],
    ["yellow", "red", "green"],
    ["blue", "green", "red"],
]


def main(out: Path) -> None:
    folder = out / "my_bench"
    (folder / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for n, colours in enumerate(RECORDS):
        images = []
        for k, colour in enumerate(colours):
            path = f"images/q{n}_{k}.png"
            Image.new("RGB", (32, 32), COLOURS[colour]).save(folder / path)
            images.append(path)
        record = {
            "id": f"q{n}",
            "images": images,
            "red": colours.index("red") + 1,           # which image is red, counted from 1
            "options": OPTIONS,
            "first_colour": "ABCD"[OPTIONS.index(colours[0])],  # the letter of image 1's colour
        }
        lines.append(json.dumps(record))
    (folder / "colours.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "data")
