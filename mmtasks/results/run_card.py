"""Building the run card of ``results.json`` (``run_card``): what produced the results. What each
field holds, and how the data and weights are identified, is the typed card's docstring
(:mod:`mmtasks.core.provenance`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mmtasks.config.task_config import TaskConfig
from mmtasks.core.provenance import (
    DataRevision, ModelRevision, RunCard, doc_ids_hash, file_sha256, hardware, hub_commit, versions,
)


def data_revision(config: TaskConfig, data_root: Path | None,
                  memo: dict[tuple[str, ...], str | None] | None = None) -> DataRevision | None:
    """Which data the task read, by the rule the loader chose it (local data under a data root
    wins over a Hub source, as :func:`mmtasks.documents.dataset.load_documents` reads it).
    ``memo``: lookups already made in this run (tasks sharing a dataset or a records file: the
    30 MMMU subjects ask the Hub, or hash a file, once)."""
    memo = {} if memo is None else memo

    def commit(repo: str, revision: str | None) -> str | None:
        key = ("hub", repo, revision or "")
        if key not in memo:
            memo[key] = hub_commit(repo, revision, "dataset")
        return memo[key]

    def sha256(path: Path) -> str:
        key = ("file", str(path))
        if key not in memo:
            memo[key] = file_sha256(path)
        return str(memo[key])

    ds = config.dataset
    if ds.local is not None and (data_root is not None or (ds.hf is None and ds.hub is None)):
        if data_root is None:
            return None
        path = data_root / ds.local.dir / ds.local.file
        try:
            return DataRevision(source="local", file=f"{ds.local.dir}/{ds.local.file}", sha256=sha256(path))
        except OSError:
            return None
    if ds.hf is not None:
        if Path(ds.hf.path).expanduser().exists() or ds.hf.data_files is not None and "/" not in ds.hf.path:
            return None  # a builder over files (path: json) or a local folder: no Hub revision
        return DataRevision(source="hub", repo=ds.hf.path, revision=ds.hf.revision,
                            commit=commit(ds.hf.path, ds.hf.revision))
    if ds.hub is not None:
        return DataRevision(source="hub", repo=ds.hub.repo, revision=ds.hub.revision,
                            commit=commit(ds.hub.repo, ds.hub.revision))
    return None


def build_card(configs: dict[str, TaskConfig], data_root: Path | None, doc_ids: dict[str, Iterable[str]],
               model: ModelRevision | None) -> RunCard:
    """The run card of a run of the tasks ``configs`` (name -> config) that scored ``doc_ids``
    (name -> ids in document order) with the weights ``model``."""
    memo: dict[tuple[str, ...], str | None] = {}
    data = {name: rev for name, config in configs.items() if (rev := data_revision(config, data_root, memo)) is not None}
    return RunCard(data=data, doc_ids={name: doc_ids_hash(ids) for name, ids in doc_ids.items()}, model=model,
                   versions=versions(), hardware=hardware())
