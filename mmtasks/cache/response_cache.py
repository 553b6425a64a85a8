"""A response cache in SQLite (WAL mode, safe for several processes).

The key is a SHA-256 over the cache format version, the model identity
(backend, name, every arg that can change answers; for the ``openai`` backend
also the endpoint, so that two servers serving one model name never share
replies) and the request's content key (every message part - image parts by
content hash -, generation settings and the re-ask attempt). Only successful
replies are stored: a failure is retried by the next run. Each reply is
committed as soon as it arrives, so a killed run loses nothing it had received.
Secrets are redacted from replies before they are stored, and header values are never part of
the identity (only their names).

Beside the replies, :meth:`ResponseCache.memo` keeps small derived values that
are slow to recompute when a run is served from the cache (jieba segmentations
for ROUGE-L); ``--no-cache`` and ``mmtasks cache clear`` cover them too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from mmtasks.core.request import Request
from mmtasks.errors import MmtasksError
from mmtasks.secrets import redact

#: bump when the key derivation or stored format changes (2: a reply is stored as JSON with its
#: reasoning field, finish reason and token counts, :meth:`~mmtasks.core.request.Reply.to_cache`)
CACHE_FORMAT = 2


def default_cache_dir() -> Path:
    if os.environ.get("MMTASKS_CACHE_DIR"):
        return Path(os.environ["MMTASKS_CACHE_DIR"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "mmtasks"
    return Path.home() / ".cache" / "mmtasks"


def request_key(model_identity: str, request: Request) -> str:
    h = hashlib.sha256()
    h.update(f"mmtasks-cache-v{CACHE_FORMAT}\n{model_identity}\n".encode())
    h.update(request.content_key().encode())
    return h.hexdigest()


class CacheError(MmtasksError):
    """The response cache cannot be opened, read or written (corrupt file, full disk, no permission)."""


@contextlib.contextmanager
def _guarded(path: Path, doing: str, kept: str | None = None) -> Iterator[None]:
    """SQLite and OS errors of the cache as one line naming the file (and what was kept)."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        corrupt = not isinstance(exc, sqlite3.OperationalError) or "malformed" in str(exc)
        hint = ("the file is damaged: delete it (the cache is rebuilt as replies arrive) or pass --no-cache" if corrupt
                else "free space or fix the folder, or pass --cache-dir elsewhere or --no-cache; run the same command again to resume")
        raise CacheError(f"response cache cannot {doing}: {exc}" + (f"; kept: {kept}" if kept else ""), file=path, hint=hint) from None
    except OSError as exc:
        raise CacheError(f"response cache cannot {doing}: {exc.strerror or exc}", file=path,
                         hint="pass --cache-dir elsewhere or --no-cache") from None


_KEPT = "every reply committed before this one (the next run resumes from them)"


