"""``--shard I/N`` slices made one run again: ``mmtasks merge OUT SLICE...``.

A slice (``mmtasks run --shard I/N``, e.g. one Slurm array task or one Kubernetes Indexed Job
pod) evaluates document k of the run (counted across all tasks, in task order) when
``k % N == I``, and writes an ordinary run folder whose results.json records, under
``config.shard_of``, what it evaluated: the mmtasks version, each task's config hash, each
task's document count and hash (ids and contents), the model's identity and weights
fingerprint, where the data was, and its reply counts.

:func:`merge` refuses slices that do not belong together (another config, other data, another
model or weights, another N), a slice given twice and a missing slice, naming the folders and
what differs; then it scores every document once and writes OUT exactly as one process would
have (results.json, ``samples/<task>.jsonl``), so every reader (leaderboard, view, compare,
the Python API) reads it as any run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from mmtasks.config.run_config import RunConfig
from mmtasks.core.sample import Sample
from mmtasks.errors import ConfigError, DataError, MmtasksError

class MergeError(MmtasksError):
    """Slices that cannot be merged into one run."""

    exit_code = 2


def run_config_from_recorded(config: dict[str, Any], **fields: Any) -> RunConfig:
    """The :class:`RunConfig` a results.json's ``config`` records (``fields`` add the rest:
    tasks, data_dir, output_path ...)."""
    from mmtasks.run_file import recorded_fields

    return RunConfig.build(**{**recorded_fields(config), **fields})


def _read(folder: Path) -> dict[str, Any]:
    path = folder / "results.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MergeError("no results.json: not a finished run folder (did the slice finish?)", file=folder) from None
    except (OSError, ValueError) as exc:
        raise MergeError(f"results.json cannot be read: {exc}", file=path) from None
    config = data.get("config") or {}
    if not config.get("shard") or not isinstance(config.get("shard_of"), dict):
        raise MergeError("not a slice: its run had no --shard I/N", file=path,
                         hint="merge the folders of `mmtasks run --shard I/N` runs")
    return data


def _what_differs(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """How slice ``b``'s run differs from slice ``a``'s, in a few words; None when they are one run."""
    ca, cb = a["config"], b["config"]
    sa, sb = ca["shard_of"], cb["shard_of"]
    if ca["shard"].split("/")[1] != cb["shard"].split("/")[1]:
        return f"it is a slice of {cb['shard'].split('/')[1]}, not of {ca['shard'].split('/')[1]}"
    if sa["version"] != sb["version"]:
        return f"mmtasks {sb['version']}, not {sa['version']}"
    if sa.get("task_names") != sb.get("task_names") or sorted(sa["tasks"]) != sorted(sb["tasks"]):
        return f"tasks {sorted(sb['tasks'])}, not {sorted(sa['tasks'])}"
    for task in sa["tasks"]:
        if sa["tasks"][task] != sb["tasks"][task]:
            return f"task {task!r}'s config differs"
    for key in sorted(set(ca) | set(cb)):
        if key in ("shard", "shard_of", "mmtasks_version", "run_name", "tasks"):
            continue
        if ca.get(key) != cb.get(key):
            return f"config {key!r} is {json.dumps(cb.get(key))}, not {json.dumps(ca.get(key))}"
    for task, docs in sa["documents"].items():
        other = sb["documents"].get(task, {})
        if docs != other:
            if docs.get("count") != other.get("count"):
                return f"task {task!r} had {other.get('count')} documents there, {docs.get('count')} here (other data)"
            return f"task {task!r}'s documents differ (other data: same count, other ids or contents)"
    if sa["models"] != sb["models"]:
        return f"another model: {sb['models']}, not {sa['models']}"
    if sa["weights"] != sb["weights"]:
        return "other weights at the model's path (the weights fingerprints differ)"
    return None


def check_slices(folders: list[Path]) -> list[tuple[Path, dict[str, Any]]]:
    """The slices' results, in slice order, once they are shown to be all the slices of one run."""
    if not folders:
        raise MergeError("no slice given", field="SLICE")
    read = [(folder, _read(folder)) for folder in folders]
    first_folder, first = read[0]
    for folder, data in read[1:]:
        diff = _what_differs(first, data)
        if diff is not None:
            raise MergeError(f"is not a slice of the same run as {first_folder}: {diff}", file=folder,
                             hint="merge only the slices of one command (same tasks, data, model, settings and N)")
    count = int(first["config"]["shard"].split("/")[1])
    by_index: dict[int, list[Path]] = {}
    for folder, data in read:
        by_index.setdefault(int(data["config"]["shard"].split("/")[0]), []).append(folder)
    twice = {i: fs for i, fs in by_index.items() if len(fs) > 1}
    if twice:
        i, fs = min(twice.items())
        raise MergeError(f"slice {i}/{count} is given more than once (overlapping slices): {', '.join(map(str, fs))}",
                         field="SLICE", hint="give each slice's folder once")
    missing = [i for i in range(count) if i not in by_index]
    if missing:
        raise MergeError(f"slice(s) {', '.join(f'{i}/{count}' for i in missing)} missing: "
                         f"{len(by_index)} of {count} given", field="SLICE",
                         hint=f"run the missing slice(s) with --shard I/{count} and merge again")
    order = {folder: int(data["config"]["shard"].split("/")[0]) for folder, data in read}
    return sorted(read, key=lambda item: order[item[0]])


