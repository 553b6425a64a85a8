"""What the ``vllm`` backend sends: chat messages, sampling settings, engine args.

Pure functions with no vLLM import, so they are testable anywhere;
:mod:`mmtasks.models.vllm_backend` feeds their output to ``vllm.LLM``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from mmtasks.core.conversation import FrameSource, Image, Message, Text
from mmtasks.errors import ModelError
from mmtasks.core.request import GenerationConfig

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

#: model args the backend uses itself (not vLLM engine args): the chat template's variables, and
#: how a video placed whole goes (``native``: as one video when the model takes videos; ``frames``:
#: its sampled frames as images)
CHAT_ARGS = frozenset({"chat_template_kwargs", "video"})
VIDEO_MODES = ("native", "frames")

#: sampling fields a model's generation_config.json may set (vLLM's
#: ``ModelConfig.get_diff_sampling_param``); kept when ``do_sample`` is None
MODEL_DEFAULT_SAMPLING_FIELDS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repetition_penalty",
    "presence_penalty",
    "frequency_penalty",
)


def chat_messages(messages: tuple[Message, ...], load_image: Callable[[Image], "PILImage"]) -> list[dict[str, Any]]:
    """Messages as OpenAI-style content parts, images as ``image_pil`` parts.

    ``load_image`` makes the pixels (it may raise :class:`DataError`); it is
    called here, per request, so pixels exist only while a wave is served.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, Text):
                parts.append({"type": "text", "text": part.text})
            else:
                parts.append({"type": "image_pil", "image_pil": load_image(part)})
        out.append({"role": message.role, "content": parts})
    return out


def sampling_kwargs(gen: GenerationConfig, model_defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``SamplingParams`` keyword arguments for one request.

    The mode comes from :meth:`GenerationConfig.sampling_mode` (the rule every
    backend follows):

    - ``default``: the model's own sampling defaults (``model_defaults``, from
      its generation_config.json) stay as they are.
    - ``greedy``: temperature 0.
    - ``sample``: ``temperature`` and ``top_p`` as set.

    ``top_k`` and ``min_p``, when set, apply unless greedy (over the model's defaults);
    ``repetition_penalty``, ``presence_penalty``, ``frequency_penalty``, ``logit_bias``,
    ``max_new_tokens``, ``seed`` and ``stop`` always apply.
    """
    kwargs: dict[str, Any] = {"n": 1, "max_tokens": gen.max_new_tokens}
    mode = gen.sampling_mode()
    if mode == "default":
        kwargs.update({k: model_defaults[k] for k in MODEL_DEFAULT_SAMPLING_FIELDS if k in model_defaults})
    elif mode == "sample":
        kwargs.update(temperature=gen.temperature if gen.temperature is not None else 1.0, top_p=gen.top_p)
    else:
        kwargs["temperature"] = 0.0
    if mode != "greedy":
        kwargs.update({k: getattr(gen, k) for k in ("top_k", "min_p") if getattr(gen, k) is not None})
    if gen.repetition_penalty is not None:
        kwargs["repetition_penalty"] = gen.repetition_penalty
    kwargs.update(gen.penalties())  # SamplingParams' presence_penalty, frequency_penalty, logit_bias
    if gen.seed is not None:
        kwargs["seed"] = gen.seed
    if gen.stop:
        kwargs["stop"] = list(gen.stop)
    return kwargs


def image_limit(max_images_per_request: int, max_videos_per_request: int = 0) -> dict[str, int]:
    """``limit_mm_per_prompt`` for a run whose requests carry at most that many images (each
    sampled video frame among them: frames go as images to a model that takes no video) and videos.
    vLLM ignores the limit of a modality the model does not take."""
    limit = {"image": max(1, max_images_per_request)}
    if max_videos_per_request > 0:
        limit["video"] = max_videos_per_request
    return limit


def video_item(frames: "list[PILImage]", clip: FrameSource) -> tuple[Any, dict[str, Any]]:
    """One video of ``multi_modal_data``: its sampled frames as one ``(frames, height, width, 3)``
    uint8 array, and their metadata in the ``transformers.video_utils.VideoMetadata`` fields vLLM
    reads (the video's frame rate, total frames and duration, the indices of the frames sent) with
    ``do_sample_frames: False``, so vLLM samples none of its own and a model that reads timestamps
    (Qwen2.5/3-VL) gets the true ones."""
    import numpy as np

    array = np.stack([np.asarray(f.convert("RGB"), dtype=np.uint8) for f in frames])
    return array, {"fps": clip.fps, "total_num_frames": clip.total_frames, "duration": clip.duration,
                   "frames_indices": list(clip.indices), "height": int(array.shape[1]), "width": int(array.shape[2]),
                   "video_backend": "pyav", "do_sample_frames": False}


def split_model_args(args: Mapping[str, Any], engine_arg_names: Collection[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``--model-args`` into vLLM engine kwargs and chat-time kwargs.

    Every name must be an engine arg (``engine_arg_names``: vLLM's
    ``EngineArgs`` fields and ``LLM`` parameters) or one of :data:`CHAT_ARGS`;
    an unknown name is a :class:`ModelError` naming the close matches. A
    string value that looks like JSON (``'{"max_pixels": 802816}'``) is parsed.
    """
    known = (set(engine_arg_names) - {"model"}) | CHAT_ARGS
    unknown = sorted(k for k in args if k not in known)
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
            hints.append(f"{name!r} (did you mean {', '.join(close)}?)" if close else repr(name))
        raise ModelError(
            f"unknown vLLM model argument(s): {'; '.join(hints)}",
            field="--model-args",
            hint="any vLLM EngineArgs field is accepted; the model itself is named by vllm:NAME",
        )
    engine: dict[str, Any] = {}
    chat: dict[str, Any] = {}
    for key, value in args.items():
        (chat if key in CHAT_ARGS else engine)[key] = _maybe_json(key, value)
    return engine, chat


def _maybe_json(key: str, value: Any) -> Any:
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ModelError(f"model argument {key!r} is not valid JSON: {exc.msg}", field="--model-args") from None
    return value
