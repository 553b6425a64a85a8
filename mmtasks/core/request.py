"""What is sent to a model, and what comes back."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mmtasks.core.conversation import Image, Message, Text

#: Who a request is for: the model under test, the judge, or a helper model
#: such as the note taker or the answer matcher. The scheduler routes by this.
Target = Literal["model", "judge", "notetaker", "matcher"]
#: the command-line flags naming each target's spec and args (errors name the one at fault)
COMPONENT_FLAGS: dict[str, tuple[str, str]] = {
    "model": ("--model", "--model-args"),
    "judge": ("--judge", "--judge-args"),
    "notetaker": ("--notetaker", "--notetaker-args"),
    "matcher": ("--matcher", "--matcher-args"),
}


#: the largest ``max_new_tokens`` accepted (beyond any model's context: a typo, not a budget)
MAX_NEW_TOKENS_BOUND = 10_000_000
#: optional settings a backend must declare it takes (:attr:`ChatModel.takes_settings`); the
#: others (``max_new_tokens``, ``temperature``, ``top_p``, ``do_sample``, ``seed``, ``stop``) every
#: backend takes
OPTIONAL_SETTINGS = ("top_k", "min_p", "repetition_penalty", "chat_template_kwargs", "reasoning_effort",
                     "presence_penalty", "frequency_penalty", "logit_bias", "n", "thinking_budget")
#: settings that, given on a greedy task (``--gen-kwargs``), turn sampling on, as lm-eval's do
SAMPLING_SETTINGS = ("temperature", "top_p", "top_k", "min_p")


class GenerationConfig(BaseModel):
    """Generation settings of one request (mapped to each backend's own names). Each value is
    bounded: a value out of range is an error naming the setting, wherever it was given (the
    task's ``generation``, ``--gen-kwargs``, a preset)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, use_attribute_docstrings=True)

    max_new_tokens: int = Field(512, ge=1, le=MAX_NEW_TOKENS_BOUND)
    """The most tokens of each reply (reasoning included, for a model that thinks)."""
    temperature: float | None = Field(0.0, ge=0.0)
    """0: greedy. None (with ``do_sample`` None): the model's own default sampling (MMRC asks for it)."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    """Nucleus sampling: the smallest set of tokens whose probabilities add up to this (1: all)."""
    do_sample: bool | None = None
    """True: sample; False: greedy, whatever ``temperature`` says; None: ``temperature`` decides."""
    seed: int | None = Field(None, ge=0, le=2**63 - 1)
    """The sampling seed sent with each request (None: the run's ``--seed`` where the backend takes one)."""
    stop: tuple[str, ...] = ()
    """Strings that end a reply (the reply is cut where the first one starts)."""
    top_k: int | None = Field(None, ge=1)
    """Sample among the k most likely tokens (None: no cut). Sent by ``hf``, ``vllm`` and ``openai``
    (in the body, where vLLM's server reads it)."""
    min_p: float | None = Field(None, ge=0.0, le=1.0)
    """Drop tokens less likely than this share of the most likely one (None: not applied)."""
    repetition_penalty: float | None = Field(None, gt=0.0)
    """Penalty on tokens already in the prompt or the reply (1: none; None: the model's default)."""
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Variables of the model's chat template (``{enable_thinking: false}``): rendered by ``hf`` and
    ``vllm``, sent by ``openai`` as the body's ``chat_template_kwargs`` (as vLLM's server reads it).
    Over a model's own ``chat_template_kwargs`` model arg, key by key."""
    reasoning_effort: str | None = Field(None, min_length=1, max_length=32)
    """How hard a reasoning model thinks, for APIs that take it (OpenAI's and vLLM's
    ``reasoning_effort``: ``low``, ``medium``, ``high`` ...; Gemini's ``thinking_level``). Sent by
    ``openai`` and ``gemini``."""
    presence_penalty: float | None = Field(None, ge=-2.0, le=2.0)
    """OpenAI's presence penalty: subtracted once from the logit of every token already in the
    reply (None: not applied). Sent by ``openai``, ``vllm``, ``gemini``; ``hf`` applies it itself."""
    frequency_penalty: float | None = Field(None, ge=-2.0, le=2.0)
    """OpenAI's frequency penalty: subtracted from a token's logit once per time it is already in
    the reply (None: not applied). Sent by ``openai``, ``vllm``, ``gemini``; ``hf`` applies it itself."""
    logit_bias: dict[int, float] = Field(default_factory=dict)
    """Token id -> a bias added to its logit at every step (OpenAI's ``logit_bias``, -100 to 100).
    Sent by ``openai`` and ``vllm``; ``hf`` applies it itself. Token ids are the model's own."""
    n: int | None = Field(None, ge=1, le=128)
    """Replies per prompt, drawn in one call where the API takes ``n`` (``openai``; ``gemini``'s
    ``candidate_count``): a task that
    samples runs each document ``n`` times, as ``--repeats n`` does, its first requests sent once
    with ``n`` (the prompt paid once) and each repeat scored with one of the replies; later turns
    of a multi-turn dialogue are each repeat's own requests. The other backends refuse it: their
    repeats are ``--repeats K``, each its own request and seed."""
    thinking_budget: int | None = Field(None, ge=-1, le=MAX_NEW_TOKENS_BOUND)
    """Tokens a model may think before answering, for APIs that take a budget (Claude's
    ``thinking.budget_tokens``, Gemini's ``thinking_budget``; -1: Gemini's dynamic budget, 0: no
    thinking where the model allows it). Sent by ``anthropic`` and ``gemini``."""

    @field_validator("logit_bias")
    @classmethod
    def _bias_range(cls, v: dict[int, float]) -> dict[int, float]:
        bad = next((k for k, b in v.items() if k < 0 or not -100.0 <= b <= 100.0), None)
        if bad is not None:
            raise ValueError(f"logit_bias[{bad}]: token ids are non-negative and biases lie in [-100, 100]")
        return v

    @field_validator("stop", mode="before")
    @classmethod
    def _one_stop_string(cls, v: Any) -> Any:
        return (v,) if isinstance(v, str) else v  # --gen-kwargs stop=Q: is one stop string

    @field_validator("stop")
    @classmethod
    def _stop_strings(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if any(not s for s in v):
            raise ValueError("a stop string is empty (it would end every reply before its first character)")
        return v

    def __hash__(self) -> int:  # chat_template_kwargs is a dict: hash the settings' JSON
        return hash(json.dumps(self.model_dump(mode="json"), sort_keys=True))

    def optional_settings(self) -> list[str]:
        """The :data:`OPTIONAL_SETTINGS` this config sets (a backend that cannot take one refuses it)."""
        return [name for name in OPTIONAL_SETTINGS if getattr(self, name) not in (None, {})]

    def penalties(self) -> dict[str, Any]:
        """``presence_penalty``, ``frequency_penalty`` and ``logit_bias`` as they are set (the
        OpenAI-defined settings every backend that takes them sends under these names)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in ("presence_penalty", "frequency_penalty")
                               if getattr(self, name) is not None}
        if self.logit_bias:
            out["logit_bias"] = dict(self.logit_bias)
        return out

    def cache_fields(self) -> dict[str, Any]:
        """The settings as the response cache keys them: the optional settings only when set,
        so adding one kept every earlier key."""
        unset = set(OPTIONAL_SETTINGS) - set(self.optional_settings())
        return self.model_dump(exclude=unset)

    def sampling_mode(self) -> Literal["greedy", "sample", "default"]:
        """How every backend must decode: one rule, so backends agree.

        ``do_sample`` wins when set; otherwise temperature 0 is greedy, a positive
        temperature samples, and no temperature means the model's own defaults.
        """
        if self.do_sample is False or (self.do_sample is None and self.temperature == 0):
            return "greedy"
        if self.do_sample is None and self.temperature is None:
            return "default"
        if self.temperature is not None and self.temperature <= 0:
            return "greedy"
        return "sample"


@dataclass(frozen=True, eq=False)
class Request:
    """One model call.

    ``meta`` carries hints that do not change the prompt (the answer space for
    the ``random`` baseline, the task name, the document id and position for
    ``replay``). ``attempt`` distinguishes a re-ask of the same prompt so that
    a cache does not answer a retry with the reply being retried.
    """

    messages: tuple[Message, ...]
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    target: Target = "model"
    attempt: int = 0
    task: str = ""
    doc_id: str = ""
    #: index of this request among all requests the protocol made for the document
    position: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    #: which of the ``generation.n`` replies of one call this request is answered by (``n``: the
    #: repeats of a document's first requests drawn in one call, :mod:`mmtasks.scoring.repeats`);
    #: None: a call of its own
    choice: int | None = None

    def content_key(self) -> str:
        """Hash of everything that changes the answer, apart from the model identity."""
        payload = {
            "messages": [
                {
                    "role": m.role,
                    "parts": [
                        {"t": p.text} if isinstance(p, Text) else
                        {"i": p.content_hash, **({"d": p.detail} if p.detail is not None else {})}
                        for p in m.parts
                    ],
                }
                for m in self.messages
            ],
            "generation": self.generation.cache_fields(),
            "attempt": self.attempt,
            # only when set, so adding it kept every earlier key
            **({"choice": self.choice} if self.choice is not None else {}),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    @property
    def images(self) -> list[Image]:
        return [img for m in self.messages for img in m.images]


#: the token counts a reply carries (each None when the backend does not report it)
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")


class FailureKind(str, Enum):
    """Why a request failed, recorded with it (``Sample.failure_kinds``): counted apart in
    results.json's ``problems`` and ``coverage``."""

    #: any failure of no kind of its own (an HTTP error, a timeout, a refused request)
    REQUEST_FAILURE = "request_failure"
    #: the prompt does not fit the model's context (the backend refused it)
    CONTEXT_OVERFLOW = "context_overflow"
    #: the reply left no answer after its reasoning (:mod:`mmtasks.core.reasoning`)
    TRUNCATED = "truncated"

    @classmethod
    def of_error(cls, error: str | None) -> "FailureKind":
        """The kind an error's text names: the backends and the reasoning split start it with the
        kind and a colon, and a protocol may prefix where it happened (``turn 3: context_overflow:
        ...``). For what was recorded before the kind was (run folders, cached replies); a new
        failure carries its kind."""
        if error:
            found = [(error.find(f"{kind.value}:"), kind) for kind in (cls.CONTEXT_OVERFLOW, cls.TRUNCATED)
                     if f"{kind.value}:" in error]
            if found:
                return min(found, key=lambda f: f[0])[1]
        return cls.REQUEST_FAILURE


@dataclass(frozen=True)
class Reply:
    """A model's answer to a request, or the failure that prevented one.

    A failed reply is never scored as an answer: ``text`` is None and
    ``error`` says why.
    """

    text: str | None
    error: str | None = None
    cached: bool = False
    #: seconds spent producing the reply (0 when served from the cache)
    latency: float = 0.0
    #: the model's reasoning, kept apart from its answer (:mod:`mmtasks.core.reasoning`): the
    #: server's reasoning field as a backend received it, then also the text's reasoning blocks
    reasoning: str | None = None
    #: why the reply ended: ``stop`` (the model ended it), ``length`` (``max_new_tokens``), or the
    #: backend's own word (``content_filter`` ...); None: the backend does not say (a replayed file)
    finish_reason: str | None = None
    #: tokens of reasoning where the backend counts them (a server's ``reasoning_tokens``)
    reasoning_tokens: int | None = None
    #: tokens of the whole reply where the backend counts them
    completion_tokens: int | None = None
    #: tokens of the prompt (images included) where the backend counts them (an API's usage; the
    #: local backends' own count)
    prompt_tokens: int | None = None
    #: tokens of the prompt served from the provider's prompt cache, where it says
    cached_tokens: int | None = None
    #: the prompt ended inside a reasoning block (its chat template wrote the opening tag)
    starts_in_reasoning: bool = False
    #: the reasoning is already split from ``text`` (what the scheduler delivers)
    split: bool = False
    #: why the request failed, as the backend (or the reasoning split) knows it; None: it did not
    #: fail, or its maker did not say (then :attr:`kind` reads the error's text)
    failure_kind: FailureKind | None = None

    @property
    def ok(self) -> bool:
        return self.text is not None

    @property
    def kind(self) -> FailureKind | None:
        """Why the request failed (None: it did not): the kind its maker gave, else the one its
        error's text names (a backend of a plugin that gives none: :meth:`FailureKind.of_error`)."""
        if self.ok:
            return None
        return self.failure_kind or FailureKind.of_error(self.error)

    def tokens(self) -> dict[str, int] | None:
        """The token counts the backend reported for this reply (``prompt``, ``completion``,
        ``reasoning``, ``cached``: those it reported), as samples record them; None: none."""
        counts = {name.removesuffix("_tokens"): getattr(self, name) for name in TOKEN_FIELDS}
        out = {k: v for k, v in counts.items() if v is not None}
        return out or None

    @classmethod
    def failure(cls, error: str, kind: FailureKind | None = None) -> "Reply":
        """A failed reply; ``kind``: why, where the maker knows (else read from ``error``: :attr:`kind`)."""
        return cls(text=None, error=error, failure_kind=kind)

    def to_cache(self) -> str:
        """The reply as the response cache stores it: every part a backend received (text,
        reasoning field, finish reason, token counts), before reasoning is split from the text."""
        fields = {"text": self.text, "reasoning": self.reasoning, "finish_reason": self.finish_reason,
                  "reasoning_tokens": self.reasoning_tokens, "completion_tokens": self.completion_tokens,
                  "prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
                  "starts_in_reasoning": self.starts_in_reasoning}
        # "is not": a count of 0 is kept (0 == False would drop it)
        return json.dumps({k: v for k, v in fields.items() if v is not None and v is not False}, ensure_ascii=False)

    @classmethod
    def from_cache(cls, stored: str) -> "Reply":
        """A reply stored by :meth:`to_cache`, marked ``cached``."""
        try:
            data = json.loads(stored)
        except ValueError:
            data = None
        if not isinstance(data, dict):  # not one of ours: the text as stored
            return cls(text=stored, cached=True)
        ints: dict[str, Any] = {k: data[k] if isinstance(data.get(k), int) and not isinstance(data.get(k), bool) else None
                for k in TOKEN_FIELDS}
        return cls(text=str(data.get("text") or ""), cached=True,
                   reasoning=data["reasoning"] if isinstance(data.get("reasoning"), str) else None,
                   finish_reason=data["finish_reason"] if isinstance(data.get("finish_reason"), str) else None,
                   starts_in_reasoning=data.get("starts_in_reasoning") is True, **ints)
