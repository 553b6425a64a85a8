"""Reference rows from the benchmarks' papers (``paper_results.yaml``)."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mmtasks.errors import ConfigError
from mmtasks.leaderboard.benchmarks import BenchmarkDef
from mmtasks.leaderboard.schema import Cell, Citation, Entry

#: the papers' reference numbers, package data read through :mod:`importlib.resources`
PAPER_RESULTS = Path(str(resources.files("mmtasks.leaderboard") / "paper_results.yaml"))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PaperRow(_Strict):
    model: str
    strategy: str | None = None
    citation: str | None = None
    """Overrides the benchmark's citation (another table of the same paper)."""
    values: dict[str, float]


class PaperTable(_Strict):
    citation: str
    url: str | None = None
    rows: list[PaperRow] = Field(default_factory=list)


def load_paper_tables(path: Path = PAPER_RESULTS) -> dict[str, PaperTable]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"cannot read paper results: {err}", file=path) from err
    if not isinstance(raw, dict):
        raise ConfigError("expected a mapping of benchmark id -> table", file=path)
    tables: dict[str, PaperTable] = {}
    for bench_id, table in raw.items():
        try:
            tables[str(bench_id)] = PaperTable.model_validate(table)
        except ValidationError as err:
            first = err.errors(include_url=False)[0]
            field = ".".join([str(bench_id), *(str(p) for p in first["loc"])])
            raise ConfigError(first["msg"], file=path, field=field) from err
    return tables


def paper_citation(table: PaperTable) -> Citation:
    return Citation(text=table.citation, url=table.url)


def paper_entries(bench: BenchmarkDef, table: PaperTable, *, file: Path = PAPER_RESULTS) -> list[Entry]:
    """One ``source="paper"`` entry per row; columns the paper does not report are missing."""
    known = {column.key for column in bench.columns}
    entries: list[Entry] = []
    used_ids: set[str] = set()
    for index, row in enumerate(table.rows):
        unknown = sorted(set(row.values) - known)
        if unknown:
            raise ConfigError(
                f"unknown column(s) {', '.join(unknown)} for {bench.id}",
                file=file,
                field=f"{bench.id}.rows.{index}.values",
                hint=f"known: {', '.join(column.key for column in bench.columns)}",
            )
        values = {
            column.key: Cell(value=row.values[column.key])
            if column.key in row.values
            else Cell(missing="not reported by the paper")
            for column in bench.columns
        }
        entry_id = _unique(f"paper-{_slug(row.model)}" + (f"-{_slug(row.strategy)}" if row.strategy else ""), used_ids)
        citation = Citation(text=row.citation, url=table.url) if row.citation else paper_citation(table)
        entries.append(
            Entry(id=entry_id, source="paper", model=row.model, strategy=row.strategy, citation=citation, values=values)
        )
    return entries


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "model"


def _unique(candidate: str, used: set[str]) -> str:
    result, counter = candidate, 2
    while result in used:
        result = f"{candidate}-{counter}"
        counter += 1
    used.add(result)
    return result
