"""The ``vllm`` backend: vLLM's offline engine (``vllm.LLM``), a whole wave per call.

``vllm:NAME`` loads NAME (a local folder or a Hugging Face id in the local
cache) once. Each :meth:`VLLMModel.generate` call turns the wave's requests
into OpenAI-style conversations (images as ``image_pil`` parts, decoded only
for this wave) and sends them in one ``LLM.chat`` call with one
``SamplingParams`` per request, so vLLM's own scheduler batches the whole wave
whatever the mix of generation settings. A text-only model's requests are
rendered with the engine tokenizer's chat template and tokenized once, here
(the length is checked against ``max_model_len``), and sent as token ids with
``LLM.generate``: ``LLM.chat`` would render and tokenize every prompt again.
If vLLM rejects the batch (a prompt longer than ``max_model_len``, too many
images), the requests are retried one by one so that only the offending ones
fail.

A video placed whole (``{{ video(i) }}``) goes natively to a model that takes
videos (vLLM's processor for it has a ``video`` modality: the Qwen-VL family,
LLaVA-OneVision, ...): the request's prompt is rendered by the model's own
processor chat template with a ``video`` part (as the ``hf`` backend renders
it), and sent with ``LLM.generate`` with the sampled frames as one array per
video and their metadata (frame rate, indices, total frames, duration,
``do_sample_frames: False``) in ``multi_modal_data``, so the model sees exactly
the frames the task's rule chose, at their true timestamps. ``LLM.chat`` takes
videos only as URLs, which vLLM would decode and sample again by its own rule.
Model arg ``video: frames`` sends the frames as images instead, as a model that
takes no video always gets them.

Model args are vLLM's own (``EngineArgs`` fields and ``LLM`` parameters:
``tensor_parallel_size``, ``max_model_len``, ``gpu_memory_utilization``,
``dtype``, ``quantization``, ``enforce_eager``, ``trust_remote_code``,
``mm_processor_kwargs`` as JSON, ...) plus ``chat_template_kwargs`` (passed to
``LLM.chat``, e.g. ``{"enable_thinking": false}``) and ``video`` (``native`` or
``frames``). ``limit_mm_per_prompt`` defaults to ``{"image":
context.max_images_per_request, "video": context.max_videos_per_request}``
(the video limit only for a run with videos); ``seed`` to the run's seed.

vLLM starts worker processes: a script that builds this model must do so under
``if __name__ == "__main__":``.
"""

from __future__ import annotations

import dataclasses
import gc
import inspect
import json
import logging
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from vllm import LLM, SamplingParams
from vllm.engine.arg_utils import EngineArgs

from mmtasks.documents.image_loader import ImageLoader
from mmtasks.errors import MmtasksError, ModelError
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec
from mmtasks.models.hub import hub_preflight
from mmtasks.models.vllm_inputs import (
    MODEL_DEFAULT_SAMPLING_FIELDS,
    VIDEO_MODES,
    chat_messages,
    image_limit,
    sampling_kwargs,
    split_model_args,
    video_item,
)
from mmtasks.models.processor_messages import message_parts, processor_conversation
from mmtasks.core.conversation import Image, VideoRun
from mmtasks.core.reasoning import opens_reasoning
from mmtasks.core.request import FailureKind, GenerationConfig, Reply, Request
from mmtasks.core.provenance import ModelRevision, model_revision

_CLIENT_ERRORS: tuple[type[Exception], ...]
try:  # newer vLLM: request validation errors have their own base class
    from vllm.exceptions import VLLMClientError

    _CLIENT_ERRORS = (VLLMClientError,)
except ImportError:  # pragma: no cover - older vLLM raises ValueError only
    _CLIENT_ERRORS = ()

log = logging.getLogger(__name__)

#: errors vLLM raises for a request it will not run (too long, bad template, too many images)
_REQUEST_ERRORS = (ValueError, TypeError, KeyError, jinja2.TemplateError, *_CLIENT_ERRORS)
#: what the recorded sampling settings show
_RECORDED_FIELDS = ("max_tokens", *MODEL_DEFAULT_SAMPLING_FIELDS, "logit_bias", "seed", "stop")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


