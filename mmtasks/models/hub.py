"""Before loading weights from the Hugging Face Hub: is the Hub reachable, and if not,
are the weights already in the local cache?

Without this check an offline machine spends minutes in huggingface_hub's retries
(five per file, for each of the files a processor and a model look up) before the
load fails. :func:`hub_preflight` answers in seconds: ``HF_HUB_OFFLINE`` set, a local
path, or a reachable Hub load as usual; an unreachable Hub with the weights cached
loads them from the cache (``local_files_only``); an unreachable Hub without them is
one :class:`ModelError` naming the fixes.
"""

from __future__ import annotations

import logging
import os

from mmtasks import logs
from mmtasks.errors import ModelError

log = logging.getLogger(__name__)

#: seconds the reachability probe may take (a blackholed route costs this much)
PROBE_TIMEOUT_S = 5.0


def looks_local(name: str) -> bool:
    return os.path.isabs(name) or name.startswith((".", "~")) or os.path.exists(os.path.expanduser(name))


def hub_unreachable(endpoint: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """Why ``endpoint`` cannot be reached (one HEAD request through huggingface_hub's own
    HTTP session, so proxies and certificates are as for the download), or None when any
    HTTP answer comes back."""
    from huggingface_hub.utils import get_session

    try:
        get_session().head(endpoint, timeout=timeout, follow_redirects=False)
    except Exception as exc:  # the HTTP client's connect, DNS, proxy, TLS and timeout errors
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"{type(exc).__name__}: {reason}" if reason else type(exc).__name__
    return None


def hub_preflight(name: str, revision: str | None = None, field: str = "--model") -> bool:
    """Whether to load ``name`` with ``local_files_only`` (Hub unreachable, weights cached).

    Raises :class:`ModelError` when the Hub is unreachable and the weights are not cached."""
    from huggingface_hub import constants, try_to_load_from_cache
    from huggingface_hub.constants import is_offline_mode

    logs.adopt_library_loggers()  # huggingface_hub's own handler would print each of its lines twice
    if is_offline_mode() or looks_local(name):
        return False
    endpoint = constants.ENDPOINT
    reason = hub_unreachable(endpoint)
    if reason is None:
        return False
    try:
        cached = try_to_load_from_cache(name, "config.json", revision=revision)
    except (ValueError, OSError):  # not a valid repo id: let the loader say so
        cached = None
    if isinstance(cached, str):
        log.warning("the Hugging Face Hub (%s) cannot be reached (%s); loading %s from the local cache "
                    "(set HF_HUB_OFFLINE=1 to skip this check)", endpoint, reason, name)
        return True
    raise ModelError(
        f"hf model {name!r} is not in the local Hugging Face cache ({constants.HF_HUB_CACHE}) and the Hub "
        f"({endpoint}) cannot be reached ({reason})",
        field=field,
        hint=f"download it where there is a network (`hf download {name}`) and point HF_HOME at that cache "
        "with HF_HUB_OFFLINE=1, or pass a local folder (hf:/path/to/weights)",
    )
