"""Counting the steps a parser takes, never the time it takes.

CPython's regular-expression engine counts its own steps and every 4,096 of them asks the
interpreter whether a signal is pending (``MAYBE_CHECK_SIGNALS`` in ``Modules/_sre/sre_lib.h``);
the interpreter asks the same at every loop back-edge and function call. :func:`count_steps` keeps
a signal pending for the whole call (its handler counts one step and raises the signal again,
through ``libc.kill`` so that no check runs inside the handler), so the count is

    (regex engine steps) / 4096 + (Python loop iterations and calls)

for the code under test: the same on every machine, however fast. A call that goes over its
``budget`` is stopped there by :class:`OverBudget` (a quadratic parser fails at once, it does not
hang the suite). Main thread, POSIX only (the signal)."""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: the signal kept pending while steps are counted (not used by pytest or its plugins)
SIGNAL = signal.SIGUSR2


class OverBudget(Exception):
    """Raised inside the code under test once it has taken more steps than its budget."""


@dataclass
class _Counter:
    budget: int
    steps: int = 0
    armed: bool = True


class _Rearm:
    """``_REARM + signum`` makes the signal pending again; an operator (not a call) so that the
    interpreter runs no signal check between raising it and returning from the handler."""

    __add__ = functools.partial(ctypes.CDLL(None).kill, os.getpid())


_REARM = _Rearm()


def count_steps(call: Callable[[], Any], budget: int) -> int:
    """The steps ``call()`` takes (see the module's docstring); :class:`OverBudget` past ``budget``."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("steps are counted in the main thread only")
    counter = _Counter(budget)

    def tick(signum: int, frame: Any) -> None:
        if not counter.armed:
            return
        counter.steps += 1
        if counter.steps > counter.budget:
            counter.armed = False
            raise OverBudget(f"more than {counter.budget} steps")
        _REARM + signum

    previous = signal.signal(SIGNAL, tick)
    try:
        _REARM + SIGNAL
        call()
    finally:
        counter.armed = False
        _drain()
        signal.signal(SIGNAL, previous)
    return counter.steps


def _drain() -> None:
    """A call, so that the interpreter runs the (now disarmed) handler of the pending signal."""
