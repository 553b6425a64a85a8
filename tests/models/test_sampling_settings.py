"""Every sampling setting passes, or is refused naming the backend (issue 37).

``presence_penalty``, ``frequency_penalty`` and ``logit_bias`` reach the wire on ``openai`` (the
loopback server's bodies), vLLM's ``SamplingParams`` keyword arguments and hf's ``generate`` (a
logits processor computing OpenAI's definition, checked on hand-computed logits); ``n`` is
refused by every backend, naming it. A preset's ``modes`` carry a model card's whole protocol."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from mmtasks.cli import main
from mmtasks.core.request import GenerationConfig
from tests.chat_server import ChatServer

SHAPE = (Path(__file__).resolve().parents[2] / "tests") / "shapes" / "system_prompt"
TASK = "shape_system_prompt"


def shape_args(*more: str) -> list[str]:
    return ["--tasks", TASK, "--include-path", str(SHAPE), "--data-dir", str(SHAPE / "data"),
            "--no-cache", "--no-progress", *more]


def openai(server: ChatServer) -> list[str]:
    return ["--model", "openai:test-model", "--model-args", f"base_url={server.base_url},api_key_env=MMTASKS_TEST_KEY"]


def settings_of(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in ("model", "messages")}


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_TEST_KEY", "sk-test-not-a-real-key")


def test_presence_and_frequency_penalties_and_logit_bias_reach_the_openai_wire_and_the_record(
        chat_server: ChatServer, capsys: pytest.CaptureFixture[str], tmp_path: Path, api_key: None) -> None:
    """Before: "unknown generation setting 'presence_penalty'"."""
    chat_server.reply = lambda body: "A"
    out = tmp_path / "out"
    code = main(shape_args(*openai(chat_server), "--output-path", str(out), "--gen-kwargs",
                           'presence_penalty=1.5,frequency_penalty=0.2,logit_bias={"42": -100, "7": 2.5}'))
    err = capsys.readouterr().err
    assert code == 0, err
    expected = {"max_tokens": 8, "temperature": 0.0, "presence_penalty": 1.5, "frequency_penalty": 0.2,
                "logit_bias": {"42": -100.0, "7": 2.5}}
    assert len(chat_server.bodies) == 6
    assert all(settings_of(b) == expected for b in chat_server.bodies)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["generation"][TASK] == {"model": expected}


def test_vllm_sampling_params_carry_the_penalties_and_biases() -> None:
    from mmtasks.models.vllm_inputs import sampling_kwargs

    gen = GenerationConfig(max_new_tokens=16, temperature=0.7, presence_penalty=1.5, frequency_penalty=0.2,
                           logit_bias={42: -100.0})
    assert sampling_kwargs(gen, {}) == {"n": 1, "max_tokens": 16, "temperature": 0.7, "top_p": 1.0,
                                        "presence_penalty": 1.5, "frequency_penalty": 0.2, "logit_bias": {42: -100.0}}
    # greedy too: the penalties change the argmax, so they apply in every mode (as on the server)
    assert sampling_kwargs(GenerationConfig(max_new_tokens=4, frequency_penalty=-0.5), {})["frequency_penalty"] == -0.5
    vllm = pytest.importorskip("vllm")
    params = vllm.SamplingParams(**sampling_kwargs(gen, {}))
    assert (params.presence_penalty, params.frequency_penalty, params.logit_bias) == (1.5, 0.2, {42: -100.0})


def test_the_hf_logits_processor_applies_openais_definition_on_hand_computed_logits() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from mmtasks.models.hf_logits import OpenAIPenalties

    # two rows, a 3-token prompt, then the reply so far: row 0 sampled token 1 twice and token 3
    # once; row 1 sampled token 0 once and token 1 once. Vocabulary of 5.
    input_ids = torch.tensor([[4, 4, 1, 1, 1, 3],
                              [2, 2, 2, 0, 1, 4]])
    scores = torch.zeros((2, 5))
    out = OpenAIPenalties(3, presence_penalty=1.5, frequency_penalty=0.2, logit_bias={2: -100.0})(input_ids, scores)
    # mu[j] - c[j] * 0.2 - (c[j] > 0) * 1.5 (the prompt's tokens 4 and 2 are not counted), + bias
    expected = torch.tensor([[0.0, -1.9, -100.0, -1.7, 0.0],
                             [-1.7, -1.7, -100.0, 0.0, -1.7]])
    assert torch.allclose(out, expected)
    assert torch.equal(scores, torch.zeros((2, 5)))  # the input is not changed in place
    # at the first step (nothing generated yet) only the bias applies
    first = OpenAIPenalties(6, presence_penalty=1.5, frequency_penalty=0.2, logit_bias={0: 3.0})(input_ids, torch.zeros((2, 5)))
    assert first.tolist() == [[3.0, 0, 0, 0, 0], [3.0, 0, 0, 0, 0]]


def test_hf_generate_gets_the_penalties_as_a_logits_processor_and_records_them(
        tiny_llava_dir: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: "the hf backend cannot take presence_penalty"."""
    pytest.importorskip("torch")
    import transformers

    from mmtasks.models.hf_logits import OpenAIPenalties

    checkpoint = tmp_path / "tiny-llava"
    shutil.copytree(tiny_llava_dir, checkpoint)
    processors: list[Any] = []
    generate = transformers.LlavaForConditionalGeneration.generate

    def spy_generate(self: Any, *args: Any, **kwargs: Any) -> Any:
        processors.append((kwargs["input_ids"].shape[1], list(kwargs.get("logits_processor") or [])))
        return generate(self, *args, **kwargs)

    monkeypatch.setattr(transformers.LlavaForConditionalGeneration, "generate", spy_generate)
    out = tmp_path / "out"
    code = main(shape_args("--model", f"hf:{checkpoint}", "--batch-size", "6", "--output-path", str(out),
                           "--model-args", "device=cpu", "--gen-kwargs", "presence_penalty=1.5,frequency_penalty=0.2",
                           "--allow-failures"))
    err = capsys.readouterr().err
    assert code == 0, err
    [(prompt_length, [processor])] = processors
    assert isinstance(processor, OpenAIPenalties)
    assert (processor.prompt_length, processor.presence, processor.frequency, processor.bias) == (prompt_length, 1.5, 0.2, {})
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["generation"][TASK]["model"] == {"max_new_tokens": 8, "do_sample": False, "temperature": None,
                                                    "top_p": None, "top_k": None, "presence_penalty": 1.5,
                                                    "frequency_penalty": 0.2, "seed": 0}
    samples = [json.loads(line) for line in (out / "samples" / f"{TASK}.jsonl").read_text(encoding="utf-8").splitlines()]
    # hf counts its own tokens: the prompt's (unpadded) and the reply's
    assert all(s["tokens"][0]["prompt"] > 0 and "completion" in s["tokens"][0] for s in samples)


