"""``mmtasks publish-results RUN --to ORG/MODEL``: a run's scores on the model's Hub page.

The Hub shows evaluation results from a model repository's ``.eval_results/*.yaml`` files and
aggregates them into the benchmark datasets' leaderboards (https://huggingface.co/docs/hub/eval-results;
the entries are built and written with huggingface_hub's own ``EvalResultEntry`` and
``eval_result_entries_to_yaml``). Each file is a list of entries, one per task:
``dataset: {id, task_id, revision}``, ``value``, ``date``, ``source: {url, name}``, ``notes``.

- One file per benchmark dataset and variant, as the format asks (a score with another setup is
  another file, its ``notes`` saying what differs): ``.eval_results/<dataset>.yaml`` for the
  official protocol, ``.eval_results/<dataset>_<variant>.yaml`` otherwise. A task whose data is not a
  Hub dataset (local data only) has no benchmark to be listed under: it is left out, and named.
- ``task_id`` is the mmtasks task, ``value`` its primary metric as results.json holds it,
  ``revision`` the dataset's commit from the run card, ``source.url`` the run's view (``--view-url``,
  where ``mmtasks view`` / ``leaderboard publish --with-site`` put it on a dataset or Space).
- A pull request is opened (``create_commit(create_pr=True)``); ``--push`` commits to the main
  branch instead. The model repo is never created.
- The manifest rules of ``leaderboard publish``: ``.eval_results/.mmtasks-results.json`` lists every
  file mmtasks wrote there. A file of this publish that the repo holds and the manifest does not
  list (someone else's results) is refused, naming it: nothing else of the repo is touched, and
  nothing is deleted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmtasks.errors import ConfigError, DataError, printable
from mmtasks.leaderboard.publish import PublishError, _client, _hub_errors, manifest_paths
from mmtasks.results.files import run_folder
from mmtasks.results.schema import ResultsFile, read_results

FOLDER = ".eval_results"
#: mmtasks's record of the files it wrote in the model repo's ``.eval_results/``
RESULTS_MANIFEST = f"{FOLDER}/.mmtasks-results.json"
SOURCE_NAME = "mmtasks run"


@dataclass
class ResultsPlan:
    """What a publish writes: repo path -> the file's YAML, and the tasks left out (and why)."""

    repo: str
    files: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _dataset_of(config: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """A task config's Hub dataset id and pinned revision (None: local data only)."""
    dataset = config.get("dataset") or {}
    hf, hub = dataset.get("hf"), dataset.get("hub")
    if isinstance(hf, dict) and isinstance(hf.get("path"), str) and "/" in hf["path"] and not hf.get("data_files"):
        return hf["path"], hf.get("revision")
    if isinstance(hub, dict) and isinstance(hub.get("repo"), str):
        return hub["repo"], hub.get("revision")
    return None, None


def plan_results(results: ResultsFile, repo: str, view_url: str) -> ResultsPlan:
    """The ``.eval_results`` files of one run (see the module docstring)."""
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    import yaml

    from mmtasks.leaderboard.build import primary_metric
    from mmtasks.leaderboard.results import iso_utc

    out = ResultsPlan(repo)
    variant = "; ".join(results.config.variant())
    date = iso_utc(results.date)
    by_file: dict[str, list[EvalResultEntry]] = {}
    names: dict[str, str] = {}
    for task in results.results:
        config = results.configs.get(task) or {}
        dataset_id, pinned = _dataset_of(config)
        if dataset_id is None:
            out.skipped[task] = "its data is not a Hub dataset (local data only)"
            continue
        metrics = results.metrics(task)
        primary = primary_metric(config, results.higher_is_better.get(task, {}), metrics)
        value = metrics.get(primary) if primary else None
        if value is None:
            out.skipped[task] = "no value of its primary metric"
            continue
        card = results.run_card.data.get(task) if results.run_card is not None else None
        revision = (card.commit if card is not None and card.source == "hub" else None) or pinned
        base = _slug(dataset_id.split("/", 1)[1])
        if names.setdefault(base, dataset_id) != dataset_id:  # two datasets of one name: the org tells them apart
            base = _slug(dataset_id.replace("/", "--"))
        name = f"{FOLDER}/{base}{'_' + _slug(variant) if variant else ''}.yaml"
        by_file.setdefault(name, []).append(EvalResultEntry(
            dataset_id=dataset_id, task_id=task, value=round(float(value), 6), dataset_revision=revision, date=date,
            source_url=view_url, source_name=SOURCE_NAME, notes=variant or None))
    for name, entries in by_file.items():
        out.files[name] = yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True)
    return out