@dataclass(frozen=True)
class SentRequest:
    """What one request of the last wave was sent with and what came back (for logs and tests)."""

    index: int
    sampling: dict[str, Any]
    #: prompt length in tokens, image placeholders expanded (None if vLLM refused the request)
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    #: the chat template's variables it was rendered with (the model arg's, the request's over them)
    chat_template_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: each video sent natively: its frames' count, indices, timestamps and array shape
    videos: tuple[dict[str, Any], ...] = ()

    @property
    def settings(self) -> dict[str, Any]:
        """What :meth:`VLLMModel.sent_settings` gives for the request's generation settings."""
        return {**self.sampling, **({"chat_template_kwargs": self.chat_template_kwargs} if self.chat_template_kwargs else {})}


class VLLMModel(ChatModel):
    """A chat model served in-process by vLLM."""

    #: the engine: vLLM's ``LLM`` (or the caller's), None once closed
    _llm: Any

    def revision(self) -> ModelRevision:
        return self._revision

    #: ``SamplingParams`` fields and ``LLM.chat``'s template variables; not ``reasoning_effort``
    #: (an API field: a template that reads it takes it in chat_template_kwargs)
    takes_settings = frozenset({"top_k", "min_p", "repetition_penalty", "chat_template_kwargs",
                                "presence_penalty", "frequency_penalty", "logit_bias"})

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None, engine: Any = None) -> None:
        """``engine``: a ``vllm.LLM`` already running (``mmtasks.evaluate(model=llm)``): used as it
        is (its limits are its own), and left running at :meth:`close`."""
        super().__init__(spec, context)
        if not spec.name:
            raise ModelError("vllm needs a model: vllm:NAME (a local folder or a Hugging Face id)", field="--model")
        engine_args, self._chat_args = split_model_args(spec.args, engine_arg_names())
        video_mode = self._chat_args.get("video", "native")
        if video_mode not in VIDEO_MODES:
            raise ModelError(f"model arg video={video_mode!r} is not one of {', '.join(VIDEO_MODES)}", field="--model-args")
        #: whether the engine is this backend's own (started here, released at close) or the caller's
        self.owned = engine is None
        if engine is None:
            _check_weights(spec.name, engine_args.get("revision"))
            engine_args.setdefault("seed", self.context.seed)
            auto_limit = "limit_mm_per_prompt" not in engine_args
            if auto_limit:
                videos = self.context.max_videos_per_request if video_mode == "native" else 0
                engine_args["limit_mm_per_prompt"] = image_limit(self.context.max_images_per_request, videos)
            self._engine_args = engine_args
            self._llm = _start_engine(spec.name, engine_args, retry_without_image_limit=auto_limit)
            #: the weights' revision for the run card (read now: the engine resolved the files)
            self._revision = model_revision(spec.name, engine_args.get("revision"))
        else:
            self._engine_args = engine_args
            self._llm = engine
            self._revision = model_revision(spec.name, engine_args.get("revision"))
        model_config = self._llm.llm_engine.model_config
        #: whether the loaded model takes images (a text-only model gets no image limit)
        self.multimodal: bool = bool(model_config.is_multimodal_model)
        limit = engine_args.get("limit_mm_per_prompt")
        self._image_limit: int = _engine_limit(model_config, limit, "image") if self.multimodal else 0
        video_limit = _engine_limit(model_config, limit, "video")
        #: whether a video placed whole goes as one video (the model takes videos, model arg video: native)
        self.native_video: bool = self.multimodal and video_mode == "native" and video_limit > 0 and _takes_video(model_config)
        self._video_limit: int = video_limit if self.native_video else 0
        #: the model's processor (its chat template renders the prompts of requests with videos); loaded on first use
        self._processor: Any = None
        #: the engine's context length; a text-only prompt that does not fit with its
        #: max_new_tokens fails as context_overflow before it is sent (see _overflow)
        self.max_model_len: int | None = getattr(model_config, "max_model_len", None)
        defaults = self._llm.get_default_sampling_params()
        self._model_defaults = {f: getattr(defaults, f) for f in MODEL_DEFAULT_SAMPLING_FIELDS if hasattr(defaults, f)}
        #: one record per request sent in the last generate() call
        self.last_wave: list[SentRequest] = []
        #: decodes in worker threads, once per image per run (multi-turn histories repeat images)
        self.images = ImageLoader()

    # -- the wave -----------------------------------------------------------

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        self.last_wave = []
        if self.multimodal:
            self.images.prefetch(img for request in requests for img in request.images)
        # A text-only model's prompts go to the engine as token ids: the chat template is applied
        # and the prompt tokenized once, here, where its length is checked against max_model_len
        # (LLM.chat would render and tokenize it a second time). A multimodal model's chat
        # template may be its processor's, which LLM.chat resolves: its requests go as chats.
        as_tokens = not self.multimodal
        indices: list[int] = []
        prompts: list[Any] = []
        params: list[SamplingParams] = []
        template_kwargs: list[dict[str, Any]] = []
        videos: list[tuple[dict[str, Any], ...]] = []
        for i, request in enumerate(requests):
            ids = self._prompt_ids(request) if as_tokens else None
            overflow = self._overflow(request, ids)
            if overflow is not None:
                yield i, Reply.failure(overflow, FailureKind.CONTEXT_OVERFLOW)
                continue
            sent_videos: tuple[dict[str, Any], ...] = ()
            if ids is not None:
                prompts.append({"prompt_token_ids": ids})
            else:
                try:
                    with_video = self._video_prompt(request) if self.native_video else None
                    if with_video is not None:
                        prompt, sent_videos = with_video
                        prompts.append(prompt)
                    else:
                        prompts.append(self._conversation(request))
                except MmtasksError as exc:  # an unreadable image, or images this model cannot take
                    yield i, Reply.failure(str(exc))
                    continue
            indices.append(i)
            params.append(self._sampling_params(request.generation))
            template_kwargs.append(self._template_kwargs(request.generation))
            videos.append(sent_videos)
        if not indices:
            return
        start = time.monotonic()
        outputs = self._run_isolating_failures(prompts, params, template_kwargs)
        del prompts  # the wave's pixels
        latency = time.monotonic() - start
        for i, p, kw, vids, out in zip(indices, params, template_kwargs, videos, outputs):
            if isinstance(out, str):
                self.last_wave.append(SentRequest(i, _recorded(p), chat_template_kwargs=kw, videos=vids))
                yield i, Reply.failure(out)
                continue
            completion = out.outputs[0]
            prompt_tokens = len(out.prompt_token_ids) if out.prompt_token_ids is not None else None
            record = SentRequest(i, _recorded(p), prompt_tokens, len(completion.token_ids), completion.finish_reason, kw,
                                 vids)
            self.last_wave.append(record)
            if self.context.verbose:
                log.debug("vllm request %d: %s", i, record)
            yield i, Reply(text=completion.text, latency=latency, finish_reason=completion.finish_reason,
                           completion_tokens=len(completion.token_ids), prompt_tokens=prompt_tokens,
                           cached_tokens=_count(getattr(out, "num_cached_tokens", None)),
                           starts_in_reasoning=self._opens_reasoning(out))

    def _opens_reasoning(self, out: Any) -> bool:
        """Whether the prompt vLLM rendered ends inside a reasoning block (its chat template wrote
        the opening tag); read from the prompt's text, else from its last tokens decoded."""
        prompt = getattr(out, "prompt", None)
        if not isinstance(prompt, str) and getattr(out, "prompt_token_ids", None):
            try:
                prompt = self._llm.get_tokenizer().decode(list(out.prompt_token_ids)[-32:])
            except (AttributeError, TypeError, ValueError):
                return False
        return isinstance(prompt, str) and opens_reasoning(prompt, self.spec.reasoning)

    def _sampling_params(self, generation: GenerationConfig) -> SamplingParams:
        return SamplingParams(**sampling_kwargs(generation, self._model_defaults))

    def _template_kwargs(self, generation: GenerationConfig) -> dict[str, Any]:
        """The chat template's variables for a request: the model arg's, the request's over them."""
        return {**(self._chat_args.get("chat_template_kwargs") or {}), **generation.chat_template_kwargs}

    def sent_settings(self, generation: GenerationConfig) -> dict[str, Any]:
        """The ``SamplingParams`` built for ``generation`` (their fields as vLLM holds them) and
        the chat template's variables: what :meth:`generate` sends, and records in ``last_wave``."""
        kwargs = self._template_kwargs(generation)
        return {**_recorded(self._sampling_params(generation)), **({"chat_template_kwargs": kwargs} if kwargs else {})}

    def _conversation(self, request: Request) -> list[dict[str, Any]]:
        """The request as OpenAI-style messages; raises MmtasksError for what cannot be sent."""
        n_images = len(request.images)
        if n_images and not self.multimodal:
            raise ModelError(f"model {self.spec.name} is text-only but the request has {n_images} image(s)", doc_id=request.doc_id or None)
        if self.multimodal:
            _within_limit(request, n_images, self._image_limit, "images")
        return chat_messages(request.messages, self.images.load)

    def _video_prompt(self, request: Request) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]] | None:
        """A request with videos as ``LLM.generate`` takes it: the prompt rendered by the model's
        processor chat template (a ``video`` part per video placed whole, an ``image`` part per
        other image), and ``multi_modal_data`` with the images and each video's sampled frames and
        metadata, in the order they are placed; and what is recorded of each video sent. None for a
        request that places no video whole. Raises MmtasksError for what cannot be sent."""
        runs = [p for m in request.messages for p in message_parts(m, True)]
        clips = [p for p in runs if isinstance(p, VideoRun)]
        if not clips:
            return None
        images = [p for p in runs if isinstance(p, Image)]
        _within_limit(request, len(images), self._image_limit, "images")
        _within_limit(request, len(clips), self._video_limit, "videos")
        conversation = processor_conversation(request.messages)
        try:
            prompt = self._chat_processor().apply_chat_template(
                conversation, tokenize=False, add_generation_prompt=True, **self._template_kwargs(request.generation))
        except _REQUEST_ERRORS as exc:
            raise ModelError(f"the model's chat template cannot render a video: {_first_line(exc)}",
                             doc_id=request.doc_id or None) from None
        data: dict[str, Any] = {"video": [video_item([self.images.load(f) for f in run.frames], run.clip) for run in clips]}
        if images:
            data["image"] = [self.images.load(img) for img in images]
        sent = tuple({"frames": int(array.shape[0]), "shape": list(array.shape), "indices": list(run.clip.indices),
                      "timestamps": list(run.timestamps), "fps": meta["fps"], "total_num_frames": meta["total_num_frames"],
                      "duration": meta["duration"]} for run, (array, meta) in zip(clips, data["video"]))
        return {"prompt": prompt, "multi_modal_data": data,
                # vLLM keys its processed-input cache by these: a video asked about again is processed once
                "multi_modal_uuids": {"video": [run.clip.content_hash for run in clips]}}, sent

    def _chat_processor(self) -> Any:
        """The model's processor, whose chat template vLLM itself renders chats with."""
        if self._processor is None:
            from transformers import AutoProcessor

            try:
                self._processor = AutoProcessor.from_pretrained(
                    self.spec.name, revision=self._engine_args.get("revision"),
                    trust_remote_code=bool(self._engine_args.get("trust_remote_code", False)))
            except (OSError, ValueError, TypeError) as exc:
                raise ModelError(f"the processor of {self.spec.name} did not load: {_first_line(exc)}", field="--model") from None
        return self._processor

    def _prompt_ids(self, request: Request) -> list[int] | None:
        """A text-only request's prompt as token ids: the engine tokenizer's chat template, with
        the generation prompt and ``chat_template_kwargs``, as ``LLM.chat`` renders it; None when
        the template refuses the conversation (``LLM.chat`` is then left to report it)."""
        if request.images:
            return None
        messages = [{"role": m.role, "content": m.plain_text} for m in request.messages]
        try:
            ids = self._llm.get_tokenizer().apply_chat_template(
                messages, tokenize=True, add_generation_prompt=True, **self._template_kwargs(request.generation))
        except _REQUEST_ERRORS:
            return None
        if not isinstance(ids, list):  # a BatchEncoding (newer transformers)
            ids = ids["input_ids"]
        return list(ids)

    def _overflow(self, request: Request, ids: list[int] | None = None) -> str | None:
        """``context_overflow: ...`` when a text-only request's prompt (the chat template applied
        by the engine's tokenizer) plus max_new_tokens exceeds max_model_len, else None. A request
        with images is checked by vLLM itself (it rejects a prompt longer than max_model_len, image
        tokens included, before generating; that rejection is marked context_overflow too)."""
        if self.max_model_len is None or request.images:
            return None
        if ids is None:
            ids = self._prompt_ids(request)
        if ids is None:
            return None  # vLLM's own check applies
        n, limit = len(ids), self.max_model_len
        if n + request.generation.max_new_tokens <= limit:
            return None
        return (f"context_overflow: the prompt has {n} tokens and max_new_tokens is {request.generation.max_new_tokens}, "
                f"more than the model's maximum context length of {limit} tokens (max_model_len)")

    def _run_isolating_failures(self, prompts: list[Any], params: list[SamplingParams],
                                template_kwargs: list[dict[str, Any]]) -> list[Any]:
        """The whole batch in one engine call; if vLLM rejects it, one request at a time.

        ``prompts`` holds conversations (sent with ``LLM.chat``) and token prompts
        (``{"prompt_token_ids": ...}``, sent with ``LLM.generate``). Returns one
        ``RequestOutput`` per prompt, or an error message for a request vLLM would not run.
        """
        try:
            return list(self._send(prompts, params, template_kwargs))
        except _REQUEST_ERRORS as exc:
            if len(prompts) == 1:
                return [_rejected(exc)]
            log.warning("vLLM rejected a batch of %d requests (%s); retrying one by one", len(prompts), _first_line(exc))
        results: list[Any] = []
        for prompt, p, kw in zip(prompts, params, template_kwargs):
            try:
                results.extend(self._send([prompt], [p], [kw]))
            except _REQUEST_ERRORS as exc:
                results.append(_rejected(exc))
        return results

    def _send(self, prompts: list[Any], params: list[SamplingParams], template_kwargs: list[dict[str, Any]]) -> list[Any]:
        """Token prompts and rendered prompts with videos through ``LLM.generate``, conversations
        through ``LLM.chat`` (one call per distinct set of chat-template variables: ``LLM.chat``
        takes them per call); in order."""
        out: list[Any] = [None] * len(prompts)
        tokens = [k for k, prompt in enumerate(prompts) if isinstance(prompt, dict) and "prompt_token_ids" in prompt]
        if tokens:
            for k, result in zip(tokens, self._llm.generate([prompts[k] for k in tokens], [params[k] for k in tokens], use_tqdm=False)):
                out[k] = result
        rendered = [k for k, prompt in enumerate(prompts) if isinstance(prompt, dict) and "prompt" in prompt]
        if rendered:
            # the chat template wrote the special tokens (BOS): the tokenizer adds none, as in LLM.chat
            results = self._llm.generate([prompts[k] for k in rendered], [params[k] for k in rendered], use_tqdm=False,
                                         **_tokenization_kwargs(type(self._llm).generate))
            for k, result in zip(rendered, results):
                out[k] = result
        groups: dict[str, list[int]] = {}
        for k, prompt in enumerate(prompts):
            if not isinstance(prompt, dict):
                groups.setdefault(json.dumps(template_kwargs[k], sort_keys=True, default=str), []).append(k)
        for chats in groups.values():
            kwargs = template_kwargs[chats[0]]
            for k, result in zip(chats, self._chat([prompts[k] for k in chats], [params[k] for k in chats], kwargs)):
                out[k] = result
        return out

    def _chat(self, conversations: list[list[dict[str, Any]]], params: list[SamplingParams],
              template_kwargs: dict[str, Any]) -> Iterable[Any]:
        chat_args = {k: v for k, v in self._chat_args.items() if k not in ("chat_template_kwargs", "video")}
        if template_kwargs:
            chat_args["chat_template_kwargs"] = template_kwargs
        return self._llm.chat(conversations, params, use_tqdm=False, **chat_args)

    def close(self) -> None:
        if getattr(self, "images", None) is not None:
            self.images.close()
        if not getattr(self, "owned", True):  # the caller's engine: left running
            return
        llm = getattr(self, "_llm", None)
        if llm is None:
            return
        self._llm = None
        del llm
        gc.collect()
        try:
            import torch
        except ImportError:  # pragma: no cover - vLLM always brings torch
            return
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


