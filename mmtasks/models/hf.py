"""The ``hf`` backend: a local Hugging Face transformers model.

``hf:NAME`` loads NAME (a hub id or a local directory) with ``AutoProcessor``
and ``AutoModelForImageTextToText`` (``AutoModelForCausalLM`` for text-only
models). Prompts are rendered by the model's own chat template; requests with
the same generation settings are sorted by prompt length, image tokens included
(each image's count from the processor, for its size read from the file header),
and generated in left-padded batches. The model never waits for the harness: a
worker thread prepares batch k+1 (images decoded by an
:class:`~mmtasks.documents.image_loader.ImageLoader`, each distinct image once
while it stays in its cache; the processor's resize, patching, tokenisation and
padding; the copy to the device) while the model generates batch k
(:mod:`mmtasks.models.hf_batches`). ``HFModel.stats`` holds the model's busy and
idle time and the padding share, logged when the model closes.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import hashlib
import io
import json
import logging
import os
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mmtasks.core.conversation import Image, Message, VideoRun
from mmtasks.models.processor_messages import message_parts, processor_conversation
from mmtasks.documents.image_loader import ImageLoader, image_key
from mmtasks.models.hf_architectures import check_architecture
from mmtasks.models.hf_batches import BatchStats, prepared_ahead
from mmtasks.errors import ModelError
from mmtasks.models.hub import hub_preflight, looks_local
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec
from mmtasks.core.reasoning import opens_reasoning
from mmtasks.core.request import FailureKind, GenerationConfig, Reply, Request
from mmtasks.core.provenance import ModelRevision

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 8
_DTYPES = {"auto": "auto", "bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
_PIXEL_ARGS = ("max_pixels", "min_pixels")


class HFOptions(BaseModel):
    """The ``--model-args`` the ``hf`` backend accepts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: weight dtype; "auto" keeps the checkpoint's
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    #: accelerate placement ("auto", "cuda:0", or a JSON map); default "auto" when CUDA is available
    device_map: str | dict[str, Any] | None = None
    #: a single device to move the model to (ignored when device_map is set)
    device: str | None = None
    #: e.g. "sdpa", "eager", "flash_attention_2"
    attn_implementation: str | None = None
    trust_remote_code: bool = False
    #: image resolution bounds, for processors that take them (Qwen2-VL family)
    max_pixels: int | None = Field(default=None, gt=0)
    min_pixels: int | None = Field(default=None, gt=0)
    #: hub revision (branch, tag or commit)
    revision: str | None = None
    #: requests per forward pass; overrides --batch-size
    batch_size: int | None = Field(default=None, ge=1)
    #: the most images one request may carry
    max_images: int | None = Field(default=None, ge=0)
    #: a video placed whole (``{{ video(i) }}``): ``native``, as one video to a processor that takes
    #: ``videos=`` (the Qwen-VL family), its sampled frames and their indices and frame rate as the
    #: video's metadata (the processor samples none of its own); ``frames``: as images
    video: Literal["native", "frames"] = "native"
    #: the chat template's variables (``{"enable_thinking": false}``); a request's own
    #: ``chat_template_kwargs`` (task, ``--gen-kwargs``) go over them, key by key
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def parse(cls, args: dict[str, Any]) -> "HFOptions":
        try:
            return cls(**args)
        except ValidationError as exc:
            err = exc.errors()[0]
            name = ".".join(str(p) for p in err["loc"])
            accepted = ", ".join(cls.model_fields)
            if err["type"] == "extra_forbidden":
                raise ModelError(f"unknown model argument {name!r} for the hf backend", field="--model-args", hint=f"accepted: {accepted}") from None
            raise ModelError(f"model argument {name!r}: {err['msg']}", field="--model-args") from None


