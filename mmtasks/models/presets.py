"""Model presets: ``models/*.yaml`` name a model's weights and the backend settings it needs.

``--model qwen2-vl-7b`` uses the preset's default backend; ``--model
vllm:qwen2-vl-7b`` the same weights through the preset's ``vllm`` settings.
``--model-args`` override preset args.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mmtasks.config.yaml_loader import read_yaml, validate

BUILTIN_PRESETS_DIR = Path(__file__).resolve().parents[2] / "models"


class BackendSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    """Weights for this backend when they differ from the preset's (e.g. a quantized repo)."""
    args: dict[str, Any] = Field(default_factory=dict)


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
    """The most images per request the model handles well (checked against the task)."""
    context_length: int | None = None
    paper: str | None = None
    """Where the papers evaluated it (for the leaderboard's reference rows)."""

    def to_spec(self, extra_args: dict[str, Any], backend: str | None = None) -> "ModelSpec":
        from mmtasks.models.base import ModelSpec

        backend = backend or self.backend
        settings = self.backends.get(backend, BackendSettings())
        args = {**settings.args, **extra_args}
        if self.max_images is not None:
            args.setdefault("max_images", self.max_images)
        return ModelSpec(backend=backend, name=settings.name or self.weights, args=args, preset=self.name)


def _dirs(extra: Sequence[Path]) -> list[Path]:
    return [d for d in (BUILTIN_PRESETS_DIR, *extra) if d.is_dir()]


def load_presets(extra: Sequence[Path] = ()) -> dict[str, Preset]:
    out: dict[str, Preset] = {}
    for d in _dirs(extra):
        for path in sorted(d.glob("*.yaml")):
            preset = validate(Preset, read_yaml(path), file=path)
            out[preset.name] = preset
    return out


def find_preset(name: str, extra: Sequence[Path] = ()) -> Preset | None:
    return load_presets(extra).get(name)


def preset_names(extra: Sequence[Path] = ()) -> list[str]:
    return sorted(load_presets(extra))
