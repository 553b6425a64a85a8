"""The output folder of a run: who owns it, atomic file writes and the streamed samples files.

An output folder belongs to one run at a time (:func:`claim_output_folder`): the run holds an
OS lock on ``.mmtasks.lock`` for its whole life (released by the kernel however the process
ends, ``kill -9`` included) and records its fingerprint (tasks, model, settings) in
``.mmtasks-run.json``. A second run into a folder in use, or into a folder holding another
run's results, is refused before any model is loaded and touches nothing; ``--overwrite``
replaces another run's results (its samples and results.json are removed first, so nothing
of it can be read as this run's), and the same command again resumes. Every file goes
through :mod:`mmtasks.results.writer` (exclusive, never through a symlink, renamed into place
whole); a failed write (a full disk) is one line saying what was kept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import hashlib
import json
import os
from array import array
from pathlib import Path
from collections.abc import Iterator, Sequence
from typing import IO, Any, overload

from mmtasks.core.sample import Sample
from mmtasks.documents.samples import SampleLine, iter_samples, sample_at
from mmtasks.results import writer
from mmtasks.results.writer import OutputError, atomic_open, atomic_write_text, unlink_quietly
from mmtasks.secrets import redacted_json

#: the lock a run holds on its output folder for its whole life
LOCK_FILE = ".mmtasks.lock"
#: the fingerprint of the run whose results the folder holds
RUN_FILE = ".mmtasks-run.json"
#: names that look like a file, not a folder, given as ``--output-path``
_FILE_SUFFIXES = (".json", ".jsonl", ".html", ".csv", ".txt")

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _write_all(fh: IO[bytes], data: bytes) -> None:
    """Write every byte (an unbuffered file may take fewer than asked)."""
    view = memoryview(data)
    while view:
        n = fh.write(view)
        if n is None or n == 0:
            raise OSError(errno.EIO, "write made no progress")
        view = view[n:]


def _check_file_name(task: str) -> str:
    """Task names are checked at load (``TaskConfig``); never let one name a file elsewhere."""
    if not task or task.startswith(".") or any(c in task for c in "/\\\x00"):
        raise OutputError(f"task name {task!r} cannot name a samples file")
    return task


def confined(path: Path, folder: Path) -> Path:
    """``path``, a file read from a received run: a :class:`~mmtasks.errors.DataError` when it
    (through a link) leads out of ``folder``. A run's files are confined to its folder."""
    from mmtasks.errors import DataError

    try:
        target = path.resolve(strict=True)
        target.relative_to(folder.resolve(strict=True))
    except OSError:
        return path  # gone or unreadable: the reader says so
    except ValueError:
        raise DataError(f"links out of the run folder (to {target}): refusing to read it", file=path) from None
    return path


def run_folder(path: Path) -> Path:
    """The run folder ``path`` names: the folder itself, or the folder of the ``results.json``
    given; a :class:`~mmtasks.errors.DataError` when it holds no ``results.json`` (what
    ``mmtasks compare`` and ``mmtasks view`` take as a run)."""
    from mmtasks.errors import DataError
    from mmtasks.results.schema import RESULTS_FILE

    path = Path(path)
    folder = path.parent if path.is_file() and path.name == RESULTS_FILE else path
    if not (folder / RESULTS_FILE).is_file():
        raise DataError(f"no {RESULTS_FILE} here: pass a run folder (the --output-path of a run)", file=path)
    return folder


def check_output_path(path: Path) -> None:
    """One line for an ``--output-path`` that cannot be a run folder: an existing file, or a
    name like ``x/results.json`` (refused, not created as a folder: the hint names the folder)."""
    if path.exists() and not path.is_dir():
        raise OutputError("--output-path is a file, not a folder", file=path, field="--output-path",
                          hint="pass a folder: results.json and samples/ are written inside it")
    if not path.exists() and path.suffix.lower() in _FILE_SUFFIXES:
        raise OutputError(f"--output-path names a folder, not a file ({path.name!r} looks like a file name)",
                          field="--output-path", hint=f"pass the folder: --output-path {path.parent}")


def run_fingerprint(description: dict[str, Any]) -> str:
    """What identifies a run for resuming: a hash of its tasks, model and settings."""
    return hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode()).hexdigest()


