"""What the viewer reads from a run, and what it makes of each sample: the table row (scores,
failure kinds, breakdown) and the record the page shows (images as thumbnails, nothing else
changed: every string stays the sample's own, rendered as text by the page).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmtasks.config.task_config import SAFE_NAME
from mmtasks.documents.samples import iter_samples, sample_at
from mmtasks.errors import DataError
from mmtasks.results.files import confined, run_folder
from mmtasks.results.schema import RESULTS_FILE, ResultsFile, read_results
from mmtasks.documents.samples import recorded_failure_kinds
from mmtasks.view.images import ImageStore

#: the failure kinds a document can be filtered by, and their bit in a row's ``kinds`` mask
FAILURE_KINDS: tuple[str, ...] = ("request_failure", "context_overflow", "truncated", "unparsed", "judge_failure",
                                  "guessed", "kept_as_text", "scored_wrong")
#: characters of a parsed answer or a target shown in the table (the document shows all of it)
SHORT = 40


@dataclass
class ViewRun:
    """A run folder: its results.json (validated by the one results schema) and its samples."""

    folder: Path
    results: ResultsFile

    @property
    def samples_dir(self) -> Path:
        return self.folder / "samples"

    def samples_file(self, task: str) -> Path | None:
        """``samples/<task>.jsonl``, confined to the run's folder: a task name that is not a name
        (results.json refuses those) has none, and a link leading out of the run is an error."""
        if not SAFE_NAME.fullmatch(task):
            return None
        path = self.samples_dir / f"{task}.jsonl"
        if not path.is_file():
            return None
        return confined(path, self.folder)

    @property
    def tasks(self) -> list[str]:
        """The run's tasks that have a samples file, in results.json's order."""
        return [t for t in self.results.results if self.samples_file(t) is not None]

    def describe(self, label: str) -> dict[str, Any]:
        """The run as the page's header shows it: no path of the machine that ran it."""
        config = self.results.config
        from mmtasks.leaderboard.results import iso_utc

        return {
            "label": label,
            "name": config.display_name,
            "run_name": config.run_name,
            "model": config.public_model,
            "model_args": config.model_args,
            "judge": config.public_judge,
            "strategy": config.strategy,
            "date": iso_utc(self.results.date),
            "folder": self.folder.resolve().name,
            "card": self.results.run_card.lines() if self.results.run_card is not None else [],
        }


def load_view_run(path: Path) -> ViewRun:
    """A run folder (``results.json`` + ``samples/``) or its ``results.json``."""
    folder = run_folder(path)
    run = ViewRun(folder=folder, results=read_results(folder / RESULTS_FILE))
    if not run.samples_dir.is_dir():
        raise DataError("the run has no samples/ folder: nothing to show", file=folder,
                        hint="the run viewer shows the samples a run writes with --output-path")
    if not run.tasks:
        raise DataError("no samples file of the run's tasks in samples/", file=run.samples_dir)
    return run


def read_samples(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(byte offset, sample as written) of each line of a samples file, read by the one reader
    (:func:`mmtasks.documents.samples.iter_samples`); the page shows odd values (a non-finite
    number) as they are, the nesting bounded; a bad line is an error naming it."""
    for line in iter_samples(path, values="shown"):
        yield line.offset, line.data


def read_at(path: Path, offset: int) -> dict[str, Any]:
    return sample_at(path, offset, values="shown").data


def failure_kinds(sample: dict[str, Any]) -> int:
    """Bit mask over :data:`FAILURE_KINDS`: the same reading of a sample as the results'
    ``problems`` (a failure whose error says ``context_overflow:`` or ``truncated:`` is that kind,
    any other a request failure: :func:`~mmtasks.scoring.aggregation.failure_kind`; ``unparsed``
    and ``judge_failures`` counts), plus ``guessed`` for an answer a parser's random fallback chose
    (a ``guessed`` count on the sample or in its ``extra``), and ``kept_as_text`` /
    ``scored_wrong`` for a record the task's record policy treated so (the sample's ``irregular``:
    treatment -> reason)."""
    bit = {kind: 1 << i for i, kind in enumerate(FAILURE_KINDS)}
    mask = 0
    for kind in recorded_failure_kinds(sample):
        mask |= bit[kind.value]
    if _count(sample.get("unparsed")):
        mask |= bit["unparsed"]
    if _count(sample.get("judge_failures")):
        mask |= bit["judge_failure"]
    extra: dict[str, Any] = sample["extra"] if isinstance(sample.get("extra"), dict) else {}
    if _count(sample.get("guessed")) or _count(extra.get("guessed")):
        mask |= bit["guessed"]
    irregular: dict[str, Any] = sample["irregular"] if isinstance(sample.get("irregular"), dict) else {}
    if irregular.get("kept_as_text"):
        mask |= bit["kept_as_text"]
    if irregular.get("scored_wrong"):
        mask |= bit["scored_wrong"]
    return mask


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _count(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0) or value is True


def metrics_of(sample: dict[str, Any]) -> dict[str, float | None]:
    """The sample's per-sample metrics: finite numbers, or None."""
    raw = sample.get("metrics")
    out: dict[str, float | None] = {}
    if isinstance(raw, dict):
        for name, value in raw.items():
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            out[str(name)] = float(value) if ok else None
    return out


def short(value: Any) -> str | None:
    """A parsed answer or target as the table shows it: at most :data:`SHORT` characters."""
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SHORT else text[: SHORT - 1] + "\u2026"


def same_answer(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two runs' samples of a document agree: the same parsed answer, the same metrics and
    the same failure kinds (what the page's "where they disagree" filter leaves out)."""
    def canon(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)

    if canon(a.get("parsed")) != canon(b.get("parsed")) or failure_kinds(a) != failure_kinds(b):
        return False
    ma, mb = metrics_of(a), metrics_of(b)
    for name in set(ma) | set(mb):
        x, y = ma.get(name), mb.get(name)
        if (x is None) != (y is None) or (x is not None and y is not None and abs(x - y) > 1e-9):
            return False
    return True


def for_page(sample: dict[str, Any], images: ImageStore) -> dict[str, Any]:
    """The sample as the page shows it: every image part (``{"type": "image", "image": PATH}``,
    in the prompt, the judge prompts or a protocol's records) becomes its thumbnail; everything
    else is the sample's own data."""
    return _walk(sample, images)


def _walk(value: Any, images: ImageStore) -> Any:
    if isinstance(value, dict):
        if value.get("type") == "image" and isinstance(value.get("image"), str) and len(value) == 2:
            return images.show(value["image"]).to_json()
        if (value.get("type") == "image" and isinstance(value.get("image"), str) and isinstance(value.get("video"), str)
                and isinstance(value.get("timestamp"), (int, float)) and not isinstance(value["timestamp"], bool)
                and math.isfinite(value["timestamp"]) and len(value) == 4):  # a video frame
            return images.show_frame(value["image"], value["video"], float(value["timestamp"])).to_json()
        return {str(k): _walk(v, images) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, images) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
