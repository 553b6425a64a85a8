"""The samples file (``samples/<task>.jsonl``): one schema for a sample record, one reader.

A run writes one JSON line per document and repeat (:class:`mmtasks.core.sample.Sample`).
Every command that reads those lines back reads them here, through :func:`iter_samples` (or
:func:`sample_at` for one line at a byte offset), validated by :class:`SampleRecord`: the
aggregation of a finished run (:class:`mmtasks.results.files.SamplesFile`), ``mmtasks compare``,
the run viewer, ``mmtasks judge agreement`` and ``--model replay:`` (which also reads a
predictions file, whose lines are samples holding ``task``, ``doc_id`` and ``responses`` only).

A line that is not JSON, holds a bad value (a non-finite number, a lone surrogate, nesting too
deep), or whose fields have the wrong type is one :class:`~mmtasks.errors.DataError` naming the
file, the line and the field. A reader names the fields it needs present (``need``): compare
needs ``metrics``, judge agreement ``task`` and ``judge``, replay ``task`` and ``responses``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

from mmtasks.core.request import FailureKind
from mmtasks.documents.jsonl import MAX_DEPTH, json_value_problem
from mmtasks.errors import DataError


class SampleRecord(BaseModel):
    """One line of a samples file: the fields of :class:`~mmtasks.core.sample.Sample`, typed
    strictly (no value is converted), each optional but ``doc_id`` (a predictions file and a run
    folder of an older version hold fewer); other keys are kept."""

    model_config = ConfigDict(extra="allow", strict=True)

    task: str = ""
    doc_id: str | int
    doc_index: int = 0
    prompt: list[dict[str, Any]] = Field(default_factory=list)
    responses: list[str | None] = Field(default_factory=list)
    reasoning: list[str | None] = Field(default_factory=list)
    finish_reasons: list[str | None] = Field(default_factory=list)
    tokens: list[dict[str, int] | None] = Field(default_factory=list)
    parsed: Any = None
    target: Any = None
    metrics: dict[str, float | int | None] = Field(default_factory=dict)
    failures: list[str] = Field(default_factory=list)
    #: beside each of ``failures``: its kind (absent in run folders written before the field:
    #: :func:`failure_kinds` derives them from the failures' text)
    failure_kinds: list[Annotated[FailureKind, Strict(False)]] | None = None
    unparsed: int = 0
    guessed: int = 0
    read_by: str | None = None
    irregular: dict[str, str] = Field(default_factory=dict)
    breakdown: dict[str, str] = Field(default_factory=dict)
    cluster: str | None = None
    repeat: int = 0
    judge: list[dict[str, Any]] = Field(default_factory=list)
    judge_failures: int = 0
    extra: dict[str, Any] = Field(default_factory=dict)

    def failure_kinds_or_derived(self) -> list[FailureKind]:
        """The kind of each failure: as recorded, or (an older run folder) read from its text."""
        return recorded_failure_kinds({"failures": self.failures, "failure_kinds": self.failure_kinds})


def recorded_failure_kinds(data: Mapping[str, Any]) -> list[FailureKind]:
    """The kind of each failure of a sample as written (a validated line's ``data``): as recorded
    in ``failure_kinds``, or, in a run folder written before that field, read from each failure's
    text (:meth:`FailureKind.of_error`)."""
    failures = [f for f in data.get("failures") or [] if isinstance(f, str)]
    kinds = data.get("failure_kinds")
    if isinstance(kinds, list) and len(kinds) == len(failures):
        return [FailureKind(k) for k in kinds]
    return [FailureKind.of_error(f) for f in failures]


@dataclass(frozen=True)
class SampleLine:
    """One sample of a samples file: where it is, the validated record, and the JSON as written
    (for a reader that shows it whole: the run viewer)."""

    #: 1-based line number
    line: int
    #: byte offset of the line (for :func:`sample_at`)
    offset: int
    record: SampleRecord
    data: dict[str, Any]


#: ``checked``: every value must be writable JSON (finite numbers, valid text: every reader
#: that computes with them); ``shown``: only the nesting is bounded (the viewer shows odd values as
#: they are)
Values = Literal["checked", "shown"]


def iter_samples(path: Path, *, need: Sequence[str] = (), values: Values = "checked") -> Iterator[SampleLine]:
    """Every sample of the file at ``path``, in file order (blank lines skipped); ``need``: the
    fields each line must hold. A bad line is a :class:`DataError` naming the file, line and field."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=path) from None
    offset = 0
    with fh:
        for number, raw in enumerate(fh, start=1):
            here = offset
            offset += len(raw)
            if raw.strip():
                yield parse_sample(raw, path, number, here, need=need, values=values)


def sample_at(path: Path, offset: int, *, need: Sequence[str] = (), values: Values = "checked") -> SampleLine:
    """The sample on the line starting at byte ``offset`` (an offset :func:`iter_samples` gave)."""
    with path.open("rb") as fh:
        fh.seek(offset)
        return parse_sample(fh.readline(), path, None, offset, need=need, values=values)


def parse_sample(raw: bytes, path: Path, number: int | None, offset: int = 0, *, need: Sequence[str] = (),
                 values: Values = "checked") -> SampleLine:
    """One line of a samples file, validated (see :func:`iter_samples`)."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError, a 4300-digit integer, bad UTF-8
        raise DataError(f"not a JSON sample: {exc}", file=path, line=number) from None
    except RecursionError:
        raise DataError(f"not a JSON sample: nested more than {MAX_DEPTH} deep", file=path, line=number) from None
    problem = json_value_problem(data, depth_only=values == "shown")
    if problem is not None:
        raise DataError(problem[1], file=path, line=number, field=problem[0])
    if not isinstance(data, dict):
        raise DataError("a sample is a JSON object", file=path, line=number)
    missing = [name for name in ("doc_id", *need) if name not in data]
    if missing:
        raise DataError(f"not a sample record: {' and '.join(missing)} expected", file=path, line=number,
                        field=missing[0])
    try:
        record = SampleRecord.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"] if not str(p).startswith(("function-", "nullable[")))
        raise DataError(f"not a sample record: {err['msg']}", file=path, line=number, field=where or None) from None
    return SampleLine(line=number or 0, offset=offset, record=record, data=data)


__all__ = ["SampleLine", "SampleRecord", "iter_samples", "parse_sample", "recorded_failure_kinds", "sample_at"]