def _holds_results(folder: Path) -> bool:
    samples = folder / "samples"
    if (folder / "results.json").exists():
        return True
    return samples.is_dir() and (any(samples.glob("*.jsonl")) or any(samples.glob("*.jsonl.partial")))


def _remove_results(folder: Path) -> None:
    """Remove what a run writes (results.json, its samples files): never anything else."""
    unlink_quietly(folder / "results.json")
    unlink_quietly(folder / ".mmtasks-trackers.json")  # another run's tracker runs (mmtasks.trackers.TRACKERS_FILE)
    samples = folder / "samples"
    if samples.is_dir() and not samples.is_symlink():
        for pattern in ("*.jsonl", "*.jsonl.partial"):
            for f in samples.glob(pattern):
                unlink_quietly(f)


@contextlib.contextmanager
def claim_output_folder(folder: Path, fingerprint: str, summary: dict[str, Any], *, overwrite: bool = False,
                        settings: dict[str, Any] | None = None) -> Iterator[Path]:
    """Own ``folder`` for the block: see the module docstring. ``summary`` (model, tasks) and
    ``settings`` (what the fingerprint hashes) are recorded beside the fingerprint so a refusal
    can say whose results are there and which settings differ."""
    check_output_path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o666)
    except OSError as exc:
        raise OutputError(f"cannot use the output folder: {exc.strerror or exc}", file=folder, field="--output-path") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            raise OutputError("the output folder is in use by another run" + (f" (pid {holder})" if holder.isdigit() else ""),
                              file=folder, field="--output-path", hint="wait for it to finish or choose another --output-path") from None
        previous = _read_run_file(folder / RUN_FILE)
        if previous.get("fingerprint") != fingerprint and _holds_results(folder):
            if not overwrite:
                whose = ", ".join(f"{k} {v}" for k, v in previous.get("summary", {}).items()) or "an unknown run"
                differ = settings_differ(previous.get("settings"), settings)
                raise OutputError(f"the output folder holds the results of another run ({whose}); {differ}", file=folder,
                                  field="--output-path", hint="pass --overwrite to replace them, or choose another --output-path")
            _remove_results(folder)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        atomic_write_text(folder / RUN_FILE, dumps({"fingerprint": fingerprint, "summary": summary,
                                                    "settings": settings or {}}) + "\n")
        yield folder
    finally:
        os.close(fd)  # releases the lock


def settings_differ(before: Any, now: dict[str, Any] | None) -> str:
    """``settings that differ: limit 5 (now 10), ...`` between the recorded run and this one."""
    if not isinstance(before, dict) or now is None:
        return "its settings were not recorded (an older run)"
    old, new = _flat(before), _flat(json.loads(dumps(now)))
    differ = {key for key in old.keys() | new.keys() if old.get(key) != new.get(key)}

    def shown_elsewhere(key: str) -> bool:
        """``model_spec.args.x`` repeats ``config.model_args.x`` (and the judge's likewise)."""
        for spec, args in (("model_spec.args.", "config.model_args."), ("judge_spec.args.", "config.judge_args.")):
            if key.startswith(spec) and args + key[len(spec):] in differ:
                return True
        return False

    changed = [f"{key} {_shown(old.get(key))} (now {_shown(new.get(key))})"
               for key in sorted(differ) if not shown_elsewhere(key)]
    return "settings that differ: " + ", ".join(changed) if changed else "the same settings under another fingerprint"


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; an empty mapping adds nothing (it is "unset")."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def _shown(value: Any) -> str:
    return "unset" if value is None else json.dumps(value, ensure_ascii=False)[:60]


