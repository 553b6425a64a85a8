"""Atomic file writes and the streamed samples files."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
from array import array
from pathlib import Path
from collections.abc import Iterator, Sequence
from typing import IO, Any, overload

from mmtasks.core.sample import Sample
from mmtasks.secrets import redact_data


@contextlib.contextmanager
def atomic_open(path: Path, mode: str = "w") -> Iterator[IO[Any]]:
    """A file that appears at ``path`` whole when the block ends (fsynced, then renamed over the
    old one), or not at all: readers never see half of it, and a failure keeps the old file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half of it."""
    with atomic_open(path) as fh:
        fh.write(text)


def _plain(obj: Any) -> Any:
    """JSON fallback: dataclasses become dicts, anything else its ``str``."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return str(obj)


def dumps(obj: Any) -> str:
    """JSON text of ``obj`` with registered secrets redacted from its strings (not from the JSON
    text: a secret made of digits must not turn numbers into ``***``)."""
    return json.dumps(redact_data(obj, _plain), ensure_ascii=False)


class SamplesWriter:
    """Streams finished samples to ``samples/<task>.jsonl.partial`` as they arrive; ``finish``
    turns that file into ``samples/<task>.jsonl`` in document order (atomically).

    Memory stays flat however many samples a task has: each line is written and
    flushed as its sample finishes, and only its document index and byte span
    are kept. ``finish`` then renames the partial file when the samples arrived
    in order (the usual case) or copies its lines in document order, one at a
    time.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, IO[bytes]] = {}
        #: task -> flat (doc_index, offset, length) triples of the lines written by this writer
        self._spans: dict[str, array[int]] = {}
        self._ends: dict[str, int] = {}

    def _partial(self, task: str) -> Path:
        return self.directory / f"{task}.jsonl.partial"

    def write(self, sample: Sample) -> None:
        fh = self._files.get(sample.task)
        if fh is None:
            fh = self._files[sample.task] = self._partial(sample.task).open("wb")
            self._spans[sample.task] = array("q")
            self._ends[sample.task] = 0
        line = (dumps(sample.to_json()) + "\n").encode("utf-8")
        fh.write(line)
        fh.flush()
        offset = self._ends[sample.task]
        self._spans[sample.task].extend((sample.doc_index, offset, len(line)))
        self._ends[sample.task] = offset + len(line)

    def finish(self, task: str, samples: list[Sample] | None = None) -> Path:
        """Write the final file in document order, from ``samples`` or the partial file."""
        fh = self._files.pop(task, None)
        if fh is not None:
            fh.close()
        partial = self._partial(task)
        final = self.directory / f"{task}.jsonl"
        spans = self._spans.pop(task, None)
        self._ends.pop(task, None)
        if samples is not None:
            text = "".join(dumps(s.to_json()) + "\n" for s in sorted(samples, key=lambda s: s.doc_index))
            atomic_write_text(final, text)
        elif not partial.exists():
            atomic_write_text(final, "")
        else:
            triples = _triples(spans) if spans is not None else _scan_spans(partial)
            _write_in_order(partial, triples, final)
        partial.unlink(missing_ok=True)
        return final

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        self._files.clear()


class SamplesFile(Sequence[Sample]):
    """A finished samples file as a sequence of slim samples (:meth:`Sample.slim`), read back
    one line at a time on every pass: what aggregation needs, in document order, without
    holding the run's samples in memory (only one offset per sample)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offsets: array[int] = array("q")
        offset = 0
        with path.open("rb") as fh:
            for line in fh:
                if line.strip():
                    self._offsets.append(offset)
                offset += len(line)

    def __len__(self) -> int:
        return len(self._offsets)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> list[Sample]: ...

    def __getitem__(self, index: int | slice) -> Sample | list[Sample]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        with self.path.open("rb") as fh:
            fh.seek(self._offsets[index])
            return _slim(fh.readline())

    def __iter__(self) -> Iterator[Sample]:
        with self.path.open("rb") as fh:
            for line in fh:
                if line.strip():
                    yield _slim(line)


def _slim(line: bytes) -> Sample:
    return Sample.from_json(json.loads(line)).slim()


def _triples(flat: "array[int]") -> list[tuple[int, int, int]]:
    return [(flat[i], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3)]


def _scan_spans(path: Path) -> list[tuple[int, int, int]]:
    """(doc_index, offset, length) of each sample line of a partial file written by another process."""
    out: list[tuple[int, int, int]] = []
    offset = 0
    with path.open("rb") as fh:
        for line in fh:
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    row = None  # a line cut short by a killed run
                if isinstance(row, dict) and isinstance(row.get("doc_index"), int):
                    out.append((row["doc_index"], offset, len(line)))
            offset += len(line)
    return out


def _write_in_order(partial: Path, triples: list[tuple[int, int, int]], final: Path) -> None:
    """Copy the partial file's sample lines to ``final`` (atomically) in document order, one line in memory at a time."""
    in_order = all(a[0] <= b[0] for a, b in zip(triples, triples[1:]))
    # the spans are consecutive lines from the start, so equal sizes mean every byte is a sample line
    whole = sum(t[2] for t in triples) == partial.stat().st_size
    if in_order and whole and (not triples or _ends_with_newline(partial)):
        with partial.open("rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(partial, final)
        return
    with atomic_open(final, "wb") as out, partial.open("rb") as src:
        for _, offset, length in sorted(triples, key=lambda t: t[0]):  # stable: repeats keep their order
            src.seek(offset)
            line = src.read(length)
            out.write(line if line.endswith(b"\n") else line + b"\n")


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"