@pytest.mark.parametrize("backend", ["hf", "vllm"])  # openai takes n: tests/runner/test_n_replies.py
def test_n_is_refused_naming_the_backend_before_it_loads(backend: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    if backend == "vllm":
        pytest.importorskip("vllm")
    code = main(shape_args("--model", f"{backend}:{tmp_path / 'nothing-here'}", "--gen-kwargs", "n=4"))
    err = capsys.readouterr().err
    assert code == 2
    assert f"the {backend} backend cannot take n" in err and "--repeats" in err, err


def test_a_logit_bias_out_of_range_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(shape_args("--model", "random", "--gen-kwargs", 'logit_bias={"5": 300}'))
    err = capsys.readouterr().err
    assert code == 2 and "logit_bias[5]" in err and "Traceback" not in err, err


# -- a model card's protocol as named modes ---------------------------------------------------


def test_the_qwen3_vl_presets_carry_the_cards_protocols_as_modes() -> None:
    from mmtasks.models.base import parse_model_spec

    spec = parse_model_spec("vllm:qwen3-vl-8b@instruct")
    assert spec.name == "Qwen/Qwen3-VL-8B-Instruct" and spec.preset == "qwen3-vl-8b@instruct"
    assert spec.generation == {"do_sample": True, "seed": 3407, "top_p": 0.8, "top_k": 20, "temperature": 0.7,
                               "repetition_penalty": 1.0, "presence_penalty": 1.5, "max_new_tokens": 32768}
    assert spec.args["max_model_len"] > 32768  # the mode's budget and a prompt fit
    assert parse_model_spec("qwen3-vl-8b@card-text").generation["presence_penalty"] == 2.0
    thinking = parse_model_spec("qwen3-vl-8b-thinking@thinking")
    assert thinking.name == "Qwen/Qwen3-VL-8B-Thinking"
    assert (thinking.generation["seed"], thinking.generation["max_new_tokens"]) == (1234, 40960)
    assert parse_model_spec("qwen3-vl-8b").generation == {}  # without a mode: each task's own decoding


def test_an_unknown_mode_names_the_presets_modes() -> None:
    from mmtasks.errors import ConfigError
    from mmtasks.models.base import parse_model_spec

    with pytest.raises(ConfigError) as caught:
        parse_model_spec("qwen3-vl-8b@thinking")
    assert "has no mode 'thinking'" in caught.value.render() and "qwen3-vl-8b@instruct" in caught.value.render()


def test_a_mode_runs_on_openai_and_its_settings_are_sent_and_marked(
        chat_server: ChatServer, capsys: pytest.CaptureFixture[str], tmp_path: Path, api_key: None) -> None:
    chat_server.reply = lambda body: "A"
    chat_server.models = ("Qwen/Qwen3-VL-8B-Instruct",)
    out = tmp_path / "out"
    code = main(shape_args("--model", "openai:qwen3-vl-8b@card-vl", "--model-args",
                           f"base_url={chat_server.base_url},api_key_env=MMTASKS_TEST_KEY", "--output-path", str(out)))
    err = capsys.readouterr().err
    assert code == 0, err
    assert all(settings_of(b) == {"max_tokens": 16384, "temperature": 0.7, "top_p": 0.8, "top_k": 20,
                                  "repetition_penalty": 1.0, "presence_penalty": 1.5} for b in chat_server.bodies)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["config"]["model_spec"]["preset"] == "qwen3-vl-8b@card-vl"


def test_mmtasks_models_lists_each_presets_modes_with_their_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "@instruct: the official evaluation settings for Instruct models (QwenLM/Qwen3-VL README.md" in out
    assert "@thinking: the official evaluation settings for Thinking models" in out
    assert "anthropic" in out.splitlines()[0] and "gemini" in out.splitlines()[0]  # the backends line
