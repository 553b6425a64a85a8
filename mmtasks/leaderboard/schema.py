"""The ``leaderboard.json`` schema, version :data:`SCHEMA_VERSION`.

These pydantic models are the single source of the schema; docs/leaderboard-schema.md
describes them for readers (a test checks that every field is documented there).
Bump :data:`SCHEMA_VERSION` on any change that is not a pure addition of an optional field.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# One definition of a run's coverage record: the leaderboard carries results.json's
# ``coverage[task]`` as the runner wrote it, so a field added there (``guessed``) cannot make
# the leaderboard refuse the run (it had its own copy, which did not know ``guessed``).
from mmtasks.results.schema import Coverage

__all__ = ["CATEGORIES", "SCHEMA_VERSION", "Benchmark", "Category", "Cell", "Chart", "ChartOption", "Citation", "Column", "Coverage",
           "Entry", "Leaderboard", "NSamples", "RunRef", "Variant"]

SCHEMA_VERSION: Final = 2

#: A benchmark's kind, its ``leaderboard.yaml``'s ``category``: the overview page groups the
#: benchmarks' headlines by it, in this order.
Category = Literal["multi-image", "multi-turn", "video", "single-image", "reasoning", "documents"]
CATEGORIES: Final[tuple[str, ...]] = ("multi-image", "multi-turn", "video", "single-image", "reasoning", "documents")


class _Model(BaseModel):
    # numbers are finite: NaN or an infinity would break the page, and JSON cannot spell them
    model_config = ConfigDict(extra="forbid", protected_namespaces=(), allow_inf_nan=False)


class Column(_Model):
    """One column of a benchmark's table (and one axis of its radar when ``radar``)."""

    key: str
    """Stable identifier, the key into :attr:`Entry.values`."""
    label: str
    """Short header as in the paper's table, e.g. ``"Retr. easy"``."""
    title: str
    """Long description shown as the header's tooltip."""
    task: str | None = None
    """Task whose metric fills this column; ``None`` for a computed column."""
    metric: str | None = None
    """Metric name in ``results[task]``; ``None`` for a computed column."""
    mean_of: list[str] = Field(default_factory=list)
    """For a computed column: the column keys it is the plain mean of (all must be present)."""
    scale_min: float = 0.0
    scale_max: float = 100.0
    unit: str = ""
    """Printed after the value, e.g. ``"%"``."""
    decimals: int = Field(2, ge=0, le=6)
    """Digits after the point (0-6: the page's number format takes no more)."""
    higher_is_better: bool | None = True
    """The column's direction; ``None``: none (a diagnostic such as a yes ratio, best near 50%):
    no value is marked best. A headline needs one."""
    radar: bool = False
    """Whether this column is an axis of the benchmark's radar chart."""

    @model_validator(mode="after")
    def _scale(self) -> "Column":
        if not self.scale_min < self.scale_max:
            raise ValueError(f"scale_min ({self.scale_min:g}) must be below scale_max ({self.scale_max:g})")
        return self


class ChartOption(_Model):
    """One series choice of a breakdown chart: which task's breakdown and which metric in it."""

    label: str
    task: str
    metric: str
    scale_min: float = 0.0
    scale_max: float = 100.0


class Chart(_Model):
    """A breakdown chart: a metric per bucket of ``results.json``'s ``breakdowns[task][dimension]``."""

    id: str
    title: str
    dimension: str
    """Breakdown dimension, e.g. ``"turn"``, ``"length"``, ``"n_images"``."""
    x_label: str
    y_label: str
    style: Literal["line", "bars"] = "line"
    options: list[ChartOption]
    buckets: list[str] = Field(default_factory=list)
    """Bucket labels found in the data, in natural order (filled by the builder)."""


class Citation(_Model):
    """Where a paper's reference numbers come from."""

    text: str
    url: str | None = None


class Cell(_Model):
    """One table value of an entry. Missing values are ``null`` with a reason, never 0."""

    value: float | None = None
    stderr: float | None = None
    n: int | None = None
    """Samples the value is computed on (``n-samples[task].effective``), when known."""
    missing: str | None = None
    """Why ``value`` is ``null`` (e.g. ``"not in any run"``, ``"not reported by the paper"``)."""
    coverage: float | None = None
    """Percent of the task's documents (turns, questions) that the value is computed on, when
    the run reports coverage; for a computed column, over all its parts. Under 100: some
    were not scored (see :attr:`Entry.coverage`)."""


class NSamples(_Model):
    original: int | None = None
    effective: int | None = None


class RunRef(_Model):
    """A run that supplied some of an entry's tasks."""

    run: str
    """The run directory's name (not its full path)."""
    date: str
    """ISO 8601 UTC date of the run."""
    tasks: list[str]
    """The tasks of this entry that come from this run."""
    git_hash: str | None = None
    mmtasks_version: str | None = None
    model_revision: str | None = None
    """The weights that answered (results.json's ``run_card.model``): ``hub ORG/NAME@<commit>``,
    ``local NAME@<hash>``, ``api NAME``."""
    data_revisions: dict[str, str] = Field(default_factory=dict)
    """Task -> the data it read (``run_card.data``): ``hub ORG/NAME@<commit>``, ``local DIR/FILE@<hash>``."""
    software: dict[str, str] = Field(default_factory=dict)
    """Package -> version (``run_card.versions``, installed ones)."""
    hardware: str | None = None
    """GPUs and CPU of the machine that ran (``run_card.hardware``)."""
    judge: str | None = None
    view: str | None = None
    """Relative link to the run's viewer (``views/<run>/index.html``) when the view was published
    beside the leaderboard (``mmtasks view RUN --out OUT/views/<run>``)."""


