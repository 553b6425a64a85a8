"""A task's official dated judge that its provider no longer serves (issue 37): the run stops
before any model time with one line naming the official judge, where the task cites it, and how
to choose another with --judge. A judge chosen with --judge keeps the backend's own 404 line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmtasks.cli import main
from tests.chat_server import ChatServer

#: the repository root, wherever under tests/ this file sits
REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
SAMPLE = REPO / "data" / "sample"


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("mmtasks: judge:")]
    assert len(lines) == 1 and lines[0].startswith("mmtasks: error: "), err
    return lines[0]


def test_a_retired_official_judge_is_one_line_naming_it_where_it_is_cited_and_how_to_choose(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: "judge openai:gpt-4o-2024-05-13 (the default judge of task 'mmdu'): ...: not found
    (HTTP 404: ...)", saying neither where the judge was cited nor that it is the official one."""
    with ChatServer(models=("gpt-4o",), strict_models=True) as server:  # the dated snapshot is gone
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
        code = main(["--tasks", "mmdu", "--model", "random", "--data-dir", str(SAMPLE), "--no-cache", "--no-progress"])
        err = capsys.readouterr().err
        chat_calls = server.calls
    line = error_line(err)
    assert code == 2
    yaml = REPO / "tasks" / "mmdu" / "mmdu.yaml"
    cited = next(k for k, text in enumerate(yaml.read_text(encoding="utf-8").splitlines(), 1) if "default_model:" in text)
    assert f"{yaml}:{cited}" in line and "field 'judge.default_model'" in line, line
    assert "task 'mmdu''s official judge openai:gpt-4o-2024-05-13 is no longer served (HTTP 404: " in line, line
    assert "gpt-4o-2024-05-13` does not exist" in line  # the provider's own words
    assert "choose another judge with --judge SPEC" in line and "--predict-only" in line
    assert "sk-test" not in err
    # the judge was checked before any model time: only the readiness ping reached the server
    assert chat_calls == 1


def test_a_judge_chosen_with_judge_keeps_the_backends_404_line(capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with ChatServer(models=("gpt-4o",), strict_models=True) as server:
        monkeypatch.setenv("MMTASKS_TEST_KEY", "sk-test-not-a-real-key-000")
        code = main(["--tasks", "mmdu", "--model", "random", "--data-dir", str(SAMPLE), "--no-cache", "--no-progress",
                     "--judge", "openai:gpt-9", "--judge-args", f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY"])
        err = capsys.readouterr().err
    line = error_line(err)
    assert code == 2 and "judge openai:gpt-9: " in line and "not found (HTTP 404" in line and "official" not in line, line


@pytest.mark.parametrize("backend", ["anthropic", "gemini"])
def test_a_native_judge_that_is_not_served_stops_before_any_model_time(backend: str, capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip({"anthropic": "anthropic", "gemini": "google.genai"}[backend])
    from tests.provider_servers import AnthropicServer, GeminiServer

    server_cls = AnthropicServer if backend == "anthropic" else GeminiServer
    monkeypatch.setenv("MMTASKS_TEST_KEY", "sk-test-not-a-real-key-000")
    with server_cls(models=("served",), strict_models=True) as server:
        code = main(["--tasks", "mmdu", "--model", "random", "--data-dir", str(SAMPLE), "--no-cache", "--no-progress",
                     "--judge", f"{backend}:retired-2024", "--judge-args",
                     f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY"])
        err = capsys.readouterr().err
        calls = server.calls
    line = error_line(err)
    assert code == 2 and f"judge {backend}:retired-2024: " in line and "not found (HTTP 404" in line, line
    assert calls == 0  # the model description was asked, no generation


def test_an_official_judge_retired_mid_run_is_the_same_one_line(capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The provider answers the readiness ping, then 404s every judge call (a snapshot retired while
    the run was going): the run stops with the same one line naming the official judge, where it
    is cited and how to choose another, not the backend's bare 404."""
    seen: list[int] = []

    def after_the_ping(body: dict) -> bool:
        seen.append(1)
        return len(seen) > 1

    with ChatServer(models=("gpt-4o-2024-05-13",), strict_models=True) as server:
        server.inject(404, times=10_000, match=after_the_ping, code="model_not_found",
                      message="The model `gpt-4o-2024-05-13` has been deprecated")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
        code = main(["--tasks", "mmdu", "--model", "random", "--data-dir", str(SAMPLE), "--no-progress",
                     "--cache-dir", str(tmp_path / "cache"), "--output-path", str(tmp_path / "out")])
        err = capsys.readouterr().err
        calls = server.calls
    assert calls >= 2  # the ping passed: the 404 came mid-run
    line = error_line(err)
    assert code == 2, err
    assert "task 'mmdu''s official judge openai:gpt-4o-2024-05-13 is no longer served (HTTP 404: " in line, line
    assert "has been deprecated" in line and "choose another judge with --judge SPEC" in line, line
    assert "sk-test" not in err


def test_a_chosen_judge_retired_mid_run_names_the_judge_not_the_model(capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: "field '--model': openai:gpt-9 at ...: not found" although --model was `random`."""
    seen: list[int] = []

    def after_the_ping(body: dict) -> bool:
        seen.append(1)
        return len(seen) > 1

    with ChatServer(models=("gpt-9",), strict_models=True) as server:
        server.inject(404, times=10_000, match=after_the_ping, code="model_not_found", message="gone")
        monkeypatch.setenv("MMTASKS_TEST_KEY", "sk-test-not-a-real-key-000")
        code = main(["--tasks", "mmdu", "--model", "random", "--data-dir", str(SAMPLE), "--no-cache", "--no-progress",
                     "--judge", "openai:gpt-9", "--judge-args", f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY"])
        err = capsys.readouterr().err
    line = error_line(err)
    assert code == 2 and "field '--judge'" in line and "judge openai:gpt-9: " in line and "not found (HTTP 404: gone)" in line, line
    assert "official" not in line and "--model" not in line, line
