"""Ranks of a data parallel run agree before any work, stay in touch, and account for every document.

Every rank of a run started with ``torchrun``/``accelerate launch`` may sit on its own node,
with its own copy of mmtasks, the data and the weights. Before any model is built each rank
posts a :class:`RunDigest` (mmtasks version, each task's config hash, each task's document
ids and per-document content hashes, the model identity and a fingerprint of its weights)
to the process group's key-value store; every rank compares every digest with rank 0's and
a difference stops every rank with one line naming the rank, its node and what differs
(exit 2). While a rank waits for others (for their digests, or for their shards to finish),
it watches their heartbeats: a rank that stops beating for the silence timeout (default
:data:`DEFAULT_SILENCE_S`, ``--rank-timeout`` or ``MMTASKS_RANK_TIMEOUT_S``) is named, and
the run stops instead of waiting for it for days. At the end rank 0 checks that every
document of the run was scored exactly once (per repeat).

The store is the one torch.distributed already set up for the process group (torchrun's
rendezvous store), so nothing else has to be reachable between nodes.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mmtasks.errors import ConfigError, MmtasksError

#: seconds without a heartbeat after which a waiting rank names the silent one and stops
DEFAULT_SILENCE_S = 600.0
SILENCE_ENV = "MMTASKS_RANK_TIMEOUT_S"
#: the weight files whose header, size and sampled chunks make the fingerprint
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
_CONFIG_FILES = ("config.json", "model.safetensors.index.json", "pytorch_model.bin.index.json", "generation_config.json")
#: chunks of each weight file read at evenly spaced offsets (same-shaped weights with other
#: values have identical headers and sizes; a few sampled bytes tell them apart)
_SAMPLED_CHUNKS = 16
_CHUNK_BYTES = 4096


class RanksDisagree(MmtasksError):
    """The ranks of a data parallel run would not evaluate the same thing."""

    exit_code = 2


class RankSilent(MmtasksError):
    """A rank stopped sending heartbeats (stopped, hung, or its node was lost)."""

    exit_code = 1


class DocumentsUnaccounted(MmtasksError):
    """After the gather, some document was scored twice or never."""

    exit_code = 1


def silence_timeout(flag: float | None = None, environ: Mapping[str, str] | None = None) -> float:
    """The silence timeout: ``--rank-timeout``, else ``MMTASKS_RANK_TIMEOUT_S``, else the default."""
    if flag is not None:
        if flag <= 0:
            raise ConfigError(f"--rank-timeout {flag} is not a positive number of seconds", field="--rank-timeout")
        return float(flag)
    env = os.environ if environ is None else environ
    raw = env.get(SILENCE_ENV, "")
    if not raw:
        return DEFAULT_SILENCE_S
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{SILENCE_ENV}={raw!r} is not a number of seconds", field=SILENCE_ENV) from None
    if value <= 0:
        raise ConfigError(f"{SILENCE_ENV}={raw!r} is not a positive number of seconds", field=SILENCE_ENV)
    return value


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


@dataclass(frozen=True)
class TaskDocuments:
    """One task's documents as a rank reads them: ids in order and each record's content hash."""

    ids: list[str]
    hashes: list[str]


@dataclass(frozen=True)
class RunDigest:
    """What a rank is about to evaluate (posted to every other rank before any work)."""

    node: str
    version: str
    #: task -> hash of its resolved config
    tasks: dict[str, str]
    documents: dict[str, TaskDocuments]
    #: role (model, judge, ...) -> identity (backend, name, every arg that changes answers)
    models: dict[str, str]
    #: role -> weight file -> fingerprint (size, header hash, sampled chunks); empty when not local files
    weights: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunDigest:
        raw = json.loads(text)
        raw["documents"] = {k: TaskDocuments(**v) for k, v in raw["documents"].items()}
        return cls(**raw)


def document_hash(record: Mapping[str, Any]) -> str:
    """A record's content hash (the record as read, keys sorted)."""
    return _sha(json.dumps(record, sort_keys=True, default=str, ensure_ascii=False).encode())


def documents_hash(docs: TaskDocuments) -> str:
    """One hash of a task's document ids and contents, in order."""
    return _sha(json.dumps([docs.ids, docs.hashes]).encode())


def files_hash(files: Mapping[str, str]) -> str:
    """One hash of a weights fingerprint (file -> fingerprint)."""
    return _sha(json.dumps(dict(files), sort_keys=True).encode())


