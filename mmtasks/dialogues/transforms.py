"""Generic document transforms selectable per task or per run.

A transform is a function ``(doc, cfg: TransformConfig) -> Document`` registered in
:data:`mmtasks.registry.transforms` (``@transforms.register("name")``); a task lists
them under ``transforms:`` and they are resolved when the task loads. Built in:

- ``shuffle_options``: a seeded permutation of multiple-choice options such
  that the correct letter changes (RealBench's contamination check, Table 2).
- ``combine_images``: all images of a document stitched into one (RealBench's
  combined-image mode, Table 3), for single-image models.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import replace

from mmtasks.config.task_config import TransformConfig
from mmtasks.core.conversation import Image
from mmtasks.documents.dataset import Document
from mmtasks.errors import DataError
from mmtasks.registry import transforms

Transform = Callable[[Document, TransformConfig], Document]


@transforms.register("shuffle_options")
def shuffle_options(doc: Document, cfg: TransformConfig) -> Document:
    rec = doc.record
    options = rec.get(cfg.options_field)
    answer = rec.get(cfg.answer_field)
    if not isinstance(options, dict) or answer not in options:
        raise DataError("shuffle_options needs a dict of options containing the answer letter",
                        file=doc.source, doc_id=doc.doc_id, field=cfg.options_field)
    letters = list(options)
    if len(letters) < 2:
        return doc
    # Seed from the task seed and the document id: stable across runs and shards.
    digest = hashlib.sha256(f"{cfg.seed}:{doc.doc_id}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    while True:
        perm = letters[:]
        rng.shuffle(perm)
        # perm[i] is the old letter whose content now sits under letters[i]
        new_answer = letters[perm.index(answer)]
        if new_answer != answer:
            break
    new_options = {letters[i]: options[perm[i]] for i in range(len(letters))}
    new_rec = {**rec, cfg.options_field: new_options, cfg.answer_field: new_answer,
               "original_answer": answer}
    return replace(doc, record=new_rec)


@transforms.register("combine_images")
def combine_images(doc: Document, cfg: TransformConfig | None = None) -> Document:
    if len(doc.images) <= 1:
        return doc
    return replace(doc, images=(Image(parts=doc.images, doc_id=doc.doc_id, label="combined"),))


def apply_transforms(doc: Document, steps: Sequence[tuple[Transform, TransformConfig]], image_mode: str) -> Document:
    """Apply the task's resolved transforms in order, then combine the images under ``--image-mode combined``."""
    for fn, cfg in steps:
        doc = fn(doc, cfg)
    if image_mode == "combined":
        doc = combine_images(doc)
    return doc
