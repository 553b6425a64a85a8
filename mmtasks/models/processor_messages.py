"""Messages in the format of a processor's chat template (transformers' multimodal chat format).

What ``processor.apply_chat_template`` renders for the ``hf`` backend, and for the ``vllm``
backend's requests with videos: each message's content as a list of ``{"type": "text", "text":
...}``, ``{"type": "image"}`` and ``{"type": "video"}`` parts, the pixels passed beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mmtasks.core.conversation import Image, Message, Part, VideoRun, video_runs


def message_parts(message: Message, native_video: bool) -> list[Part | VideoRun]:
    """The message's parts, each video placed whole as one :class:`VideoRun` when videos go natively."""
    return video_runs(message.parts) if native_video else list(message.parts)


def processor_conversation(messages: Sequence[Message], native_video: bool = True) -> list[dict[str, Any]]:
    """``messages`` as the processor's chat template takes them: a ``video`` part per video placed
    whole (when videos go natively), an ``image`` part per other image, text parts as they are."""
    return [{"role": m.role, "content": [
        {"type": "video"} if isinstance(p, VideoRun) else {"type": "image"} if isinstance(p, Image)
        else {"type": "text", "text": p.text} for p in message_parts(m, native_video)]} for m in messages]
