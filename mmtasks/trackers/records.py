"""What a run gives the experiment trackers, the same for each (:mod:`mmtasks.trackers`): the
config, the flat metrics, the samples tables. Built from results.json's object and the run's
samples, so what a tracker holds reads back equal to results.json."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmtasks.core.pixels import read_image_file

#: the longest text a table cell holds (a reply, a prompt): the rest is cut, marked
CELL_CHARS = 4000
#: the longer side of a table's image thumbnail
THUMB_SIDE = 256
#: the table's columns
COLUMNS = ("doc_id", "image", "prompt", "response", "parsed", "target", "metrics", "failures")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _leaves(prefix: str, value: Any, out: dict[str, float]) -> None:
    """Every finite number under ``value``, keyed ``prefix/a/b``."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _leaves(f"{prefix}/{key}", inner, out)
        return
    number = _number(value)
    if number is not None:
        out[prefix] = number


def metrics_of(results: Mapping[str, Any], tokens: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, float]:
    """results.json's numbers, flat: ``TASK/METRIC`` (every metric, its ``_stderr`` among them),
    ``TASK/coverage/{scored,total,percent,...}``, ``TASK/problems/KIND``, ``TASK/n_samples/...``,
    ``TASK/replies/...`` (finish reasons, reasoning lengths), ``TASK/tokens/...`` (summed over
    the samples, where the backend reported them), ``groups/GROUP/{average,partial_average}``,
    ``run/...`` (run_stats: requests sent, cached, failed; cost where recorded)."""
    out: dict[str, float] = {}
    for task, values in (results.get("results") or {}).items():
        for name, value in values.items():
            if (number := _number(value)) is not None:
                out[f"{task}/{name}"] = number
    for key in ("coverage", "problems", "n-samples", "replies"):
        for task, value in (results.get(key) or {}).items():
            _leaves(f"{task}/{key.replace('-', '_')}", value, out)
    for task, counts in (tokens or {}).items():
        _leaves(f"{task}/tokens", counts, out)
    for group, value in (results.get("groups") or {}).items():
        for name in ("average", "partial_average", "n_tasks"):
            if (number := _number(value.get(name))) is not None:
                out[f"groups/{group}/{name}"] = number
    _leaves("run", results.get("run_stats") or {}, out)
    return out


def config_of(results: Mapping[str, Any]) -> dict[str, Any]:
    """The run's config as trackers record it: results.json's ``config`` and ``run_card``, the
    tasks' config hashes and versions."""
    return {"config": results.get("config") or {}, "run_card": results.get("run_card") or {},
            "tasks": list((results.get("results") or {}).keys()),
            "config_hashes": results.get("config_hashes") or {}, "git_hash": results.get("git_hash")}


def flat_params(value: Any, prefix: str = "") -> dict[str, str]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": "1"}`` (MLflow's params are flat strings)."""
    if isinstance(value, Mapping):
        out: dict[str, str] = {}
        for key, inner in value.items():
            out.update(flat_params(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if value is None or value == [] or value == {}:
        return {}
    return {prefix: value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)}


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS] + " [...]"


def _prompt_parts(prompt: Any) -> tuple[str, str | None]:
    """The prompt's text, its turns one after another, and the path of its first image file."""
    texts: list[str] = []
    image: str | None = None
    for message in prompt if isinstance(prompt, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif part.get("type") == "image" and image is None and isinstance(part.get("image"), str):
                image = part["image"]
    return "".join(texts), image


def thumbnail(path: str | None) -> Any:
    """A PIL thumbnail of the image file at ``path`` (None: no file, unreadable, undecodable)."""
    if path is None or path.startswith("<"):  # an in-memory image (Hub bytes): the run kept no copy
        return None
    from PIL import Image

    from mmtasks.core.pixels import Undecodable, decoding

    try:
        data = read_image_file(Path(path))
        with decoding():
            image = Image.open(io.BytesIO(data))
            image.thumbnail((THUMB_SIDE, THUMB_SIDE))
            return image.convert("RGB")
    except (OSError, Undecodable):
        return None


@dataclass
class Table:
    """One task's samples table: the first ``limit`` documents, a row each."""

    task: str
    columns: tuple[str, ...] = COLUMNS
    rows: list[list[Any]] = field(default_factory=list)
    #: documents in the task (the table may hold fewer)
    total: int = 0


def table_of(task: str, samples: Iterable[Mapping[str, Any]], limit: int) -> Table:
    """The samples as rows (``image`` a PIL thumbnail or None; the other cells text)."""
    table = Table(task)
    for sample in samples:
        table.total += 1
        if len(table.rows) >= limit:
            continue
        text, image = _prompt_parts(sample.get("prompt"))
        responses = sample.get("responses") or []
        table.rows.append([str(sample.get("doc_id")), thumbnail(image), _text(text),
                           _text(responses[-1] if len(responses) == 1 else responses),
                           _text(sample.get("parsed")), _text(sample.get("target")),
                           _text(sample.get("metrics") or {}), _text(sample.get("failures") or [])])
    return table


def token_totals(samples: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Per token kind (``prompt``, ``completion``, ...), the sum over the samples' replies."""
    out: dict[str, float] = {}
    for sample in samples:
        for counts in sample.get("tokens") or []:
            for kind, n in (counts or {}).items():
                if (number := _number(n)) is not None:
                    out[kind] = out.get(kind, 0.0) + number
    return out
