"""Atomic file writes and the streamed samples files."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any

from mmtasks.dialogues.sample import Sample
from mmtasks.secrets import redact


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps(obj: Any) -> str:
    return redact(json.dumps(obj, ensure_ascii=False, default=str))


class SamplesWriter:
    """Streams finished samples to ``samples/<task>.jsonl.partial`` as they arrive; ``finish``
    rewrites them in document order as ``samples/<task>.jsonl`` (atomically)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, IO[str]] = {}

    def _partial(self, task: str) -> Path:
        return self.directory / f"{task}.jsonl.partial"

    def write(self, sample: Sample) -> None:
        fh = self._files.get(sample.task)
        if fh is None:
            fh = self._files[sample.task] = self._partial(sample.task).open("w", encoding="utf-8")
        fh.write(dumps(sample.to_json()) + "\n")
        fh.flush()

    def finish(self, task: str, samples: list[Sample] | None = None) -> Path:
        """Write the final file in document order, from ``samples`` or the partial file."""
        fh = self._files.pop(task, None)
        if fh is not None:
            fh.close()
        partial = self._partial(task)
        if samples is None:
            lines = partial.read_text(encoding="utf-8").splitlines() if partial.exists() else []
            rows = sorted((json.loads(line) for line in lines if line.strip()), key=lambda r: r["doc_index"])
            text = "".join(dumps(r) + "\n" for r in rows)
        else:
            text = "".join(dumps(s.to_json()) + "\n" for s in sorted(samples, key=lambda s: s.doc_index))
        final = self.directory / f"{task}.jsonl"
        atomic_write_text(final, text)
        partial.unlink(missing_ok=True)
        return final

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        self._files.clear()
