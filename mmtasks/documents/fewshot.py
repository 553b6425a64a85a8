"""Few-shot demonstrations (``fewshot:``): where they are read from and which ones each
question gets.

The source is another file (local data) or split (a Hugging Face dataset) of the task's own
dataset, read by the same loader as the documents (id field, images, adapter, record checks:
the preflight reports its problems like the documents'). Each question's ``k`` demonstrations
are drawn by a generator seeded with ``fewshot.seed`` and the question's id (``sampler:
random``), or are the source's first ``k`` (``first_n``); a demonstration with the question's
own id is never drawn when the source is the documents' own file or split: the same file whatever
its name (``./query.jsonl``, a symbolic or hard link to it: compared by device and inode, as
``os.path.samefile`` does), or the same split.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Sequence
from pathlib import Path

from mmtasks.config.task_config import FewshotConfig, TaskConfig
from mmtasks.documents.dataset import Document
from mmtasks.documents.paths import inside
from mmtasks.errors import ConfigError, DataError


def source_config(config: TaskConfig, file: str | Path | None = None) -> TaskConfig:
    """``config`` reading the demonstrations instead of the documents (its dataset's file or split
    replaced; every other dataset setting kept). A source the dataset cannot have is a load error."""
    fs = config.fewshot
    assert fs is not None
    ds = config.dataset
    if fs.file is not None:
        if ds.local is None:
            raise ConfigError("fewshot.file names a file of local data, but the dataset is a Hugging Face dataset",
                              file=file, field="fewshot.file", hint="name another split of it: fewshot: {split: train, ...}")
        # checked here, so a refusal names the key the task holds (the loader would name dataset.local.file)
        inside(fs.file, where="the data folder (dataset.local.dir)", field="fewshot.file", file=file)
        dataset = ds.model_copy(update={"local": ds.local.model_copy(update={"file": fs.file}), "hf": None, "hub": None,
                                        "video_archives": [], "video_files": None})
    else:
        if ds.hf is None:
            raise ConfigError("fewshot.split names a split of a Hugging Face dataset (dataset.hf), but the dataset is "
                              + ("JSON files of a Hub repository (dataset.hub)" if ds.hub is not None else "local"),
                              file=file, field="fewshot.split", hint="name a file in the dataset's folder: fewshot: {file: demos.jsonl, ...}")
        dataset = ds.model_copy(update={"hf": ds.hf.model_copy(update={"split": fs.split}), "local": None})
    return config.model_copy(update={"dataset": dataset, "fewshot": None})


def same_source(config: TaskConfig, data_root: Path | None) -> bool:
    """Whether the demonstrations come from the documents' own file or split. Two files are the
    same when they are one file on disk (same device and inode: a link, ``./`` or ``a//b`` in the
    name), or, where either is not there (the loader then says so), when their names are the same
    once normalised."""
    fs, ds = config.fewshot, config.dataset
    assert fs is not None
    if fs.file is not None:
        if ds.local is None:
            return False
        if data_root is not None:
            folder = data_root / ds.local.dir
            try:
                return os.path.samefile(folder / ds.local.file, folder / fs.file)
            except (OSError, ValueError):  # not there (or a name no file can have): the names decide
                pass
        return os.path.normpath(ds.local.file) == os.path.normpath(fs.file)
    return ds.hf is not None and fs.split == ds.hf.split


def draw(pool: Sequence[Document], doc: Document, fs: FewshotConfig, k: int, *, exclude_own: bool,
         file: str | Path | None = None) -> tuple[Document, ...]:
    """The ``k`` demonstrations of ``doc`` (see the module docstring)."""
    if k == 0:
        return ()
    candidates = [d for d in pool if not (exclude_own and d.doc_id == doc.doc_id)]
    if len(candidates) < k:
        raise DataError(f"fewshot.k is {k} but the demonstrations' source has {len(candidates)} usable records"
                        + (" (besides the question's own)" if exclude_own else ""), file=file, doc_id=doc.doc_id,
                        field="fewshot.k", hint="lower k (or --num-fewshot), or add demonstrations")
    if fs.sampler == "first_n":
        return tuple(candidates[:k])
    digest = hashlib.sha256(f"{fs.seed}:{doc.doc_id}".encode()).digest()
    return tuple(random.Random(int.from_bytes(digest[:8], "big")).sample(candidates, k))
