"""The openai backend's HTTP layer: over TLS, certificates are verified (one CA context shared by
every slot and event loop) and the environment's SSL_CERT_FILE is honoured; its clients are of the
SDK's own HTTP library."""

from __future__ import annotations

import http.server
import json
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmtasks.errors import ModelError
from mmtasks.models.base import ModelSpec
from mmtasks.models.openai_api import OpenAIModel
from tests.builders import serving

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")


class _Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        body = json.dumps({"object": "list", "data": [{"id": "tls-model", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with serving(server) as port:
        yield f"https://127.0.0.1:{port}/v1", cert


def _model(url: str) -> OpenAIModel:
    return OpenAIModel(ModelSpec(backend="openai", name="tls-model", args={"base_url": url, "max_retries": 0, "timeout": 10}))


def test_a_self_signed_certificate_is_refused(tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = tls_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    model = _model(url)
    try:
        with pytest.raises(ModelError, match="is not usable: cannot connect .*CERTIFICATE_VERIFY_FAILED"):
            model.check_ready()
    finally:
        model.close()


def test_the_certificate_named_by_ssl_cert_file_is_trusted(tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    url, cert = tls_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    model = _model(url)
    try:
        model.check_ready()  # the server lists the model: no error
    finally:
        model.close()


def test_the_backend_builds_on_the_sdks_own_http_library() -> None:
    import sys
    import subprocess as sp

    import openai

    from mmtasks.models.openai_http import http

    bases = [c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient"]
    assert bases and bases[0].__module__.split(".")[0] == http.__name__
    # the SDK takes the backend's clients natively; under openai 3.x (httpx2) the legacy httpx
    # stack is not imported at all (it used to be, with click, rich and pygments for its CLI)
    probe = "import sys, mmtasks.models.openai_api as m; print(m.http.__name__, 'httpx' in sys.modules)"
    out = sp.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == [http.__name__, str(http.__name__ == "httpx")]
