"""Model backends, registered by name (``hf``, ``vllm``, ``openai``, ``random``, ``replay``)."""

from mmtasks.models.base import ChatModel, ModelSpec, load_model, register_model

__all__ = ["ChatModel", "ModelSpec", "load_model", "register_model"]
