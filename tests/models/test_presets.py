"""Model presets (models/*.yaml): every file loads, specs resolve per backend, --model-args
override preset args, unsupported backends are refused with the reason."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from mmtasks.errors import ConfigError
from mmtasks.models.base import backend_names, parse_args_string, parse_model_spec
from mmtasks.models.presets import BUILTIN_PRESETS_DIR, load_presets

ROOT = Path(__file__).resolve().parents[2]
PRESETS = load_presets()
QWEN2_VL_72B_VLLM = {
    "tensor_parallel_size": 4,
    "max_model_len": 32768,
    "mm_processor_kwargs": {"min_pixels": 200704, "max_pixels": 1003520},
}


def test_every_preset_file_loads():
    files = sorted(f for f in BUILTIN_PRESETS_DIR.glob("*.yaml") if f.name != "prices.yaml")  # the price table
    assert len(files) >= 10
    assert sorted(PRESETS) == sorted(f.stem for f in files)  # one preset per file, named like it
    for name, preset in PRESETS.items():
        assert preset.backend in backend_names(), name
        assert set(preset.backends) <= set(backend_names()), name
        assert set(preset.unsupported) <= set(backend_names()), name
        assert not set(preset.backends) & set(preset.unsupported), name
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", preset.weights), f"{name}: {preset.weights} is not a hub id"
        assert preset.context_length and preset.description, name


def test_the_presets_the_papers_evaluated():
    for name in ("qwen2-vl-2b", "qwen2-vl-7b", "qwen2-vl-72b", "minicpm-v-2.6", "llava-onevision-72b",
                 "internvl2-26b", "llava-1.5-7b"):
        assert PRESETS[name].paper, name


def test_preset_named_alone_uses_its_default_backend():
    spec = parse_model_spec("qwen2-vl-72b")
    assert (spec.backend, spec.name, spec.preset) == ("vllm", "Qwen/Qwen2-VL-72B-Instruct", "qwen2-vl-72b")
    assert spec.args == QWEN2_VL_72B_VLLM
    assert parse_model_spec("vllm:qwen2-vl-72b") == spec


def test_preset_through_another_backend():
    hf = parse_model_spec("hf:qwen2-vl-72b")
    assert (hf.backend, hf.name) == ("hf", "Qwen/Qwen2-VL-72B-Instruct")
    assert hf.args == {"dtype": "bfloat16", "device_map": "auto", "min_pixels": 200704, "max_pixels": 1003520}
    # an OpenAI-compatible server (vllm serve) is asked for the weights' name, with no engine args
    served = parse_model_spec("openai:qwen2-vl-72b", {"base_url": "http://gpu-node:8000/v1"})
    assert (served.backend, served.name, served.args) == ("openai", "Qwen/Qwen2-VL-72B-Instruct", {"base_url": "http://gpu-node:8000/v1"})


def test_model_args_override_preset_args():
    extra = parse_args_string('tensor_parallel_size=8,max_model_len=16384,mm_processor_kwargs={"max_pixels": 401408}')
    spec = parse_model_spec("vllm:qwen2-vl-72b", extra)
    assert spec.args == {"tensor_parallel_size": 8, "max_model_len": 16384, "mm_processor_kwargs": {"max_pixels": 401408}}
    hf = parse_model_spec("qwen2-vl-7b", {"dtype": "float16", "batch_size": 2})
    assert hf.args == {"dtype": "float16", "min_pixels": 200704, "max_pixels": 1003520, "batch_size": 2}
    # the preset itself is unchanged for the next run
    assert parse_model_spec("vllm:qwen2-vl-72b").args == QWEN2_VL_72B_VLLM


def test_max_images_goes_only_to_backends_that_take_it():
    assert parse_model_spec("llava-1.5-7b").args == {"dtype": "bfloat16", "max_images": 6}
    assert parse_model_spec("llava-1.5-7b", {"max_images": 2}).args["max_images"] == 2
    vllm = parse_model_spec("vllm:llava-1.5-7b")
    assert "max_images" not in vllm.args and vllm.args["limit_mm_per_prompt"] == {"image": 6}
    assert "max_images" not in parse_model_spec("openai:llava-1.5-7b").args


def test_unsupported_backend_is_refused_with_the_reason():
    with pytest.raises(ConfigError, match="remote modeling code") as err:
        parse_model_spec("hf:minicpm-v-2.6")
    assert "vllm:minicpm-v-2.6" in str(err.value)
    spec = parse_model_spec("minicpm-v-2.6")
    assert (spec.backend, spec.name, spec.args) == ("vllm", "openbmb/MiniCPM-V-2_6", {"trust_remote_code": True, "max_model_len": 32768})


def test_a_preset_whose_default_backend_is_unsupported_is_a_config_error(tmp_path):
    (tmp_path / "bad.yaml").write_text("name: bad\nweights: org/model\nbackend: hf\nunsupported: {hf: no}\n")
    with pytest.raises(ConfigError, match="bad.yaml"):
        parse_model_spec("bad", presets_dirs=[tmp_path])


def test_presets_from_another_folder(tmp_path):
    (tmp_path / "mine.yaml").write_text("name: mine\nweights: me/my-vlm\nbackends: {hf: {args: {dtype: float16}}}\n")
    spec = parse_model_spec("mine", {"batch_size": 4}, presets_dirs=[tmp_path])
    assert (spec.backend, spec.name, spec.args, spec.preset) == ("hf", "me/my-vlm", {"dtype": "float16", "batch_size": 4}, "mine")


def test_hf_args_are_accepted_by_the_hf_backend():
    pytest.importorskip("torch")
    from mmtasks.models.hf import HFOptions

    for name, preset in PRESETS.items():
        if "hf" not in preset.unsupported:
            HFOptions.parse(parse_model_spec(f"hf:{name}").args)  # raises ModelError on an unknown or bad arg


@pytest.mark.slow
def test_vllm_args_are_engine_args_of_the_installed_vllm():
    """Every preset's vllm args name a field vLLM's engine accepts (checked with .venv-vllm's vLLM)."""
    python = ROOT / ".venv-vllm" / "bin" / "python"
    if not python.exists():
        pytest.fail(f"{python} is missing: run scripts/setup_vllm_venv.sh first")
    code = "import json; from mmtasks.models.vllm_backend import engine_arg_names; print(json.dumps(sorted(engine_arg_names())))"
    out = subprocess.run([str(python), "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=300, check=True)
    known = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert {"tensor_parallel_size", "max_model_len", "mm_processor_kwargs"} <= known
    for name, preset in PRESETS.items():
        args = parse_model_spec(f"vllm:{name}").args
        assert set(args) <= known, f"{name}: {sorted(set(args) - known)}"


def test_placement_args_leave_the_cache_identity_alone():
    """A run with another GPU layout reuses the cache; a setting that changes answers does not."""
    base = parse_model_spec("vllm:qwen2.5-vl-72b")
    relaid = parse_model_spec("vllm:qwen2.5-vl-72b", {"tensor_parallel_size": 8, "mm_encoder_tp_mode": "weights",
                                                       "distributed_executor_backend": "ray", "pipeline_parallel_size": 2})
    assert relaid.identity() == base.identity()
    assert parse_model_spec("vllm:qwen2.5-vl-72b", {"mm_processor_kwargs": {"max_pixels": 401408}}).identity() != base.identity()


def test_the_current_model_presets_and_where_they_run():
    """Issue 28: presets for the models reports evaluate now, each listing the backends it runs on."""
    for name in ("qwen2.5-vl-7b", "qwen3-vl-8b", "qwen3-vl-8b-thinking", "internvl3-8b", "gemma-3-27b", "idefics3-8b",
                 "smolvlm-2b", "llama-4-scout", "mistral-small-3.1-24b", "pixtral-12b"):
        assert name in PRESETS, name
    assert PRESETS["llama-4-scout"].runs_on() == ["vllm", "openai"]  # hf refuses Llama 4 (docs/models.md)
    assert PRESETS["gemma-3-27b"].runs_on() == ["hf", "vllm", "openai"]
    assert PRESETS["smolvlm-2b"].runs_on() == ["hf", "openai"]
    with pytest.raises(ConfigError, match="cannot run on the hf backend"):
        parse_model_spec("hf:llama-4-scout")
    # the hf extra installs what the tested families' processors import (SmolVLM: num2words)
    extra = next(line for line in (ROOT / "pyproject.toml").read_text().splitlines() if line.startswith("hf = "))
    assert "num2words" in extra


def test_models_command_lists_where_each_preset_runs(capsys: pytest.CaptureFixture[str]):
    from mmtasks.cli import main

    assert main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["internvl2-8b"])
    assert lines[at + 1].split() == ["runs", "on:", "vllm,", "openai;", "not", "on:", "hf"]
