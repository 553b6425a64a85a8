"""Building small MMDU data folders for tests: ``<root>/mmdu/benchmark.json`` in the
official schema (authors' absolute image paths, resolved by file name) and distinct
PNG images under ``<root>/mmdu/images/``.

Every question carries a tag ``[d<dialogue>t<turn>]`` (1-based turn), so a
fake server can tell which dialogue and turn a request is about.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from PIL import Image as PILImage

MARKER = "<ImageHere>"


def tag(d: int, t: int) -> str:
    return f"[d{d}t{t}]"


def image_size(d: int, i: int) -> tuple[int, int]:
    """A size unique to (dialogue, image): the image's identity on the wire."""
    return (20 + 3 * i, 10 + d)


def image_colour(d: int, i: int) -> tuple[int, int, int]:
    return ((37 * i + 11) % 256, (53 * d + 29) % 256, 200)


def write_mmdu(root: Path, layout: Sequence[Sequence[int]], *, as_dict: bool = False, extra_images: int = 0) -> list[dict]:
    """Write a dataset; ``layout[d][t]`` is how many images turn t+1 of dialogue d introduces.

    Returns the records. ``as_dict`` writes the dict-of-id schema instead of a list.
    """
    folder = root / "mmdu"
    (folder / "images").mkdir(parents=True, exist_ok=True)
    records = []
    for d, turns in enumerate(layout):
        n_images = sum(turns) + extra_images
        paths = []
        for i in range(n_images):
            name = f"d{d}_img{i}.png"
            PILImage.new("RGB", image_size(d, i), image_colour(d, i)).save(folder / "images" / name)
            paths.append(f"/mnt/authors/MMDU/pics/{name}")
        conversations = []
        placed = 0
        for t, k in enumerate(turns, start=1):
            labels = " ".join(f"Image{placed + j + 1}: {MARKER}." for j in range(k))
            placed += k
            question = f"{labels} {tag(d, t)} Question {t} of dialogue {d}?".strip()
            conversations.append({"from": "user", "value": question})
            conversations.append({"from": "assistant", "value": f"reference answer {tag(d, t)}"})
        records.append({"id": f"mmdu-{d}", "image": paths, "conversations": conversations})
    data: list[dict] | dict[str, dict] = records
    if as_dict:
        data = {r["id"]: {k: v for k, v in r.items() if k != "id"} for r in records}
    (folder / "benchmark.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return records


def judge_reply(scores: dict[str, int], reasoning: str = "Creativity: fine. Richness: fine.") -> str:
    """A judge reply in the official shape: reasoning, then the dict literal."""
    return f"{reasoning}\n{scores!r}"


def scores(c: int, r: int, vp: int, lc: int, aa: int, iru: int, overall: int) -> dict[str, int]:
    return {"Creativity": c, "Richness": r, "Visual Perception": vp, "Logical Coherence": lc,
            "Answer Accuracy": aa, "Image Relationship Understanding": iru, "Overall Score": overall}
