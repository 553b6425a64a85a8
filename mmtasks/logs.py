"""Log output for the command line: one handler, every line printed once.

Some libraries attach a handler of their own to their top logger *and* let records
propagate (``huggingface_hub`` does), so under an application's root handler each of
their lines would print twice. :func:`adopt_library_loggers` removes those private
handlers once the application has configured logging, so the root handler (with its
secret redaction) prints each record once; :func:`configure` sets that root handler up.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from mmtasks.errors import printable

class _OwnHandler(logging.StreamHandler):
    """The handler :func:`configure` installs (told apart from anyone else's). It writes to
    whatever ``sys.stderr`` is when a record arrives (a test's capture, a redirected stream),
    never to a stream closed since."""

    @property  # a plain attribute in StreamHandler: read at each record here
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


class _Formatter(logging.Formatter):
    """``mmtasks: message`` for mmtasks' own notices; ``LEVEL logger: message`` otherwise. The
    message's control characters are escaped (a server's error text reaches the terminal here)."""

    def format(self, record: logging.LogRecord) -> str:
        message = printable(record.getMessage())
        if record.levelno == logging.INFO and record.name.split(".")[0] == "mmtasks":
            return f"mmtasks: {message}"
        return super().format(logging.makeLogRecord({**record.__dict__, "msg": message, "args": None}))


def _quiet_libraries(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING or record.name.split(".")[0] == "mmtasks"


def configure(verbose: bool = False) -> None:
    """To stderr: warnings, and mmtasks' own notices (INFO); with ``verbose`` everything from
    DEBUG on, libraries' included. Secrets are redacted."""
    from mmtasks.secrets import RedactingFilter

    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _OwnHandler)]:
        root.removeHandler(handler)
    handler = _OwnHandler()
    if not verbose:  # libraries' own INFO notes (the openai SDK's retries) only under --verbose
        handler.addFilter(_quiet_libraries)
    handler.setFormatter(_Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    logging.getLogger("mmtasks").setLevel(logging.DEBUG if verbose else logging.INFO)
    adopt_library_loggers()


def adopt_library_loggers() -> None:
    """Stop double printing: a logger with a handler of its own that also propagates to the
    root handler (``huggingface_hub``'s) loses its own handler, so each record prints once,
    through the root handler and its redaction. Call after importing such a library. Does
    nothing while the root logger has no handler (a program that did not configure logging
    keeps the libraries' own output)."""
    root = logging.getLogger()
    if not root.handlers:
        return
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if not isinstance(logger, logging.Logger) or not logger.propagate or name.split(".")[0] == "mmtasks":
            continue
        for handler in list(logger.handlers):
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, (_OwnHandler, logging.FileHandler)):
                logger.removeHandler(handler)
