"""The built-in model backends, registered lazily in :data:`mmtasks.registry.backends`:
a backend's module (and its optional dependency: torch, vllm, openai) is imported only
by a run that uses it, and a missing package names the extra to install."""

from __future__ import annotations

from mmtasks.registry import backends

backends.register_lazy("hf", "mmtasks.models.hf:HFModel", extra="mmtasks[hf]")
backends.register_lazy("vllm", "mmtasks.models.vllm_backend:VLLMModel", extra="mmtasks[vllm]")
backends.register_lazy("openai", "mmtasks.models.openai_api:OpenAIModel")
backends.register_lazy("anthropic", "mmtasks.models.anthropic_api:AnthropicModel", extra="mmtasks[anthropic]")
backends.register_lazy("gemini", "mmtasks.models.gemini_api:GeminiModel", extra="mmtasks[gemini]")
backends.register_lazy("random", "mmtasks.models.random_model:RandomModel")
backends.register_lazy("replay", "mmtasks.models.replay:ReplayModel")
