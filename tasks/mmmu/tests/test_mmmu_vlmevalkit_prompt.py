"""The task variant mmmu_val_vlmevalkit (VLMEvalKit's MMMU_DEV_VAL prompt) against VLMEvalKit's own
``ImageMCQDataset.build_prompt`` and ``MMMUDataset.split_MMMU`` (reference/image_mcq_e8e78f0.py,
verbatim) on every record of the sample: the same text, the images at the same places."""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

import pytest
from mmmu_peers import load

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.core.conversation import Image
from mmtasks.task import Task

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "data" / "sample"


def flat(parts: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Adjacent texts joined, empty texts left out."""
    out: list[tuple[str, Any]] = []
    for kind, value in parts:
        if kind == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + value)
        elif kind != "text" or value:
            out.append((kind, value))
    return [p for p in out if p != ("text", "")]


def theirs(record: dict[str, Any], module: Any) -> list[tuple[str, Any]]:
    import pandas as pd

    images = [k for k in range(1, 8) if record.get(f"image_{k}") is not None]
    line: dict[str, Any] = {"question": record["question"], "image_path": [f"image_{k}" for k in images]}
    options = ast.literal_eval(record["options"]) if record["question_type"] == "multiple-choice" else []
    for k, letter in enumerate("ABCDEFGHI"):
        line[letter] = options[k] if k < len(options) else math.nan
    dataset = module.MMMUDataset()
    dataset.meta_only = True
    msgs = dataset.build_prompt(pd.Series(line))
    return flat([("image", int(m["value"].split("_")[1])) if m["type"] == "image" else ("text", m["value"]) for m in msgs])


def test_the_prompt_is_vlmevalkits() -> None:
    pytest.importorskip("pandas")
    module = load("image_mcq_e8e78f0", toliststr=lambda s: list(s) if isinstance(s, list) else [s],
                  istype=lambda s, t: (t is int and s.isdigit()) or isinstance(s, t))
    registry = TaskRegistry.discover()
    checked = 0
    for name in sorted(n for n in registry.task_names if n.startswith("mmmu_val_vlmevalkit_")):
        config, path = registry.load(name)
        task = Task(config, path)
        for doc in task.documents(SAMPLE):
            (message,) = task.state(doc).messages
            ours = flat([("image", doc.images.index(p) + 1) if isinstance(p, Image) else ("text", p.text)
                         for p in message.parts])
            assert ours == theirs(doc.record, module), doc.doc_id
            checked += 1
    assert checked == 33
