"""``evaluate(model=<object>)``'s dispatch (mmtasks/models/in_memory.py): a vLLM ``LLM`` goes to the
vllm backend as its engine, named by the engine's model; a transformers model to the hf backend.
(The vLLM path end to end needs a GPU: this checks only which backend an object is given to; the
transformers path runs end to end in tests/integrations/test_trainer_callback.py.)"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from mmtasks.errors import ConfigError
from mmtasks.models.in_memory import in_memory


def test_a_vllm_engine_is_the_vllm_backends_engine_named_by_its_model() -> None:
    llm_class = type("LLM", (), {"__module__": "vllm.entrypoints.llm"})
    engine = llm_class()
    engine.llm_engine = SimpleNamespace(model_config=SimpleNamespace(model="org/vlm-7b"))
    wrapped = in_memory(engine)
    assert wrapped.spec == "vllm:org/vlm-7b"


def test_a_transformers_model_needs_its_processor_and_is_named_by_its_path() -> None:
    model = SimpleNamespace(generate=lambda **kw: None, config=SimpleNamespace(_name_or_path="/ckpt/step-100"),
                            name_or_path="/ckpt/step-100")
    with pytest.raises(ConfigError, match="needs its processor"):
        in_memory(model)
    assert in_memory(model, processor=object()).spec == "hf:/ckpt/step-100"
    with pytest.raises(ConfigError, match="got int"):
        in_memory(3)
