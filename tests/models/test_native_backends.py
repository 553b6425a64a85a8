"""The ``anthropic`` and ``gemini`` backends against loopback servers speaking each provider's
wire format (tests/provider_servers.py), through the real SDKs (issue 37).

Every body the servers received was validated against the SDK's own request types (a body they
refuse is a 400, which would fail the run); results.json's ``generation`` record equals the
settings of every body; replies' thinking, stop reasons and token counts are recorded."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic")
pytest.importorskip("google.genai")

from mmtasks.cli import main
from mmtasks.core.conversation import Image, Message, Text
from mmtasks.core.request import GenerationConfig, Request
from mmtasks.errors import ModelError
from mmtasks.models.base import ModelSpec, load_model
from tests.mmdu_data import judge_reply, scores
from tests.provider_servers import IMAGE_TOKENS, AnthropicServer, GeminiServer

#: the repository root, wherever under tests/ this file sits
REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
SAMPLE = REPO / "data" / "sample"
KEY = "sk-loopback-test-key-0123456789"
PROVIDERS = {
    "anthropic": (AnthropicServer, "claude-model", "claude-judge", {"end": "end_turn", "limit": "max_tokens"}),
    "gemini": (GeminiServer, "gemini-model", "gemini-judge", {"end": "STOP", "limit": "MAX_TOKENS"}),
}


@pytest.fixture(params=sorted(PROVIDERS))
def provider(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Any]]:
    monkeypatch.setenv("MMTASKS_TEST_KEY", KEY)
    server_cls, model, judge, _ = PROVIDERS[request.param]
    with server_cls(api_key=KEY, models=(model, judge), strict_models=True) as server:
        yield request.param, server


def args_for(server: Any, **more: Any) -> str:
    return ",".join([f"base_url={server.base_url}", "api_key_env=MMTASKS_TEST_KEY", "max_retries=2",
                     *(f"{k}={v}" for k, v in more.items())])


def model_name(backend: str, body: dict, server: Any, path: str) -> str:
    return body.get("model") or server.model_of(body, path)


def settings_of(backend: str, body: dict) -> dict[str, Any]:
    """A body's generation settings as the backend records them (Gemini's through the SDK's type)."""
    if backend == "anthropic":
        return {k: v for k, v in body.items() if k not in ("model", "messages", "system")}
    from google.genai import types

    return types.GenerationConfig.model_validate_json(json.dumps(body["generationConfig"])).model_dump(
        mode="json", exclude_none=True, by_alias=True)


def images_of(backend: str, body: dict) -> list[bytes]:
    if backend == "anthropic":
        return [base64.b64decode(b["source"]["data"]) for m in body["messages"] for b in m["content"] if b["type"] == "image"]
    from google.genai import types

    # the SDK's own type reads the wire's base64 (its JSON bytes encoding)
    return [types.Part.model_validate_json(json.dumps(p)).inline_data.data for c in body["contents"] for p in c["parts"]
            if "inlineData" in p]


