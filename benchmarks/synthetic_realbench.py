"""A synthetic RealBench for benchmarks: ``<root>/realbench/<subtask>.jsonl`` in the
local format of ``shared/specs/realbench.md`` and one JPEG file per image.

Records are spread evenly over the 8 subtasks of the ``realbench`` group; every
record has the same number of images (7 by default). The images are small
(the ``random`` model never decodes pixels, only the header sniff reads them)
but each is its own file, as in the real data. Deterministic: the same
arguments write the same bytes. A ``.complete`` stamp makes a second call with
the same arguments free.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

from PIL import Image as PILImage

SUBTASKS = [f"{t}_{d}" for t in ("retrieval", "ranking", "extraction", "reasoning") for d in ("easy", "hard")]
_CATEGORIES = ["travel", "food", "fitness", "pets", "fashion", "astrology", "home_decoration", "beauty"]
_NOTE = "笔记｜按顺序给大家介绍一下：第一个是黄色正方形的幸运符Figure_，第二个是紫色正方形的护身符Figure_，"
_QUESTION = "这份攻略里每天分别去哪座城市？图里这家店的营业时间是几点到几点？请按天列出，并说明理由。"
_ANSWER = "DAY 1 丽江古城\nDAY 2 厦门鼓浪屿\nDAY 3 大理洱海\nDAY 4 西安城墙 营业时间 7:00-22:00"


def _jpeg_pool(n: int = 64) -> list[bytes]:
    out = []
    for k in range(n):
        img = PILImage.new("RGB", (64 + k % 7, 48 + k % 5), ((37 * k) % 256, (91 * k) % 256, (53 * k + 80) % 256))
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=80)
        out.append(buf.getvalue())
    return out


def distinct_png(k: int, side: int) -> bytes:
    """Image number ``k``: a ``side`` x ``side`` RGB PNG unlike every other ``k`` (gradients and a
    colour from k), about 1 byte per pixel like a screenshot's flat areas and edges."""
    base = PILImage.linear_gradient("L").resize((side, side))
    r = base.point(lambda v: (v + 37 * k) % 256)
    g = base.transpose(PILImage.Transpose.ROTATE_90).point(lambda v: (v * 3 + 91 * k) % 256)
    b = PILImage.new("L", (side, side), (53 * k + 80) % 256)
    buf = io.BytesIO()
    PILImage.merge("RGB", (r, g, b)).save(buf, format="PNG")
    return buf.getvalue()


def _record(subtask: str, i: int, n_images: int, rng: random.Random, ext: str = "jpg") -> dict:
    task, difficulty = subtask.split("_")
    rid = f"{task[:3]}-{difficulty[0]}-{i:06d}"
    rec: dict = {"id": rid, "task": task, "difficulty": difficulty, "category": rng.choice(_CATEGORIES),
                 "images": [f"images/{rid}/{k + 1}.{ext}" for k in range(n_images)]}
    if task == "ranking":
        order = list(range(1, n_images + 1))
        options = {}
        for letter in "ABCD":
            rng.shuffle(order)
            options[letter] = list(order)
        rec["text"] = rec["category"] + (_NOTE * 3)[: 40 * n_images]
        rec["options"] = options
        rec["answer"] = rng.choice("ABCD")
    elif task == "retrieval":
        rec["text"] = rec["category"] + "分享｜这次最满意的是那个橙色圆形的水杯，颜色很正，强烈推荐！"
        if difficulty == "easy":
            rec["answer"] = rng.randint(1, n_images)
        else:
            rec["answer"] = sorted(rng.sample(range(1, n_images + 1), rng.randint(1, n_images)))
    else:
        rec["text"] = _QUESTION
        rec["answer"] = _ANSWER[: rng.randint(10, len(_ANSWER))]
    return rec


def write_realbench(root: Path, n_samples: int, n_images: int = 7, seed: int = 0, *,
                    subtasks: tuple[str, ...] = tuple(SUBTASKS), png_side: int | None = None) -> Path:
    """Write (once) ``n_samples`` records x ``n_images`` images under ``root``; returns the data root.

    Default: small JPEGs from a pool of 64. ``png_side``: every image a distinct PNG of that size
    (:func:`distinct_png`). ``subtasks``: the subtasks the records are spread over."""
    folder = root / "realbench"
    stamp = folder / ".complete"
    wanted = json.dumps({"n_samples": n_samples, "n_images": n_images, "seed": seed, "subtasks": list(subtasks), "png": png_side})
    if stamp.is_file() and stamp.read_text() == wanted:
        return root
    rng = random.Random(seed)
    pool = _jpeg_pool()
    per_task = [n_samples // len(subtasks) + (1 if k < n_samples % len(subtasks) else 0) for k in range(len(subtasks))]
    written = 0
    for subtask, count in zip(subtasks, per_task):
        lines = []
        for i in range(count):
            rec = _record(subtask, i, n_images, rng, "png" if png_side else "jpg")
            d = folder / "images" / rec["id"]
            d.mkdir(parents=True, exist_ok=True)
            for k, rel in enumerate(rec["images"]):
                if png_side:
                    (folder / rel).write_bytes(distinct_png(written * n_images + k, png_side))
                else:
                    (folder / rel).write_bytes(pool[(written + k) % len(pool)])
            written += 1
            lines.append(json.dumps(rec, ensure_ascii=False))
        (folder / f"{subtask}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    stamp.write_text(wanted)
    return root