class HFModel(ChatModel):
    """A transformers model answering chat requests in local batches."""

    #: ``generate``'s sampling arguments and the chat template's variables; not
    #: ``reasoning_effort`` (an API field: a template that reads it takes it in chat_template_kwargs)
    #: ``generate``'s own settings, and OpenAI's penalties and biases through a logits processor
    #: (:mod:`mmtasks.models.hf_logits`)
    takes_settings = frozenset({"top_k", "min_p", "repetition_penalty", "chat_template_kwargs",
                                "presence_penalty", "frequency_penalty", "logit_bias"})

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None,
                 loaded: tuple[Any, Any] | None = None) -> None:
        """``loaded``: (processor, model) already in memory (``mmtasks.evaluate(model=...)``, a
        Trainer's model): used as they are, nothing loaded. The model is the caller's: it is put in
        eval mode while a batch generates and back in its mode after, and :meth:`close` leaves it
        where it is; the processor is copied (its tokenizer pads on the left here)."""
        super().__init__(spec, context)
        if not spec.name:
            raise ModelError("the hf backend needs a model: hf:ORG/NAME or hf:/path/to/checkpoint", field="--model")
        self.options = HFOptions.parse(spec.args)
        self.batch_size = self.options.batch_size or self.context.batch_size or DEFAULT_BATCH_SIZE
        #: whether the model is this backend's own (loaded here, released at close) or the caller's
        self.owned = loaded is None
        if loaded is None:
            self.processor, self.model = _load(os.path.expanduser(spec.name), self.options,
                                               self.context.max_images_per_request)
        else:
            self.processor, self.model = copy.deepcopy(loaded[0]), loaded[1]
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        self.tokenizer.padding_side = "left"
        #: text-only checkpoints load a bare tokenizer as their "processor"
        self.multimodal = hasattr(self.processor, "image_processor")
        #: videos go to the processor as videos (its own video processor), not as frames
        self.native_video = self.options.video == "native" and getattr(self.processor, "video_processor", None) is not None
        #: decodes each distinct image once (while cached), ahead of the batch that needs it
        self.images = ImageLoader()
        #: prepares the next batch while the model generates (see mmtasks.models.hf_batches)
        self._preparer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mmtasks-prepare")
        #: a copy of the tokenizer for this thread (lengths, decoding): a fast tokenizer used by
        #: two threads at once, one of them setting its padding, fails with "Already borrowed"
        self._main_tokenizer = copy.deepcopy(self.tokenizer)
        self._image_token_counts: dict[str, int] = {}
        #: busy and idle time of the model, padding share (logged at close)
        self.stats = BatchStats()
        self._fingerprint = _fingerprint(self.processor, self.model)
        #: the Hub commit transformers resolved the weights at (None: a local folder)
        self._commit_hash: str | None = getattr(getattr(self.model, "config", None), "_commit_hash", None)
        #: the checkpoint's context length in tokens (None: unknown, nothing is checked)
        self.context_limit = context_limit(self.model)
        #: the settings of the last batch generated, as :meth:`sent_settings` gives them, read
        #: back from the arguments ``generate`` was called with and the template's variables
        self.last_batch: dict[str, Any] | None = None

    @property
    def identity(self) -> str:
        """The spec's identity plus a fingerprint of the checkpoint's config and chat template:
        a local folder whose weights config or template changed must not be answered from
        replies cached for the old one."""
        return json.dumps({"spec": json.loads(self.spec.identity()), "checkpoint": self._fingerprint}, sort_keys=True)

    def revision(self) -> ModelRevision:
        from mmtasks.core.provenance import model_revision

        if not self.owned:  # weights in memory (being trained): no file names them
            return ModelRevision(source="none", name=f"in memory: {self.spec.name}")
        return model_revision(self.spec.name, self.options.revision, self._commit_hash)

    def generate(self, requests: Sequence[Request]) -> Iterator[tuple[int, Reply]]:
        for req in requests:
            self._check_images(req)
        rows: list[_Row] = []
        for i, req in enumerate(requests):
            try:
                rows.append(_Row(i, self._render(req.messages, self._template_kwargs(req.generation)), req))
            except Exception as exc:  # a template that rejects this conversation fails only this request
                yield i, Reply.failure(f"chat template failed: {type(exc).__name__}: {exc}")
        # Batch k+1 is prepared (images, processor, padding, device copy) in a worker thread
        # while the model generates batch k. The caller's model (a Trainer's) gets its random
        # state back: the seeds set for sampling here do not change its training's.
        device = getattr(self.model, "device", None)
        cuda = [device.index or 0] if device is not None and device.type == "cuda" else []
        with contextlib.ExitStack() as stack:
            if not self.owned:
                stack.enter_context(torch.random.fork_rng(devices=cuda))
            for prepared in prepared_ahead(self._batches(rows), self._prepare, self._preparer, self.stats):
                yield from self._answer(prepared)

    def count_prompt_tokens(self, request: Request) -> int:
        """The prompt tokens of ``request`` as :meth:`generate` counts them (the chat template, the
        images and videos through the processor, the unpadded length), without generating:
        ``mmtasks check --estimate``'s count."""
        self._check_images(request)
        prompt = self._render(request.messages, self._template_kwargs(request.generation))
        images, videos = self._pixels(request)
        kwargs: dict[str, Any] = {"text": [prompt], "return_tensors": "pt",
                                  "add_special_tokens": self._adds_special_tokens(prompt)}
        if images:
            kwargs["images"] = [images]
        if videos:
            from transformers.video_utils import VideoMetadata

            kwargs["videos"] = [frames for frames, _ in videos]
            kwargs["video_metadata"] = [VideoMetadata(total_num_frames=run.clip.total_frames, fps=run.clip.fps,
                                                      frames_indices=list(run.clip.indices),
                                                      duration=run.clip.duration) for _, run in videos]
            kwargs["do_sample_frames"] = False
        return int(self.processor(**kwargs)["attention_mask"].sum())

    def close(self) -> None:
        self._preparer.shutdown(wait=True, cancel_futures=True)
        log.info("hf model %s: %s", self.spec.display, _summary(self.stats), extra={"hf_batch_stats": self.stats.as_dict()})
        self.images.close()
        if not self.owned:  # the caller's model (a Trainer's): left as it is
            return
        self.model = None
        self.processor = None
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    # -- internals -------------------------------------------------------

    def _check_images(self, req: Request) -> None:
        n = len(req.images)
        where = f"task {req.task!r}, document {req.doc_id!r}" if req.task else "a request"
        if n and not self.multimodal:
            raise ModelError(f"{self.spec.display} is a text-only model but {where} has {n} image(s)", field="--model")
        limit = self.options.max_images
        if limit is not None and n > limit:
            raise ModelError(
                f"{where} has {n} images but {self.spec.display} is limited to max_images={limit}",
                field="--model-args", hint="raise max_images or use a task variant with fewer images",
            )

    def _template_kwargs(self, generation: GenerationConfig) -> dict[str, Any]:
        """The chat template's variables for a request: the model arg's, the request's over them."""
        return {**self.options.chat_template_kwargs, **generation.chat_template_kwargs}

    def _render(self, messages: Sequence[Message], template_kwargs: dict[str, Any] | None = None) -> str:
        if self.multimodal:
            conversation = processor_conversation(messages, self.native_video)
        else:
            conversation = [{"role": m.role, "content": m.plain_text} for m in messages]
        return self.processor.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True,
                                                  **(template_kwargs or {}))

    def _adds_special_tokens(self, prompt: str) -> bool:
        """Whether tokenizing ``prompt`` adds the tokenizer's special tokens (its BOS).

        The rule of transformers' own path, ``processor.apply_chat_template(tokenize=True)``: a
        prompt that already starts with the BOS token (the chat template wrote it: Gemma 3,
        Mistral 3, Llama 3.2 Vision, Idefics3, Aya Vision ...) is tokenized without special
        tokens, so it does not start with two. Every row of a batch comes from the same
        template, so the first row decides for the batch, as the reference path does for a
        batched conversation."""
        bos = getattr(self.tokenizer, "bos_token", None)
        return not (bos and prompt.startswith(bos))

    def _parts(self, message: Message) -> list[Any]:
        """The message's parts, each video placed whole as one :class:`VideoRun` when videos go natively."""
        return message_parts(message, self.native_video)

    def _pixels(self, request: Request) -> tuple[list[Any], list[tuple[list[Any], VideoRun]]]:
        """The request's decoded images, and its videos (their decoded frames) when they go natively."""
        images: list[Any] = []
        videos: list[tuple[list[Any], VideoRun]] = []
        for message in request.messages:
            for part in self._parts(message):
                if isinstance(part, VideoRun):
                    videos.append(([self.images.load(f) for f in part.frames], part))
                elif isinstance(part, Image):
                    images.append(self.images.load(part))
        return images, videos

    def _batches(self, rows: list[_Row]) -> Iterator[_Batch]:
        """Requests with the same generation settings, longest prompt (image tokens included)
        first, cut into batches of ``self.batch_size`` read as each batch is formed (an
        out-of-memory error halves it). Sorting by length keeps the padding small; longest
        first makes an out-of-memory error come at once. The images of a batch and of the batch
        after it start decoding in worker threads when it is formed, ahead of the model."""
        groups: dict[GenerationConfig, list[_Row]] = {}
        for row in rows:
            groups.setdefault(row.request.generation, []).append(row)
        for generation, members in groups.items():
            pending = sorted(members, key=self._estimated_tokens, reverse=True)
            while pending:
                batch, pending = pending[: self.batch_size], pending[self.batch_size :]
                self.images.prefetch(img for row in batch for img in row.request.images)
                # and the batch after it: its decoding (a video's frames take longer than an image)
                # has the whole of this batch's generation to run in, not only its preparation
                self.images.prefetch(img for row in pending[: self.batch_size] for img in row.request.images)
                yield _Batch(generation, batch)

    def _estimated_tokens(self, row: _Row) -> tuple[int, int]:
        """The prompt's length in tokens with its images expanded (the processor's count for
        each image's size, read from the file header), then its image count."""
        text = len(self._main_tokenizer(row.prompt, add_special_tokens=self._adds_special_tokens(row.prompt)).input_ids)
        return text + sum(self._image_tokens(img) for img in row.request.images), len(row.request.images)

    def _image_tokens(self, image: Image) -> int:
        """Tokens the processor makes of ``image`` (0 when it cannot say without decoding)."""
        key = image_key(image)
        n = self._image_token_counts.get(key)
        if n is None:
            n = self._image_token_counts[key] = _image_token_count(self.processor, image)
        return n

    def _prepare(self, batch: _Batch) -> _Prepared:
        """Everything before ``generate``, in the preparer thread: decode the images (a bad
        image fails only its request), run the processor, refuse prompts over the context."""
        start = time.perf_counter()
        prepared = _Prepared(batch.generation)
        ready: list[tuple[_Row, list[Any], list[tuple[list[Any], VideoRun]]]] = []
        for row in batch.rows:
            try:
                ready.append((row, *self._pixels(row.request)))
            except Exception as exc:  # DataError for missing/corrupt files, names the file
                prepared.failures.append((row.index, Reply.failure(str(exc))))
        while ready:
            try:
                prepared.inputs, prepared.lengths = self._encode(ready)
            except ContextOverflow as over:  # these prompts are never generated for; the rest are
                for position, n in over.rows.items():
                    prepared.failures.append((ready[position][0].index, Reply.failure(
                        f"context_overflow: the prompt has {n} tokens and max_new_tokens is "
                        f"{batch.generation.max_new_tokens}, more than the model's context of {self.context_limit} tokens",
                        FailureKind.CONTEXT_OVERFLOW)))
                ready = [item for row, item in enumerate(ready) if row not in over.rows]
                continue
            except Exception as exc:  # the processor refused this batch: retried one by one by _answer
                prepared.error = f"generation failed: {type(exc).__name__}: {exc}"
            break
        prepared.rows = [item[0] for item in ready]
        self.stats.prepare_s += time.perf_counter() - start
        return prepared

    def _encode(self, ready: list[tuple[_Row, list[Any], list[tuple[list[Any], VideoRun]]]]) -> tuple[Any, list[int]]:
        """The processor's padded batch on the model's device, and each row's unpadded length."""
        prompts = [item[0].prompt for item in ready]
        kwargs: dict[str, Any] = {"text": prompts, "padding": True, "return_tensors": "pt",
                                  "add_special_tokens": self._adds_special_tokens(prompts[0])}
        images = [item[1] for item in ready]
        if any(images):
            kwargs["images"] = images
        videos = [video for item in ready for video in item[2]]
        if videos:
            from transformers.video_utils import VideoMetadata

            kwargs["videos"] = [frames for frames, _ in videos]
            kwargs["video_metadata"] = [VideoMetadata(total_num_frames=run.clip.total_frames, fps=run.clip.fps,
                                                      frames_indices=list(run.clip.indices),
                                                      duration=run.clip.duration) for _, run in videos]
            kwargs["do_sample_frames"] = False
        inputs = self.processor(**kwargs)
        lengths = [int(n) for n in inputs["attention_mask"].sum(dim=1).tolist()]
        generation = ready[0][0].request.generation
        if self.context_limit is not None:  # image tokens included: the processor has expanded them
            over = {row: n for row, n in enumerate(lengths) if n + generation.max_new_tokens > self.context_limit}
            if over:
                raise ContextOverflow(over)
        inputs = inputs.to(self.model.device)
        for key in ("pixel_values", "pixel_values_videos"):
            if key in inputs and self.model.dtype.is_floating_point:
                inputs[key] = inputs[key].to(self.model.dtype)
        return inputs, lengths

    def _answer(self, prepared: _Prepared) -> Iterator[tuple[int, Reply]]:
        """Its preparation's failures, then generate for the rest of a prepared batch; halve it
        on out-of-memory, isolate other failures."""
        yield from prepared.failures
        rows, generation = prepared.rows, prepared.generation
        if not rows:
            return
        if prepared.error is None and len(rows) > self.batch_size:
            # prepared before an out-of-memory error halved the batch size
            prepared.inputs = None
            for k in range(0, len(rows), self.batch_size):
                yield from self._again(rows[k : k + self.batch_size], generation)
            return
        start = time.perf_counter()
        error, oom = prepared.error, False
        if error is None:
            try:
                texts = self._generate_batch(prepared)
            except torch.OutOfMemoryError:
                error, oom = "out of memory even with batch size 1", True
            except Exception as exc:
                error = f"generation failed: {type(exc).__name__}: {exc}"
        prepared.inputs = None
        if error is None:
            elapsed = time.perf_counter() - start
            for row, length, (text, finish, n_tokens) in zip(rows, prepared.lengths, texts):
                yield row.index, Reply(text=text, latency=elapsed, finish_reason=finish, completion_tokens=n_tokens,
                                       prompt_tokens=length,
                                       starts_in_reasoning=opens_reasoning(row.prompt, self.spec.reasoning))
        elif len(rows) == 1:
            yield rows[0].index, Reply.failure(error)
        elif oom:
            # freed here, outside the except block, once the traceback no longer holds the tensors
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            half = len(rows) // 2
            self.batch_size = min(self.batch_size, half)
            log.warning("out of memory with %d requests per batch; retrying with %d", len(rows), half)
            yield from self._again(rows[:half], generation)
            yield from self._again(rows[half:], generation)
        else:  # retry one by one so a single bad request does not fail its whole batch
            for row in rows:
                yield from self._again([row], generation)

    def _again(self, rows: list[_Row], generation: GenerationConfig) -> Iterator[tuple[int, Reply]]:
        """Prepare ``rows`` anew (in this thread) and answer them: a retry after a failure."""
        yield from self._answer(self._prepare(_Batch(generation, rows)))

    @torch.inference_mode()
    def _generate_batch(self, prepared: _Prepared) -> list[tuple[str, str, int]]:
        """Each row's reply text, why it ended (``stop``: an end token or a stop string; ``length``:
        ``max_new_tokens`` generated) and how many tokens it has."""
        generation = prepared.generation
        seed = self._seed(generation)
        torch.manual_seed(seed)
        kwargs = self._generation_kwargs(generation)
        penalties = generation.penalties()
        if penalties:
            from transformers import LogitsProcessorList

            from mmtasks.models.hf_logits import OpenAIPenalties

            processor = OpenAIPenalties(prepared.inputs["input_ids"].shape[1], **penalties)
            kwargs = {**kwargs, "logits_processor": LogitsProcessorList([processor])}
        with self.stats.generating():
            training = self.model.training  # the caller's model may be training: eval mode (no dropout) for this batch
            self.model.eval()
            try:
                output = self.model.generate(**prepared.inputs, **kwargs)
            finally:
                self.model.train(training)
        template_kwargs = self._template_kwargs(generation)
        self.last_batch = self._settings(self._generation_kwargs(generation), seed, generation.stop, template_kwargs, penalties)
        self.stats.count_batch(prepared.lengths)
        new_tokens = output[:, prepared.inputs["input_ids"].shape[1] :]
        texts = self._main_tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        ends = self._end_token_ids()
        out = []
        for row, text in zip(new_tokens.tolist(), texts):
            n = next((k for k, t in enumerate(row) if t in ends), len(row))  # tokens before the end (and padding)
            cut = _cut_at_stop(text, generation.stop)
            finish = "length" if n >= generation.max_new_tokens and len(cut) == len(text) else "stop"
            out.append((cut.strip(), finish, n))
        return out

    def _end_token_ids(self) -> set[int]:
        """The tokens that end a reply: the generation config's end tokens and the padding that follows them."""
        config = getattr(self.model, "generation_config", None)
        ids: set[int] = set()
        for name in ("eos_token_id", "pad_token_id"):
            value = getattr(config, name, None)
            ids.update(v for v in (value if isinstance(value, (list, tuple)) else [value]) if isinstance(v, int))
        tokenizer = self._main_tokenizer
        for name in ("eos_token_id", "pad_token_id"):
            value = getattr(tokenizer, name, None)
            if isinstance(value, int):
                ids.add(value)
        return ids

    def _seed(self, generation: GenerationConfig) -> int:
        return generation.seed if generation.seed is not None else self.context.seed

    def sent_settings(self, generation: GenerationConfig) -> dict[str, Any]:
        """``generate``'s arguments for ``generation`` (None: the checkpoint's generation_config
        value is turned off), the seed set before it, the stop strings the reply is cut at and
        the chat template's variables: what :meth:`_generate_batch` passes."""
        return self._settings(self._generation_kwargs(generation), self._seed(generation), generation.stop,
                              self._template_kwargs(generation), generation.penalties())

    @staticmethod
    def _settings(kwargs: dict[str, Any], seed: int, stop: Sequence[str], template_kwargs: dict[str, Any],
                  penalties: dict[str, Any]) -> dict[str, Any]:
        """The record: ``generate``'s arguments, with OpenAI's penalties and biases under their own
        names (``generate`` gets them as a ``logits_processor``: :mod:`mmtasks.models.hf_logits`)."""
        out: dict[str, Any] = {**kwargs, **penalties, "seed": seed}
        if stop:
            out["stop"] = list(stop)
        if template_kwargs:
            out["chat_template_kwargs"] = dict(template_kwargs)
        return out

    def _generation_kwargs(self, generation: GenerationConfig) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"max_new_tokens": generation.max_new_tokens}
        mode = generation.sampling_mode()
        if mode == "sample":
            kwargs.update(do_sample=True, temperature=generation.temperature or 1.0, top_p=generation.top_p)
        elif mode == "greedy":
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if mode != "greedy":  # set: over the checkpoint's generation_config
            for name in ("top_k", "min_p"):
                if getattr(generation, name) is not None:
                    kwargs[name] = getattr(generation, name)
        if generation.repetition_penalty is not None:
            kwargs["repetition_penalty"] = generation.repetition_penalty
        # Stop strings are applied to the decoded text: transformers' stop_strings needs a
        # tokenizer whose vocabulary it can map back to strings, which not every checkpoint has.
        return kwargs