# -- engine start -------------------------------------------------------------


def engine_arg_names() -> set[str]:
    """Every keyword ``vllm.LLM`` accepts: ``EngineArgs`` fields and ``LLM``'s own parameters."""
    names = {f.name for f in dataclasses.fields(EngineArgs)}
    params = inspect.signature(LLM.__init__).parameters.values()
    names |= {p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != "self"}
    return names


def _start_engine(name: str, engine_args: dict[str, Any], retry_without_image_limit: bool) -> LLM:
    """Build ``vllm.LLM``; an engine that cannot start is a one-line :class:`ModelError`.

    Older vLLM (0.9 at least) refuses ``limit_mm_per_prompt`` for a text-only model; the
    default limit is then dropped and the engine built again.
    """
    # an unreachable Hub without the weights cached fails here in seconds, not after minutes of retries
    if hub_preflight(name, engine_args.get("revision")):
        # Hub unreachable, weights cached: vLLM reads HF_HUB_OFFLINE through huggingface_hub, so
        # it loads from the cache instead of retrying the Hub for minutes.
        os.environ["HF_HUB_OFFLINE"] = "1"
        from huggingface_hub import constants

        constants.HF_HUB_OFFLINE = True
    try:
        try:
            return LLM(model=name, **engine_args)
        except ValueError as exc:
            if not (retry_without_image_limit and "limit_mm_per_prompt" in str(exc)):
                raise
            args = {k: v for k, v in engine_args.items() if k != "limit_mm_per_prompt"}
            return LLM(model=name, **args)
    except (ValueError, TypeError, OSError, RuntimeError) as exc:
        raise ModelError(
            f"vLLM could not start {name}: {type(exc).__name__}: {_first_line(exc)}",
            field="--model",
            hint="the vLLM log above has the details",
        ) from exc


