"""Leaderboard sections: each benchmark folder's ``leaderboard.yaml``, found through the task registry.

A benchmark folder carries its own tab of the leaderboard as data, beside its task YAML:
the title, the description, the columns (which task and metric fills each, and the
computed means), the headline column, the breakdown charts, and the paper's reference
rows. This module reads and checks those files; it names no benchmark.

Discovery follows the task registry (:class:`~mmtasks.config.task_registry.TaskRegistry`):
every ``leaderboard.yaml`` under each of its task folders - the built-in
``tasks/`` (package data), then the folders installed packages contribute
(``mmtasks.registry.task_folders``), then each ``--include-path`` in the order given;
within a folder, in path order. Tabs with an ``order`` come first (ascending), then
those without, in discovery order.

A minimal file (a folder holding the task ``mybench``)::

    id: mybench
    title: MyBench
    description: "What it measures, and the scale."
    category: multi-image
    headline: acc
    columns:
      - {key: acc, label: Acc., title: "Accuracy (0-100)", task: mybench, metric: acc}
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mmtasks.config.task_registry import LEADERBOARD_FILE, TaskRegistry
from mmtasks.config.yaml_loader import read_yaml, validate
from mmtasks.errors import ConfigError
from mmtasks.leaderboard.schema import CATEGORIES, Category, Chart, ChartOption, Citation, Column


class _Strict(BaseModel):
    # numbers are finite (``.inf``/``.nan`` in leaderboard.yaml broke the tab)
    model_config = ConfigDict(extra="forbid", protected_namespaces=(), allow_inf_nan=False)


class ChartSpec(_Strict):
    """A breakdown chart as written in ``leaderboard.yaml`` (the builder adds its buckets)."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    title: str
    dimension: str
    x_label: str
    y_label: str
    style: Literal["line", "bars"] = "line"
    options: list[ChartOption] = Field(min_length=1)
    bucket_order: list[str] = Field(default_factory=list)
    """Buckets to show first, in this order (e.g. the paper's); the others follow in natural order."""

    def chart(self) -> Chart:
        return Chart(**self.model_dump(exclude={"bucket_order"}))


class PaperRow(_Strict):
    """One row of a paper's table: column key -> the number as printed."""

    model: str
    strategy: str | None = None
    citation: str | None = None
    """Overrides the section's citation (another table of the same paper)."""
    values: dict[str, float]


class PaperTable(_Strict):
    """The paper's reference rows, shown beside the runs and marked ``paper``."""

    citation: str
    url: str | None = None
    rows: list[PaperRow] = Field(default_factory=list)

    def cite(self) -> Citation:
        return Citation(text=self.citation, url=self.url)


class Section(_Strict):
    """A benchmark's tab of the leaderboard: the whole of its ``leaderboard.yaml``."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    """Stable identifier of the tab (``Benchmark.id`` in leaderboard.json)."""
    title: str
    description: str
    category: Category | None = None
    """The benchmark's kind: ``multi-image``, ``multi-turn``, ``video``, ``single-image``,
    ``reasoning`` or ``documents``; the overview groups the headlines by it. Required in a
    ``leaderboard.yaml`` (:func:`load_section`); ``None`` only for the automatic tab."""
    headline: str
    """The column key the table is sorted by."""
    order: int | None = None
    """Position among the tabs (ascending); tabs without one follow, in discovery order."""
    columns: list[Column] = Field(min_length=1)
    charts: list[ChartSpec] = Field(default_factory=list)
    papers: PaperTable | None = None
    #: the file it was read from (set by :func:`load_section`, not a YAML key)
    _file: Path | None = None

    @property
    def file(self) -> Path | None:
        return self._file

    @property
    def tasks(self) -> list[str]:
        """Tasks whose results feed this section's columns, in column order."""
        return list(dict.fromkeys(column.task for column in self.columns if column.task is not None))

    def column(self, key: str) -> Column:
        for column in self.columns:
            if column.key == key:
                return column
        raise KeyError(key)


def load_section(path: Path, *, known_tasks: Collection[str] | None = None) -> Section:
    """Read and check one ``leaderboard.yaml``; errors are one line naming the file and the key.

    With ``known_tasks``, every task a column or a chart names must be one of them.
    """
    data = read_yaml(path)
    _unknown_keys_first(data, path)
    section = validate(Section, data, file=path)
    _check(section, path, known_tasks)
    section._file = path
    return section


def _unknown_keys_first(data: dict, path: Path) -> None:
    """A misspelt key is reported as unknown (with the key it was meant to be), not as the
    required key it leaves missing."""
    try:
        Section.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        extra = [e for e in errors if e["type"] == "extra_forbidden"]
        if not extra:
            return  # validate() reports the first error
        loc = extra[0]["loc"]
        missing = [str(e["loc"][-1]) for e in errors if e["type"] == "missing" and e["loc"][:-1] == loc[:-1]]
        raise ConfigError("unknown key", file=path, field=".".join(str(p) for p in loc),
                          hint=_hint(str(loc[-1]), missing)) from None


