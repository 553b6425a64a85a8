"""Reports: the benchmarks a model card's report table lists, as one ``--tasks`` name.

A report (``reports/<name>.yaml``, shipped beside ``tasks/``) is not a benchmark: it names
tasks and groups of many benchmark folders, one entry per row of the card's table, and cites the
table (its address and which table). ``--tasks report_qwen2.5_vl`` runs every row that mmtasks
has; a row whose tasks are not in mmtasks yet (a benchmark not written yet) is left out of the run
and named in one line (``mmtasks check``, the run's log), never an error, so a report can list a
benchmark before its folder lands. A report none of whose rows is in mmtasks is an error.

A benchmark stays its folder: a report only names a folder's tasks or groups, as ``--tasks``
would; nothing of a benchmark lives in a report.

The file::

    report: report_my_model          # the --tasks name: report_ + letters, digits, . _ -
    title: "My-Model technical report, Table 3"
    source:
      url: https://example.org/my-model          # where the table is
      table: "Table 3 (column My-Model-7B)"      # which table, which column
    rows:
      - {row: MMMU, tasks: [mmmu_val]}           # the card's row -> tasks or groups of mmtasks
      - {row: DocVQA, tasks: [docvqa], note: "the card reports test; mmtasks has val"}
      - {row: CC-OCR, tasks: []}                 # a row mmtasks does not plan: documented only
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from mmtasks.config.yaml_loader import read_yaml, validate
from mmtasks.errors import ConfigError
from mmtasks.package_data import data_dir

__all__ = ["REPORT_PREFIX", "Report", "ReportRow", "ReportSource", "builtin_reports_dir", "load_reports"]

#: every report's name starts with it, so that no report name can be a task's or a group's
REPORT_PREFIX = "report_"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReportSource(_Strict):
    url: str = Field(pattern=r"^https://")
    """Where the card's table is (a commit-pinned address where there is one)."""
    table: str = Field(min_length=1)
    """Which table (and column) of that page the rows are."""


class ReportRow(_Strict):
    row: str = Field(min_length=1)
    """The row's name as the card prints it."""
    tasks: list[str] = Field(default_factory=list)
    """The mmtasks tasks or groups that measure it; empty: mmtasks does not cover the row."""
    note: str | None = None
    """How mmtasks' version differs from the card's (split, frames, judge)."""


class Report(_Strict):
    report: str = Field(pattern=r"^report_[A-Za-z0-9._-]+$")
    title: str = Field(min_length=1)
    source: ReportSource
    rows: list[ReportRow] = Field(min_length=1)
    #: the file it was read from (set by :func:`load_reports`, not a YAML key)
    _file: Path | None = None

    @property
    def file(self) -> Path | None:
        return self._file

    def members(self) -> list[str]:
        """Every task or group name the rows give, in row order, each once."""
        return list(dict.fromkeys(name for row in self.rows for name in row.tasks))

    def split(self, known: Collection[str]) -> tuple[list[str], list[ReportRow]]:
        """(the members that mmtasks has, in row order; the rows with a member it has not yet).
        ``known``: the registry's task and group names."""
        present = [name for name in self.members() if name in known]
        missing = [row for row in self.rows if any(name not in known for name in row.tasks)]
        return present, missing

    def missing_line(self, known: Collection[str]) -> str | None:
        """One line naming the rows not in mmtasks yet (None when every row with tasks is)."""
        _, missing = self.split(known)
        if not missing:
            return None
        names = ", ".join(f"{row.row} ({', '.join(n for n in row.tasks if n not in known)})" for row in missing)
        rows = f"{len(missing)} of its rows is" if len(missing) == 1 else f"{len(missing)} of its rows are"
        return (f"report {self.report}: {rows} not in mmtasks yet and left out: {names}"
                f" (listed in {self.file.name if self.file else 'the report'})")


def builtin_reports_dir() -> Path:
    """``reports/`` in the tree, ``mmtasks/reports/`` in a wheel."""
    return data_dir("reports")


def load_reports(dirs: Sequence[Path]) -> dict[str, Report]:
    """Every ``*.yaml`` of ``dirs`` (not recursive) as a report, by name; a file's error is one
    line naming it, and two files with one name are an error."""
    out: dict[str, Report] = {}
    for folder in dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.yaml")):
            report = validate(Report, read_yaml(path), file=path)
            if report.report in out:
                raise ConfigError(f"report {report.report!r} is defined twice (also in {out[report.report].file})",
                                  file=path, field="report")
            if path.stem != report.report:
                raise ConfigError(f"the file of report {report.report!r} is named {path.name}", file=path, field="report",
                                  hint=f"name it {report.report}.yaml")
            report._file = path
            out[report.report] = report
    return out
