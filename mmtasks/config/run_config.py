"""RunConfig: everything one evaluation run is asked to do (built by the CLI and by
:func:`mmtasks.evaluate` alike, so both get the same validation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

from mmtasks.config.bounds import MAX_BATCH_SIZE, MAX_FEWSHOT, MAX_FPS, MAX_LIVE, MAX_SEED, MAX_VIDEO_FRAMES
from mmtasks.errors import ConfigError
from mmtasks.secrets import public_args, register_arg_secrets

#: RunConfig field -> the command-line flag that sets it (named in errors)
FLAGS = {"use_cache": "--no-cache", "include_paths": "--include-path", "progress": "--no-progress"}
#: other names an option is accepted under (the command line's singular ``--include-path``)
ALIASES = {"include_path": "include_paths"}


def flag_for(field: str) -> str:
    return FLAGS.get(field, "--" + field.replace("_", "-"))


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tasks: list[str] = Field(min_length=1)
    model: str
    """``backend:name``, ``random``, ``replay:PATH`` or a preset name."""
    model_args: dict[str, Any] = Field(default_factory=dict)
    run_name: str | None = Field(default=None, min_length=1, max_length=200)
    """A display name for the run (``LLaVA-1.5-13B``): recorded in results.json, shown by the
    leaderboard and the run viewer beside the model spec. Not part of what makes a resume the same run."""
    judge: str | None = None
    """Judge model spec (default: the task's ``judge.default_model``)."""
    judge_args: dict[str, Any] = Field(default_factory=dict)
    strategy: Literal["none", "notetaking"] = "none"
    notetaker: str | None = None
    """Note-taker model spec for ``--strategy notetaking`` (default: the model itself)."""
    notetaker_args: dict[str, Any] = Field(default_factory=dict)
    matcher: str | None = None
    """The LLM answer matcher (``--matcher``) for tasks with an ``answer.matcher``: a model spec, or
    ``default`` (the task's ``answer.matcher.default_model``). None: no matcher (replies no rule
    reads stay unparsed or guessed)."""
    matcher_args: dict[str, Any] = Field(default_factory=dict)
    data_dir: Path | None = None
    output_path: Path | None = None
    overwrite: bool = False
    """Replace another run's results in ``output_path`` (else such a folder is refused; the same run resumes)."""
    include_paths: list[Path] = Field(default_factory=list)
    limit: StrictInt | None = Field(default=None, ge=1)
    """Only the first N documents of each task (an integer, at least 1: ``True`` is not 1)."""
    seed: StrictInt = Field(default=0, ge=0, le=MAX_SEED)
    batch_size: StrictInt | None = Field(default=None, ge=1, le=MAX_BATCH_SIZE)
    image_mode: Literal["separate", "combined"] = "separate"
    history: Literal["self", "reference"] | None = None
    probe: Literal["independent", "cumulative", "algorithm1"] | None = None
    truncate: Literal["none", "oldest_turns"] | None = None
    """Multi-turn: drop the oldest history exchanges when a turn does not fit the context."""
    predict_only: bool = False
    gen_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Overrides of every task's generation settings for the model (``--gen-kwargs``, lm-eval's
    name): ``max_new_tokens``, ``temperature``, ... Recorded in results.json; a run with them is
    not the benchmark's official protocol (the leaderboard marks it)."""
    num_frames: StrictInt | None = Field(default=None, ge=1, le=MAX_VIDEO_FRAMES)
    """``--num-frames``: every video task samples this many frames, uniformly (its ``sampling`` kept),
    instead of its own rule. Recorded in results.json; not the benchmark's official setting."""
    fps: float | None = Field(default=None, gt=0, le=MAX_FPS, allow_inf_nan=False)
    """``--fps``: every video task samples one frame every 1/fps s instead of its own rule (capped by
    ``--max-frames``, else by the task's own ``max_frames``)."""
    max_frames: StrictInt | None = Field(default=None, ge=1, le=MAX_VIDEO_FRAMES)
    """``--max-frames``: the cap of ``--fps``."""
    num_fewshot: StrictInt | None = Field(default=None, ge=0, le=MAX_FEWSHOT)
    """``--num-fewshot``: every task's ``fewshot.k`` (a task without a ``fewshot:`` block is an error).
    Recorded in results.json (``config.num_fewshot``, and each task's config); not the benchmark's
    official setting."""
    system_instruction: str | None = Field(default=None, min_length=1, max_length=100_000)
    """``--system-instruction`` (lm-eval's name): the system message of every model request, as
    written, in place of each task's ``prompt.system`` (or added where a task has none). Recorded in
    results.json; a run with one is not the benchmark's official protocol."""
    repeats: StrictInt = Field(default=1, ge=1, le=100)
    """``--repeats K``: every document of a task that samples runs K times with distinct seeds
    (``mmtasks.scoring.repeats``); recorded in results.json with the spread between repeats."""
    use_cache: bool = True
    cache_dir: Path | None = None
    allow_failures: bool = False
    batch: bool = False
    """``--batch``: the model's requests go through its provider's batch API, wave by wave
    (:mod:`mmtasks.models.openai_batch`; openai only), priced at the batch discount."""
    judge_batch: bool = False
    """``--judge-batch``: the judge's and matcher's requests go through the batch API."""
    batch_poll_s: float = Field(default=30.0, ge=0, le=3600, allow_inf_nan=False)
    """Seconds between polls of a pending batch."""
    max_cost: float | None = Field(default=None, gt=0, le=1e9, allow_inf_nan=False)
    """``--max-cost USD``: the run stops (exit 3, resumable from the response cache) once the requests
    it sent cost this much by ``models/prices.yaml``; every component must have a price. Not part of
    what the run is: a resume may raise it."""
    max_live: StrictInt = Field(default=1024, ge=1, le=MAX_LIVE)
    shard: str | None = Field(default=None, pattern=r"^\d+/\d+$")
    """``--shard I/N``: run only slice I (0-based) of N: document k of the run (counted across all
    tasks, in task order) is slice ``k % N``'s. Each slice writes its own run folder;
    ``mmtasks merge OUT SLICE...`` makes them one run (:mod:`mmtasks.shards`)."""
    launcher: Literal["local", "ray"] = "local"
    """``--launcher ray``: the model's replicas are Ray actors fed from one queue
    (:mod:`mmtasks.ray_launcher`). Not part of what the run is: the results equal one process's."""
    ray_address: str | None = None
    """``--ray-address``: the Ray cluster to join (default: start a local one for the run)."""
    ray_replicas: int | None = Field(default=None, ge=1)
    """``--ray-replicas N``: how many replicas (default: as many as the cluster holds)."""
    rank_timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """``--rank-timeout S``: in a data parallel run, seconds without a heartbeat after which a waiting
    rank names the silent one and stops the run (default ``MMTASKS_RANK_TIMEOUT_S`` or 600;
    :mod:`mmtasks.rank_agreement`). Not part of what the run is."""
    """Most dialogues in flight at once (bounds memory; a wave holds at most this many requests per turn)."""
    log_to: list[str] = Field(default_factory=list)
    """``--log-to``: experiment trackers the run logs to (``wandb``, ``mlflow``, ``trackio``;
    :mod:`mmtasks.trackers`). Not part of what the run is: a resume may add or drop one."""
    log_args: dict[str, Any] = Field(default_factory=dict)
    """``--log-args``: the trackers' settings (``project``, ``name``, ``tracking_uri`` ...; a JSON
    object or ``k=v,...`` on the command line; :class:`mmtasks.trackers.LogArgs`)."""
    progress: bool = True
    """Show progress on stderr: a bar on a terminal, a plain line every few seconds otherwise."""
    verbose: bool = False

    @field_validator("tasks", mode="before")
    @classmethod
    def _split_tasks(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, (list, tuple)):
            return [t.strip() if isinstance(t, str) else t for t in value if not isinstance(t, str) or t.strip()]
        return value

    @classmethod
    def build(cls, **fields: Any) -> "RunConfig":
        """Validate ``fields`` into a RunConfig; a bad value is a one-line :class:`ConfigError`
        naming the option (and its command-line flag)."""
        for alias, name in ALIASES.items():
            if alias in fields:
                if name in fields:
                    raise ConfigError(f"give {name!r} or its alias {alias!r}, not both", field=alias)
                value = fields.pop(alias)
                fields[name] = [value] if isinstance(value, (str, Path)) else value
        try:
            return cls(**fields)
        except ValidationError as exc:
            err = exc.errors()[0]
            name = str(err["loc"][0]) if err["loc"] else ""
            if err["type"] == "extra_forbidden":
                import difflib

                close = difflib.get_close_matches(name, [*cls.model_fields, *ALIASES], n=1)
                raise ConfigError(f"unknown option {name!r}", field=name,
                                  hint=f"did you mean {close[0]!r}?" if close else "options: " + ", ".join(cls.model_fields)) from None
            shown = err.get("input")
            message = err["msg"][0].lower() + err["msg"][1:]
            if err["type"] == "greater_than_equal":
                message = f"must be at least {err['ctx']['ge']}"
            elif err["type"] == "less_than_equal":
                message = f"must be at most {err['ctx']['le']}"
            elif err["type"] == "greater_than":
                message = f"must be more than {err['ctx']['gt']}"
            elif err["type"] == "finite_number":
                message = "must be a finite number"
            if name == "tasks" and err["type"] == "too_short":
                message = "no task given"
            raise ConfigError(f"{message} (got {shown!r})" if name != "tasks" else message,
                              field=flag_for(name)) from None

    @field_validator("log_to", mode="before")
    @classmethod
    def _split_trackers(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [t.strip() for t in value.split(",") if t.strip()]
        return value

    @field_validator("model_args", "judge_args", "notetaker_args", "matcher_args", mode="after")
    @classmethod
    def _register_secrets(cls, value: dict[str, Any]) -> dict[str, Any]:
        register_arg_secrets(value)  # header values: redacted from every message and record
        return value

    def public(self) -> dict[str, Any]:
        """What results.json records about the run (header values as ``***``; other secrets are
        redacted by the writer)."""
        return {
            "model": self.model, "model_args": public_args(self.model_args),
            "judge": self.judge, "judge_args": public_args(self.judge_args),
            "strategy": None if self.strategy == "none" else self.strategy,
            "notetaker": self.notetaker, "limit": self.limit, "seed": self.seed,
            "batch_size": self.batch_size, "image_mode": self.image_mode,
            "history": self.history, "probe": self.probe, "predict_only": self.predict_only,
            **({"gen_kwargs": self.gen_kwargs} if self.gen_kwargs else {}),
            **({"matcher": self.matcher, "matcher_args": public_args(self.matcher_args)} if self.matcher else {}),
            **({"video": self.video_override} if self.video_override else {}),
            **({"num_fewshot": self.num_fewshot} if self.num_fewshot is not None else {}),
            **({"system_instruction": self.system_instruction} if self.system_instruction is not None else {}),
            **({"repeats": self.repeats} if self.repeats > 1 else {}),
            **({"shard": self.shard} if self.shard is not None else {}),
        }

    @property
    def slice(self) -> tuple[int, int] | None:
        """``--shard I/N`` as (I, N), checked; None without it."""
        if self.shard is None:
            return None
        index, count = (int(x) for x in self.shard.split("/"))
        if count < 1 or not 0 <= index < count:
            raise ConfigError(f"--shard {self.shard}: the slice must be 0 to {count - 1} of {count} (0-based)", field="--shard",
                              hint="e.g. --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT")
        return index, count

    @property
    def video_override(self) -> dict[str, Any]:
        """The frame rule given on the command line (``--num-frames`` / ``--fps`` ``--max-frames``), or {}."""
        return {k: v for k, v in (("num_frames", self.num_frames), ("fps", self.fps), ("max_frames", self.max_frames)) if v is not None}