def _check(section: Section, path: Path, known_tasks: Collection[str] | None) -> None:
    def fail(message: str, field: str, hint: str | None = None) -> None:
        raise ConfigError(message, file=path, field=field, hint=hint)

    if section.category is None:
        fail("missing key 'category'", "category", f"one of: {', '.join(CATEGORIES)}")
    keys = [column.key for column in section.columns]
    measured = {c.key for c in section.columns if c.task is not None}
    for i, column in enumerate(section.columns):
        where = f"columns.{i}"
        if keys.index(column.key) != i:
            fail(f"column key {column.key!r} is used twice", f"{where}.key")
        if column.mean_of:
            if column.task is not None or column.metric is not None:
                fail("a computed column (mean_of) takes no task or metric", where)
            for j, key in enumerate(column.mean_of):
                if key not in measured:
                    fail(f"{key!r} is not a column filled by a task", f"{where}.mean_of.{j}",
                         _hint(key, sorted(measured)))
        elif column.task is None or column.metric is None:
            fail("a column needs a task and a metric, or mean_of (a computed column)", where)
        elif known_tasks is not None and column.task not in known_tasks:
            fail(f"unknown task {column.task!r}", f"{where}.task", _hint(column.task, known_tasks))
        if column.scale_max <= column.scale_min:
            fail("scale_max must be above scale_min", f"{where}.scale_max")
    if section.headline not in keys:
        fail(f"{section.headline!r} is not a column key", "headline", _hint(section.headline, keys))
    if section.columns[keys.index(section.headline)].higher_is_better is None:  # it ranks the rows
        fail("the headline needs a direction (higher_is_better true or false)",
             f"columns.{keys.index(section.headline)}.higher_is_better")
    chart_ids = [chart.id for chart in section.charts]
    for i, chart in enumerate(section.charts):
        if chart_ids.index(chart.id) != i:
            fail(f"chart id {chart.id!r} is used twice", f"charts.{i}.id")
        for j, option in enumerate(chart.options):
            if known_tasks is not None and option.task not in known_tasks:
                fail(f"unknown task {option.task!r}", f"charts.{i}.options.{j}.task", _hint(option.task, known_tasks))
    if section.papers is not None:
        for i, row in enumerate(section.papers.rows):
            unknown = sorted(set(row.values) - set(keys))
            if unknown:
                fail(f"unknown column(s) {', '.join(unknown)}", f"papers.rows.{i}.values", f"known: {', '.join(keys)}")
            for key, value in row.values.items():
                column = section.columns[keys.index(key)]
                if not column.scale_min <= value <= column.scale_max:
                    # the page's shading and the plots read the scale: a sum of 0-2800 on 0-100 is all one shade
                    fail(f"{value:g} is outside column {key!r}'s scale {column.scale_min:g}-{column.scale_max:g}",
                         f"papers.rows.{i}.values.{key}", "set the column's scale_min/scale_max to the metric's range")


def _hint(name: str, known: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(name, list(known), n=3)
    return "did you mean " + " or ".join(repr(c) for c in close) + "?" if close else None


def section_files(dirs: Sequence[Path]) -> list[Path]:
    """Every ``leaderboard.yaml`` under ``dirs``, in discovery order, each file once."""
    found: dict[Path, None] = {}
    for folder in dirs:
        for path in sorted(Path(folder).rglob(LEADERBOARD_FILE)):
            if path.is_file():
                found.setdefault(path.resolve(), None)
    return list(found)


def load_sections(dirs: Sequence[Path], *, known_tasks: Collection[str] | None = None) -> list[Section]:
    """The sections under ``dirs``, in tab order; two sections with one id are an error."""
    sections: list[Section] = []
    seen: dict[str, Path] = {}
    for path in section_files(dirs):
        section = load_section(path, known_tasks=known_tasks)
        if section.id in seen:
            raise ConfigError(f"leaderboard section {section.id!r} is defined twice (also in {seen[section.id]})",
                              file=path, field="id", hint="give one of them another id")
        seen[section.id] = path
        sections.append(section)
    # stable sort: tabs with an order first, ascending; then the rest in discovery order
    return sorted(sections, key=lambda s: (s.order is None, s.order or 0))


def discover_sections(include_paths: Sequence[str | Path] = ()) -> list[Section]:
    """The sections of every task folder the task registry knows (built-in, installed packages',
    ``include_paths``), checked against the tasks it knows."""
    tasks = TaskRegistry.discover(include_paths)
    return load_sections(tasks.dirs, known_tasks=set(tasks.task_names))


#: the id of the tab that shows the runs' tasks that no ``leaderboard.yaml`` names
AUTO_SECTION = "other-tasks"


def auto_section(tasks: Mapping[str, tuple[str, dict[str, Any], float]]) -> Section | None:
    """The automatic tab for tasks no ``leaderboard.yaml`` names, so that every run shows on the
    leaderboard: one column per task, its primary metric. ``tasks``: task -> (its primary
    metric, the task's config as a run recorded it, the largest value a run has). None when
    there are none. The scale is 0-100 unless a value is past it (then 0 to that value)."""
    if not tasks:
        return None
    columns = []
    for task, (metric, config, largest) in sorted(tasks.items()):
        declared = next((m for m in config.get("metrics") or [] if isinstance(m, dict) and m.get("name") == metric), {})
        direction = declared.get("higher_is_better", True)
        higher = None if direction is None else direction is not False
        columns.append(Column(key=f"{task}.{metric}", label=task, title=f"{task}: {metric}"
                              + (f" ({config['description']})" if isinstance(config.get("description"), str) else ""),
                              task=task, metric=metric, higher_is_better=higher,
                              scale_min=min(0.0, largest - 1.0) if largest < 0 else 0.0,
                              scale_max=max(100.0, largest)))
    return Section(id=AUTO_SECTION, title="Other tasks",
                   description="Tasks of the runs that no benchmark's leaderboard.yaml names: one column per task, "
                               "its primary metric (an automatic tab; a leaderboard.yaml in the task's folder gives "
                               "it its own).",
                   headline=columns[0].key, columns=columns)
