"""``mmtasks check --estimate`` (issue 37): the providers' published image-token formulas by hand
(the figures their pages give), the estimate within 5% of the ``usage`` loopback servers report
when they count the wire's text and images by those rules, and on hf (a tiny LLaVA) equal to the
prompt tokens the run then counts."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mmtasks.cli import main
from mmtasks.estimate import (
    anthropic_image_tokens,
    gemini_image_tokens,
    openai_encoding_name,
    openai_image_tokens,
    openai_text_counter,
    text_tokens,
)

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
SAMPLE = REPO / "data" / "sample"
KEY = "sk-loopback-test-key-0123456789"


def test_openai_tile_formula_by_the_pages_examples() -> None:
    # platform.openai.com/docs/guides/images-vision, "Calculating costs"
    assert openai_image_tokens(1024, 1024, "high") == 85 + 170 * 4  # 765: scaled to 768x768, 4 tiles
    assert openai_image_tokens(2048, 4096, "high") == 85 + 170 * 6  # 1105: 1024x2048 -> 768x1536, 6 tiles
    assert openai_image_tokens(4096, 8192, "low") == 85
    assert openai_image_tokens(512, 512, None) == 255  # no detail: as high; one tile, never scaled up
    assert openai_image_tokens(513, 100, "auto") == 85 + 170 * 2


def test_anthropic_pixels_over_750_by_the_pages_table() -> None:
    # docs.claude.com, Vision, "Calculate image costs": 200x200 ~54, 1000x1000 ~1334, 1092x1092 ~1590
    assert anthropic_image_tokens(200, 200) == 54
    assert anthropic_image_tokens(1000, 1000) == 1334
    assert anthropic_image_tokens(1092, 1092) == 1590
    # a long edge over 1568 px is scaled down first: 3136x100 -> 1568x50 = 78400 px / 750 -> 105
    assert anthropic_image_tokens(3136, 100) == 105
    # over ~1,600 tokens: scaled to 1,600 tokens of pixels (1,200,000 px)
    assert anthropic_image_tokens(1500, 1500) == 1599  # 1095x1095 after the scale (sides floored)


def test_gemini_258_per_tile() -> None:
    assert gemini_image_tokens(384, 384) == 258
    assert gemini_image_tokens(100, 20) == 258
    assert gemini_image_tokens(1000, 800) == 258 * 2 * 2
    assert gemini_image_tokens(385, 100) == 258


def test_text_is_characters_over_four_rounded_up() -> None:
    assert [text_tokens(t) for t in ("", "abcd", "abcde", "x" * 400)] == [0, 1, 2, 100]


def _tiktoken_encoding(name: str) -> Any:
    """tiktoken's own ``Encoding`` for ``name`` (its pattern and special tokens from
    tiktoken_ext.openai_public), its ranks read from bpe-openai's bundled file instead of the
    download; the file's SHA-256 is the one tiktoken expects (load_tiktoken_bpe checks it)."""
    tiktoken = pytest.importorskip("tiktoken")
    pytest.importorskip("bpe_openai")
    import gzip
    import importlib.resources
    import tempfile

    import tiktoken.load
    from tiktoken_ext import openai_public

    data = importlib.resources.files("bpe_openai.data").joinpath(f"{name}.tiktoken.gz").read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp) / f"{name}.tiktoken"
        local.write_bytes(gzip.decompress(data))
        original = tiktoken.load.load_tiktoken_bpe

        def from_local(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
            assert blobpath.endswith(f"/{name}.tiktoken") and expected_hash
            return original(str(local), expected_hash=expected_hash)  # raises on another hash

        openai_public.load_tiktoken_bpe = from_local
        try:
            constructor = getattr(openai_public, name)()
        finally:
            openai_public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**constructor)


#: text a tokenizer port gets wrong first: CJK, emoji, digits, whitespace runs, contractions, a special token
TRICKY = ["Hello, world!", "图中有几个圆？请回答 A、B 或 C。", "🙂👍🏽 mixed ümlauts and ß", "1234567 3.14159 1e-9",
          "  two  spaces\n\n\ttab\r\nCRLF", "I'll they're you've WE'D", "<|endoftext|> is text here",
          "Answer with the option's letter from the given choices directly.\n(A) 12\n(B) 15"]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_the_bundled_tokenizer_is_tiktokens_own(name: str) -> None:
    """bpe-openai's files are tiktoken's (the SHA-256 tiktoken expects) and its encoding gives
    tiktoken's tokens, on text a port gets wrong first."""
    reference = _tiktoken_encoding(name)
    import bpe_openai

    ours = bpe_openai.get_encoding(name)
    for text in TRICKY:
        assert ours.encode_ordinary(text) == reference.encode_ordinary(text), text


def test_openai_text_by_its_tokenizer_by_hand() -> None:
    pytest.importorskip("bpe_openai")
    count = openai_text_counter("gpt-4o")
    assert count is not None
    # o200k_base: "Hello" "," " world" "!" (13225, 11, 2375, 0)
    assert count("Hello, world!") == 4
    assert count("") == 0
    # a special token's string in the data is text (the API does not read it as the token)
    assert count("<|endoftext|>") > 1


def test_the_encoding_of_each_model_is_tiktokens() -> None:
    tiktoken_model = pytest.importorskip("tiktoken.model")
    for model in ["gpt-4o", "gpt-4o-2024-05-13", "gpt-4o-mini", "gpt-4.1-mini", "gpt-4.5-preview", "gpt-5", "gpt-5-mini",
                  "o1", "o3-mini", "o4-mini", "gpt-4", "gpt-4-turbo", "gpt-4-0613", "gpt-3.5-turbo", "gpt-3.5-turbo-0125"]:
        assert openai_encoding_name(model) == tiktoken_model.encoding_name_for_model(model), model


