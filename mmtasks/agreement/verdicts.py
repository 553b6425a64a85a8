"""Pairing two runs' judge verdicts over the same samples.

A run's samples (``RUN/samples/<task>.jsonl``) record every judge call of a
document in ``judge``: ``{"fields": {...} | null, ...}`` plus the item it judged
(``turn`` for a dialogue turn, ``question`` for a probe question, else its
position) and, where the protocol groups items, ``group`` (an MMRC ability).
Two runs' verdicts are paired by (task, document id, item). Every numeric or
boolean verdict field is a scored quantity, named ``group.field`` when the item
has a group (``IE.score``) and ``field`` otherwise (``overall``). A judge failure
(``fields`` null) on either side leaves the item out of every pair.

Human scores enter as a run too: replay the model's answers and give the human
ratings as the judge's replies, in the judge's own reply format
(``--model replay:RUN_A --judge replay:human.jsonl``; docs/users/judges.md, "Checking a judge").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from mmtasks.documents.samples import iter_samples
from mmtasks.errors import DataError
from mmtasks.results.files import confined

#: (task, doc_id, item) -> quantity name -> score
Verdicts = dict[tuple[str, str, str], dict[str, float]]


class Pairs(BaseModel):
    """Both runs' scores of one quantity of one task, paired item by item."""

    model_config = ConfigDict(frozen=True)

    task: str
    quantity: str
    a: list[float]
    b: list[float]


def sample_files(path: Path) -> list[Path]:
    """The samples files of a run folder, a samples folder, or one ``.jsonl`` file."""
    if path.is_file():
        return [path]
    if (path / "samples").is_dir():
        path = path / "samples"
    if not path.is_dir():
        raise DataError("not a run folder, a samples folder or a samples .jsonl file", file=path)
    files = [confined(f, path) for f in sorted(path.glob("*.jsonl"))]
    if not files:
        raise DataError("no samples (*.jsonl) found", file=path)
    return files


def _item(entry: dict[str, Any], position: int) -> str:
    for key in ("turn", "question", "item"):
        if key in entry and entry[key] is not None:
            return f"{key} {entry[key]}"
    return f"call {position}"


def _scores(fields: dict[str, Any], group: str | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in fields.items():
        if isinstance(value, bool):
            value = float(value)
        if isinstance(value, (int, float)) and value == value:
            out[f"{group}.{name}" if group else name] = float(value)
    return out


def iter_verdicts(path: Path) -> Iterator[tuple[tuple[str, str, str], dict[str, float]]]:
    """Every judged item of a run: its key and its scored quantities (judge failures skipped)."""
    for file in sample_files(path):
        for line in iter_samples(file, need=("task", "judge")):
            sample = line.record
            task, doc_id = sample.task, sample.doc_id
            for position, entry in enumerate(sample.judge):
                if not isinstance(entry.get("fields"), dict):  # a judge failure: no verdict
                    continue
                group = entry.get("group")
                yield (task, str(doc_id), _item(entry, position)), _scores(entry["fields"], str(group) if group else None)


def read_verdicts(path: Path) -> Verdicts:
    return dict(iter_verdicts(path))


def pair(a: Verdicts, b: Verdicts) -> list[Pairs]:
    """Per (task, quantity): the scores of the items both runs judged, in a stable order."""
    by_quantity: dict[tuple[str, str], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for key in sorted(a.keys() & b.keys()):
        fa, fb = a[key], b[key]
        for name in sorted(fa.keys() & fb.keys()):
            xs, ys = by_quantity[(key[0], name)]
            xs.append(fa[name])
            ys.append(fb[name])
    return [Pairs(task=task, quantity=name, a=xs, b=ys) for (task, name), (xs, ys) in sorted(by_quantity.items())]