def merge(out: Path, folders: list[Path], *, data_dir: Path | None = None, include_paths: list[Path] | None = None,
          overwrite: bool = False) -> dict[str, Any]:
    """Merge the slices in ``folders`` into the run folder ``out``; returns its results."""
    from mmtasks import distributed
    from mmtasks.documents.dataset import Exclusions
    from mmtasks.documents.paths import data_root
    from mmtasks.models.base import parse_model_spec
    from mmtasks.rank_agreement import check_scored_once, document_hash, documents_hash, TaskDocuments
    from mmtasks.results.files import SamplesFile, SamplesWriter, claim_output_folder, run_fingerprint
    from mmtasks.core.provenance import ModelRevision
    from mmtasks.runner import _identity, check, finish_run, recorded_settings
    from mmtasks.scoring.repeats import repeats_for

    started = time.perf_counter()
    slices = check_slices(folders)
    first = slices[0][1]
    shard_of = first["config"]["shard_of"]
    run = run_config_from_recorded(
        {k: v for k, v in first["config"].items() if k != "shard"}, tasks=shard_of["task_names"],
        data_dir=data_dir if data_dir is not None else shard_of.get("data_dir"),
        include_paths=include_paths if include_paths is not None else shard_of.get("include_paths", []),
        output_path=out, overwrite=overwrite)
    model_spec = parse_model_spec(run.model, run.model_args)
    checked = check(run, model_spec.generation)
    tasks, groups = checked.tasks, checked.groups
    root = data_root(run.data_dir)
    # the data here must be the slices' data: ids and contents hashed as the slices did
    exclusions = {t.name: Exclusions() for t in tasks}
    expected: dict[str, list[str]] = {}
    for task in tasks:
        ids, hashes = [], []
        for doc in task.documents(root, run.limit, excluded=exclusions[task.name]):
            ids.append(doc.doc_id)
            hashes.append(document_hash(doc.record))
        expected[task.name] = ids
        recorded = shard_of["documents"].get(task.name, {})
        if documents_hash(TaskDocuments(ids, hashes)) != recorded.get("hash"):
            raise DataError(f"task {task.name!r}: the data here ({len(ids)} documents) is not the data the slices "
                            f"evaluated ({recorded.get('count')} documents)", field="--data-dir",
                            hint="point --data-dir at the same data the slices read")
    by_task: dict[str, list[Sample]] = {t.name: [] for t in tasks}
    for folder, _ in slices:
        for task in tasks:
            path = folder / "samples" / f"{task.name}.jsonl"
            if not path.is_file():
                raise MergeError(f"no samples file for task {task.name!r}", file=path)
            by_task[task.name].extend(SamplesFile(path, full=True))
    check_scored_once(expected, {t: ((s.doc_id, s.repeat) for s in rows) for t, rows in by_task.items()},
                      {t.name: repeats_for(t.scoring, run.repeats) for t in tasks})
    # the slices' own figures summed, less those the merged run computes again from their ledgers
    # (this run's share of the tokens and cost: finish_run's this_runs_share)
    recomputed = ("total_evaluation_time_s", "tokens_from_cache", "cost_sent")
    stats = distributed.merge_stats([{k: v for k, v in d.get("run_stats", {}).items() if k not in recomputed}
                                     for _, d in slices])
    stats["replies"] = distributed.merge_stats([d["config"]["shard_of"].get("replies", {}) for _, d in slices])
    stats["tokens"] = distributed.merge_stats([d["config"]["shard_of"].get("tokens", {}) for _, d in slices])
    stats["merged_slices"] = len(slices)
    judge_spec = parse_model_spec(run.judge, run.judge_args) if run.judge and first["config"].get("judge_spec") else None
    matcher_spec = parse_model_spec(run.matcher, run.matcher_args) if run.matcher else None
    card_model = (first.get("run_card") or {}).get("model")
    revision = ModelRevision.model_validate(card_model) if card_model else None
    identity = _identity(run, tasks, model_spec, judge_spec)
    with claim_output_folder(out, run_fingerprint(identity), {"model": model_spec.display, "tasks": ",".join(t.name for t in tasks)},
                             overwrite=overwrite, settings=recorded_settings(identity)):
        writer = SamplesWriter(out / "samples")
        try:
            outcome = finish_run(run, tasks, groups, root, {n: s.total for n, s in checked.scans.items()}, exclusions, by_task,
                                 stats, writer, True, model_spec, judge_spec, matcher_spec, first.get("generation") or {},
                                 revision, started)
        finally:
            writer.close()
    return outcome.results


def merge_command(args: Any) -> int:
    out = merge(args.out, args.slices, data_dir=args.data_dir, include_paths=args.include_path or None,
                overwrite=args.overwrite)
    print(f"merged {len(args.slices)} slices: {args.out / 'results.json'} ({len(out.get('results', {}))} tasks)")
    return 0


def add_merge_parser(sub: Any) -> Any:
    p = sub.add_parser("merge", help="merge --shard I/N slices into one run",
                       description="Check that the folders are all the slices (--shard I/N) of one run (same config, "
                                   "data, model and weights; no slice missing or given twice), then score every "
                                   "document once and write OUT as one process would.")
    p.add_argument("out", type=Path, help="the merged run's folder")
    p.add_argument("slices", type=Path, nargs="+", metavar="SLICE", help="each slice's run folder")
    p.add_argument("--data-dir", type=Path, default=None, help="the data (default: the --data-dir the slices recorded)")
    p.add_argument("--include-path", type=Path, action="append", default=None, help="task folders (default: the slices')")
    p.add_argument("--overwrite", action="store_true", help="replace another run's results in OUT")
    return p


__all__ = ["ConfigError", "MergeError", "check_slices", "merge", "run_config_from_recorded"]
