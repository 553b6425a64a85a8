"""The model interface and model specs.

A backend is a :class:`ChatModel` subclass registered under a name in
:data:`mmtasks.registry.backends` (the built-ins lazily, in :mod:`mmtasks.models.builtin`),
so an optional dependency (torch, vllm) is only needed by the run that uses it,
and its absence is a clear error naming the extra to install.
"""

from __future__ import annotations

import difflib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mmtasks.errors import ConfigError
from mmtasks.registry import backends
from mmtasks.core.reasoning import REASONING_ARGS, ReasoningFormat, split_reply
from mmtasks.core.request import GenerationConfig, Reply, Request
from mmtasks.secrets import public_args, register_arg_secrets

if TYPE_CHECKING:
    from mmtasks.core.provenance import ModelRevision

#: an example spec for each built-in backend (the hint for a bare backend name)
_BARE_EXAMPLES = {
    "hf": "hf:Qwen/Qwen2-VL-7B-Instruct", "vllm": "vllm:Qwen/Qwen2-VL-7B-Instruct",
    "openai": "openai:gpt-4o-2024-05-13", "replay": "replay:runs/previous",
    "anthropic": "anthropic:claude-sonnet-4-5", "gemini": "gemini:gemini-2.5-flash",
}


def register_model(name: str, target: str | type["ChatModel"]) -> None:
    """Register a backend: ``target`` is a class or a lazy ``"module:Class"`` string."""
    if isinstance(target, str):
        backends.register_lazy(name, target)
    else:
        backends.register(name, target)


def backend_names() -> list[str]:
    return backends.names()


