"""A response cache in SQLite (WAL mode, safe for several processes).

The key is a SHA-256 over the cache format version, the model identity
(backend, name, every arg that can change answers; for the ``openai`` backend
also the endpoint, so that two servers serving one model name never share
replies) and the request's content key (every message part - image parts by
content hash -, generation settings and the re-ask attempt). Only successful
replies are stored: a failure is retried by the next run. Each reply is
committed as soon as it arrives, so a killed run loses nothing it had received.

Beside the replies, :meth:`ResponseCache.memo` keeps small derived values that
are slow to recompute when a run is served from the cache (jieba segmentations
for ROUGE-L); ``--no-cache`` and ``mmtasks cache clear`` cover them too.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

from mmtasks.core.request import Request

#: bump when the key derivation or stored format changes
CACHE_FORMAT = 1


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


class ResponseCache:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "responses.sqlite"
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
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, reply in self._conn.execute(f"SELECT key, reply FROM responses WHERE key IN ({marks})", chunk):
                out[key] = reply
        return out

    def put(self, key: str, model_identity: str, reply: str) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO responses (key, model, reply, created) VALUES (?, ?, ?, ?)",
            (key, model_identity, reply, time.time()),
        )

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def memo(self, space: str) -> "Memo":
        """A key -> value store for derived values named ``space`` (e.g. ``segments``)."""
        return Memo(self._conn, space)

    def clear(self, model_identity_substring: str | None = None) -> int:
        """Remove replies (of models whose identity contains the text, else all, with the memos)."""
        if model_identity_substring:
            cur = self._conn.execute("DELETE FROM responses WHERE instr(model, ?) > 0", (model_identity_substring,))
        else:
            cur = self._conn.execute("DELETE FROM responses")
            self._conn.execute("DELETE FROM memo")
        return cur.rowcount

    def close(self) -> None:
        self._conn.close()


class Memo:
    """One ``space`` of the cache's memo table (committed per put, like replies)."""

    def __init__(self, conn: sqlite3.Connection, space: str) -> None:
        self._conn = conn
        self.space = space

    def get(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM memo WHERE space = ? AND key = ?", (self.space, key)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, value: str) -> None:
        self._conn.execute("INSERT OR REPLACE INTO memo (space, key, value) VALUES (?, ?, ?)", (self.space, key, value))
