"""The files of the one split a task reads from a Hub dataset, downloaded alone.

``datasets.load_dataset(path, name, split=...)`` downloads and prepares every split of the
config: a ``validation`` run of one MMMU subject fetched its dev and test files too (about 3.3 GB
of test beside 0.35 GB of validation over the 30 subjects), a BLINK ``val`` run its test split.
When a Hub dataset's config lists several splits in parquet files (its card's ``configs``), the
files of the split the task reads are downloaded alone (``hf_hub_download``, into the Hub cache)
and read with the ``parquet`` builder; everything else is read by ``load_dataset`` as it is.

Online, the split's files are the ones ``load_dataset_builder`` resolves from the card (nothing
else is downloaded for it). Offline (``HF_HUB_OFFLINE``), a run after the first reads the same
files from the Hub cache: the split's patterns come from the cached card, the files from the
cached snapshot; when they are not there, ``load_dataset`` says what is missing, as before.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any

#: ``hf://datasets/<org>/<name>@<revision>/<path in the repo>`` (as ``load_dataset_builder`` gives them)
_HF_URL = re.compile(r"hf://datasets/(?P<repo>[^@/]+/[^@/]+)@(?P<rev>[^/]+)/(?P<path>.+)")


def split_files(datasets: Any, hf: Any) -> list[str] | None:
    """Local paths of the parquet files of split ``hf.split`` of the Hub dataset ``hf.path``
    (config ``hf.name``), downloaded alone; None when the dataset is read whole by
    ``load_dataset``: a local folder, a split expression (``validation[:10]``,
    ``dev+validation``), a config with one split, files that are not parquet, files not listed."""
    if not re.fullmatch(r"[\w.-]+", hf.split) or Path(hf.path).expanduser().exists():
        return None
    from huggingface_hub.errors import OfflineModeIsEnabled

    try:
        builder = datasets.load_dataset_builder(hf.path, hf.name, revision=hf.revision)
    except (ConnectionError, OfflineModeIsEnabled):  # offline: the files a run before downloaded
        return _cached_split_files(hf)
    files = getattr(builder.config, "data_files", None)
    if not files or hf.split not in files or len(files) == 1:
        return None
    urls = [_HF_URL.fullmatch(str(url)) for url in files[hf.split]]
    if not urls or any(m is None or not m["path"].endswith(".parquet") for m in urls):
        return None
    from huggingface_hub import hf_hub_download

    return [hf_hub_download(m["repo"], m["path"], repo_type="dataset", revision=m["rev"]) for m in urls if m is not None]


def _cached_split_files(hf: Any) -> list[str] | None:
    """The split's parquet files in the Hub cache, found by the patterns of the cached card's
    ``configs`` (None: not cached, or the card names no such split)."""
    import yaml
    from huggingface_hub import hf_hub_download, snapshot_download

    try:
        readme = Path(hf_hub_download(hf.path, "README.md", repo_type="dataset", revision=hf.revision))
        root = Path(snapshot_download(hf.path, repo_type="dataset", revision=hf.revision, local_files_only=True))
        text = readme.read_text(encoding="utf-8")
    except (OSError, ValueError, ConnectionError, UnicodeDecodeError):  # not cached (huggingface_hub's errors are OSErrors)
        return None
    if not text.startswith("---"):
        return None
    try:
        card = yaml.safe_load(text[3:].split("\n---", 1)[0])
    except yaml.YAMLError:
        return None
    patterns = _patterns(card, hf.name or "default", hf.split)
    if not patterns:
        return None
    found = sorted({str(p) for p in root.rglob("*") if p.is_file() and p.suffix == ".parquet"
                    and any(fnmatch.fnmatch(p.relative_to(root).as_posix(), pat) for pat in patterns)})
    return found or None


def _patterns(card: Any, config: str, split: str) -> list[str]:
    """The file patterns of ``split`` in config ``config`` of a card's ``configs`` (the card's
    ``data_files``: a list of ``{split, path}``, ``path`` a pattern or a list of them)."""
    if not isinstance(card, dict) or not isinstance(card.get("configs"), list):
        return []
    for entry in card["configs"]:
        if not isinstance(entry, dict) or entry.get("config_name", "default") != config:
            continue
        data_files = entry.get("data_files")
        if not isinstance(data_files, list):
            return []
        for item in data_files:
            if isinstance(item, dict) and item.get("split") == split:
                path = item.get("path")
                return [path] if isinstance(path, str) else [p for p in path if isinstance(p, str)] if isinstance(path, list) else []
    return []
