"""Secret redaction, and the retry timing helpers used by API backends."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from email.utils import formatdate

import pytest

from mmtasks import secrets
from mmtasks.models.retry import MAX_RETRY_DELAY, is_retryable_status, retry_after_seconds, retry_delay


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    secrets._clear_for_tests()
    yield
    secrets._clear_for_tests()


def test_registered_secrets_are_redacted() -> None:
    assert secrets.redact("key sk-abcdef") == "key sk-abcdef"
    secrets.register_secret("sk-abc")
    secrets.register_secret("sk-abcdef")  # contains the first: hidden whole
    secrets.register_secret("abc")  # too short to be a secret
    assert secrets.redact("got sk-abcdef and sk-abc, abc") == "got *** and ***, abc"


def test_env_secrets_by_name() -> None:
    secrets.register_env_secrets({"OPENAI_API_KEY": "sk-live-12345678", "HF_TOKEN": "hf_abcdefgh", "MY_PASSWORD": "hunter2hunter2",
                                  "TOKENIZERS_PARALLELISM": "falsefalse", "HOME": "/root/home/dir", "SHORT_KEY": "abc"})
    text = "sk-live-12345678 hf_abcdefgh hunter2hunter2 falsefalse /root/home/dir abc"
    assert secrets.redact(text) == "*** *** *** falsefalse /root/home/dir abc"


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


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "Retry-After": "1"}) == 0.25
    assert retry_after_seconds({"retry-after": formatdate(1000.0 + 20, usegmt=True)}, now=1000.0) == 20.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_retry_delay_full_jitter_and_floor() -> None:
    rng = random.Random(1)
    delays = [retry_delay(3, 1.0, rng=rng) for _ in range(200)]
    assert 0 <= min(delays) < 1.0 and 7.0 < max(delays) <= 8.0  # uniform over [0, 1 * 2**3]
    assert retry_delay(0, 0.01, retry_after=2.0, rng=rng) == 2.0
    assert retry_delay(30, 1.0, rng=rng) <= MAX_RETRY_DELAY and retry_delay(0, 1.0, retry_after=1e6) == MAX_RETRY_DELAY
    assert [is_retryable_status(s) for s in (400, 401, 404, 408, 429, 500, 503)] == [False, False, False, True, True, True, True]
