"""Shared helpers: seeded random streams, file writing, small text utilities."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path

from sample_data.drawing import Card

_CN_DIGITS = "零一二三四五六七八九"


def rng_for(name: str) -> random.Random:
    """An independent, reproducible stream per generated file.

    ``random.Random`` seeded with a string hashes it with SHA-512, so the
    stream does not depend on ``PYTHONHASHSEED`` or on the other files.
    """
    return random.Random(f"mmtasks-sample-data:{name}")


def cn_number(n: int) -> str:
    """1..99 in Chinese numerals (一, 十, 十二, 二十三)."""
    if not 0 < n < 100:
        raise ValueError(n)
    tens, ones = divmod(n, 10)
    if tens == 0:
        return _CN_DIGITS[ones]
    return (_CN_DIGITS[tens] if tens > 1 else "") + "十" + (_CN_DIGITS[ones] if ones else "")


def cn_count(n: int) -> str:
    """A number before a measure word: 两 for 2 ("两个"), else :func:`cn_number`."""
    return "两" if n == 2 else cn_number(n)


def save_cards(root: Path, folder: str, cards: Iterable[Card], names: Iterable[str] | None = None) -> list[str]:
    """Write ``cards`` as ``folder/1.jpg, 2.jpg, ...`` (or ``names``); paths relative to ``root``."""
    paths: list[str] = []
    cards = list(cards)
    names = list(names) if names is not None else [f"{i}.jpg" for i in range(1, len(cards) + 1)]
    for card, name in zip(cards, names, strict=True):
        rel = f"{folder}/{name}"
        card.save(root / rel)
        paths.append(rel)
    return paths


def write_jsonl(path: Path, records: Iterable[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_json(path: Path, obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8", newline="\n")
