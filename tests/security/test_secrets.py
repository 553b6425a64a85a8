"""Secret redaction: by value, of exactly the secrets mmtasks reads."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from mmtasks import secrets
from mmtasks.results.files import dumps


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    secrets._clear_for_tests()
    yield
    secrets._clear_for_tests()


def test_registered_secrets_are_redacted() -> None:
    assert secrets.redact("key xk-abcdefgh") == "key xk-abcdefgh"
    secrets.register_secret("xk-abcdefgh")
    secrets.register_secret("xk-abcdefgh-ijkl")  # contains the first: hidden whole
    secrets.register_secret("EMPTY")  # too short to be a secret (a placeholder key)
    assert secrets.redact("got xk-abcdefgh-ijkl and xk-abcdefgh, EMPTY") == "got *** and ***, EMPTY"


def test_env_secrets_are_the_ones_mmtasks_reads() -> None:
    # only the variables a run reads; a name that merely looks secret is left alone (it used to
    # be registered: DEPLOY_TOKEN=question rewrote every prompt containing "question")
    secrets.register_env_secrets({"OPENAI_API_KEY": "sk-live-12345678", "HF_TOKEN": "hf_abcdefgh", "MY_PASSWORD": "hunter2hunter2",
                                  "DEPLOY_TOKEN": "question", "CI_JOB_TOKEN": "1234567890", "HOME": "/root/home/dir",
                                  "OPENAI_BASE_URL": "https://proxy.example/v1?api-version=2024-06-01&api-key=azkey-123456"})
    text = "sk-live-12345678 hf_abcdefgh hunter2hunter2 question 1234567890 /root/home/dir azkey-123456 2024-06-01"
    assert secrets.redact(text) == "*** *** hunter2hunter2 question 1234567890 /root/home/dir *** 2024-06-01"


def test_url_credentials_are_registered_user_name_too() -> None:
    secrets.register_url_secrets("http://tok-USERNAME-only@host/v1")
    secrets.register_url_secrets("http://user-name:pass-word-1@host/v1?sig=signature-1&api-version=2024-06-01")
    assert secrets.redact("tok-USERNAME-only user-name pass-word-1 signature-1 2024-06-01") == "*** *** *** *** 2024-06-01"


def test_numeric_secret_never_breaks_the_json_written() -> None:
    # redaction used to run over the JSON text: a key made of digits turned numbers into ***
    # (invalid JSON, and results.json crashed); now only strings are redacted
    secrets.register_secret("12345678")
    record = {"n": 12345678, "score": 0.12345678, "text": "key 12345678 echoed", "12345678": [("12345678", 1)]}
    assert json.loads(dumps(record)) == {"n": 12345678, "score": 0.12345678, "text": "key *** echoed", "***": [["***", 1]]}


def test_safe_url_drops_credentials_and_query() -> None:
    secrets.register_secret("tok-12345")
    assert secrets.safe_url("https://user:pw@api.example.com:8443/v1?api-key=xyz") == "https://api.example.com:8443/v1"
    assert secrets.safe_url("http://h/tok-12345/v1") == "http://h/***/v1"


def test_logging_filter(caplog: pytest.LogCaptureFixture) -> None:
    secrets.register_secret("sk-999999")
    logger = logging.getLogger("mmtasks.test_secrets")
    logger.addFilter(secrets.RedactingFilter())
    with caplog.at_level(logging.INFO, logger=logger.name):
        logger.info("calling with %s", "sk-999999")
    assert caplog.records[0].getMessage() == "calling with ***"


@pytest.mark.parametrize("secret", ['quote"d-secret', "back\\slash-secret", "tab\tsecret-x", "ключ-секрет-1", "plainsecret"])
def test_dumps_finds_secrets_that_json_escapes(secret: str) -> None:
    # dumps searches the JSON text before walking the data: a secret JSON writes escaped
    # (quotes, backslashes, control characters) must still be found and redacted
    secrets.register_secret(secret)
    record = {"reply": f"echo {secret} end", "nested": [{"k": secret}], "n": 3}
    assert json.loads(dumps(record)) == {"reply": "echo *** end", "nested": [{"k": "***"}], "n": 3}


def test_dumps_is_the_walk_when_nothing_needs_redacting() -> None:
    secrets.register_secret("registered-key-1")
    clean = {"text": "a task-free reply, nothing secret", "score": 1.0, "ids": (1, 2), 3: None}
    assert dumps(clean) == json.dumps(secrets.redact_data(clean), ensure_ascii=False)
    # token shapes nobody registered, after characters JSON escapes (a newline before sk-)
    shaped = {"reply": "x\nsk-abcdefghijklmnop y", "auth": "Bearer\tabcdefghijk"}
    assert json.loads(dumps(shaped)) == {"reply": "x\nsk-*** y", "auth": "Bearer\t***"}
