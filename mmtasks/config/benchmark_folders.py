"""Benchmark folders: one folder a benchmark, described by the front matter of its ``README.md``.

A benchmark folder (``tasks/<bench>/``, or one that ``--include-path`` or an installed package
brings) holds its task YAML, its plugin code, its leaderboard tab (``leaderboard.yaml``), its
sample-data generator (``make_sample.py``), its tests (``tests/``) and its notes, ``README.md``.
The README starts with a YAML front matter block, the folder's card::

    ---
    title: MIRB
    kind: multi-image reasoning, 11 subsets in 4 categories
    demo: [mirb]                       # the tasks or groups `make demo` runs on data/sample/
    coverage:                          # its row of docs/coverage.md: the same benchmark elsewhere
      benchmark: MIRB
      mmtasks: "`mirb`"
      lmms-eval: "`mirb`"
      VLMEvalKit: "-"
      inspect_evals: "-"
    ---

Every list the documentation and the demo show (the README's benchmark table, ``make demo``'s
tasks, ``docs/coverage.md``, the benchmark pages, ``data/sample/README.md``) is generated from
these cards by ``scripts/make_benchmark_pages.py`` (:mod:`mmtasks.config.benchmark_pages`), so
adding a benchmark edits nothing outside its folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from mmtasks.config.yaml_loader import parse_yaml_text, validate
from mmtasks.errors import ConfigError

#: the notes of a benchmark folder, its card in the front matter
README = "README.md"
#: the sample-data generator of a benchmark folder (``generate(dest: Path) -> None``)
SAMPLE_GENERATOR = "make_sample.py"
#: a benchmark folder's own tests: not tasks (the registry skips YAML under it)
TESTS_FOLDER = "tests"

_FRONT_MATTER = re.compile(r"\A---\n(.*?\n)---\n", re.S)


class Coverage(BaseModel):
    """The folder's row of ``docs/coverage.md``: the benchmark's name and its task names in each harness."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    benchmark: str
    mmtasks: str
    lmms_eval: str = Field(alias="lmms-eval")
    vlmevalkit: str = Field(alias="VLMEvalKit")
    inspect_evals: str


class BenchmarkCard(BaseModel):
    """The front matter of a benchmark folder's ``README.md``."""

    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    demo: list[str] = Field(default_factory=list)
    """The tasks or groups ``make demo`` runs on the bundled sample data (none: not in the demo)."""
    coverage: Coverage


@dataclass(frozen=True)
class BenchmarkFolder:
    """A benchmark folder: its path, its card and its README's text after the front matter."""

    path: Path
    card: BenchmarkCard
    body: str

    @property
    def name(self) -> str:
        return self.path.name

    def section(self, heading: str) -> str | None:
        """The text of the README's level-2 section whose heading starts with ``heading``."""
        match = re.search(rf"(?m)^## {re.escape(heading)}[^\n]*\n(.*?)(?=^## |\Z)", self.body, re.S)
        return match.group(1).strip() if match else None


def read_folder(path: Path) -> BenchmarkFolder:
    """The benchmark folder at ``path``; a README without a valid card is a one-line error naming it."""
    readme = path / README
    text = readme.read_text(encoding="utf-8")
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise ConfigError("a benchmark folder's README.md starts with its card, a front matter block between '---' lines",
                          file=readme, field="front matter")
    data = parse_yaml_text(match.group(1), file=readme)
    if not isinstance(data, dict):
        raise ConfigError("the front matter is not a mapping", file=readme, field="front matter")
    return BenchmarkFolder(path=path, card=validate(BenchmarkCard, data, file=readme), body=text[match.end():])


def folders_under(roots: Iterable[Path]) -> list[BenchmarkFolder]:
    """Every benchmark folder of ``roots`` (task folders: the built-in ``tasks/``, an ``--include-path``):
    a root whose README has a card is one; otherwise each of its sub-folders that has a README is."""
    found: list[BenchmarkFolder] = []
    for root in roots:
        if (root / README).is_file():
            found.append(read_folder(root))
            continue
        for sub in sorted(p for p in root.iterdir() if p.is_dir() and (p / README).is_file()):
            found.append(read_folder(sub))
    return found


def demo_tasks(folders: Sequence[BenchmarkFolder]) -> list[str]:
    """The tasks and groups of every folder's ``demo``, in folder order."""
    return [task for folder in folders for task in folder.card.demo]
