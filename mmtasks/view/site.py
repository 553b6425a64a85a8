"""Writing the viewer's static site.

Layout of ``OUT/``::

    index.html app.js style.css      the page (copied from the viewer's sources)
    index.js                         MMV.load("index", {...}): runs, tasks, and the data folder's name
    d-<token>/t<i>/rows.js           one task's table: a row per document (scores, kinds, breakdown)
    d-<token>/t<i>/c<k>.js           documents k*CHUNK .. (k+1)*CHUNK-1 as the page shows them
    img/<hash>.t.jpg, .l.jpg         thumbnails and enlarged copies, one pair per image content

Every data file is a script (``MMV.load(key, data);``) rather than JSON, because browsers refuse
``fetch`` of ``file://`` URLs; the page adds a ``<script>`` for the file it needs when it needs it,
so the first view loads the index and one task's rows, and a document loads its chunk. Data is JSON
with ``<``, ``>`` and ``&`` escaped: no string can end the script.

The folder is claimed for the whole build (:func:`mmtasks.results.writer.claim_folder`: a folder of
other files is refused, and two builds into one folder take turns). A rebuild writes a new
``d-<token>/`` folder, then switches the page and ``index.js`` (which names the folder) as one set
with the claim's marker, then removes the previous build's data folder, the only one the marker
names: a reader sees the old view or the new one. Every file goes through the one writer (no
link followed, nothing half-written under its final name). Thumbnails are named by content and
written once; a rebuild reuses them.
"""

from __future__ import annotations

import json
import secrets
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmtasks.errors import ConfigError, DataError
from mmtasks.leaderboard.site import script_json
from mmtasks.package_data import page_dir
from mmtasks.results.writer import atomic_write_bytes, claim_folder, create_exclusive, write_failed
from mmtasks.view.benchmarks import task_benchmarks
from mmtasks.view.images import IMG_DIR, ImageStore
from mmtasks.view.records import (
    FAILURE_KINDS, ViewRun, failure_kinds, for_page, metrics_of, read_at, read_samples, same_answer, short,
)

#: the page's source files: ``viewer/`` in the tree, package data ``mmtasks/viewer_site/`` in a wheel
ASSETS = ("index.html", "app.js", "style.css")
INDEX_JS = "index.js"
#: documents per chunk file: a document's detail loads its chunk (a few hundred KB at most)
CHUNK = 50
FORMAT_VERSION = 1


def asset_dir() -> Path:
    return page_dir("viewer", ASSETS, "the run viewer's page files")


def script(key: str, data: Any) -> str:
    """``MMV.load(key, data);`` with the data as JSON that no string can break out of (:func:`script_json`)."""
    return f"MMV.load({json.dumps(key)},{script_json(data)});\n"


def _write_new(path: Path, data: bytes) -> None:
    """A file of the new data folder: created exclusively, never through a link (the folder is
    new: nothing is there yet). A failure is one line; the previous view stays in place."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with create_exclusive(path) as fh:
            fh.write(data)
    except OSError as exc:
        raise write_failed(path, exc, "the previous view, unchanged") from None


@dataclass
class TaskTable:
    """One task's rows while its documents are read."""

    index: int
    name: str
    n_runs: int
    rows: list[list[Any]] = field(default_factory=list)
    metric_names: list[str] = field(default_factory=list)
    dims: list[str] = field(default_factory=list)
    dim_values: list[list[str]] = field(default_factory=list)

    def metric_list(self, metrics: dict[str, float | None]) -> dict[str, float | None]:
        for name in metrics:
            if name not in self.metric_names:
                self.metric_names.append(name)
        return metrics

    def dim_indices(self, breakdown: Any) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        if not isinstance(breakdown, dict):
            return out
        for dim, value in breakdown.items():
            dim, value = str(dim), str(value)
            if dim not in self.dims:
                self.dims.append(dim)
                self.dim_values.append([])
            d = self.dims.index(dim)
            values = self.dim_values[d]
            if value not in values:
                values.append(value)
            out.append((d, values.index(value)))
        return out