class Tie(_Model):
    """A ranked run row against the ranked run row just below it, paired over the documents both
    scored (``mmtasks compare``'s statistics on the headline column)."""

    below: str
    """The id of the row below."""
    difference: float
    """This row's headline minus the row below's, over the documents both runs scored."""
    low: float
    high: float
    """95% paired bootstrap interval of the difference."""
    documents: int
    mcnemar_p: float | None = None
    """McNemar's exact p-value, for a right/wrong headline of one task."""
    tied: bool
    """The difference is not significant (McNemar at 5% for a right/wrong metric, else the
    interval includes 0): the order of the two rows is not established."""


class Entry(_Model):
    """One row of a benchmark's table: one model configuration, from runs or from the paper."""

    id: str
    """Stable identifier, unique within the benchmark."""
    source: Literal["run", "paper"]
    """``"run"``: measured by mmtasks; ``"paper"``: reported by the benchmark's paper."""
    ranked: bool = True
    """Whether the row takes part in the ranking. Unranked rows (``chance_judge``) come after
    every ranked row whatever the sort, without a rank."""
    chance_judge: bool = False
    """The row's judge-scored values come from the chance-level ``random`` judge: they
    exercise the pipeline and are not a judgement of the model."""
    official_judge: bool = True
    """False when a task of the row was scored by a judge other than the official one its task
    declares (``judge.default_model``, chosen away with ``--judge``): its judged numbers are not
    the benchmark's official judgement (the chance-level ``random`` judge is :attr:`chance_judge`)."""
    official_judges: dict[str, str] = Field(default_factory=dict)
    """Judged task -> the official judge its task declares (``judge.default_model``), when it declares one."""
    official_protocol: bool = True
    """False when a run behind the row changed the tasks' generation settings or prompt (``--gen-kwargs``, a preset's ``generation``, ``chat_template_kwargs``, ``--system-instruction``;
    named in :attr:`model`): its numbers are not the benchmark's official protocol."""
    model_id: str | None = None
    """Run rows: one model configuration across benchmarks (``run-<hash>`` of the identity without
    the chance-judge flag): the overview's row. ``null`` for paper rows."""
    model: str
    """Display name: for runs the run's name (``--run-name``) or else the model spec (a ``replay:``
    or local path spec shows the file's name, never the machine's path); the paper's name for paper rows."""
    run_name: str | None = None
    """The run's ``--run-name``, when it has one (``model`` is then the same, and ``model_spec`` says what ran)."""
    model_spec: str | None = None
    model_args: dict[str, Any] | str = Field(default_factory=dict)
    strategy: str | None = None
    judge: str | None = None
    judge_args: dict[str, Any] = Field(default_factory=dict)
    mmtasks_version: str | None = None
    date: str | None = None
    """ISO 8601 UTC date of the newest contributing run; ``null`` for paper rows."""
    citation: Citation | None = None
    """Paper rows only."""
    values: dict[str, Cell]
    """Column key -> cell, for every column of the benchmark."""
    variants: dict[str, dict[str, Cell]] = Field(default_factory=dict)
    """Scoring variant -> column key -> the cell as the variant scores the same replies
    (results.json's ``variants[task][name]``): a task's column when its run has the variant, a
    computed column when every column it is the mean of has it. Run rows only."""
    metrics: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Every metric of every task of this benchmark that has a value, as in ``results.json``
    (counters are not metrics: see :attr:`problems`)."""
    problems: dict[str, dict[str, int]] = Field(default_factory=dict)
    """task -> kind (``request_failures``, ``unparsed``, ``judge_failures``...) -> count."""
    coverage: dict[str, Coverage] = Field(default_factory=dict)
    """task -> how much of its data was scored, when the run reports it."""
    n_samples: dict[str, NSamples] = Field(default_factory=dict)
    task_versions: dict[str, int | float | str] = Field(default_factory=dict)
    breakdowns: dict[str, dict[str, dict[str, dict[str, float]]]] = Field(default_factory=dict)
    """``task -> dimension -> bucket -> {metric: value, "n": count}``."""
    runs: list[RunRef] = Field(default_factory=list)
    tie: Tie | None = None
    """Run rows only, when the next ranked run row ran the same task definitions on common
    documents: the paired comparison with it."""


class Variant(_Model):
    """A scoring variant some run of the benchmark has (results.json's ``variants[task][name]``)."""

    name: str
    description: str = ""
    """Whose rule, and how it differs from the headline (the task's ``variants:``)."""
    source: str | None = None
    """Where the rule comes from: repository, file, commit."""
    tasks: list[str] = Field(default_factory=list)
    """The benchmark's tasks that declare it."""


class Benchmark(_Model):
    """One tab of the leaderboard."""

    id: str
    title: str
    description: str
    category: Category | None = None
    """The benchmark's kind (its ``leaderboard.yaml``'s ``category``); ``null`` for the automatic
    "Other tasks" tab."""
    headline: str
    """Column key the table is sorted by at first."""
    columns: list[Column]
    charts: list[Chart]
    citation: Citation | None = None
    """The paper the reference rows come from."""
    variants: list[Variant] = Field(default_factory=list)
    """The scoring variants of its runs, by name (a table can be switched to one of them)."""
    minimum_detectable_effect: float | None = None
    """The headline difference this benchmark's documents can detect at 80% power (two-sided 5%),
    from the median standard error of its run rows, assuming the two models' errors independent (correlated
    models make the paired test stronger than this): 2.80 * sqrt(2) * stderr."""
    entries: list[Entry]


class Leaderboard(_Model):
    """The whole ``leaderboard.json``."""

    schema_version: Literal[2] = SCHEMA_VERSION
    generated_at: str
    """ISO 8601 UTC time of the build."""
    mmtasks_version: str
    """Version of mmtasks that built this file."""
    benchmarks: list[Benchmark]