def load_plan(run: Path, repo: str, view_url: str) -> ResultsPlan:
    """The plan for the run folder ``run`` (or its results.json); a run without a task to publish is an error."""
    from mmtasks.leaderboard.publish import _REPO_ID

    if not _REPO_ID.match(repo):
        raise ConfigError(f"{repo!r} is not a repo id (ORG/NAME)", field="--to")
    if not re.match(r"https?://", view_url):
        raise ConfigError(f"{view_url!r} is not an http(s) URL", field="--view-url",
                          hint="where the run's view is published (a dataset or Space), e.g. by `mmtasks leaderboard publish --with-site`")
    folder = run_folder(run)
    plan = plan_results(read_results(folder / "results.json"), repo, view_url)
    if not plan.files:
        why = "; ".join(f"{t}: {reason}" for t, reason in plan.skipped.items()) or "no tasks"
        raise DataError(f"nothing to publish: no task of the run has a Hub benchmark dataset and a score ({why})",
                        file=folder / "results.json")
    return plan


def _existing(api: Any, repo: str) -> tuple[set[str], list[str]]:
    """The repo's files, and the paths mmtasks's manifest lists (none when it has none)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    files = set(api.list_repo_files(repo, repo_type="model"))
    if RESULTS_MANIFEST not in files:
        return files, []
    try:
        path = hf_hub_download(repo, RESULTS_MANIFEST, repo_type="model", endpoint=api.endpoint, token=api.token)
    except EntryNotFoundError:
        return files, []
    return files, manifest_paths(Path(path).read_bytes(), f"model {repo}")


def conflicts(plan: ResultsPlan, files: set[str], ours: list[str]) -> list[str]:
    """The files of the plan that the repo holds and mmtasks did not write."""
    return sorted(p for p in plan.files if p in files and p not in ours)


def publish_results(plan: ResultsPlan, *, push: bool = False, message: str | None = None) -> tuple[str, list[str]]:
    """Open a pull request (``push``: commit to main) with the plan's files and the updated manifest;
    returns the PR's (or commit's) URL and the files written. Nothing else is touched."""
    from huggingface_hub import CommitOperationAdd

    where = f"model {plan.repo}"
    api = _client(where, need_token=True)
    with _hub_errors(where):
        files, ours = _existing(api, plan.repo)
        clash = conflicts(plan, files, ours)
        if clash:
            raise PublishError(f"cannot publish to {where}: {', '.join(printable(p) for p in clash)} is already there and "
                               "mmtasks did not write it; nothing was changed",
                               hint=f"rename or remove that file in the repo; mmtasks changes only the files {RESULTS_MANIFEST} lists")
        manifest = json.dumps({"writer": "mmtasks", "files": sorted({*ours, *plan.files})}, indent=1) + "\n"
        operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=text.encode("utf-8"))
                      for path, text in plan.files.items()]
        operations.append(CommitOperationAdd(path_in_repo=RESULTS_MANIFEST, path_or_fileobj=manifest.encode("utf-8")))
        info = api.create_commit(
            repo_id=plan.repo, repo_type="model", operations=operations, create_pr=not push,
            commit_message=message or f"mmtasks evaluation results: {len(plan.files)} benchmark file(s)",
            commit_description="Evaluation results in the Hub's `.eval_results/` format, written by `mmtasks publish-results`."
                               " Each file links to the run's view.")
    url = getattr(info, "pr_url", None) if not push else None
    return printable(str(url or getattr(info, "commit_url", info))), list(plan.files)
