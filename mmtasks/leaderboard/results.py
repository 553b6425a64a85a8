"""Reading runs for the leaderboard: each run's ``results.json`` through the one results
schema (:class:`mmtasks.results.schema.ResultsFile`), which the runner writes with."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from mmtasks.errors import DataError
from mmtasks.results.schema import RESULTS_FILE, ResultsFile, read_results


class Run:
    """A loaded run: where it came from and its validated results."""

    def __init__(self, path: Path, results: ResultsFile) -> None:
        self.path = path
        self.results = results

    @property
    def folder(self) -> Path:
        """The run directory (the file's parent when given a file): where its ``samples/`` are."""
        path = self.path.resolve()
        return path.parent if path.is_file() else path

    @property
    def name(self) -> str:
        """The run directory's name."""
        return self.folder.name

    @property
    def iso_date(self) -> str:
        return iso_utc(self.results.date)


def iso_utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def results_file(run: Path) -> Path:
    """``RUN_DIR/results.json`` (or ``run`` itself when it is a file); a clear error when absent."""
    if run.is_file():
        return run
    candidate = run / RESULTS_FILE
    if candidate.is_file():
        return candidate
    if not run.exists():
        raise DataError("run directory does not exist", file=run)
    nested = sorted(p.parent.name for p in run.glob(f"*/{RESULTS_FILE}"))
    hint = f"its subfolders {', '.join(nested[:3])} hold runs: pass {run}/* instead" if nested else None
    raise DataError(f"no {RESULTS_FILE} in this run directory", file=run, hint=hint)


def load_run(run: Path) -> Run:
    """Read and validate a run; :class:`DataError` names the file and the offending field."""
    return Run(run, read_results(results_file(run)))
