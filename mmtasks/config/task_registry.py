"""Finding tasks: every ``*.yaml`` under a task folder is a task, except files whose
name starts with ``_`` (bases for ``include``) and a benchmark folder's leaderboard
section, ``leaderboard.yaml`` (read by :mod:`mmtasks.leaderboard.sections`). YAML under a folder named ``tests`` (a benchmark folder's own tests) is not a task either. The task folders are, in order: the
built-in ``tasks/``, those installed packages contribute through the
``mmtasks`` entry-point group (``mmtasks.registry.task_folders``), and each
``--include-path``.

The registry indexes names lazily (a cheap YAML read per file) and validates a
task fully only when it is used, so one broken file does not stop others from
being listed - but it is reported when it is asked for.

A group belongs to the task folder of its first member (folders in the order above): a task
of another folder that names it (a plugin's task naming ``realbench_ranking``) is a load error,
reported when that task or that group is asked for; it never joins the group. A task that
only inherits the group through ``include:`` from the owner's task is not a member either.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from mmtasks.package_data import data_dir
from pathlib import Path

from mmtasks import registry
from mmtasks.config.benchmark_folders import TESTS_FOLDER
from mmtasks.config.reports import Report, builtin_reports_dir, load_reports
from mmtasks.config.task_config import TaskConfig
from mmtasks.config.yaml_loader import load_with_includes, read_yaml, validate, validate_without_errors
from mmtasks.errors import ConfigError, MmtasksError

#: the tasks shipped with mmtasks, as package data (``tasks/``)
BUILTIN_TASKS_DIR = data_dir("tasks")
#: a benchmark folder's leaderboard section: data for the leaderboard, not a task
LEADERBOARD_FILE = "leaderboard.yaml"


@dataclass
class TaskRegistry:
    dirs: list[Path]
    _files: dict[str, Path] = field(default_factory=dict)
    _groups: dict[str, list[str]] = field(default_factory=dict)
    _errors: dict[Path, str] = field(default_factory=dict)
    #: group -> the task folder that owns it (the folder of its first member, in folder order)
    _group_owners: dict[str, Path] = field(default_factory=dict)
    #: group -> files of other folders that name it (refused: see _index)
    _intruders: dict[str, list[Path]] = field(default_factory=dict)
    #: report name -> the model card's report table (``reports/``: :mod:`mmtasks.config.reports`)
    _reports: dict[str, Report] = field(default_factory=dict)

    @classmethod
    def discover(cls, include_paths: Sequence[str | Path] = ()) -> "TaskRegistry":
        dirs = [BUILTIN_TASKS_DIR] if BUILTIN_TASKS_DIR.is_dir() else []
        for name in registry.task_folders.names():
            folder = Path(registry.task_folders.get(name))
            if not folder.is_dir():
                raise ConfigError(f"the task folder {name!r} of an installed package is not a directory: {folder}",
                                  field="task_folders", hint="fix or uninstall that package")
            dirs.append(folder.resolve())
        for p in include_paths:
            path = Path(p).expanduser()
            if not path.is_dir():
                raise ConfigError("include path is not a directory", file=path, field="--include-path")
            dirs.append(path.resolve())
        reg = cls(dirs=dirs)
        reg._index()
        reg._reports = load_reports([builtin_reports_dir()])
        return reg

    def _index(self) -> None:
        parsed: dict[Path, dict] = {}  # each file read once, however many tasks include it
        for d in self.dirs:
            for path in sorted(d.rglob("*.yaml")):
                if path.name.startswith("_") or path.name == LEADERBOARD_FILE:
                    continue
                if TESTS_FOLDER in path.relative_to(d).parts[:-1]:  # a benchmark folder's tests/: fixtures, not tasks
                    continue
                try:
                    data = load_with_includes(path, roots=self.dirs, memo=parsed)
                except ConfigError as exc:
                    self._errors[path] = exc.render()
                    continue
                name = data.get("task")
                if not isinstance(name, str):
                    self._errors[path] = f"{path}: field 'task': required key is missing"
                    continue
                if name in self._files and self._files[name] != path:
                    raise ConfigError(f"task {name!r} is defined twice (also in {self._files[name]})", file=path, field="task")
                groups = data.get("group", [])
                groups = [str(g) for g in ([groups] if isinstance(groups, str) else groups or [])]
                foreign = [g for g in groups if self._group_owners.get(g, d) != d]
                if foreign and "group" not in parsed[path.resolve()]:  # the file's own keys, as read above
                    # inherited through include from another folder's task: the copy is not a member
                    groups = [g for g in groups if g not in foreign]
                    foreign = []
                if foreign:
                    # a task joins a group only in the folder that owns it: a plugin's task cannot change
                    # a built-in group's average (nor one of another package's)
                    g = foreign[0]
                    self._errors[path] = ConfigError(
                        f"task {name!r} names group {g!r}, which belongs to the tasks in {self._group_owners[g]}: "
                        "a task joins a group only in the folder that owns the group",
                        file=path, field="group", hint="name a group of your own (or group: [] when the group comes from an include)").render()
                    for g in foreign:
                        self._intruders.setdefault(g, []).append(path)
                    continue
                self._files[name] = path
                for g in groups:
                    self._group_owners.setdefault(g, d)
                    self._groups.setdefault(g, []).append(name)

    @property
    def task_names(self) -> list[str]:
        return sorted(self._files)

    @property
    def groups(self) -> dict[str, list[str]]:
        return {g: sorted(ts) for g, ts in sorted(self._groups.items())}

    @property
    def reports(self) -> dict[str, Report]:
        """Report name -> its report (a model card's table as one ``--tasks`` name)."""
        return dict(self._reports)

    def report_note(self, name: str) -> str | None:
        """For a report: the one line naming its rows not in mmtasks yet (None otherwise)."""
        report = self._reports.get(name)
        return report.missing_line({*self._files, *self._groups}) if report is not None else None

    @property
    def broken_files(self) -> dict[Path, str]:
        return dict(self._errors)

    def load(self, name: str) -> tuple[TaskConfig, Path]:
        """The validated config of task ``name`` and its file. ``plugins:`` paths are made absolute,
        each relative to the file that lists it, and accumulate through ``include`` (bases first)."""
        path = self._files[name]
        data = load_with_includes(path, roots=self.dirs)
        plugins = _declared_plugins(path.resolve())
        if plugins is not None:
            data["plugins"] = [str(p) for p in plugins]
        return validate(TaskConfig, data, file=path), path

    def load_past_errors(self, name: str) -> tuple[TaskConfig, Path] | None:
        """Task ``name``'s config with its keys in error left out (see
        :func:`~mmtasks.config.yaml_loader.validate_without_errors`): for the preflight to check
        its data after reporting the file's errors; None when the file cannot be read that way."""
        path = self._files[name]
        try:
            data = load_with_includes(path, roots=self.dirs)
            plugins = _declared_plugins(path.resolve())
        except MmtasksError:
            return None
        if plugins is not None:
            data["plugins"] = [str(p) for p in plugins]
        config = validate_without_errors(TaskConfig, data)
        return (config, path) if config is not None else None

    def path_of(self, name: str) -> Path:
        """The YAML file of task ``name``."""
        return self._files[name]

    def root(self, name: str) -> Path:
        """The task folder that holds task ``name`` (its plugin files must lie inside it)."""
        path = self._files[name].resolve()
        return next((d for d in self.dirs if path.is_relative_to(d.resolve())), path.parent)

    def resolve(self, names: Iterable[str]) -> list[str]:
        """Expand groups, keep order, drop duplicates; unknown names get a "did you mean"."""
        out: list[str] = []
        for raw in names:
            name = raw.strip()
            if not name:
                continue
            if name in self._files:
                expanded = [name]
            elif name in self._groups:
                if name in self._intruders:  # a run of the group would silently miss (or, before, count) the intruder
                    raise ConfigError(self._errors[self._intruders[name][0]])
                expanded = sorted(self._groups[name])
            elif name in self._reports:
                # a model card's report: the rows mmtasks has (those not in it yet: report_note)
                report = self._reports[name]
                present, _ = report.split({*self._files, *self._groups})
                if not present:
                    raise ConfigError(f"report {name!r}: none of its rows is in mmtasks yet", file=report.file,
                                      field="rows", hint="its rows name: " + ", ".join(report.members()))
                expanded = self.resolve(present)
            else:
                broken = [msg for p, msg in self._errors.items() if p.stem == name or _mentions_task(p, name)]
                if broken:
                    raise ConfigError(broken[0])
                close = difflib.get_close_matches(name, list(dict.fromkeys([*self._files, *self._groups, *self._reports])), n=3)
                hint = f"did you mean {', '.join(repr(c) for c in close)}?" if close else "run `mmtasks tasks` to list them"
                raise ConfigError(f"unknown task or group {name!r}", field="--tasks", hint=hint)
            out.extend(t for t in expanded if t not in out)
        return out


def _declared_plugins(path: Path) -> list[Path] | None:
    """Every ``plugins:`` entry of ``path`` and the files it includes (bases first), each joined to
    the folder of the file that lists it; None when some ``plugins:`` is not a list of names (the
    validation of the merged file then reports it). Include cycles were rejected by the loader."""
    data = read_yaml(path)
    includes = data.get("include") or []
    out: list[Path] = []
    for inc in [includes] if isinstance(includes, str) else includes:
        inherited = _declared_plugins((path.parent / inc).resolve())
        if inherited is None:
            return None
        out.extend(inherited)
    own = data.get("plugins", [])
    if not isinstance(own, list) or not all(isinstance(p, str) for p in own):
        return None
    out.extend(path.parent / p for p in own)
    return list(dict.fromkeys(out))


def _mentions_task(path: Path, name: str) -> bool:
    """Whether an unparseable file seems to define task ``name`` (so its error is the one to show)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(rf"^task:\s*['\"]?{re.escape(name)}['\"]?\s*$", text, re.MULTILINE) is not None
