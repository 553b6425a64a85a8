"""Write VLMEvalKit's MMBench TSV (e.g. ``MMBench_DEV_EN_V11.tsv``) as the JSONL the MMBench tasks read.

    python tasks/mmbench/convert_tsv.py MMBench_DEV_EN_V11.tsv DIR/mmbench

Each TSV row becomes one JSONL record with the same columns (``index, question, hint, A, B, C, D,
answer, category, image, source, l2-category, comment, split``), NaN cells as null, and ``image``
the path of the decoded image under ``images/<stem>/``. VLMEvalKit's TSVs keep each image once:
the row of a circular copy holds the index of the row whose base64 image it shares (64 characters
or fewer; ``vlmeval/dataset/image_base.py`` ``ImageBaseDataset.__init__`` resolves it the same way),
so a copy's record names its original's file. Needs pandas.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
from pathlib import Path
from typing import Any


def _cell(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def convert(tsv: Path, out_dir: Path) -> Path:
    """Write ``out_dir/<stem>.jsonl`` and its images; return the JSONL's path."""
    import pandas as pd

    frame = pd.read_csv(tsv, sep="\t", dtype={"image": str}, keep_default_na=True)
    images = {str(i): str(img) for i, img in zip(frame["index"], frame["image"]) if isinstance(img, str)}
    folder = out_dir / "images" / tsv.stem
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    out = out_dir / f"{tsv.stem}.jsonl"
    with out.open("w", encoding="utf-8", newline="\n") as fh:
        for row in frame.to_dict(orient="records"):
            record = {k: _cell(v) for k, v in row.items()}
            key = str(record["index"])
            image = images.get(key, "")
            if 0 < len(image) <= 64:  # another row's index: that row's image
                key, image = image, images[image]
            if key not in written:
                rel = f"images/{tsv.stem}/{key}.jpg"
                (out_dir / rel).write_bytes(base64.b64decode(image))
                written[key] = rel
            record["image"] = written[key]
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tsv", type=Path)
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args()
    print(convert(args.tsv, args.out_dir))


if __name__ == "__main__":
    main()
