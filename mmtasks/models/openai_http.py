"""The HTTP library under the ``openai`` SDK, for the backend's clients and transport.

openai 3.x is built on ``httpx2`` (it still accepts ``httpx`` clients, through a compatibility
layer crossed on every request); earlier releases are built on ``httpx``. The backend builds on
whichever the installed SDK's own default client subclasses, so the SDK takes its clients
natively and a run imports one HTTP stack, not two (``httpx`` alone costs ~25 ms to import, and
pulls in ``click``, ``rich`` and ``pygments`` for its command line when those are installed).
The two share one API (``AsyncClient``, ``AsyncHTTPTransport``, ``Response``, the exception
classes the SDK retries on).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

import openai


def _sdk_http_library() -> ModuleType:
    """The package (``httpx2`` or ``httpx``) whose ``AsyncClient`` the SDK's default client extends."""
    for base in openai.DefaultAsyncHttpxClient.__mro__:
        if base.__name__ == "AsyncClient":
            return importlib.import_module(base.__module__.split(".")[0])
    return importlib.import_module("httpx")


if TYPE_CHECKING:  # the two share one API: the annotations of httpx2 (openai 3.x's) stand for both
    import httpx2 as http
else:
    #: ``httpx2`` under openai 3.x, ``httpx`` under earlier releases
    http = _sdk_http_library()