def _read_run_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _plain(obj: Any) -> Any:
    """JSON fallback: dataclasses become dicts, anything else its ``str``."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return str(obj)


def dumps(obj: Any) -> str:
    """JSON text of ``obj`` with registered secrets redacted from its strings (not from the JSON
    text: a secret made of digits must not turn numbers into ``***``). Text that cannot be UTF-8
    (a reply holding a lone surrogate, ``\\ud800``) is written as JSON escapes, never a crash
    that would leave the run's samples half written."""
    text = redacted_json(obj, _plain)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(json.loads(text), ensure_ascii=True)
    return text


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
        if directory.is_symlink():
            raise OutputError("the samples folder is a symlink; refusing to write through it", file=directory,
                              hint="remove the link or choose another --output-path")
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise writer.write_failed(directory, exc, "nothing written") from None
        self._files: dict[str, IO[bytes]] = {}
        #: task -> flat (doc_index, offset, length) triples of the lines written by this writer
        self._spans: dict[str, array[int]] = {}
        self._ends: dict[str, int] = {}

    def _partial(self, task: str) -> Path:
        _check_file_name(task)
        return self.directory / f"{task}.jsonl.partial"

    def write(self, sample: Sample) -> None:
        fh = self._files.get(sample.task)
        partial = self._partial(sample.task)
        if fh is None:
            # a partial file left by a killed run of this folder (or anything planted there,
            # a symlink included) is replaced, never written through: its samples come back from the cache
            try:
                unlink_quietly(partial)
                fh = self._files[sample.task] = writer.create_exclusive(partial, buffered=False)
            except OSError as exc:
                raise writer.write_failed(partial, exc, "the samples of the other tasks; every reply received is in the response cache") from None
            self._spans[sample.task] = array("q")
            self._ends[sample.task] = 0
        line = (dumps(sample.to_json()) + "\n").encode("utf-8")
        try:
            _write_all(fh, line)  # unbuffered: each line is on disk (in the page cache) when this returns
        except OSError as exc:
            n = len(self._spans[sample.task]) // 3
            raise writer.write_failed(partial, exc, f"{n} samples of {sample.task!r} written so far in {partial} and every reply received in the response cache") from None
        offset = self._ends[sample.task]
        self._spans[sample.task].extend((sample.doc_index, offset, len(line)))
        self._ends[sample.task] = offset + len(line)

    def finish(self, task: str, samples: list[Sample] | None = None) -> Path:
        """Write the final file in document order, from ``samples`` or the partial file."""
        fh = self._files.pop(task, None)
        if fh is not None:
            fh.close()
        partial = self._partial(task)
        final = self.directory / f"{_check_file_name(task)}.jsonl"
        spans = self._spans.pop(task, None)
        self._ends.pop(task, None)
        if samples is not None:
            text = "".join(dumps(s.to_json()) + "\n" for s in sorted(samples, key=lambda s: s.doc_index))
            atomic_write_text(final, text)
        elif not partial.exists():
            atomic_write_text(final, "")
        else:
            triples = _triples(spans) if spans is not None else _scan_spans(partial)
            try:
                _write_in_order(partial, triples, final)
            except OSError as exc:
                raise writer.write_failed(final, exc, f"the samples in {partial}; every reply received is in the response cache") from None
        partial.unlink(missing_ok=True)
        return final

    def close(self) -> None:
        for fh in self._files.values():
            with contextlib.suppress(OSError):  # unbuffered: nothing is left to write; a failed write was reported
                fh.close()
        self._files.clear()


class SamplesFile(Sequence[Sample]):
    """A finished samples file as a sequence of slim samples (:meth:`Sample.slim`), read back
    one line at a time on every pass: what aggregation needs, in document order, without
    holding the run's samples in memory (only one offset per sample). ``full``: the samples as
    written (prompts, every reply, parsed answers, targets, judge verdicts), for the Python API."""

    def __init__(self, path: Path, *, full: bool = False) -> None:
        self.path = path
        self._read = _full if full else _slim
        # every line read (and checked) once by the one reader of samples files; then by offset
        self._offsets: array[int] = array("q", (line.offset for line in iter_samples(path, values="shown")))

    def __len__(self) -> int:
        return len(self._offsets)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> list[Sample]: ...

    def __getitem__(self, index: int | slice) -> Sample | list[Sample]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._read(sample_at(self.path, self._offsets[index], values="shown"))

    def __iter__(self) -> Iterator[Sample]:
        for line in iter_samples(self.path, values="shown"):
            yield self._read(line)


def _slim(line: SampleLine) -> Sample:
    return Sample.from_json(line.data).slim()


def _full(line: SampleLine) -> Sample:
    return Sample.from_json(line.data)


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