def build_view(runs: Sequence[ViewRun], out: Path, *, tasks: Sequence[str] | None = None,
               progress: Callable[[str], None] | None = None,
               include_paths: Sequence[str | Path] = ()) -> dict[str, Any]:
    """Write the site for one run, or two side by side (the tasks both have); returns its index.
    Each task names its benchmark (:func:`~mmtasks.view.benchmarks.task_benchmarks`: the folder
    that holds it among the task registry's, with ``include_paths``), by which the page groups them."""
    if not 1 <= len(runs) <= 2:
        raise ConfigError("the viewer shows one run or two side by side")
    chosen = _tasks(runs, tasks)
    benchmarks = task_benchmarks(chosen, runs[0].results.configs, include_paths)
    source = asset_dir()
    page: dict[str, bytes] = {name: (source / name).read_bytes() for name in ASSETS}
    token = "d-" + time.strftime("%Y%m%d%H%M%S") + "-" + secrets.token_hex(3)
    index: dict[str, Any] = {
        "version": FORMAT_VERSION,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "data": token,
        "chunk": CHUNK,
        "kinds": list(FAILURE_KINDS),
        "runs": [run.describe(label) for run, label in zip(runs, "AB")],
        "tasks": [],
    }
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ConfigError("--out is not a folder", file=out, field="--out")
    # the folder's claim and lock, from the data folder's first file to the switch of the page
    with claim_folder(out, "view", what="run view") as claim:
        img = out / IMG_DIR
        if img.is_symlink():
            raise ConfigError("the view's img/ folder is a symlink: refusing to write through it", file=img, field="--out")
        images = ImageStore(out, atomic_write_bytes)  # temp + rename: a killed build leaves no half thumbnail
        data = claim.data_folder(token)
        try:
            for i, task in enumerate(chosen):
                if progress is not None:
                    progress(task)
                summary = _write_task(runs, task, i, data, images)
                summary["benchmark"], summary["benchmark_title"] = benchmarks[task].key, benchmarks[task].title
                index["tasks"].append(summary)
            # the page and the index that names the new data folder, switched as one set; the
            # previous set's data folder (and only it) is removed after
            page[INDEX_JS] = script("index", index).encode("ascii")
            claim.switch(page, data=[token, IMG_DIR])
        except BaseException:
            shutil.rmtree(data, ignore_errors=True)
            raise
    index["images_written"] = images.written
    return index


def _tasks(runs: Sequence[ViewRun], tasks: Sequence[str] | None) -> list[str]:
    common = [t for t in runs[0].tasks if all(t in r.tasks for r in runs[1:])]
    if tasks:
        unknown = [t for t in tasks if t not in common]
        if unknown:
            raise ConfigError(f"task {unknown[0]!r} is not among the run's samples" + (" of both runs" if len(runs) > 1 else ""),
                              field="--tasks", hint="tasks with samples: " + (", ".join(common) or "none"))
        return list(tasks)
    if not common:
        raise DataError("the two runs have no task in common", file=runs[1].folder,
                        hint=f"run A has {', '.join(runs[0].tasks)}; run B has {', '.join(runs[1].tasks)}")
    return common


def _write_task(runs: Sequence[ViewRun], task: str, i: int, data: Path, images: ImageStore) -> dict[str, Any]:
    folder = data / f"t{i}"
    table = TaskTable(index=i, name=task, n_runs=len(runs))
    path_a = runs[0].samples_file(task)
    assert path_a is not None
    path_b = runs[1].samples_file(task) if len(runs) > 1 else None
    # B by document id (offsets only: one sample in memory at a time)
    offsets_b: dict[str, int] = {}
    if path_b is not None:
        for offset, sample in read_samples(path_b):
            offsets_b.setdefault(str(sample["doc_id"]), offset)
    seen_b: set[str] = set()
    chunk: list[dict[str, Any]] = []
    n_chunks = 0

    def flush() -> None:
        nonlocal chunk, n_chunks
        if chunk:
            _write_new(folder / f"c{n_chunks}.js", script(f"t{i}/c{n_chunks}", chunk).encode("ascii"))
            n_chunks += 1
            chunk = []

    def add(a: dict[str, Any] | None, b: dict[str, Any] | None) -> None:
        table.rows.append(_row(table, a, b))
        chunk.append({"A": for_page(a, images) if a is not None else None,
                      **({"B": for_page(b, images) if b is not None else None} if len(runs) > 1 else {})})
        if len(chunk) == CHUNK:
            flush()

    for _, a in read_samples(path_a):
        b = None
        if path_b is not None:
            doc = str(a["doc_id"])
            if doc in offsets_b and doc not in seen_b:
                seen_b.add(doc)
                b = read_at(path_b, offsets_b[doc])
        add(a, b)
    if path_b is not None:
        for doc, offset in offsets_b.items():
            if doc not in seen_b:
                add(None, read_at(path_b, offset))
    flush()
    rows = {
        "task": task,
        "metrics": table.metric_names,
        "dims": table.dims,
        "dim_values": table.dim_values,
        "rows": [_finish(table, row) for row in table.rows],
    }
    _write_new(folder / "rows.js", script(f"t{i}/rows", rows).encode("ascii"))
    return _task_summary(runs, task, i, table, n_chunks)


