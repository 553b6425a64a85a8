"""User-facing errors.

Every error a user can act on is an :class:`MmtasksError`: the CLI prints its
one-line message (file, document id and field where known) and exits non-zero,
with a traceback only under ``--verbose``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypedDict

#: characters that act on a terminal instead of showing (C0/C1 controls, DEL; bidirectional
#: overrides and isolates, which reorder what follows them)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    """``text`` safe to print on a terminal: every control character (ESC sequences setting the
    window title or writing the clipboard, bidi overrides, newlines in one-line output) shown
    escaped, as ``\\x1b`` or ``\\u202e``. Everything mmtasks prints that came from files, data,
    models or judges goes through it."""
    value = text if isinstance(text, str) else str(text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", value)


class Where(TypedDict):
    """A record's place (its file, line and document id): keyword arguments of
    :class:`MmtasksError` kept to pass as ``**where``."""

    file: str | Path | None
    line: int | None
    doc_id: str | None


class MmtasksError(Exception):
    """An error with a message meant for the user, not a bug."""

    exit_code: int = 2
    #: already said by another process (rank 0 of a data parallel run says it once for all ranks)
    quiet: bool = False

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        doc_id: str | None = None,
        field: str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.doc_id = doc_id
        self.field = field
        self.line = line
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        """One line: where (file:line, document, field), the message, the hint; control
        characters (from file names, data, replies) escaped (:func:`printable`)."""
        where: list[str] = []
        if self.file:
            where.append(f"{self.file}:{self.line}" if self.line else self.file)
        if self.doc_id is not None:
            where.append(f"document {self.doc_id!r}")
        if self.field:
            where.append(f"field {self.field!r}")
        text = f"{', '.join(where)}: {self.message}" if where else self.message
        if self.hint:
            text += f" ({self.hint})"
        return printable(text)


class ConfigError(MmtasksError):
    """Bad task YAML, unknown keys, unknown task or model spec."""


class DataError(MmtasksError):
    """Missing data, wrong schema, missing or corrupt images, paths leaving the data root."""


class ModelError(MmtasksError):
    """A backend that cannot be loaded or reached."""


class ModelNotFound(ModelError):
    """The endpoint does not serve the model asked for (an API's 404 naming it): a retired dated
    snapshot, a typo. The runner turns it, for a task's official judge, into one line saying
    where the judge was cited and how to choose another."""

    def __init__(self, message: str, *, detail: str = "", model: str = "", **kwargs: Any) -> None:
        #: the server's own words (its error message), without the spec and endpoint
        self.detail = detail
        #: the spec (as displayed) of the model that is not served: which component of a run it was
        self.model = model
        super().__init__(message, **kwargs)


class TemplateError(MmtasksError):
    """A prompt template that does not render (undefined variable, syntax)."""


class Problems(MmtasksError):
    """Every problem a check found, reported together (``mmtasks check`` and the preflight of
    every run): one line each, ``file:line, document 'id', field 'f': message``, grouped by
    task and kind and capped per group with a count of the rest.

    One problem renders exactly as that problem alone would.
    """

    #: lines shown per group (task, field, kind of message); the rest are counted
    PER_GROUP = 5
    #: groups shown; the rest are counted
    MAX_GROUPS = 30

    def __init__(self, problems: "list[tuple[str | None, MmtasksError]]", *, stage: str = "before any model or judge was built") -> None:
        #: (task name or None, problem), in the order found
        self.problems = list(problems)
        self.stage = stage
        first = self.problems[0][1] if self.problems else None
        super().__init__(first.message if first else "no problems", file=first.file if first else None,
                         doc_id=first.doc_id if first else None, field=first.field if first else None,
                         line=first.line if first else None, hint=first.hint if first else None)

    def render(self) -> str:
        # The same message at the same place (a template of the task file, failing in every
        # document) is one problem, shown once with the number of documents it is found in.
        same: dict[tuple[str | None, str | None, str | None, str, str | None], list[MmtasksError]] = {}
        for task, problem in self.problems:
            key = (task, problem.file if problem.line is None else f"{problem.file}:{problem.line}",
                   problem.field, problem.message, problem.hint)
            same.setdefault(key, []).append(problem)
        if len(same) == 1:
            return _with_count(next(iter(same.values())))
        groups: dict[tuple[str | None, str, str], list[list[MmtasksError]]] = {}
        for (task, _where, field, message, _hint), alike in same.items():
            groups.setdefault((task, field or "", _kind(message)), []).append(alike)
        lines = [f"{len(same)} problems found {self.stage}:"]
        last_task: object = object()
        for shown, ((task, field, kind), members) in enumerate(groups.items()):
            if shown == self.MAX_GROUPS:
                rest = sum(len(m) for m in list(groups.values())[shown:])
                lines.append(f"  ... and {rest} more problem{'s' if rest != 1 else ''} of {len(groups) - shown} other kinds")
                break
            if task != last_task:
                lines.append(f"  task {task}:" if task else "  run:")
                last_task = task
            lines.extend(f"    {_with_count(m)}" for m in members[: self.PER_GROUP])
            if len(members) > self.PER_GROUP:
                more = len(members) - self.PER_GROUP
                lines.append(f"    ... and {more} more like this ({kind}{', field ' + repr(field) if field else ''})")
        return "\n".join(lines)


def _kind(message: str) -> str:
    """What problems of one kind share: the message before its first colon, without the names,
    paths and numbers that differ from one document to the next."""
    head = message.split(": ", 1)[0]
    return re.sub(r"'[^']*'|\S*/\S*|\d+", "...", head)[:80]


def _with_count(same: "list[MmtasksError]") -> str:
    """The first of identical problems, saying in how many more documents it is found."""
    text = same[0].render()
    if len(same) > 1:
        text += f" (the same in {len(same) - 1} more document{'s' if len(same) > 2 else ''})"
    return text


class ConfigProblems(Problems, ConfigError):
    """Several problems of one configuration file (every validation error of a task YAML): a
    :class:`ConfigError` for callers that catch one, rendered as :class:`Problems`."""
