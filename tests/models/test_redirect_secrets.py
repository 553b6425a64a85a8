"""Issue 31, finding 3: a redirect to another origin never carries a credential there.

An endpoint that 307-redirects every request elsewhere, with the key in
``default_headers={"api-key": ...}`` (Azure's header) and in ``api_key``: before, the key reached
the other origin on every request (httpx strips only ``Authorization``). Now a redirect to another
origin is not followed at all, for the model, the judge and the note taker alike (one transport
carries them all), and the failure names where it pointed; a redirect within the origin is still
followed."""

from __future__ import annotations

import http.server
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

import mmtasks
from mmtasks.errors import MmtasksError
from tests.builders import serving
from tests.chat_server import ChatServer
from tests.cli_process import SAMPLE


def redirector(target: str, *, same_origin_prefix: str | None = None) -> http.server.ThreadingHTTPServer:
    """A server answering every request with a 307 to ``target`` + the path (or, for paths not yet
    under ``same_origin_prefix``, to itself under that prefix)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _redirect(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self.send_response(307)
            self.send_header("Location", target + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = _redirect

    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)


@pytest.fixture()
def elsewhere() -> Iterator[ChatServer]:
    with ChatServer(reply=lambda body: "(1)") as server:
        yield server


def _key_headers(server: ChatServer, key: str) -> list[str]:
    return [name for call in server.log for name, value in call.headers.items() if key in value]


@pytest.mark.parametrize("who", ["model", "judge", "notetaker"])
def test_a_cross_origin_redirect_never_carries_a_header_key(elsewhere: ChatServer, tmp_path: Path, who: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    key = f"azure-key-{secrets.token_hex(16)}"
    monkeypatch.setenv("MY_KEY", key)
    with serving(redirector(elsewhere.base_url.removesuffix("/v1"))) as port:
        args = {"base_url": f"http://127.0.0.1:{port}/v1", "default_headers": {"api-key": key},
                "api_key_env": "MY_KEY", "max_retries": 0}
        options = {
            "model": {"model": "openai:m", "model_args": args, "tasks": "realbench_ranking_easy"},
            "judge": {"model": "random", "judge": "openai:j", "judge_args": args, "tasks": "llava_bench_wild"},
            "notetaker": {"model": "random", "judge": "random", "notetaker": "openai:n", "notetaker_args": args,
                          "strategy": "notetaking", "tasks": "mmrc"},
        }[who]
        try:
            mmtasks.evaluate(data_dir=SAMPLE, output_path=tmp_path / "run", use_cache=False, limit=2,
                             allow_failures=True, **options)
        except MmtasksError as exc:
            assert "redirected (307) to another origin" in str(exc), exc
    assert _key_headers(elsewhere, key) == []  # before: api-key on every request there
    assert elsewhere.calls == 0


def test_which_redirects_leave_the_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatServer(reply=lambda body: "(1)") as server:
        from mmtasks.models.openai_transport import _other_origin
        from mmtasks.models.openai_http import http

        here = http.URL(server.base_url + "/chat/completions")
        assert _other_origin(here, "/v2/chat/completions") is None
        assert _other_origin(here, server.base_url.replace("127.0.0.1", "localhost")) is not None
        assert _other_origin(here, server.base_url.replace("http:", "https:")) is not None
        assert _other_origin(http.URL("https://a.example/v1"), "https://a.example:443/v2") is None