class ResponseCache:
    def __init__(self, directory: Path) -> None:
        self.path = directory / "responses.sqlite"
        with _guarded(self.path, "be opened"):
            directory.mkdir(parents=True, exist_ok=True)
            # SQLite follows links: a file planted as a link would be written through
            for name in ("responses.sqlite", "responses.sqlite-wal", "responses.sqlite-shm"):
                if (directory / name).is_symlink():
                    raise CacheError("the cache file is a symlink; refusing to write through it", file=directory / name,
                                     hint="remove the link, or pass --cache-dir elsewhere or --no-cache")
            self._conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, reply TEXT NOT NULL, created REAL NOT NULL)"
            )
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS memo (space TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
                " PRIMARY KEY (space, key))"
            )

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        keys = list(dict.fromkeys(keys))
        out: dict[str, str] = {}
        with _guarded(self.path, "be read"):
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for key, reply in self._conn.execute(f"SELECT key, reply FROM responses WHERE key IN ({marks})", chunk):
                    out[key] = reply
        return out

    def put(self, key: str, model_identity: str, reply: str) -> None:
        """Store a reply; secrets (registered keys, header values, bearer tokens) are redacted from
        it and from the identity first: a key a server echoes is never written to the cache."""
        with _guarded(self.path, "store a reply", _KEPT):
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, model, reply, created) VALUES (?, ?, ?, ?)",
                (key, redact(model_identity), redact(reply), time.time()),
            )

    def count(self) -> int:
        with _guarded(self.path, "be read"):
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def memo(self, space: str) -> "Memo":
        """A key -> value store for derived values named ``space`` (e.g. ``segments``)."""
        return Memo(self._conn, space, self.path)

    def clear(self, model_identity_substring: str | None = None) -> int:
        """Remove replies (of models whose identity contains the text, else all, with the memos)."""
        with _guarded(self.path, "be cleared"):
            if model_identity_substring:
                cur = self._conn.execute("DELETE FROM responses WHERE instr(model, ?) > 0", (model_identity_substring,))
            else:
                cur = self._conn.execute("DELETE FROM responses")
                self._conn.execute("DELETE FROM memo")
            return cur.rowcount

    def export_to(self, target: Path, models: Iterable[str] | None = None, contains: str | None = None) -> int:
        """Copy replies into a new cache file ``target`` (same schema; the memos come along): those of
        models whose identity contains one of ``models`` (a spec's identity: a backend adds its
        endpoint or revision around it), or contains ``contains``, else all.
        Returns how many replies were copied."""
        if target.exists():
            raise CacheError("the export file exists already; refusing to overwrite it", file=target,
                             hint="give a new file name")
        exported = ResponseCache(target.parent if target.name == "responses.sqlite" else _export_folder(target))
        exported.close()
        with _guarded(target, "be written"):
            self._conn.execute("ATTACH DATABASE ? AS export", (str(exported.path),))
            try:
                where: str = ""
                params: list[str] = []
                if models is not None:
                    chosen = list(models)
                    where = (" WHERE " + " OR ".join("instr(model, ?) > 0" for _ in chosen)) if chosen else " WHERE 0"
                    params = chosen
                elif contains:
                    where, params = " WHERE instr(model, ?) > 0", [contains]
                cur = self._conn.execute(f"INSERT OR IGNORE INTO export.responses SELECT * FROM main.responses{where}", params)
                copied = cur.rowcount
                self._conn.execute("INSERT OR IGNORE INTO export.memo SELECT * FROM main.memo")
            finally:
                self._conn.execute("DETACH DATABASE export")
        if exported.path != target:
            exported.path.replace(target)
            for suffix in ("-wal", "-shm"):
                Path(str(exported.path) + suffix).unlink(missing_ok=True)
            exported.path.parent.rmdir()
        return copied

    def import_from(self, source: Path) -> tuple[int, int]:
        """Add the replies (and memos) of the exported cache file ``source``; a reply this cache
        holds already is kept. Returns (added, already here)."""
        if not source.is_file():
            raise CacheError("no such export file", file=source)
        with _guarded(source, "be read as an exported cache"):
            self._conn.execute("ATTACH DATABASE ? AS incoming", (str(source),))
            try:
                total = int(self._conn.execute("SELECT COUNT(*) FROM incoming.responses").fetchone()[0])
                cur = self._conn.execute("INSERT OR IGNORE INTO main.responses SELECT * FROM incoming.responses")
                added = cur.rowcount
                self._conn.execute("INSERT OR IGNORE INTO main.memo SELECT * FROM incoming.memo")
            finally:
                self._conn.execute("DETACH DATABASE incoming")
        return added, total - added

    def close(self) -> None:
        self._conn.close()


def _export_folder(target: Path) -> Path:
    """A fresh folder beside ``target`` where the export is built before it takes its name."""
    folder = target.parent / f".{target.name}.building"
    if folder.exists():
        raise CacheError("a previous export was interrupted: remove its folder", file=folder)
    return folder


class Memo:
    """One ``space`` of the cache's memo table (committed per put, like replies)."""

    def __init__(self, conn: sqlite3.Connection, space: str, path: Path | None = None) -> None:
        self._conn = conn
        self.space = space
        self.path = path or Path("responses.sqlite")

    def get(self, key: str) -> str | None:
        with _guarded(self.path, "be read"):
            row = self._conn.execute("SELECT value FROM memo WHERE space = ? AND key = ?", (self.space, key)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, value: str) -> None:
        with _guarded(self.path, "store a derived value", _KEPT):
            self._conn.execute("INSERT OR REPLACE INTO memo (space, key, value) VALUES (?, ?, ?)", (self.space, key, value))