def weights_fingerprint(name: str) -> dict[str, str]:
    """Per weight or config file of the local model folder ``name``: its size, a hash of its
    safetensors header (or first chunk), and of :data:`_SAMPLED_CHUNKS` chunks at evenly spaced
    offsets; config files are hashed whole (they are small). Never a full read of the weights.
    Empty when ``name`` is not a local folder (a hub id, an API model: the identity names it)."""
    folder = Path(name).expanduser()
    if not folder.is_dir():
        return {}
    out: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(folder).as_posix()
        if path.name in _CONFIG_FILES:
            out[rel] = _sha(path.read_bytes())
        elif path.name.endswith(_WEIGHT_SUFFIXES):
            out[rel] = _sampled(path)
    return out


def _sampled(path: Path) -> str:
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as f:
        head = f.read(8)
        digest.update(head)
        if path.suffix == ".safetensors" and len(head) == 8:
            length = int.from_bytes(head, "little")
            if 0 < length <= 100 * 1024 * 1024:
                digest.update(f.read(length))
        for k in range(_SAMPLED_CHUNKS):
            f.seek(size * k // _SAMPLED_CHUNKS)
            digest.update(f.read(_CHUNK_BYTES))
        f.seek(max(0, size - _CHUNK_BYTES))
        digest.update(f.read(_CHUNK_BYTES))
    return f"{size} bytes, {digest.hexdigest()[:16]}"


def build_digest(version: str, task_configs: Mapping[str, str], documents: Mapping[str, Iterable[tuple[str, Mapping[str, Any]]]],
                 models: Mapping[str, tuple[str, str | None]]) -> RunDigest:
    """This rank's digest. ``task_configs``: task -> its config as JSON; ``documents``: task ->
    (doc id, record) in order; ``models``: role -> (identity, local weights folder or None)."""
    docs = {}
    for task, items in documents.items():
        ids, hashes = [], []
        for doc_id, record in items:
            ids.append(doc_id)
            hashes.append(document_hash(record))
        docs[task] = TaskDocuments(ids=ids, hashes=hashes)
    return RunDigest(node=socket.gethostname(), version=version,
                     tasks={t: _sha(c.encode()) for t, c in task_configs.items()}, documents=docs,
                     models={role: ident for role, (ident, _) in models.items()},
                     weights={role: weights_fingerprint(folder) for role, (_, folder) in models.items() if folder})


def _where(rank: int, digest: RunDigest) -> str:
    return f"rank {rank} (node {digest.node})"


def difference(ours: RunDigest, theirs: RunDigest) -> str | None:
    """What differs between rank 0's digest (``ours``) and another's, in a few words; None when
    they agree. The first difference found, in the order a user would look."""
    if ours.version != theirs.version:
        return f"mmtasks {theirs.version} there, {ours.version} on rank 0"
    if sorted(ours.tasks) != sorted(theirs.tasks):
        return f"tasks {sorted(theirs.tasks)} there, {sorted(ours.tasks)} on rank 0"
    for task in ours.tasks:
        if ours.tasks[task] != theirs.tasks[task]:
            return f"task {task!r}'s config differs from rank 0's (its YAML or an override)"
    for task, mine in ours.documents.items():
        other = theirs.documents.get(task, TaskDocuments([], []))
        if len(mine.ids) != len(other.ids):
            missing = sorted(set(mine.ids) - set(other.ids))[:3]
            extra = sorted(set(other.ids) - set(mine.ids))[:3]
            said = f"; missing there: {', '.join(map(repr, missing))}" if missing else ""
            said += f"; only there: {', '.join(map(repr, extra))}" if extra else ""
            return f"task {task!r} has {len(other.ids)} documents there, {len(mine.ids)} on rank 0 (stale data?{said})"
        for k, (a, b) in enumerate(zip(mine.ids, other.ids)):
            if a != b:
                return f"task {task!r}'s document {k} is {b!r} there, {a!r} on rank 0"
        for doc_id, a, b in zip(mine.ids, mine.hashes, other.hashes):
            if a != b:
                return f"task {task!r}'s document {doc_id!r} has other content there than on rank 0 (stale data?)"
    for role, ident in ours.models.items():
        if theirs.models.get(role) != ident:
            return f"the {role} differs: {theirs.models.get(role)} there, {ident} on rank 0"
    for role, files in ours.weights.items():
        other_files = theirs.weights.get(role, {})
        for name in sorted(set(files) | set(other_files)):
            here, there = files.get(name), other_files.get(name)
            if here != there:
                return (f"the {role}'s weights differ: {name} is {there or 'missing'} there, {here or 'missing'} on rank 0 "
                        "(other weights at the same path?)")
    return None


class Liaison:
    """This rank's link to the others through the process group's store: posting values,
    heartbeats, and waiting on other ranks while naming any that falls silent."""

    def __init__(self, store: Any, rank: int, world_size: int, silence_s: float, prefix: str) -> None:
        self.store = store
        self.rank = rank
        self.world_size = world_size
        self.silence_s = silence_s
        self.prefix = prefix
        self.nodes: dict[int, str] = {}
        self._stop = threading.Event()
        self._beat_key = f"{prefix}/beat/{rank}"
        self.store.add(self._beat_key, 1)
        self._thread = threading.Thread(target=self._beat, name="mmtasks-heartbeat", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        interval = max(0.05, min(5.0, self.silence_s / 10))
        while not self._stop.wait(interval):
            try:
                self.store.add(self._beat_key, 1)
            except RuntimeError:  # the store went away: the run is ending
                return

    def close(self) -> None:
        self._stop.set()

    def post(self, name: str, value: str) -> None:
        self.store.set(f"{self.prefix}/{name}/{self.rank}", value)

    def collect(self, name: str, what: str) -> list[str]:
        """Every rank's value of ``name``, waiting for the ranks that have not posted it yet
        while watching their heartbeats (``what``: what they are doing, for the message)."""
        keys = [f"{self.prefix}/{name}/{r}" for r in range(self.world_size)]
        seen: dict[int, tuple[int, float]] = {}
        poll = max(0.02, min(0.5, self.silence_s / 20))
        while True:
            waiting = [r for r in range(self.world_size) if not self.store.check([keys[r]])]
            if not waiting:
                break
            now = time.monotonic()
            for r in waiting:
                beats = int(self.store.add(f"{self.prefix}/beat/{r}", 0))
                last = seen.get(r)
                if last is None or last[0] != beats:
                    seen[r] = (beats, now)
                elif now - last[1] >= self.silence_s:
                    node = self.nodes.get(r)
                    who = f"rank {r} (node {node})" if node else f"rank {r}"
                    raise RankSilent(
                        f"{who} has given no sign of life for {self.silence_s:g} s (stopped, hung, or its node lost) "
                        f"while rank {self.rank} waited for it to {what}; stopping the run",
                        field="--rank-timeout",
                        hint=f"every reply received so far is in each node's cache: run the same command again to "
                             f"resume; a slow rank still beats, so raise --rank-timeout or {SILENCE_ENV} only for a rank "
                             "that hangs for a while on purpose")
            time.sleep(poll)
        return [self.store.get(k).decode() for k in keys]


def agree(liaison: Liaison, mine: RunDigest) -> None:
    """Post this rank's digest, read everyone's, stop on the first rank that differs from rank 0."""
    liaison.post("digest", mine.to_json())
    digests = [RunDigest.from_json(text) for text in liaison.collect("digest", "say what it will evaluate")]
    liaison.nodes = {r: d.node for r, d in enumerate(digests)}
    first = digests[0]
    differing = [(r, diff) for r, d in enumerate(digests[1:], 1) if (diff := difference(first, d)) is not None]
    if not differing:
        return
    rank, diff = differing[0]
    more = f" (and {len(differing) - 1} other rank(s))" if len(differing) > 1 else ""
    error = RanksDisagree(
        f"{_where(rank, digests[rank])} differs from {_where(0, first)}: {diff}{more}; no work was started",
        hint="give every node the same mmtasks, data and weights (compare the files named), then run again")
    error.quiet = liaison.rank != 0  # every rank knows; rank 0 says it once
    raise error


def check_scored_once(expected: Mapping[str, Sequence[str]], scored: Mapping[str, Iterable[tuple[str, int]]],
                      repeats: Mapping[str, int]) -> None:
    """Every document of every task scored exactly once per repeat: raise naming the task and
    documents scored twice or never. ``scored``: task -> (doc id, repeat) of each sample."""
    for task, ids in expected.items():
        want = Counter((doc_id, r) for doc_id in ids for r in range(repeats.get(task, 1)))
        got = Counter(scored.get(task, ()))
        twice = sorted({d for (d, _), n in got.items() if n > 1 or (d, _) not in want})
        never = sorted({d for key, n in want.items() if got.get(key, 0) < n for d in [key[0]]})
        if twice or never:
            parts = []
            if twice:
                parts.append(f"scored more than once or not in the run: {', '.join(map(repr, twice[:5]))}"
                             + (f" and {len(twice) - 5} more" if len(twice) > 5 else ""))
            if never:
                parts.append(f"never scored: {', '.join(map(repr, never[:5]))}"
                             + (f" and {len(never) - 5} more" if len(never) > 5 else ""))
            raise DocumentsUnaccounted(f"task {task!r}: {'; '.join(parts)}; no results were written",
                                       hint="the ranks did not split the same documents: run again")