def test_muirbench_and_mmdu_end_to_end_model_and_judge(provider: tuple[str, Any], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    backend, server = provider
    _, model, judge, words = PROVIDERS[backend]
    calls: list[tuple[str, str]] = []

    def reply(body: dict) -> Any:
        path = server.log[-1].path
        name = model_name(backend, body, server, path)
        calls.append((name, path))
        if name == judge:
            return judge_reply(scores(7, 7, 7, 7, 7, 7, 8))
        if "Choices:" in server.prompt_of(body):  # MUIRBench's prompt (create_prompt's "Choices:")
            return {"content": "B", "thinking": "two circles and one more", "stop_reason": words["end"], "cached": 2}
        return {"content": "model answer", "thinking": "think first", "stop_reason": words["end"]}

    server.reply = reply
    out = tmp_path / "out"
    code = main(["--tasks", "muirbench,mmdu", "--data-dir", str(SAMPLE), "--no-cache", "--no-progress",
                 "--output-path", str(out), "--model", f"{backend}:{model}", "--model-args", args_for(server),
                 "--judge", f"{backend}:{judge}", "--judge-args", args_for(server),
                 "--gen-kwargs", "max_new_tokens=4096,thinking_budget=2048"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert KEY not in err
    assert all(c.status == 200 for c in server.log), [(c.status, c.path) for c in server.log if c.status != 200]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert set(results["results"]) >= {"muirbench", "mmdu"}
    assert results["results"]["mmdu"]["overall"] == pytest.approx(80.0)
    assert results["run_card"]["model"] == {"source": "api", "name": model}  # an API model is named, not pinned
    # the record equals what was sent: every model body's settings, every judge body's
    bodies = [(c.body, model_name(backend, c.body, server, c.path)) for c in server.log if server.is_chat("POST", c.path)]
    muir_model = [b for b, name in bodies if name == model and "Choices:" in json.dumps(b)]
    judged = [b for b, name in bodies if name == judge]
    assert muir_model and judged
    assert all(settings_of(backend, b) == results["generation"]["muirbench"]["model"] for b in muir_model)
    assert all(settings_of(backend, b) == results["generation"]["mmdu"]["judge"] for b in judged)
    sent = results["generation"]["muirbench"]["model"]
    if backend == "anthropic":
        assert sent == {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048}}
    else:
        assert sent["maxOutputTokens"] == 4096 and sent["temperature"] == 0.0
        assert sent["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 2048}
    # several images per message, in order: MUIRBench's first document's two images, as on disk
    files = [(SAMPLE / "muirbench" / "images" / "muir_sample_1" / f"{k}.jpg").read_bytes() for k in (1, 2)]
    assert any(images_of(backend, b) == files for b in muir_model), "MUIRBench's images not sent in order"
    # thinking, stop reasons and tokens, recorded per reply
    samples = [json.loads(line) for line in (out / "samples" / "muirbench.jsonl").read_text(encoding="utf-8").splitlines()]
    assert samples and all(s["reasoning"] == ["two circles and one more"] for s in samples)
    assert all(s["finish_reasons"] == ["stop"] for s in samples)
    for s in samples:
        tokens = s["tokens"][0]
        assert tokens["completion"] == 1 + 5  # "B" and the five words of thinking
        assert tokens["cached"] == 2 and tokens["prompt"] > IMAGE_TOKENS
        if backend == "gemini":
            assert tokens["reasoning"] == 5
    assert results["replies"]["muirbench"]["finish_reasons"] == {"stop": len(samples)}
    # results.json's totals per task and component: the sum of what each reply reported
    totals = results["replies"]["muirbench"]["tokens"]["model"]
    assert totals["replies"] == len(samples)
    assert totals["prompt"] == sum(s["tokens"][0]["prompt"] for s in samples)
    assert totals["completion"] == 6 * len(samples) and totals["cached"] == 2 * len(samples)
    judge_totals = results["replies"]["mmdu"]["tokens"]["judge"]
    verdict_words = len(judge_reply(scores(7, 7, 7, 7, 7, 7, 8)).split())
    assert judge_totals["replies"] == len(judged) and judge_totals["completion"] == verdict_words * len(judged)
    assert judge_totals["prompt"] == sum(server.prompt_tokens(b) for b in judged)


def one_request(*parts: Any, generation: GenerationConfig | None = None) -> Request:
    return Request(messages=(Message("system", (Text("Be brief."),)), Message("user", tuple(parts))),
                   generation=generation or GenerationConfig(max_new_tokens=64))


def test_tokens_stop_reasons_and_truncation_by_hand(provider: tuple[str, Any], tmp_path: Path) -> None:
    backend, server = provider
    _, model, _, words = PROVIDERS[backend]
    image = tmp_path / "red.png"
    from PIL import Image as PILImage

    PILImage.new("RGB", (8, 8), (255, 0, 0)).save(image)
    server.reply = lambda body: {"content": "the answer is red", "thinking": "it looks red", "stop_reason": words["end"]}
    m = load_model(ModelSpec(backend=backend, name=model, args={"base_url": server.base_url, "api_key_env": "MMTASKS_TEST_KEY"}))
    try:
        request = one_request(Text("what colour is "), Image(path=image), Text(" this picture?"))
        [(_, reply)] = list(m.generate([request]))
        # prompt: "Be brief." (2) + "what colour is  this picture?" (5) + one image (10)
        assert (reply.prompt_tokens, reply.completion_tokens) == (2 + 5 + IMAGE_TOKENS, 4 + 3)
        assert (reply.text, reply.reasoning, reply.finish_reason) == ("the answer is red", "it looks red", "stop")
        assert reply.reasoning_tokens == (3 if backend == "gemini" else None)
        # the token limit: a reply with no answer is truncated, as on the other backends
        server.reply = lambda body: {"content": None, "thinking": "still thinking", "stop_reason": words["limit"]}
        [(_, cut)] = list(m.generate([one_request(Text("again"))]))
        finished = m.finish_reply(one_request(Text("again")), cut)
        assert cut.finish_reason == "length" and not finished.ok and finished.error.startswith("truncated:")
    finally:
        m.close()


def test_429_is_retried_honouring_retry_after_and_a_failure_says_how_many_attempts(provider: tuple[str, Any]) -> None:
    backend, server = provider
    _, model, _, _ = PROVIDERS[backend]
    server.inject(429, times=2, match="alpha", retry_after=0.01)
    server.inject(503, times=10, match="gamma", retry_after=0.01)
    m = load_model(ModelSpec(backend=backend, name=model, args={"base_url": server.base_url, "api_key_env": "MMTASKS_TEST_KEY",
                                                                  "max_retries": 2}))
    try:
        replies = dict(m.generate([one_request(Text("alpha")), one_request(Text("gamma"))]))
    finally:
        m.close()
    assert replies[0].text == "reply to: alpha"
    assert [c.status for c in server.calls_for("alpha")] == [429, 429, 200]
    assert [c.status for c in server.calls_for("gamma")] == [503, 503, 503]
    assert replies[1].error.startswith("failed after 3 attempts: HTTP 503")


def test_gemini_waits_what_the_answer_asks_for() -> None:
    from google.genai import errors

    from mmtasks.models.gemini_api import MAX_RETRY_WAIT, retry_wait

    class Answer:
        def __init__(self, headers: dict[str, str]) -> None:
            self.headers = headers

    def error(headers: dict[str, str], details: list[dict[str, Any]] | None = None) -> errors.APIError:
        body = {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED", "details": details or []}}
        return errors.APIError(429, body, Answer(headers))  # type: ignore[arg-type]

    assert retry_wait(error({"retry-after-ms": "250", "retry-after": "1"}), 0) == 0.25
    assert retry_wait(error({"retry-after": "7"}), 0) == 7.0
    assert retry_wait(error({}, [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}]), 0) == 30.0
    assert retry_wait(error({"retry-after": "3600"}), 0) == MAX_RETRY_WAIT
    assert [retry_wait(error({}), k) for k in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


def test_the_providers_default_key_goes_only_to_its_own_hosts(provider: tuple[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    backend, server = provider
    _, model, _, _ = PROVIDERS[backend]
    env = {"anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}[backend]
    monkeypatch.setenv(env, KEY)
    m = load_model(ModelSpec(backend=backend, name=model, args={"base_url": server.base_url}))
    try:
        with pytest.raises(ModelError) as caught:
            list(m.generate([one_request(Text("hello"))]))
    finally:
        m.close()
    message = caught.value.render()
    assert "asks for a key, and none was sent" in message and f"api_key_env={env}" in message
    assert KEY not in message
    assert all(KEY not in json.dumps(c.headers) for c in server.log)  # never sent to a loopback host
    # named, it is sent there
    monkeypatch.setenv("MMTASKS_TEST_KEY", KEY)
    m = load_model(ModelSpec(backend=backend, name=model, args={"base_url": server.base_url, "api_key_env": env}))
    try:
        [(_, reply)] = list(m.generate([one_request(Text("hello"))]))
    finally:
        m.close()
    assert reply.text == "reply to: hello"


@pytest.mark.parametrize(("backend", "gen_kwargs", "refused"), [
    ("anthropic", "temperature=0.7", "temperature/top_p (sampling)"),
    ("anthropic", "presence_penalty=1.5", "presence_penalty"),
    ("anthropic", "seed=3", "seed"),
    ("anthropic", "thinking_budget=4096", "thinking_budget=4096 with max_new_tokens="),
    ("gemini", "logit_bias={\"5\": 1}", "logit_bias"),
    ("anthropic", "n=2", "n"),  # the Messages API has no n; gemini's candidate_count: tests/runner/test_n_replies.py
    ("gemini", "reasoning_effort=extreme", "reasoning_effort=extreme (Gemini's thinking_level is one of minimal, low"),
])
def test_settings_an_api_does_not_take_are_refused_naming_the_backend(
        backend: str, gen_kwargs: str, refused: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--tasks", "muirbench", "--data-dir", str(SAMPLE), "--no-cache", "--no-progress", "--model",
                 f"{backend}:some-model", "--model-args", "base_url=http://127.0.0.1:9", "--gen-kwargs", gen_kwargs])
    err = capsys.readouterr().err
    assert code == 2 and f"the {backend} backend cannot take {refused}" in err, err


def test_gemini_takes_the_penalties_and_seed_and_the_record_is_the_body(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_TEST_KEY", KEY)
    with GeminiServer(api_key=KEY) as server:
        m = load_model(ModelSpec(backend="gemini", name="gemini-test", args={"base_url": server.base_url, "api_key_env": "MMTASKS_TEST_KEY"}))
        generation = GenerationConfig(max_new_tokens=32, temperature=0.7, top_p=0.8, top_k=20, seed=3407, presence_penalty=1.5,
                                      frequency_penalty=0.2, stop=("###",), reasoning_effort="low")
        try:
            [(_, reply)] = list(m.generate([one_request(Text("hi"), generation=generation)]))
            recorded = m.sent_settings(generation)
        finally:
            m.close()
        [body] = server.bodies
    assert reply.ok
    assert settings_of("gemini", body) == recorded
    assert recorded == {"temperature": 0.7, "topP": 0.8, "topK": 20.0, "maxOutputTokens": 32, "stopSequences": ["###"],
                        "presencePenalty": 1.5, "frequencyPenalty": 0.2, "seed": 3407,
                        "thinkingConfig": {"includeThoughts": True, "thinkingLevel": "LOW"}}
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}], "role": "user"}


def test_gemini_sends_a_video_inline_with_the_sampled_frame_rate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("av")
    import mmtasks
    from tests.documents.test_video_input import make_task

    make_task(tmp_path, "vidgemini", "{field: video, fps: 1, max_frames: 4}", user="{{ video(0) }}Which colour?",
              records=[{"id": "mp4", "video": "clip.mp4", "answer": "x"}])
    monkeypatch.setenv("MMTASKS_TEST_KEY", KEY)
    with GeminiServer(api_key=KEY) as server:
        mmtasks.evaluate(tasks="vidgemini", model="gemini:gemini-test", include_path=str(tmp_path / "tasks"),
                         data_dir=tmp_path / "data", output_path=tmp_path / "run", use_cache=False,
                         model_args={"base_url": server.base_url, "api_key_env": "MMTASKS_TEST_KEY", "video": "inline"})
        [body] = server.bodies
    from google.genai import types

    video, question = (types.Part.model_validate_json(json.dumps(p)) for p in body["contents"][-1]["parts"])
    # the file itself, as on disk, and the rate at which the task's sampler took 4 of its 10 frames over 5 s
    assert video.inline_data.mime_type == "video/mp4"
    assert video.inline_data.data == (tmp_path / "data" / "vids" / "clip.mp4").read_bytes()
    assert video.video_metadata.fps == pytest.approx(4 / 5.0)
    assert question.text == "Which colour?"


def test_gemini_uploads_a_video_over_the_inline_limit_once_and_waits_until_it_is_processed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("av")
    import mmtasks
    from tests.documents.test_video_input import make_task

    make_task(tmp_path, "vidbig", "{field: video, fps: 1, max_frames: 4}", user="{{ video(0) }}Which colour?",
              records=[{"id": "one", "video": "clip.mp4", "answer": "x"}, {"id": "two", "video": "clip.mp4", "answer": "x"}])
    clip = tmp_path / "data" / "vids" / "clip.mp4"
    monkeypatch.setenv("MMTASKS_TEST_KEY", KEY)
    monkeypatch.setattr("mmtasks.models.gemini_api.asyncio.sleep", _no_wait)
    with GeminiServer(api_key=KEY) as server:
        server.processing_checks = 2  # two checks say PROCESSING, the third ACTIVE
        mmtasks.evaluate(tasks="vidbig", model="gemini:gemini-test", include_path=str(tmp_path / "tasks"),
                         data_dir=tmp_path / "data", output_path=tmp_path / "run", use_cache=False,
                         model_args={"base_url": server.base_url, "api_key_env": "MMTASKS_TEST_KEY", "video": "inline",
                                     "inline_video_max_bytes": 1024})
        bodies, files, base = server.bodies, server.files, server.base_url
        checks = [c for c in server.log if c.method == "GET" and "/files/" in c.path]
    assert list(files) == ["f0"] and files["f0"]["data"] == clip.read_bytes()  # uploaded once, whole
    assert (files["f0"]["meta"].mime_type, files["f0"]["meta"].size_bytes) == ("video/mp4", clip.stat().st_size)
    assert len(checks) == 2  # asked until ACTIVE: PROCESSING, PROCESSING -> ACTIVE on the 2nd get
    from google.genai import types

    assert len(bodies) == 2
    for body in bodies:
        video = types.Part.model_validate_json(json.dumps(body["contents"][-1]["parts"][0]))
        assert video.file_data.file_uri == f"{base}/v1beta/files/f0" and video.file_data.mime_type == "video/mp4"
        assert video.video_metadata.fps == pytest.approx(4 / 5.0)
        assert video.inline_data is None


async def _no_wait(seconds: float) -> None:
    """asyncio.sleep for the upload's state checks: the test counts checks, it does not wait."""


def test_gemini_refuses_a_video_over_the_upload_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("av")
    import mmtasks
    from tests.documents.test_video_input import make_task

    make_task(tmp_path, "vidhuge", "{field: video, fps: 1, max_frames: 4}", user="{{ video(0) }}Which colour?",
              records=[{"id": "mp4", "video": "clip.mp4", "answer": "x"}])
    monkeypatch.setenv("MMTASKS_TEST_KEY", KEY)
    with GeminiServer(api_key=KEY) as server:
        result = mmtasks.evaluate(tasks="vidhuge", model="gemini:gemini-test", include_path=str(tmp_path / "tasks"),
                                  data_dir=tmp_path / "data", output_path=tmp_path / "run", use_cache=False,
                                  allow_failures=True,
                                  model_args={"base_url": server.base_url, "api_key_env": "MMTASKS_TEST_KEY",
                                              "video": "inline", "inline_video_max_bytes": 1024, "upload_max_bytes": 1024})
        assert server.calls == 0 and not server.files
    [sample] = result.samples["vidhuge"]
    assert "over upload_max_bytes=1024" in sample.failures[0] and "video=frames" in sample.failures[0]


def test_the_native_backends_serve_as_the_answer_matcher(provider: tuple[str, Any], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """BLINK's matcher (the authors' prompt) on Claude / Gemini reads what no rule reads, as on openai."""
    from tests.scoring.test_answer_matcher import _blink_data, honest_matcher

    backend, server = provider
    _, model, _, _ = PROVIDERS[backend]
    server.reply = lambda body: honest_matcher({"messages": [{"role": "user", "content": server.prompt_of(body)}]})
    data, replies = _blink_data(tmp_path)
    out = tmp_path / "out"
    code = main(["--tasks", "blink_counting", "--data-dir", str(data), "--model", f"replay:{replies}", "--no-cache",
                 "--output-path", str(out), "--no-progress", "--allow-failures",
                 "--matcher", f"{backend}:{model}", "--matcher-args", args_for(server)])
    assert code == 0
    samples = [json.loads(line) for line in (out / "samples" / "blink_counting.jsonl").read_text().splitlines()]
    assert [(s["parsed"], s["read_by"]) for s in samples] == [("C", "rule"), ("B", "matcher"), (None, None), ("A", "matcher")]
    # three calls in the authors' prompt for the task's rule, three more in VLMEvalKit's words for the
    # scoring variant vlmevalkit (its own matcher_prompt: the replies its can_infer reads nothing in)
    assert server.calls == 6
    prompts = [server.prompt_of(b) for b in server.bodies]
    assert len([p for p in prompts if "There are several options: \n" in p]) == 3
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert all(settings_of(backend, b) == results["generation"]["blink_counting"]["matcher"] for b in server.bodies)


def test_anthropic_sends_sampling_settings_where_its_sdk_takes_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """anthropic 2.x's MessageCreateParams has no temperature: nothing is sent for greedy and
    sampling is refused; an SDK that has them gets them (greedy as temperature 0)."""
    from mmtasks.models import anthropic_api

    sampled = GenerationConfig(max_new_tokens=8, temperature=0.7, top_p=0.9, top_k=5)
    spec = ModelSpec(backend="anthropic", name="claude-test", args={"base_url": "http://127.0.0.1:9"})
    if not anthropic_api.TAKES_SAMPLING:
        model = load_model(spec)
        assert model.sent_settings(GenerationConfig(max_new_tokens=8)) == {"max_tokens": 8}
        assert "temperature/top_p (sampling)" in anthropic_api.AnthropicModel.refused_settings(sampled)
        model.close()
    monkeypatch.setattr(anthropic_api, "TAKES_SAMPLING", True)
    model = load_model(spec)
    try:
        assert model.sent_settings(GenerationConfig(max_new_tokens=8)) == {"max_tokens": 8, "temperature": 0.0}
        assert model.sent_settings(sampled) == {"max_tokens": 8, "temperature": 0.7, "top_p": 0.9, "top_k": 5}
        assert anthropic_api.AnthropicModel.refused_settings(sampled) == []  # top_k: taken where sampling is
    finally:
        model.close()


def test_an_oversized_or_endless_answer_is_cut_by_the_guarded_transport(provider: tuple[str, Any]) -> None:
    backend, server = provider
    _, model, _, _ = PROVIDERS[backend]
    server.inject("huge", match="big")
    m = load_model(ModelSpec(backend=backend, name=model, args={"base_url": server.base_url, "api_key_env": "MMTASKS_TEST_KEY",
                                                                  "max_retries": 0, "max_response_bytes": 4096}))
    try:
        [(_, reply)] = list(m.generate([one_request(Text("big"))]))
    finally:
        m.close()
    assert reply.error == "failed after 1 attempt: the answer is larger than max_response_bytes=4096 (declared 1500000000 bytes)"


def test_the_native_backends_take_notes(provider: tuple[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--strategy notetaking with --notetaker on Claude / Gemini: MMRC's note requests go to it at
    the notes' own settings, recorded as sent, and the model (random) answers from the notes."""
    backend, server = provider
    _, model, _, _ = PROVIDERS[backend]
    server.reply = lambda body: '{"name": "Ann"}'
    out = tmp_path / "out"
    code = main(["--tasks", "mmrc_cr", "--model", "random", "--data-dir", str(SAMPLE), "--limit", "1",
                 "--strategy", "notetaking", "--notetaker", f"{backend}:{model}", "--notetaker-args", args_for(server),
                 "--predict-only", "--output-path", str(out), "--no-cache", "--no-progress", "--allow-failures"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert server.calls > 0 and all("taking notes" in json.dumps(b) for b in server.bodies)
    recorded = json.loads((out / "results.json").read_text(encoding="utf-8"))["generation"]["mmrc_cr"]["notetaker"]
    assert all(settings_of(backend, b) == recorded for b in server.bodies)


def test_the_cache_identity_names_the_endpoint_and_never_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_TEST_KEY", KEY)
    models = [load_model(ModelSpec(backend="anthropic", name="claude-x", args={"base_url": url, "api_key_env": "MMTASKS_TEST_KEY"}))
              for url in ("http://127.0.0.1:9", "http://127.0.0.1:10")]
    try:
        assert models[0].identity != models[1].identity
        assert all(KEY not in m.identity for m in models)
    finally:
        for m in models:
            m.close()


def test_replies_are_cached_with_their_reasoning_stop_reasons_and_tokens(provider: tuple[str, Any], tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    backend, server = provider
    _, model, _, words = PROVIDERS[backend]
    server.reply = lambda body: {"content": "B", "thinking": "one two", "stop_reason": words["end"]}

    def run(out: str) -> list[dict]:
        code = main(["--tasks", "muirbench", "--data-dir", str(SAMPLE), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                     "--output-path", str(tmp_path / out), "--model", f"{backend}:{model}", "--model-args", args_for(server)])
        assert code == 0, capsys.readouterr().err
        return [json.loads(line) for line in (tmp_path / out / "samples" / "muirbench.jsonl").read_text().splitlines()]

    first = run("a")
    calls = server.calls
    again = run("b")
    assert server.calls == calls  # every reply from the cache
    assert [(s["reasoning"], s["finish_reasons"], s["tokens"]) for s in again] == \
           [(s["reasoning"], s["finish_reasons"], s["tokens"]) for s in first]


def test_gemini_on_vertex_needs_no_key_and_names_its_regional_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    m = load_model(ModelSpec(backend="gemini", name="gemini-2.5-flash",
                             args={"vertexai": True, "project": "my-project", "location": "europe-west4"}))
    try:
        assert m.url == "https://europe-west4-aiplatform.googleapis.com" and m._api_key is None
    finally:
        m.close()
    with pytest.raises(ModelError, match="GEMINI_API_KEY is not set"):  # the Gemini API does need one
        load_model(ModelSpec(backend="gemini", name="gemini-2.5-flash"))


def test_the_sdks_own_environment_never_redirects_the_key(provider: tuple[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """ANTHROPIC_AUTH_TOKEN / ANTHROPIC_BASE_URL and GOOGLE_GENAI_USE_VERTEXAI / GOOGLE_API_KEY, read by
    the SDKs when a client is made without them, change neither where the request goes nor its key."""
    backend, server = provider
    _, model, _, _ = PROVIDERS[backend]
    for name, value in {"ANTHROPIC_AUTH_TOKEN": "env-token-0", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
                        "GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_API_KEY": "env-token-1",
                        "GOOGLE_CLOUD_PROJECT": "p"}.items():
        monkeypatch.setenv(name, value)
    m = load_model(ModelSpec(backend=backend, name=model, args={"base_url": server.base_url, "api_key_env": "MMTASKS_TEST_KEY"}))
    try:
        [(_, reply)] = list(m.generate([one_request(Text("hello"))]))
    finally:
        m.close()
    assert reply.text == "reply to: hello"
    assert all("env-token" not in json.dumps(c.headers) for c in server.log)
