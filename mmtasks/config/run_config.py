"""RunConfig: everything one evaluation run is asked to do (built from the CLI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tasks: list[str]
    model: str
    """``backend:name``, ``random``, ``replay:PATH`` or a preset name."""
    model_args: dict[str, Any] = Field(default_factory=dict)
    judge: str | None = None
    """Judge model spec (default: the task's ``judge.default_model``)."""
    judge_args: dict[str, Any] = Field(default_factory=dict)
    strategy: Literal["none", "notetaking"] = "none"
    notetaker: str | None = None
    """Note-taker model spec for ``--strategy notetaking`` (default: the model itself)."""
    notetaker_args: dict[str, Any] = Field(default_factory=dict)
    data_dir: Path | None = None
    output_path: Path | None = None
    overwrite: bool = False
    """Replace another run's results in ``output_path`` (else such a folder is refused; the same run resumes)."""
    include_paths: list[Path] = Field(default_factory=list)
    limit: int | None = None
    seed: int = 0
    batch_size: int | None = None
    image_mode: Literal["separate", "combined"] = "separate"
    history: Literal["self", "reference"] | None = None
    probe: Literal["independent", "cumulative", "algorithm1"] | None = None
    truncate: Literal["none", "oldest_turns"] | None = None
    """Multi-turn: drop the oldest history exchanges when a turn does not fit the context."""
    predict_only: bool = False
    use_cache: bool = True
    cache_dir: Path | None = None
    allow_failures: bool = False
    max_live: int = 1024
    """Most dialogues in flight at once (bounds memory; a wave holds at most this many requests per turn)."""
    progress: bool = True
    verbose: bool = False

    def public(self) -> dict[str, Any]:
        """What results.json records about the run (secrets are redacted by the writer)."""
        return {
            "model": self.model, "model_args": self.model_args,
            "judge": self.judge, "judge_args": self.judge_args,
            "strategy": None if self.strategy == "none" else self.strategy,
            "notetaker": self.notetaker, "limit": self.limit, "seed": self.seed,
            "batch_size": self.batch_size, "image_mode": self.image_mode,
            "history": self.history, "probe": self.probe, "predict_only": self.predict_only,
        }
