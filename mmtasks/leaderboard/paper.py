"""Reference rows from the benchmarks' papers (a section's ``papers:`` in its ``leaderboard.yaml``)."""

from __future__ import annotations

import re

from mmtasks.leaderboard.schema import Cell, Citation, Entry
from mmtasks.leaderboard.sections import Section


def paper_entries(section: Section) -> list[Entry]:
    """One ``source="paper"`` entry per row of ``section.papers``; columns the paper does not
    report are missing (the rows' column keys were checked when the section was loaded)."""
    table = section.papers
    if table is None:
        return []
    entries: list[Entry] = []
    used_ids: set[str] = set()
    for row in table.rows:
        values = {
            column.key: Cell(value=row.values[column.key])
            if column.key in row.values
            else Cell(missing="not reported by the paper")
            for column in section.columns
        }
        entry_id = _unique(f"paper-{_slug(row.model)}" + (f"-{_slug(row.strategy)}" if row.strategy else ""), used_ids)
        citation = Citation(text=row.citation, url=table.url) if row.citation else table.cite()
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