def _image_size(data: bytes) -> tuple[int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        return img.size


def _published_servers() -> dict[str, Any]:
    """Loopback servers of each wire format whose usage counts the body by the published rules:
    OpenAI's text by tiktoken itself (o200k_base; the cookbook's 3 per message, the role, 3
    priming), Anthropic's and Gemini's as characters / 4 (per part, rounded up: neither publishes
    its tokenizer), images by the provider's formula on the size of the bytes on the wire."""
    from tests.chat_server import ChatServer
    from tests.provider_servers import AnthropicServer, GeminiServer

    encoding = _tiktoken_encoding("o200k_base")

    def tokens(text: str) -> int:
        return len(encoding.encode_ordinary(text))

    class OpenAIPublished(ChatServer):
        def answer(self, body: dict, reply: Any, index: int, path: str) -> dict:
            out = super().answer(body, reply, index, path)
            count = 3  # the cookbook's num_tokens_from_messages: 3 priming the reply
            for message in body["messages"]:
                count += 3 + tokens(message["role"])  # 3 per message, and its role's tokens
                content = message.get("content")
                for part in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
                    if part.get("type") == "text":
                        count += tokens(part["text"])
                    elif part.get("type") == "image_url":
                        url = part["image_url"]["url"]
                        size = _image_size(base64.b64decode(url.split(",", 1)[1]))
                        count += openai_image_tokens(*size, part["image_url"].get("detail"))
            out["usage"]["prompt_tokens"] = count
            return out

    class AnthropicPublished(AnthropicServer):
        def prompt_tokens(self, body: dict) -> int:
            system = body.get("system")
            count = text_tokens(system) if isinstance(system, str) else sum(text_tokens(b["text"]) for b in system or [])
            for message in body["messages"]:
                content = message["content"]
                for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
                    if block["type"] == "text":
                        count += text_tokens(block["text"])
                    elif block["type"] == "image":
                        count += anthropic_image_tokens(*_image_size(base64.b64decode(block["source"]["data"])))
            return count

    class GeminiPublished(GeminiServer):
        def prompt_tokens(self, body: dict) -> int:
            contents = [*(body.get("contents") or []), *([body["systemInstruction"]] if "systemInstruction" in body else [])]
            count = 0
            for content in contents:
                for part in content.get("parts") or []:
                    if isinstance(part.get("text"), str):
                        count += text_tokens(part["text"])
                    elif "inlineData" in part:
                        from google.genai import types  # the SDK's own type reads the wire's base64

                        data = types.Part.model_validate_json(json.dumps(part)).inline_data.data
                        count += gemini_image_tokens(*_image_size(data))
            return count

    return {"openai": OpenAIPublished, "anthropic": AnthropicPublished, "gemini": GeminiPublished}


def _estimated(capsys: pytest.CaptureFixture[str], spec: str, task: str, *more: str) -> int:
    assert main(["check", "--tasks", task, "--data-dir", str(SAMPLE), "--estimate", "--model", spec, *more]) == 0
    out = capsys.readouterr().out
    found = re.search(rf"^  {task}: (\d+) requests, ([\d,]+) input tokens", out, re.M)
    assert found, out
    return int(found.group(2).replace(",", ""))


@pytest.mark.parametrize("backend", ["openai", "anthropic", "gemini"])
def test_the_estimate_is_within_5_percent_of_the_usage_counted_by_the_published_rules(
        backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    if backend == "anthropic":
        pytest.importorskip("anthropic")
    if backend == "gemini":
        pytest.importorskip("google.genai")
    monkeypatch.setenv("MMTASKS_TEST_KEY", KEY)
    name = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash"}[backend]
    estimated = _estimated(capsys, f"{backend}:{name}", "muirbench")
    with _published_servers()[backend](api_key=KEY, models=(name,)) as server:
        server.reply = lambda body: "B"
        out = tmp_path / "out"
        code = main(["--tasks", "muirbench", "--data-dir", str(SAMPLE), "--no-cache", "--no-progress",
                     "--output-path", str(out), "--model", f"{backend}:{name}",
                     "--model-args", f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY,max_retries=0"])
        assert code == 0, capsys.readouterr().err
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    counted = results["tokens"]["muirbench"]["model"]["prompt"]
    assert counted > 0 and abs(estimated - counted) <= 0.05 * counted, (estimated, counted)
    if backend == "openai":  # the same tokenizer and the cookbook's rule on both sides: exact
        assert estimated == counted, (estimated, counted)


def test_hf_estimate_equals_the_prompt_tokens_the_run_counts(
        tiny_llava_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = f"hf:{tiny_llava_dir}"
    estimated = _estimated(capsys, spec, "muirbench", "--limit", "3")
    out = tmp_path / "out"
    code = main(["--tasks", "muirbench", "--data-dir", str(SAMPLE), "--no-cache", "--no-progress", "--limit", "3",
                 "--output-path", str(out), "--model", spec, "--gen-kwargs", "max_new_tokens=2", "--allow-failures"])
    assert code == 0, capsys.readouterr().err
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    tokens = results["tokens"]["muirbench"]["model"]
    assert tokens["replies"] == 3 and tokens["prompt"] == estimated
    # a local model has no price: its cost is null, with a note
    assert results["cost"]["total"] is None and "runs on its own hardware" in results["cost"]["notes"][0]
