"""User-facing errors.

Every error a user can act on is an :class:`MmtasksError`: the CLI prints its
one-line message (file, document id and field where known) and exits non-zero,
with a traceback only under ``--verbose``.
"""

from __future__ import annotations

from pathlib import Path


class MmtasksError(Exception):
    """An error with a message meant for the user, not a bug."""

    exit_code: int = 2

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
        return text


class ConfigError(MmtasksError):
    """Bad task YAML, unknown keys, unknown task or model spec."""


class DataError(MmtasksError):
    """Missing data, wrong schema, missing or corrupt images, paths leaving the data root."""


class ModelError(MmtasksError):
    """A backend that cannot be loaded or reached."""


class TemplateError(MmtasksError):
    """A prompt template that does not render (undefined variable, syntax)."""
