"""Hugging Face ``evaluate`` metrics named in task YAML, as lm-evaluation-harness allows.

``function: evaluate:meteor`` loads the metric by name (from the Hub, or from the
local ``evaluate`` cache when it was loaded before); ``function:
evaluate:./my_metric.py`` loads a metric script from the task's own folder (it
must lie inside it, as plugin files do; the script is imported, so it is trusted
like a plugin). The metric is loaded when the task loads: offline with nothing
cached, or without the ``evaluate`` package, that is a one-line error naming the
task file and ``metrics[i].function``, before any model is built.

Scoring (``metrics[].aggregation``):

- ``mean``: the metric scores each answer alone, ``compute(predictions=[parsed],
  references=[target])``, and the task averages the scores (an unparsed answer
  scores 0, as every per-sample metric does);
- ``corpus``: one ``compute`` over every scored answer of the task and its
  reference (BLEU-like metrics whose corpus score is not a mean of sentence scores).

The score is the result's value named ``metrics[].key``, else the value named like
the metric (``meteor`` -> ``{"meteor": ...}``), else its only number; it is
multiplied by ``metrics[].report_factor`` (100 puts a 0-1 score on 0-100).
``metrics[].args`` are passed to ``compute``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from mmtasks.config.task_config import MetricConfig
from mmtasks.errors import ConfigError, DataError

PREFIX = "evaluate:"


def is_evaluate(function: str | None) -> bool:
    return function is not None and function.startswith(PREFIX)


@dataclass(frozen=True, eq=False)
class EvaluateMetric:
    """A loaded ``evaluate`` metric with the task's settings; callable as a per-sample metric."""

    name: str
    source: str
    module: Any = field(repr=False)
    args: Mapping[str, Any] = field(default_factory=dict)
    key: str | None = None
    factor: float = 1.0

    def compute(self, predictions: Sequence[Any], references: Sequence[Any]) -> float | None:
        """The metric over these pairs, scaled (None: no pairs)."""
        if not predictions:
            return None
        try:
            result = self.module.compute(predictions=list(predictions), references=list(references), **self.args)
        except (ValueError, TypeError, KeyError, IndexError, ZeroDivisionError) as exc:
            raise DataError(f"evaluate metric {self.source!r} failed: {type(exc).__name__}: {str(exc)[:200]}",
                            field=f"metrics.{self.name}") from None
        return self.factor * self._value(result)

    def __call__(self, parsed: Any, target: Any, doc: Mapping[str, Any]) -> float | None:
        """The per-sample metric signature: ``parsed`` None (unparsed) scores 0."""
        if parsed is None:
            return 0.0
        return self.compute([parsed], [target])

    def _value(self, result: Any) -> float:
        if isinstance(result, Mapping):
            for key in (self.key, self.name, getattr(self.module, "name", None)):
                if key is not None and key in result:
                    return _number(result[key], self.source, key)
            if self.key is None:
                numbers_ = [k for k, v in result.items() if _is_number(v)]
                if len(numbers_) == 1:
                    return _number(result[numbers_[0]], self.source, numbers_[0])
            wanted = f"key {self.key!r}" if self.key else "one number (name it with metrics[].key)"
            raise DataError(f"evaluate metric {self.source!r} returned {sorted(result)}; expected {wanted}",
                            field=f"metrics.{self.name}")
        return _number(result, self.source, None)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _number(value: Any, source: str, key: str | None) -> float:
    if not _is_number(value) or not math.isfinite(float(value)):
        where = f"[{key!r}]" if key else ""
        raise DataError(f"evaluate metric {source!r} returned {value!r}{where}, not a finite number")
    return float(value)


class _KeyOf(TypedDict):
    """The task file and the key a problem is reported at (``**where``)."""

    file: Path
    field: str


def load_evaluate_metric(config: MetricConfig, *, task_file: Path, roots: Sequence[Path], field_name: str) -> EvaluateMetric:
    """Load ``config.function`` (``evaluate:NAME`` or ``evaluate:PATH.py``); any problem is a
    one-line :class:`ConfigError` naming ``task_file`` and ``field_name``."""
    assert config.function is not None and is_evaluate(config.function)
    ref = config.function[len(PREFIX):].strip()
    where: _KeyOf = {"file": task_file, "field": field_name}
    if not ref:
        raise ConfigError("evaluate: needs a metric name or a metric script path", **where)
    local = ref.endswith(".py") or ref.startswith((".", "/")) or "\\" in ref
    if local:
        target = _confined_script(ref, task_file, roots, where)
    elif Path(ref).exists():
        # evaluate.load tries a path relative to the working directory before the Hub: never
        # import a script that merely happens to lie there
        raise ConfigError(f"evaluate metric {ref!r}: a file or folder of that name in the working directory would be "
                          "loaded instead of the Hub metric", hint=f"name a script in the task folder: evaluate:./{ref}.py",
                          **where)
    else:
        target = ref
    try:
        import evaluate
    except ImportError:
        raise ConfigError(f"metric {config.function!r} needs the Hugging Face `evaluate` package",
                          hint="pip install 'mmtasks[evaluate]'", **where) from None
    try:
        module = evaluate.load(target, keep_in_memory=True)  # no cache file per compute() call
    except (OSError, ImportError, ValueError, TypeError, AttributeError, SyntaxError, KeyError) as exc:
        # FileNotFoundError (offline, nothing cached; no such metric), ConnectionError, a broken script
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        hint = ("it is loaded from the Hub the first time (or from the evaluate cache): run once online, "
                "or ship the metric script in the task folder (evaluate:./name.py)") if not local else None
        raise ConfigError(f"cannot load evaluate metric {ref!r} ({type(exc).__name__}: {first})", hint=hint, **where) from None
    return EvaluateMetric(name=config.name, source=ref, module=module, args=dict(config.args), key=config.key,
                          factor=config.report_factor)


def _confined_script(ref: str, task_file: Path, roots: Sequence[Path], where: _KeyOf) -> str:
    path = (task_file.parent / ref)
    real = path.resolve()
    folders = [r.resolve() for r in (task_file.parent, *roots)]
    if not any(real.is_relative_to(f) for f in folders):
        raise ConfigError(f"the evaluate metric script {ref} is not inside the task's folder", **where)
    if not real.is_file():
        raise ConfigError(f"the evaluate metric script {path} does not exist", **where)
    if real.suffix != ".py":
        raise ConfigError(f"the evaluate metric script {ref} is not a .py file", **where)
    return str(real)
