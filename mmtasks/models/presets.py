"""Model presets: ``models/*.yaml`` name a model's weights and the backend settings it needs.

``--model qwen2-vl-7b`` uses the preset's default backend; ``--model
vllm:qwen2-vl-7b`` the same weights through the preset's ``vllm`` settings;
``--model openai:qwen2-vl-7b`` asks an OpenAI-compatible server (e.g. ``vllm
serve``) for the weights' name. ``--model-args`` override preset args.
"""

from __future__ import annotations

from collections.abc import Sequence
from mmtasks.package_data import data_dir
from mmtasks.models.prices import PRICES_FILE
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mmtasks.config.yaml_loader import read_yaml, validate
from mmtasks.core.reasoning import ReasoningFormat
from mmtasks.errors import ConfigError

if TYPE_CHECKING:
    from mmtasks.models.base import ModelSpec

#: presets shipped with mmtasks as package data (``models/*.yaml``)
BUILTIN_PRESETS_DIR = data_dir("presets")
#: backends that take a ``max_images`` model arg (vLLM sizes ``limit_mm_per_prompt`` from the run instead)
MAX_IMAGES_BACKENDS = frozenset({"hf"})


class BackendSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    """Weights for this backend when they differ from the preset's (e.g. a quantized repo)."""
    args: dict[str, Any] = Field(default_factory=dict)
    generation: dict[str, Any] = Field(default_factory=dict)
    """Generation settings for this backend, over the preset's own ``generation`` (an API's
    ``reasoning_effort``)."""


class PresetMode(BaseModel):
    """One of a model card's protocols (``modes:``), chosen with ``--model PRESET@MODE``: the
    card's generation settings, over the preset's own and each task's, under ``--gen-kwargs``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    generation: dict[str, Any]
    """The protocol's generation settings, as ``--gen-kwargs`` takes them."""
    source: str = Field(min_length=1)
    """Where the settings are given (the model card, its section and revision)."""
    description: str = ""


#: what separates a preset's name from one of its modes in ``--model``
MODE_SEPARATOR = "@"


class Preset(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    weights: str
    """Hub id or local path."""
    backend: str = "hf"
    """Backend used when the preset is named on its own."""
    backends: dict[str, BackendSettings] = Field(default_factory=dict)
    max_images: int | None = None
    """The most images per request the model handles well; passed as the ``max_images`` arg
    to the backends that check it (``hf``). For ``vllm``, set ``limit_mm_per_prompt``."""
    context_length: int | None = None
    """Tokens of context the model was built for (prompt, image tokens and reply)."""
    paper: str | None = None
    """Where the papers evaluated it (for the leaderboard's reference rows)."""
    unsupported: dict[str, str] = Field(default_factory=dict)
    """Backends that cannot run this model -> why (the error a user sees)."""
    reasoning: ReasoningFormat | None = None
    """How the model writes its reasoning (``tags``: opening and closing tag, default
    ``<think>``/``</think>``; ``starts_open``: the chat template writes the opening tag), on every
    backend; ``--model-args reasoning_tags=...,reasoning_starts_open=...`` override it."""
    generation: dict[str, Any] = Field(default_factory=dict)
    """Generation settings the model needs on every task, as ``--gen-kwargs`` takes them (a thinking
    model's ``max_new_tokens``, ``chat_template_kwargs: {enable_thinking: true}``, ``reasoning_effort``):
    over each task's own, under ``--gen-kwargs``. Checked at load; recorded in results.json, and a
    run with them is not the benchmark's official protocol (the leaderboard marks it)."""
    modes: dict[str, PresetMode] = Field(default_factory=dict)
    """The model card's whole protocols by name (``instruct``, ``thinking`` ...), each citing its
    source: ``--model NAME@MODE`` runs with one (its ``generation`` over the preset's)."""

    @model_validator(mode="after")
    def _generation_settings(self) -> "Preset":
        from mmtasks.core.request import GenerationConfig

        for where, settings in [("generation", self.generation),
                                *((f"backends.{b}.generation", s.generation) for b, s in self.backends.items()),
                                *((f"modes.{m}.generation", mode.generation) for m, mode in self.modes.items())]:
            unknown = sorted(set(settings) - set(GenerationConfig.model_fields))
            if unknown:
                raise ValueError(f"{where}: unknown generation setting {unknown[0]!r}")
            try:
                GenerationConfig.model_validate(settings)  # each value in its range
            except ValidationError as exc:
                err = exc.errors()[0]
                raise ValueError(f"{where}.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}") from None
        return self

    @model_validator(mode="after")
    def _default_backend_is_supported(self) -> "Preset":
        if self.backend in self.unsupported:
            raise ValueError(f"the default backend {self.backend!r} is listed as unsupported")
        return self

    def runs_on(self) -> list[str]:
        """The backends this preset runs on: its default, those it has settings for, and any
        OpenAI-compatible server (asked for the weights' name), less the unsupported ones."""
        named = [self.backend, *sorted(set(self.backends) - {self.backend}), "openai"]
        return [b for b in dict.fromkeys(named) if b not in self.unsupported]

    def with_mode(self, mode: str) -> "Preset":
        """This preset running the card's protocol ``mode`` (its settings over the preset's)."""
        chosen = self.modes.get(mode)
        if chosen is None:
            known = ", ".join(f"{self.name}{MODE_SEPARATOR}{m}" for m in self.modes) or "none"
            raise ConfigError(f"model preset {self.name!r} has no mode {mode!r}", field="--model",
                              hint=f"its modes: {known}")
        return self.model_copy(update={"name": f"{self.name}{MODE_SEPARATOR}{mode}",
                                       "generation": {**self.generation, **chosen.generation}})

    def to_spec(self, extra_args: dict[str, Any], backend: str | None = None) -> "ModelSpec":
        from mmtasks.models.base import ModelSpec

        backend = backend or self.backend
        if backend in self.unsupported:
            supported = sorted({self.backend, *self.backends} - set(self.unsupported))
            raise ConfigError(
                f"model preset {self.name!r} cannot run on the {backend} backend: {self.unsupported[backend]}",
                field="--model",
                hint="use " + " or ".join(f"{b}:{self.name}" for b in supported),
            )
        settings = self.backends.get(backend, BackendSettings())
        args = {**settings.args, **extra_args}
        if self.max_images is not None and backend in MAX_IMAGES_BACKENDS:
            args.setdefault("max_images", self.max_images)
        return ModelSpec(backend=backend, name=settings.name or self.weights, args=args, preset=self.name,
                         reasoning=self.reasoning, generation={**self.generation, **settings.generation})


def _dirs(extra: Sequence[Path]) -> list[Path]:
    return [d for d in (BUILTIN_PRESETS_DIR, *extra) if d.is_dir()]


def load_presets(extra: Sequence[Path] = ()) -> dict[str, Preset]:
    out: dict[str, Preset] = {}
    for d in _dirs(extra):
        for path in sorted(d.glob("*.yaml")):
            if path.name == PRICES_FILE:  # the price table beside the presets (mmtasks.models.prices)
                continue
            preset = validate(Preset, read_yaml(path), file=path)
            out[preset.name] = preset
    return out


def find_preset(name: str, extra: Sequence[Path] = ()) -> Preset | None:
    """The preset ``name``, or ``NAME@MODE``: the preset running one of its card's modes."""
    base, sep, mode = name.partition(MODE_SEPARATOR)
    preset = load_presets(extra).get(base)
    if preset is None or not sep:
        return preset
    return preset.with_mode(mode)


def preset_names(extra: Sequence[Path] = ()) -> list[str]:
    return sorted(load_presets(extra))