@dataclass(frozen=True)
class _Row:
    """One request of a wave, its prompt rendered by the chat template."""

    index: int
    prompt: str
    request: Request


@dataclass(frozen=True)
class _Batch:
    generation: GenerationConfig
    rows: list[_Row]


@dataclass
class _Prepared:
    """A batch ready for ``generate``: the processor's tensors on the model's device."""

    generation: GenerationConfig
    #: the rows in ``inputs`` (those whose images loaded and whose prompts fit)
    rows: list[_Row] = field(default_factory=list)
    inputs: Any = None
    #: each row's prompt length in tokens, unpadded
    lengths: list[int] = field(default_factory=list)
    #: requests that failed while preparing (a bad image, a prompt over the context)
    failures: list[tuple[int, Reply]] = field(default_factory=list)
    #: the processor's error for the whole batch (retried one by one)
    error: str | None = None


def _image_token_count(processor: Any, image: Image) -> int:
    """Placeholder tokens the processor makes of ``image``, from its size in the file header
    (Pillow reads no pixels to tell it); 0 when the image or the processor cannot say."""
    from PIL import Image as PILImage

    from mmtasks.core.pixels import Undecodable, decoding

    count = getattr(processor, "_get_num_multimodal_tokens", None)
    if count is None or image.parts:
        return 0
    try:
        if image.frame is not None:  # a video frame: its size after the task's bound, from the video's header
            width, height = image.frame.clip.frame_size
        else:
            source: Any = io.BytesIO(image.data) if image.data is not None else image.path
            with decoding(), PILImage.open(source) as img:
                width, height = img.size
    except Undecodable:
        return 0  # a missing or corrupt file fails later, with its own message
    try:
        data = count(image_sizes=[(height, width)])
        tokens = data["num_image_tokens"] if isinstance(data, dict) else data.num_image_tokens
        return int(tokens[0])
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, NotImplementedError):
        return 0  # a processor that cannot say


