"""Progress on stderr that never looks hung.

Two counts move: finished documents (done/total, rate, ETA) and answered requests
(turns, probes, judge calls; those served from the response cache counted apart), so
a multi-turn or judged task, whose documents all finish in its last waves, still
shows work being done. On a terminal it is a tqdm bar over documents with the request
counts as its postfix, redrawn as replies arrive; otherwise (SLURM, nohup, CI logs) a
plain line goes to stderr every few seconds (``MMTASKS_PROGRESS_INTERVAL``, default
5 s) from a timer thread, so a slow request cannot hold it back, and one at the end.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from mmtasks.core.request import Reply, Request
from mmtasks.core.sample import Sample

if TYPE_CHECKING:
    from tqdm import tqdm

DEFAULT_INTERVAL_S = 5.0

#: the environment variables by which the Hugging Face libraries turn their own progress bars off
#: (``datasets``' "Generating test split", ``huggingface_hub``'s downloads), read when each is imported
LIBRARY_BAR_SWITCHES = ("HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS")


def quiet_library_bars() -> None:
    """Turn the Hugging Face libraries' own progress bars off for this process (``--no-progress``):
    each library's environment switch (unless the user set it), read when it is imported, and the
    switch of ``datasets`` when it already is (an earlier command in the same process)."""
    for name in LIBRARY_BAR_SWITCHES:
        os.environ.setdefault(name, "1")
    if "datasets" in sys.modules:
        from datasets.utils import logging as datasets_logging

        datasets_logging.disable_progress_bar()
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()


def _interval() -> float:
    try:
        value = float(os.environ.get("MMTASKS_PROGRESS_INTERVAL", DEFAULT_INTERVAL_S))
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if value > 0 else DEFAULT_INTERVAL_S


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class Progress:
    """Counts documents and replies; shows them as a bar (terminal) or periodic lines."""

    def __init__(self, total: int, enabled: bool = True, stream: TextIO | None = None,
                 tty: bool | None = None, interval: float | None = None) -> None:
        self.total = total
        self.docs = 0
        self.replies = 0
        self.cached = 0
        self.failed = 0
        self.task = ""
        self._stream = stream or sys.stderr
        self._enabled = enabled
        self._started = time.monotonic()
        self._last_draw = 0.0
        self._bar: tqdm | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if not enabled:
            return
        if tty is None:
            tty = bool(getattr(self._stream, "isatty", lambda: False)())
        if tty:
            from tqdm import tqdm  # only for a bar on a terminal

            self._bar = tqdm(total=total, unit="doc", dynamic_ncols=True, file=self._stream,
                             smoothing=0.1, mininterval=0.5)
        else:
            self._interval = interval or _interval()
            self._thread = threading.Thread(target=self._tick, name="mmtasks-progress", daemon=True)
            self._thread.start()

    # -- events (scheduler callbacks, on the scheduler's thread) --------------

    def reply(self, request: Request, reply: Reply) -> None:
        self.replies += 1
        if reply.cached:
            self.cached += 1
        elif not reply.ok:
            self.failed += 1
        if self._bar is not None:
            now = time.monotonic()
            if now - self._last_draw >= 0.5:  # the timer and rate move while documents do not
                self._last_draw = now
                self._bar.set_postfix_str(self._requests_text(), refresh=True)

    def advance(self, sample: Sample) -> None:
        self.docs += 1
        if sample.task != self.task:
            self.task = sample.task
            if self._bar is not None:
                self._bar.set_description(sample.task, refresh=False)
        if self._bar is not None:
            self._bar.set_postfix_str(self._requests_text(), refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(self._requests_text(), refresh=False)
            self._bar.close()
            self._bar = None
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5)
            self._thread = None
            self._write(final=True)

    # -- text ----------------------------------------------------------------

    def _requests_text(self) -> str:
        text = f"{self.replies} requests"
        if self.cached:
            text += f" ({self.cached} cached)"
        if self.failed:
            text += f", {self.failed} failed"
        return text

    def line(self, final: bool = False) -> str:
        """``12/40 documents (30%), 57 requests (20 cached), 1.9 req/s, elapsed 30s, ETA 1m10s``."""
        elapsed = max(time.monotonic() - self._started, 1e-9)
        pct = f" ({100 * self.docs / self.total:.0f}%)" if self.total else ""
        parts = [f"{self.docs}/{self.total} documents{pct}", self._requests_text(),
                 f"{self.replies / elapsed:.1f} req/s", f"elapsed {_duration(elapsed)}"]
        if not final:
            if self.docs and self.total > self.docs:
                parts.append(f"ETA {_duration((self.total - self.docs) * elapsed / self.docs)}")
            elif not self.docs and self.total:
                parts.append("ETA ? (no document finished yet)")
        head = "mmtasks: done: " if final else "mmtasks: progress: "
        where = f"{self.task}: " if self.task and not final else ""
        return head + where + ", ".join(parts)

    def _write(self, final: bool = False) -> None:
        try:
            print(self.line(final), file=self._stream, flush=True)
        except (OSError, ValueError):  # stderr closed under us: progress is not worth a crash
            pass

    def _tick(self) -> None:
        while not self._stop.wait(self._interval):
            self._write()