def _check_weights(name: str, revision: str | None) -> None:
    """Fail early, in one line, for a model folder or cache entry that is not there."""
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return
    if path.is_dir():
        if not (path / "config.json").is_file() and not (path / "params.json").is_file():
            raise ModelError(f"model folder {path} has no config.json", field="--model")
        if not any(p.name.endswith(_WEIGHT_SUFFIXES) for p in path.iterdir()):
            raise ModelError(f"model folder {path} has no weights (*.safetensors, *.bin, *.pt)", field="--model")
        return
    if path.is_absolute() or name.startswith((".", "~")) or name.count("/") > 1:
        raise ModelError(f"model folder {name} not found", field="--model")
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes") and not _in_hf_cache(name, revision):
        raise ModelError(
            f"model {name} is not in the Hugging Face cache and HF_HUB_OFFLINE is set",
            field="--model",
            hint="download it first or pass a local folder: vllm:/path/to/model",
        )


def _in_hf_cache(repo_id: str, revision: str | None) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - a vLLM dependency
        return True
    return isinstance(try_to_load_from_cache(repo_id, "config.json", revision=revision), str)


def _limit_of(limit: Any, modality: str = "image") -> int:
    """The count of ``modality`` allowed by a ``limit_mm_per_prompt`` value (per modality an int or
    ``{"count": n, ...}``; vLLM's default: 1 image, 1 video)."""
    value = (limit or {}).get(modality, 1) if isinstance(limit, dict) else 1
    if isinstance(value, dict):
        value = value.get("count", 1)
    return int(value)


