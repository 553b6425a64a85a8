"""results.json's config_hashes: the same task definition hashes the same wherever its folder
sits; a changed plugin file or template changes it."""

from __future__ import annotations

import shutil
from pathlib import Path

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.results.results_json import config_hash
from mmtasks.task import Task

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def _hash(folder: Path | None = None, edit: str | None = None) -> str:
    """The built-in mantis_eval's hash, or that of the same definition whose plugin file is the
    copy in ``folder`` (optionally with ``edit`` appended)."""
    config, path = TaskRegistry.discover().load("mantis_eval")
    if folder is None:
        return config_hash(Task(config, path))
    copy = folder / "mantis_eval"
    shutil.copytree(TASKS / "mantis_eval", copy)
    plugin = copy / "mantis_scoring.py"
    if edit:
        plugin.write_text(plugin.read_text() + edit)
    return config_hash(Task(config.model_copy(update={"plugins": [str(plugin)]}), copy / "mantis_eval.yaml"))


def test_same_definition_same_hash_anywhere(tmp_path: Path) -> None:
    builtin = _hash()
    assert _hash(tmp_path / "elsewhere") == builtin  # plugin files count by name and content, not path
    assert _hash(tmp_path / "edited", edit="\n# changed\n") != builtin
    config, path = TaskRegistry.discover().load("mantis_eval")
    reworded = config.model_copy(update={"description": config.description + "!"})
    assert config_hash(Task(reworded, path)) != builtin