def _row(table: TaskTable, a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[Any]:
    """A table row, with metric dicts still to be turned into lists (:func:`_finish`)."""
    first = a if a is not None else b
    assert first is not None
    dims = table.dim_indices(first.get("breakdown"))
    row: list[Any] = [str(first["doc_id"]), dims, short(first.get("target"))]
    for sample in ([a, b] if table.n_runs > 1 else [a]):
        if sample is None:
            row += [None, 0, None]
        else:
            row += [table.metric_list(metrics_of(sample)), failure_kinds(sample), short(sample.get("parsed"))]
    if table.n_runs > 1:
        row.append(0 if a is not None and b is not None and same_answer(a, b) else 1)
    return row


def _finish(table: TaskTable, row: list[Any]) -> list[Any]:
    """Row layout: ``[doc_id, [[dim, value]...], target, (metrics, kinds, parsed) per run, disagree?]``;
    metrics as a list in ``metrics`` order (null: no value)."""
    out = list(row)
    for k in range(3, 3 + 3 * table.n_runs, 3):
        if isinstance(out[k], dict):
            out[k] = [out[k].get(name) for name in table.metric_names]
    return out


def _task_summary(runs: Sequence[ViewRun], task: str, i: int, table: TaskTable, n_chunks: int) -> dict[str, Any]:
    configs = runs[0].results.configs.get(task) or {}
    primary = None
    for metric in configs.get("metrics") or []:
        if isinstance(metric, dict) and metric.get("primary"):
            primary = metric.get("name")
    default = primary if primary in table.metric_names else (
        "score" if "score" in table.metric_names else (table.metric_names[0] if table.metric_names else None))
    per_run = []
    for run in runs:
        results = run.results.results.get(task)
        coverage = run.results.coverage.get(task)
        replies = run.results.replies.get(task)
        per_run.append({
            "metrics": results.metrics() if results is not None else {},
            "problems": dict(run.results.problems.get(task) or {}),
            "coverage": coverage.model_dump(mode="json") if coverage is not None else None,
            # a multi-turn task's scores per turn (its ``turn`` breakdown): turn -> {metric: value, n}
            "turns": (run.results.breakdowns.get(task) or {}).get("turn"),
            "replies": replies.model_dump(mode="json") if replies is not None else None,
            "config_hash": run.results.task_hash(task),
            # the task's scoring variants: name -> description, metrics, coverage
            "variants": {name: v.model_dump(mode="json", exclude={"breakdowns"})
                         for name, v in run.results.variants.get(task, {}).items()},
        })
    hashes = {r["config_hash"] for r in per_run if r["config_hash"]}
    paired = _paired(runs, task, primary) if len(runs) == 2 and len(hashes) <= 1 else None
    return {
        "name": task,
        "dir": f"t{i}",
        "n": len(table.rows),
        "chunks": n_chunks,
        "protocol": configs.get("protocol"),
        "primary": primary,
        "default_metric": default,
        "description": configs.get("description"),
        "runs": per_run,
        # the runs ran different definitions of the task under one name (their config hashes differ)
        "configs_differ": len(hashes) > 1,
        # two runs: the second minus the first on the headline, paired over the documents both
        # hold, failed ones scored as the task's failure rule says (mmtasks compare's statistics), or None when they cannot be paired
        "paired": paired,
    }


def _paired(runs: Sequence[ViewRun], task: str, primary: str | None) -> dict[str, Any] | None:
    from mmtasks.comparison.runs import compare_task, read_samples as scores_of
    from mmtasks.errors import MmtasksError

    a, b = runs
    try:
        row, _ = compare_task(task, a.results, b.results, scores_of(a.folder, task), scores_of(b.folder, task))
    except MmtasksError:  # no samples, different documents: nothing to pair
        return None
    metric = next((m for m in row.metrics if m.metric == primary), row.metrics[0] if row.metrics else None)
    if metric is None:
        return None
    return {"metric": metric.metric, "n": metric.n, "only_a": row.only_a, "only_b": row.only_b,
            "failed_a": len(row.failed_a), "failed_b": len(row.failed_b), "failures": metric.failures,
            "difference": metric.difference, "low": metric.low, "high": metric.high,
            "significant": metric.significant, "mcnemar_p": metric.mcnemar_p}
