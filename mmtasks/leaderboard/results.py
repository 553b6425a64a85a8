"""Reading one run's ``results.json`` (lm-evaluation-harness layout) with validation.

Only what the leaderboard needs is typed strictly; other keys of the layout are kept
(``extra="allow"``) so files written by newer versions still load.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from mmtasks.errors import DataError

RESULTS_FILE = "results.json"



def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (int, float, str)):
        return value
    raise ValueError(f"expected a number, a string or null, got {type(value).__name__}")


def _number(value: Any) -> Any:
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    raise ValueError(f"expected a number or null, got {type(value).__name__}")


#: a value in ``results[task]``: a metric (number), or a label such as ``alias`` or lm-eval's "N/A"
ResultValue = Annotated[Any, AfterValidator(_scalar)]
#: ``breakdowns[task][dimension][bucket][metric or "n"]``
BucketValues = dict[str, Annotated[Any, AfterValidator(_number)]]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", protected_namespaces=(), populate_by_name=True)


class RunConfigRecord(_Lenient):
    """``results.json``'s ``config``: how the run was made."""

    model: str = Field(min_length=1)
    model_args: dict[str, Any] | str = Field(default_factory=dict)
    judge: str | None = None
    judge_args: dict[str, Any] | str = Field(default_factory=dict)
    strategy: str | None = None
    image_mode: str | None = None
    history: str | None = None
    probe: str | None = None
    limit: int | float | None = None
    seed: int | None = None
    mmtasks_version: str | None = None

    def variant(self) -> list[str]:
        """What, beyond model and args, makes a different evaluation setting (shown next to the name)."""
        parts = [self.strategy] if self.strategy else []
        if self.image_mode and self.image_mode != "separate":
            parts.append(f"{self.image_mode} images")
        if self.history and self.history != "self":
            parts.append(f"{self.history} history")
        if self.probe and self.probe != "independent":
            parts.append(f"{self.probe} probes")
        if self.limit is not None:
            parts.append(f"limit {self.limit:g}")
        return parts


class NSamplesRecord(_Lenient):
    original: int | None = None
    effective: int | None = None


class RunResults(_Lenient):
    """The parts of ``results.json`` the leaderboard reads."""

    results: dict[str, dict[str, ResultValue]]
    groups: dict[str, dict[str, ResultValue]] = Field(default_factory=dict)
    breakdowns: dict[str, dict[str, dict[str, BucketValues]]] = Field(default_factory=dict)
    configs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    versions: dict[str, int | float | str] = Field(default_factory=dict)
    n_samples: dict[str, NSamplesRecord] = Field(default_factory=dict, alias="n-samples")
    higher_is_better: dict[str, dict[str, bool]] = Field(default_factory=dict)
    config: RunConfigRecord
    git_hash: str | None = None
    date: float = Field(description="Seconds since the epoch (UTC), as lm-evaluation-harness writes it")

    def metrics(self, task: str) -> dict[str, float]:
        """The numeric metrics of ``task`` (labels, booleans, NaN and "N/A" left out)."""
        return {
            name: float(value)
            for name, value in self.results.get(task, {}).items()
            if _is_number(value)
        }

    @property
    def iso_date(self) -> str:
        return iso_utc(self.date)


class Run:
    """A loaded run: where it came from and its validated results."""

    def __init__(self, path: Path, results: RunResults) -> None:
        self.path = path
        self.results = results

    @property
    def name(self) -> str:
        """The run directory's name (the file's parent when given a file)."""
        path = self.path.resolve()
        return path.parent.name if path.is_file() else path.name


def iso_utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


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
    path = results_file(run)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise DataError(f"not valid JSON: {err.msg}", file=path, line=err.lineno) from err
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"cannot read: {err}", file=path) from err
    try:
        results = RunResults.model_validate(raw)
    except ValidationError as err:
        raise _validation_error(path, err) from err
    return Run(run, results)


def _validation_error(path: Path, err: ValidationError) -> DataError:
    problems = err.errors(include_url=False)
    first = problems[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    message = f"not a valid results.json: {first['msg']}"
    if len(problems) > 1:
        others = "; ".join(
            f"{'.'.join(str(p) for p in problem['loc'])}: {problem['msg']}" for problem in problems[1:4]
        )
        more = f" (+{len(problems) - 4} more)" if len(problems) > 4 else ""
        message += f"; also {others}{more}"
    return DataError(message, file=path, field=field)
