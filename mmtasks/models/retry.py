"""When and how long to wait before retrying an HTTP API call."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

#: statuses worth another try: timeout, conflict, rate limit, server errors
RETRY_STATUSES = frozenset({408, 409, 429})
#: the longest we wait between two attempts, whatever the server asks
MAX_RETRY_DELAY = 60.0


def is_retryable_status(status: int) -> bool:
    return status in RETRY_STATUSES or status >= 500


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait a server asked for: ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_delay(attempt: int, base: float, retry_after: float | None = None, rng: random.Random | None = None) -> float:
    """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 0).

    Exponential backoff with full jitter (uniform in [0, base * 2**attempt]);
    a server's Retry-After is a floor.
    """
    rng = rng or random
    delay = rng.uniform(0.0, min(MAX_RETRY_DELAY, base * 2**attempt))
    if retry_after is not None:
        delay = max(delay, retry_after)
    return min(delay, MAX_RETRY_DELAY)
