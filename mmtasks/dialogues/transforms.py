"""Generic document transforms selectable per task or per run.

- ``shuffle_options``: a seeded permutation of multiple-choice options such
  that the correct letter changes (RealBench's contamination check, Table 2).
- ``combine_images``: all images of a document stitched into one (RealBench's
  combined-image mode, Table 3), for single-image models.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace

from mmtasks.config.task_config import TransformConfig
from mmtasks.core.conversation import Image
from mmtasks.documents.dataset import Document
from mmtasks.errors import DataError


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


def combine_images(doc: Document) -> Document:
    if len(doc.images) <= 1:
        return doc
    return replace(doc, images=(Image(parts=doc.images, doc_id=doc.doc_id, label="combined"),))


def apply_transforms(doc: Document, transforms: list[TransformConfig], image_mode: str) -> Document:
    for t in transforms:
        if t.name == "shuffle_options":
            doc = shuffle_options(doc, t)
        elif t.name == "combine_images":
            doc = combine_images(doc)
    if image_mode == "combined":
        doc = combine_images(doc)
    return doc