def _summary(stats: BatchStats) -> str:
    return (f"{stats.batches} batches, {stats.rows} rows; generate {stats.generate_s:.2f} s, idle {stats.idle_s:.2f} s "
            f"({stats.idle_share:.1%} of the span; waiting for a batch {stats.waited_for_prepare_s:.2f} s); "
            f"padding {stats.padded_share:.1%} of the batch slots")


class ContextOverflow(Exception):
    """Prompts of a batch that do not fit the context with ``max_new_tokens``: row -> prompt tokens."""

    def __init__(self, rows: dict[int, int]) -> None:
        super().__init__(f"{len(rows)} prompt(s) exceed the context")
        self.rows = rows


def context_limit(model: Any) -> int | None:
    """The checkpoint's context length: ``max_position_embeddings`` of its (text) config.

    A request is refused as ``context_overflow`` (before ``generate``) when its prompt, image
    tokens included, plus ``max_new_tokens`` exceeds it: the rule of OpenAI-compatible servers
    such as vLLM's, so that every backend fails the same requests."""
    config = getattr(model, "config", None)
    for cfg in (getattr(config, "text_config", None), config):
        value = getattr(cfg, "max_position_embeddings", None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _cut_at_stop(text: str, stop: Sequence[str]) -> str:
    cut = min((pos for s in stop if (pos := text.find(s)) >= 0), default=len(text))
    return text[:cut]


def _load(name: str, options: HFOptions, max_images_per_request: int = 1) -> tuple[Any, Any]:
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText, AutoProcessor

    common: dict[str, Any] = {"trust_remote_code": options.trust_remote_code}
    if options.revision:
        common["revision"] = options.revision
    pixel_args = {k: getattr(options, k) for k in _PIXEL_ARGS if getattr(options, k) is not None}
    model_args: dict[str, Any] = {"dtype": _DTYPES[options.dtype], **common}
    if options.attn_implementation:
        model_args["attn_implementation"] = options.attn_implementation
    device_map = options.device_map
    if device_map is None and options.device is None and torch.cuda.is_available():
        device_map = "auto"
    if device_map is not None:
        model_args["device_map"] = device_map
    if hub_preflight(name, options.revision):
        common["local_files_only"] = True
    try:
        # the config alone first: an architecture the generic path cannot drive is refused before
        # any weights load (mmtasks.models.hf_architectures)
        config = AutoConfig.from_pretrained(name, **common)
        check_architecture(name, getattr(config, "model_type", None), max_images_per_request)
        processor = AutoProcessor.from_pretrained(name, **common, **pixel_args)
        try:
            model = AutoModelForImageTextToText.from_pretrained(name, **model_args)
        except ValueError as exc:
            if "Unrecognized configuration class" not in str(exc):
                raise
            model = AutoModelForCausalLM.from_pretrained(name, **model_args)
    except OSError as exc:
        raise _not_found(name, exc) from None
    except (ValueError, ImportError) as exc:
        raise ModelError(f"cannot load hf model {name!r}: {_first_line(exc)}", field="--model") from None
    _check_pixel_args(name, processor, pixel_args)
    if device_map is None:
        # transformers wraps PreTrainedModel.to in a decorator whose annotation drops the bound self
        model.to(options.device or "cpu")  # type: ignore[arg-type]
    return processor, model.eval()


def _check_pixel_args(name: str, processor: Any, pixel_args: dict[str, int]) -> None:
    """Refuse max_pixels/min_pixels where the image processor would silently ignore them."""
    image_processor = getattr(processor, "image_processor", None)
    accepted = set(getattr(getattr(type(image_processor), "valid_kwargs", None), "__annotations__", {}))
    for key in pixel_args:
        if key not in accepted and not hasattr(image_processor, key):
            raise ModelError(
                f"model argument {key!r} is not accepted by the image processor of {name!r} "
                f"({type(image_processor).__name__})",
                field="--model-args",
            )


def _not_found(name: str, exc: OSError) -> ModelError:
    from huggingface_hub.constants import is_offline_mode

    if os.path.isdir(os.path.expanduser(name)):
        return ModelError(f"cannot load hf model from directory {name!r}: {_first_line(exc)}", field="--model")
    if looks_local(name):
        return ModelError(
            f"hf model {name!r} could not be found locally nor downloaded (no such directory)",
            field="--model",
            hint="check the path, or download the weights with `hf download ORG/NAME --local-dir DIR` and pass DIR",
        )
    offline = " (HF_HUB_OFFLINE is set)" if is_offline_mode() else ""
    return ModelError(
        f"hf model {name!r} could not be found locally nor downloaded from the Hugging Face Hub{offline}",
        field="--model",
        hint=f"download it with `hf download {name}` (older: `huggingface-cli download {name}`) and pass the "
        "local path, or set HF_HOME to the cache that holds it",
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _fingerprint(processor: Any, model: Any) -> str:
    """SHA-256 over the model config and the chat template (what the weights path alone does not pin)."""
    tokenizer = getattr(processor, "tokenizer", processor)
    template = getattr(processor, "chat_template", None) or getattr(tokenizer, "chat_template", None) or ""
    config = model.config.to_json_string(use_diff=False) if hasattr(model, "config") else ""
    return hashlib.sha256(f"{config}\n{template}".encode()).hexdigest()[:16]
