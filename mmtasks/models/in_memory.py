"""Models already in memory as ``mmtasks.evaluate(model=...)``'s model: a transformers model with
its processor, or a vLLM ``LLM``. Nothing is loaded or reloaded: the run's backend wraps the object
(:class:`~mmtasks.models.hf.HFModel` with ``loaded``, :class:`~mmtasks.models.vllm_backend.VLLMModel`
with ``engine``) and leaves it as it was when the run ends (a Trainer's model keeps training)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mmtasks.errors import ConfigError
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec

#: what builds the run's model from its spec and context (in place of loading it)
ModelFactory = Callable[[ModelSpec, ModelContext], ChatModel]


@dataclass(frozen=True)
class InMemory:
    """The spec text the run records (``hf:NAME``, ``vllm:NAME``) and the factory of its backend."""

    spec: str
    factory: ModelFactory


def _is_vllm_engine(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "vllm" and hasattr(obj, "llm_engine")


def in_memory(model: Any, processor: Any = None) -> InMemory:
    """The run's model for ``model``, an object (see the module docstring); a :class:`ConfigError`
    for anything else, or a transformers model without its processor."""
    if _is_vllm_engine(model):
        name = str(getattr(model.llm_engine.model_config, "model", "") or "in-memory")

        def vllm_factory(spec: ModelSpec, context: ModelContext) -> ChatModel:
            from mmtasks.models.vllm_backend import VLLMModel

            return VLLMModel(spec, context, engine=model)

        return InMemory(f"vllm:{name}", vllm_factory)
    if callable(getattr(model, "generate", None)) and hasattr(model, "config"):
        if processor is None:
            raise ConfigError("a transformers model needs its processor (or tokenizer): evaluate(model=model, processor=...)",
                              field="processor")
        name = str(getattr(model, "name_or_path", "") or getattr(model.config, "_name_or_path", "") or "in-memory")

        def hf_factory(spec: ModelSpec, context: ModelContext) -> ChatModel:
            from mmtasks.models.hf import HFModel

            return HFModel(spec, context, loaded=(processor, model))

        return InMemory(f"hf:{name}", hf_factory)
    raise ConfigError(f"model must be a model spec (text), a transformers model with its processor, or a vLLM LLM; "
                      f"got {type(model).__name__}", field="model")