class ModelSpec(BaseModel):
    """A parsed ``--model`` value: backend, model name/path and backend args."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str
    name: str = ""
    args: dict[str, Any] = Field(default_factory=dict)
    #: preset this spec came from, if any
    preset: str | None = None
    #: the preset's generation settings (a thinking model's budget, ``chat_template_kwargs``,
    #: ``reasoning_effort``): over every task's own, under ``--gen-kwargs``
    generation: dict[str, Any] = Field(default_factory=dict, exclude_if=lambda v: not v)
    #: how the model writes its reasoning (the ``reasoning_tags`` / ``reasoning_starts_open`` model
    #: args or the preset's ``reasoning:``; never passed to the backend); None: the default tags
    reasoning: ReasoningFormat | None = Field(default=None, exclude_if=lambda v: v is None)

    @model_validator(mode="before")
    @classmethod
    def _reasoning_args(cls, data: Any) -> Any:
        """``reasoning_tags`` / ``reasoning_starts_open`` in the args are every backend's: they move
        to ``reasoning`` (over a preset's), so a backend never sees them."""
        if not isinstance(data, dict) or not isinstance(data.get("args"), dict):
            return data
        args = data["args"]
        given = {field: args[name] for name, field in REASONING_ARGS.items() if name in args}
        if not given:
            return data
        base = data.get("reasoning")
        base = base.model_dump() if isinstance(base, ReasoningFormat) else dict(base or {})
        try:
            fmt = ReasoningFormat(**{**base, **given})
        except ValueError as exc:
            detail = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
            raise ConfigError(f"reasoning_tags / reasoning_starts_open: {str(detail).removeprefix('Value error, ')}",
                              field="--model-args") from None
        return {**data, "args": {k: v for k, v in args.items() if k not in REASONING_ARGS}, "reasoning": fmt}

    @model_validator(mode="after")
    def _register_secrets(self) -> "ModelSpec":
        register_arg_secrets(self.args)  # header values: redacted from every message and record
        return self

    @property
    def display(self) -> str:
        return f"{self.backend}:{self.name}" if self.name else self.backend

    def identity(self) -> str:
        """A stable string naming this model and every arg that can change its answers (header
        values are secrets: their names count, their values are ``***``). The reasoning format is
        not in it: the cache keeps replies as received and splits them again when served."""
        return json.dumps(
            {"backend": self.backend, "name": self.name, "args": _identity_args(self.args)},
            sort_keys=True,
            default=str,
        )


#: args that change speed or placement but never the answers
_NON_IDENTITY_ARGS = {
    "device", "device_map", "batch_size", "concurrency", "timeout", "max_retries", "api_key_env",
    "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
    "distributed_executor_backend", "mm_encoder_tp_mode",
    "gpu_memory_utilization", "num_gpus", "base_url", "enforce_eager", "deadline", "max_response_bytes",
}


def _identity_args(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in public_args(args).items() if k not in _NON_IDENTITY_ARGS and "key" not in k.lower()}


def parse_args_string(text: str | None) -> dict[str, Any]:
    """Parse ``k=v,k2=v2`` into a dict, coercing ints, floats, booleans and None. A URL after
    a URL value continues it as a list (``base_url=http://A/v1,http://B/v1``: a pool of endpoints)."""
    out: dict[str, Any] = {}
    if not text:
        return out
    last: str | None = None
    for item in _split_top_level(text):
        if not item.strip():
            continue
        stripped = item.strip()
        if (last is not None and stripped.startswith(("http://", "https://"))
                and isinstance(out[last], (str, list)) and str(out[last] if isinstance(out[last], str) else out[last][0]).startswith(("http://", "https://"))):
            out[last] = [*([out[last]] if isinstance(out[last], str) else out[last]), stripped]
            continue
        if "=" not in item:
            raise ConfigError(f"model argument {item!r} is not of the form key=value", field="--model-args")
        key, value = item.split("=", 1)
        last = key.strip()
        out[last] = coerce_value(value.strip())
    return out


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside brackets or braces (so JSON values survive)."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def coerce_value(value: str) -> Any:
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(value)
        except ValueError:
            pass
    if value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            pass
    return value


def parse_model_spec(spec: str, extra_args: dict[str, Any] | None = None, presets_dirs: Sequence[Path] = ()) -> ModelSpec:
    """Turn ``backend:name``, ``random``, ``replay:PATH`` or a preset name into a :class:`ModelSpec`."""
    from mmtasks.models.presets import find_preset, preset_names

    extra_args = dict(extra_args or {})
    spec = spec.strip()
    if not spec:
        raise ConfigError("empty model spec", field="--model")
    backend, sep, name = spec.partition(":")
    if sep and backend in backends:
        preset = find_preset(name, presets_dirs) if backend != "replay" else None
        if preset is not None:
            return preset.to_spec(extra_args, backend=backend)
        return ModelSpec(backend=backend, name=name, args=extra_args)
    if not sep and spec == "random":
        return ModelSpec(backend=spec, name="", args=extra_args)
    preset = find_preset(spec, presets_dirs)
    if preset is not None:
        return preset.to_spec(extra_args)
    if not sep and spec in backend_names():  # a bare backend name: say what goes after the colon
        what = {"replay": "PATH"}.get(spec, "NAME")
        raise ConfigError(f"backend {spec!r} needs a model: {spec}:{what}", field="--model",
                          hint=f"e.g. {_BARE_EXAMPLES.get(spec, spec + ':' + what)}")
    if sep:
        suggestion = difflib.get_close_matches(backend, backend_names(), n=1)
        hint = f"did you mean {suggestion[0]!r}?" if suggestion else f"known backends: {', '.join(backend_names())}"
        raise ConfigError(f"unknown model backend {backend!r} in {spec!r}", field="--model", hint=hint)
    candidates = backend_names() + preset_names(presets_dirs)
    suggestion = difflib.get_close_matches(spec, candidates, n=1)
    hint = (
        f"did you mean {suggestion[0]!r}?"
        if suggestion
        else "use backend:name (e.g. hf:Qwen/Qwen2-VL-7B-Instruct), random, replay:PATH or a preset from models/"
    )
    raise ConfigError(f"unknown model {spec!r}", field="--model", hint=hint)


@dataclass(frozen=True)
class ModelContext:
    """Run settings a backend may need beyond its own args."""

    seed: int = 0
    #: requests per forward pass for local backends (None: the backend's default)
    batch_size: int | None = None
    #: the most images any request of this run carries, each sampled video frame among them (for
    #: vLLM's limit_mm_per_prompt)
    max_images_per_request: int = 1
    #: the most videos any request of this run carries (for vLLM's limit_mm_per_prompt)
    max_videos_per_request: int = 0
    verbose: bool = False


class ChatModel(ABC):
    """A model that answers chat requests.

    Subclasses implement :meth:`generate`; they receive a whole wave of
    requests (the scheduler batches across documents and dialogues) and yield
    ``(index, reply)`` pairs as replies complete, in any order, so that each
    reply can be cached the moment it exists.
    """

    #: whether replies are worth caching (not for instant baselines such as ``random``)
    cacheable: ClassVar[bool] = True
    #: the optional generation settings (:data:`~mmtasks.core.request.OPTIONAL_SETTINGS`) this
    #: backend passes to the model; a task or ``--gen-kwargs`` setting another is refused before
    #: the backend loads, naming it (:func:`settings_problem`), so none is silently dropped.
    #: Every backend takes ``max_new_tokens``, ``temperature``, ``top_p``, ``do_sample``, ``seed``, ``stop``.
    takes_settings: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, spec: ModelSpec, context: "ModelContext | None" = None) -> None:
        self.spec = spec
        self.context = context or ModelContext()

    @classmethod
    def refused_settings(cls, generation: GenerationConfig) -> list[str]:
        """The settings of ``generation`` this backend cannot take: the optional ones it does not
        declare (:attr:`takes_settings`), and any other a backend refuses (an API without sampling
        settings refuses ``temperature``); checked before the backend loads (:func:`settings_problem`)."""
        return [name for name in generation.optional_settings() if name not in cls.takes_settings]

    @property
    def identity(self) -> str:
        return self.spec.identity()

    @abstractmethod
    def generate(self, requests: Sequence[Request]) -> Iterable[tuple[int, Reply]]:
        """Answer every request; yield ``(index into requests, reply)``."""

    #: whether the backend serves one request at a time concurrently (:meth:`agenerate`): API
    #: backends, for which the scheduler sends each dialogue's next request as soon as its reply
    #: arrives (no wave barrier). Local backends keep batching whole waves through :meth:`generate`.
    supports_async: ClassVar[bool] = False

    async def agenerate(self, request: Request) -> Reply:
        """Answer one request (backends with ``supports_async``); the backend bounds its own
        concurrency, and is called from the scheduler's event loop. Failures are replies."""
        raise NotImplementedError(f"{type(self).__name__} answers whole waves only (generate)")

    #: the most tokens one request may hold, prompt and reply together, when the backend knows it
    #: before the first request (a vLLM server's ``/v1/models`` reports its ``max_model_len``; read
    #: by :meth:`check_ready`); None: unknown. The run checks every task's ``max_new_tokens`` against it.
    max_model_len: int | None = None

    def sent_settings(self, generation: GenerationConfig) -> dict[str, Any] | None:
        """The generation settings a request built for ``generation`` carries, as this backend
        puts them on it (its own names and values: what the model is given, not what was asked),
        computed by the code that builds the request; results.json records them per task. None:
        the backend sends no settings (the ``random`` and ``replay`` baselines)."""
        return None

    def check_ready(self) -> None:
        """Raise :class:`ModelError` if the model cannot be used (e.g. unreachable API)."""

    def revision(self) -> "ModelRevision | None":
        """Which weights answer (results.json's ``run_card.model``): a Hub commit, a local
        checkpoint's hash, an API model's name (:mod:`mmtasks.results.run_card`); None: the
        backend names none (baselines). Called before :meth:`close`."""
        return None

    def close(self) -> None:
        """Release resources (GPU memory, HTTP clients)."""

    def finish_reply(self, request: Request, reply: Reply) -> Reply:
        """A reply as received (from the backend or the cache) as parsers, metrics and judges see
        it: the model's reasoning split from its answer, or a ``truncated`` failure when no answer
        is left (:func:`mmtasks.core.reasoning.split_reply`). The schedulers call it on every reply."""
        return split_reply(reply, self.spec.reasoning, request.generation.max_new_tokens)

    def generate_all(self, requests: Sequence[Request]) -> list[Reply]:
        """Every request's reply, as the schedulers deliver it (:meth:`finish_reply`)."""
        out: list[Reply | None] = [None] * len(requests)
        for i, reply in self.generate(requests):
            out[i] = self.finish_reply(requests[i], reply)
        return [r if r is not None else Reply.failure("backend returned no reply") for r in out]


def settings_problem(backend: str, generation: GenerationConfig) -> str | None:
    """Which optional setting of ``generation`` the backend ``backend`` cannot take, as the
    message of its refusal; None when it takes them all (or the backend is unknown: the spec's
    own error says so)."""
    from mmtasks.errors import MmtasksError

    try:
        cls: type[ChatModel] = backends.get(backend, field="--model")
    except MmtasksError:  # unknown, or its extra is not installed: loading it says so
        return None
    missing = cls.refused_settings(generation)
    if not missing:
        return None
    takes = ", ".join(sorted(cls.takes_settings)) or "none of the optional settings"
    why = ("; several replies per document are --repeats K, each its own request and seed, scored and "
           "recorded apart" if "n" in missing else "")
    return f"the {backend} backend cannot take {', '.join(missing)} (it takes {takes}){why}"


def load_model(spec: ModelSpec, context: "ModelContext | None" = None) -> ChatModel:
    """Instantiate the backend for ``spec`` with the run's settings."""
    cls: type[ChatModel] = backends.get(spec.backend, field="--model")
    return cls(spec, context or ModelContext())