def _within_limit(request: Request, n: int, limit: int, what: str) -> None:
    """Raise a one-line ModelError when the request carries more ``what`` (images, videos) than
    ``limit_mm_per_prompt`` allows."""
    if n > limit:
        raise ModelError(
            f"request has {n} {what}, more than limit_mm_per_prompt allows ({limit})", doc_id=request.doc_id or None,
            hint="raise the model arg limit_mm_per_prompt or the run's max images per request" if what == "images"
            else "raise the model arg limit_mm_per_prompt's video count")


def _engine_limit(model_config: Any, limit: Any, modality: str) -> int:
    """The count of ``modality`` the engine allows per prompt (its multimodal config: an unnamed
    modality is not limited), else as read from the ``limit_mm_per_prompt`` given."""
    try:
        return int(model_config.multimodal_config.get_limit_per_prompt(modality))
    except (AttributeError, TypeError, ValueError):
        return _limit_of(limit, modality)


def _takes_video(model_config: Any) -> bool:
    """Whether vLLM's processor for the model has a video modality."""
    try:
        from vllm.multimodal import MULTIMODAL_REGISTRY

        return "video" in MULTIMODAL_REGISTRY.get_processing_info(model_config).supported_mm_limits
    except (ImportError, AttributeError, KeyError, ValueError, TypeError, NotImplementedError) as exc:
        log.debug("vllm: cannot tell whether the model takes video (%s): frames go as images", exc)
        return False


def _tokenization_kwargs(generate: Any) -> dict[str, Any]:
    """``tokenization_kwargs={"add_special_tokens": False}`` where ``LLM.generate`` takes it."""
    try:
        takes = "tokenization_kwargs" in inspect.signature(generate).parameters
    except (TypeError, ValueError):
        takes = False
    return {"tokenization_kwargs": {"add_special_tokens": False}} if takes else {}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _recorded(params: SamplingParams) -> dict[str, Any]:
    return {f: getattr(params, f) for f in _RECORDED_FIELDS if hasattr(params, f)}


#: vLLM's words for a prompt longer than max_model_len
_TOO_LONG = re.compile(r"maximum (?:model|context) length|longer than the maximum|max_model_len", re.IGNORECASE)


def _rejected(exc: BaseException) -> str:
    """The failure of a request vLLM refused; ``context_overflow: ...`` when it was too long."""
    message = f"vLLM rejected the request: {_first_line(exc)}"
    return f"context_overflow: {message}" if _TOO_LONG.search(message) else message


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
