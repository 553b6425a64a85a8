"""The ``results.json`` schema: one typed model for whoever writes the file (the runner,
through :mod:`mmtasks.results.results_json`) and whoever reads it (the leaderboard,
rescoring, the Python API).

The layout is lm-evaluation-harness's (``results``, ``groups``, ``configs``, ``versions``,
``n-samples``, ``higher_is_better``, ``config``, ``git_hash``, ``date``) plus ours:
``breakdowns``, ``problems``, ``coverage`` and ``run_stats``.

Rules the model enforces:

- ``results[task][metric]`` is a number or ``null`` (never a string, a list or a
  boolean); the one label is ``alias``. Non-finite numbers (NaN, infinities) are
  stored as ``null``: JSON has no spelling for them.
- Counters (request failures, unparsed answers, judge failures) live in ``problems``;
  counts of what was evaluated live in ``n-samples`` (and ``coverage``). Files written
  before this rule may still hold counters among the metrics (:data:`LEGACY_COUNTERS`):
  they load, and :meth:`TaskMetrics.metrics` leaves them out.
- A run may cover part of a group: ``groups[g].missing_tasks`` names the members it
  lacks and ``groups[g].average`` is then ``null`` (a partial mean is not the
  group's score); ``partial_average`` keeps the mean over the members run.
- Every task named in ``n-samples``, ``breakdowns``, ``problems``, ``coverage``,
  ``configs``, ``versions`` or ``higher_is_better`` has results.

Readers should use :func:`read_results`, which names the file and the offending field
when a file does not fit.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    NonNegativeInt,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails

from mmtasks.core.provenance import DataRevision, Hardware, ModelRevision, RunCard  # noqa: F401 (results.json's run_card)
from mmtasks.documents.jsonl import loads_checked
from mmtasks.errors import DataError, printable
from mmtasks.secrets import public_args

RESULTS_FILE = "results.json"

#: Kinds of ``problems[task]`` counted by the harness (others may appear, e.g. a task's
#: own ``note_unparsed``): each is a number of samples, turns or questions, never a score.
PROBLEM_KINDS = ("request_failures", "context_overflow", "truncated", "unparsed", "judge_failures", "guessed",
                 "excluded", "kept_as_text", "scored_wrong")

#: How a task treats a record problem that its dataset holds (``dataset.record_policy``, declared
#: as the benchmark's authors treat it): left out of the evaluation, an image tag kept as text, or
#: scored as wrong. Each is counted in ``problems[task]`` (records) and, by reason, in
#: ``coverage[task]``; none is a failure of the run (the exit status stays 0).
RECORD_TREATMENTS = ("excluded", "kept_as_text", "scored_wrong")

#: Kinds of ``coverage[task].unscored``: why a document, turn or question was not scored.
UNSCORED_KINDS = ("request_failure", "context_overflow", "truncated", "judge_failure", "unparsed")

#: Counters that aggregators used to put among a task's metrics. They are not metrics: a
#: reader leaves them out of :meth:`TaskMetrics.metrics`; new files keep them in ``problems``
#: and ``n-samples`` only.
LEGACY_COUNTERS = frozenset({
    "unparsed", "failures", "request_failures", "judge_failures", "context_overflow",
    "judged_turns", "n_questions", "scored_questions", "unanswered_questions",
    "exact_match_unparsed", "note_unparsed",
})


#: the largest metric magnitude a results file may hold (ours: scores, counts and rates are far
#: below it; a mean of values past it could overflow to infinity, which JSON cannot spell)
MAX_METRIC = 1e15


def _metric_value(value: Any) -> Any:
    """A metric: a number or null; NaN and infinities become null (on writing: the aggregators'
    undefined values); a number past :data:`MAX_METRIC` is refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number or null, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if abs(value) > MAX_METRIC:
        raise ValueError(f"{value:.3g} is out of range (at most {MAX_METRIC:.0e} in magnitude)")
    return value


#: ``results[task][metric]``, ``breakdowns[task][dimension][bucket][metric]``
MetricValue = Annotated[int | float | None, BeforeValidator(_metric_value)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=(), populate_by_name=True)


class _Open(BaseModel):
    """Keys beyond the declared ones are kept (a record that other parts of the program extend)."""

    model_config = ConfigDict(extra="allow", protected_namespaces=(), populate_by_name=True)


class TaskMetrics(BaseModel):
    """``results[task]``: ``alias`` plus ``metric -> number or null``.

    Metric names are the task's (``acc``, ``rouge_l``, ``overall``) with lm-eval's
    ``<metric>_stderr`` beside each, and variants such as ``<metric>_all`` (failed
    samples counted as 0), ``_micro``, ``_macro``.
    """

    model_config = ConfigDict(extra="allow")

    alias: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The task's display name (lm-eval's ``alias``); the task name by default."""

    __pydantic_extra__: dict[str, MetricValue]

    @property
    def values(self) -> dict[str, int | float | None]:
        """Every value but ``alias``, counters included (as stored)."""
        return dict(self.__pydantic_extra__ or {})

    def metrics(self) -> dict[str, float]:
        """The task's metrics with a value: numbers only, counters of older files left out."""
        return {
            name: float(value)
            for name, value in self.values.items()
            if value is not None and name not in LEGACY_COUNTERS
        }


class GroupResult(_Strict):
    """``groups[group]``: a group of tasks (``realbench``) as far as this run covers it."""

    average: float | None = None
    """Plain mean of the members' headline metrics (RealBench's "avg" column). ``null``
    unless every member task is in the run and has a headline value."""
    n_tasks: NonNegativeInt = 0
    """Member tasks in this run."""
    tasks: list[str] = Field(default_factory=list)
    """Member tasks in this run, in the group's order."""
    missing_tasks: list[str] = Field(default_factory=list)
    """Member tasks not in this run (empty for a complete group)."""
    unscored_tasks: list[str] = Field(default_factory=list)
    """Member tasks in this run whose headline metric is ``null`` (nothing scored)."""
    partial_average: float | None = None
    """When ``average`` is ``null``: the mean over the members that have a headline value.
    Not the group's score; shown only as such."""
    aggregator: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The group aggregator its members name (``group_aggregators``), which made :attr:`metrics`
    from every member's samples together; absent when there is none."""
    metrics: dict[str, float | None] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """The group aggregator's figures (MT-Bench's pairwise ``win_rate``, ``loss_rate``,
    ``tie_rate`` ...), only when every member ran; absent otherwise."""
    counts: dict[str, NonNegativeInt] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """The group aggregator's counts beside its figures (questions compared ...)."""
    variants: dict[str, float | None] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """Scoring variant -> the plain mean of the members' headline metric as that variant scores
    it, for each variant every member declares (``null`` unless the group is complete); absent
    when there is none."""

    @property
    def complete(self) -> bool:
        return not self.missing_tasks and not self.unscored_tasks


class NSamples(BaseModel):
    """``n-samples[task]``: lm-eval's ``original`` (documents in the data) and ``effective``
    (documents evaluated, after ``--limit``), plus the task's own counts of what was
    evaluated, e.g. ``turns``, ``questions`` (non-negative integers)."""

    model_config = ConfigDict(extra="allow")

    original: NonNegativeInt | None = None
    effective: NonNegativeInt | None = None

    __pydantic_extra__: dict[str, NonNegativeInt]


class Coverage(_Strict):
    """``coverage[task]``: how much of the data the task's score stands on."""

    unit: str = "documents"
    """What is counted: ``documents``, ``turns`` (MMDU), ``questions`` (MMRC)."""
    scored: NonNegativeInt
    """Units with a score."""
    total: NonNegativeInt
    """Units in the data (after ``--limit``)."""
    percent: float | None = None
    """``100 * scored / total`` (``null`` when ``total`` is 0); filled in when omitted."""
    unscored: dict[str, NonNegativeInt] = Field(default_factory=dict)
    """Why the other ``total - scored`` units have no score, by kind (:data:`UNSCORED_KINDS`:
    ``request_failure``, ``context_overflow``, ``truncated``, ``judge_failure``, ``unparsed``); the
    counts add up to ``total - scored``."""
    guessed: NonNegativeInt = Field(default=0, exclude_if=lambda v: v == 0)
    """Scored units whose answer is a random guess, not the model's (the ``choice`` parser's
    ``fallback: random``, as MMMU's and MUIRBench's scripts guess); also ``problems.guessed``."""
    unparsed: NonNegativeInt = Field(default=0, exclude_if=lambda v: v == 0)
    """Scored units whose reply no rule read: scored as wrong (an unparsed answer scores 0), and
    counted here apart from the answers read (``scored - unparsed - guessed`` units have the
    model's own answer); also in ``problems.unparsed``. An unparsed unit that no metric scores
    is among ``unscored.unparsed`` instead."""
    excluded: dict[str, NonNegativeInt] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """Records of the data left out of the evaluation by the task's ``dataset.record_policy``
    (as its authors leave them out), by reason (``{"output missing": 3}``). They are not among
    ``total``; also ``problems.excluded``."""
    kept_as_text: dict[str, NonNegativeInt] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """Evaluated records with an image tag that names no image of the record, kept in the prompt as
    text by the record policy, by reason; also ``problems.kept_as_text``."""
    scored_wrong: dict[str, NonNegativeInt] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """Evaluated records scored as wrong by the record policy (a gold answer outside the record's
    options), by reason; among ``scored``; also ``problems.scored_wrong``."""

    @model_validator(mode="after")
    def _consistent(self) -> Coverage:
        if self.scored > self.total:
            raise ValueError(f"scored ({self.scored}) exceeds total ({self.total})")
        missing = self.total - self.scored
        if sum(self.unscored.values()) != missing:
            raise ValueError(
                f"unscored counts add up to {sum(self.unscored.values())}, expected total - scored = {missing}"
            )
        expected = 100.0 * self.scored / self.total if self.total else None
        if self.percent is None:
            self.percent = expected
        elif expected is None or abs(self.percent - expected) > 1e-6:
            raise ValueError(f"percent {self.percent} is not 100 * scored / total = {expected}")
        return self


def public_spec(spec: str) -> str:
    """A model spec without the machine's paths in it, for pages: ``replay:/home/me/runs/a/predictions.jsonl``
    -> ``replay:predictions.jsonl``, ``hf:/models/llava-13b`` -> ``hf:llava-13b``; a samples folder
    (``.../run-a/samples``) keeps the run folder's name (``replay:run-a/samples``); Hub ids and API model
    names as given."""
    backend, sep, rest = spec.partition(":")
    looks_like_path = rest.startswith(("/", "~", "./", "../", "\\")) or (len(rest) > 2 and rest[1] == ":" and rest[2] in "/\\")
    if not sep or not (backend == "replay" or looks_like_path):
        return spec
    parts = [p for p in rest.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        return spec
    tail = parts[-2:] if parts[-1] == "samples" and len(parts) > 1 else parts[-1:]
    return f"{backend}:" + "/".join(tail)


class RecordedRunConfig(_Open):
    """``config``: how the run was made, as results.json records it (the run's arguments; secrets
    redacted). Not the input :class:`mmtasks.config.run_config.RunConfig`, from which it is written."""

    model: str = Field(min_length=1)
    """The ``--model`` spec as given (``hf:Qwen/Qwen2-VL-7B-Instruct``, ``random``, a preset)."""
    model_args: dict[str, Any] | str = Field(default_factory=dict)
    run_name: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The run's display name (``--run-name``, ``run_name=``), when given (absent otherwise)."""
    judge: str | None = None
    """The judge's spec (``openai:gpt-4o-2024-05-13``; ``random`` for the chance-level judge)."""
    judge_args: dict[str, Any] | str = Field(default_factory=dict)
    strategy: str | None = None
    image_mode: str | None = None
    history: str | None = None
    probe: str | None = None
    limit: int | float | None = None
    seed: int | None = None
    predict_only: bool = False
    """Only the model's answers were produced: nothing was scored, no judge was called."""
    gen_kwargs: dict[str, Any] = Field(default_factory=dict)
    """``--gen-kwargs``: generation settings that replaced the tasks' own (``max_new_tokens``, ...).
    A run with any is not the benchmark's official protocol."""
    video: dict[str, Any] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """``--num-frames`` / ``--fps`` / ``--max-frames``: the frame rule that replaced the video tasks'
    own. A run with one is not the benchmark's official setting."""
    num_fewshot: int | None = Field(default=None, exclude_if=lambda v: v is None)
    """``--num-fewshot``: the demonstrations per question that replaced the few-shot tasks' own
    ``fewshot.k``. A run with it is not the benchmark's official setting."""
    system_instruction: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """``--system-instruction``: the system message that replaced the tasks' own (absent without one).
    A run with one is not the benchmark's official protocol."""
    repeats: int | None = Field(default=None, exclude_if=lambda v: v is None)
    """``--repeats K`` (absent for a run without repeats)."""
    model_spec: dict[str, Any] | None = None
    """The model as the run built it: backend, name, args (a preset's included) and ``generation``,
    a preset's generation settings (under ``gen_kwargs``)."""
    judge_spec: dict[str, Any] | None = None
    matcher: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The LLM answer matcher's spec (``--matcher``), when the run used one (absent otherwise)."""
    matcher_args: dict[str, Any] | str = Field(default_factory=dict, exclude_if=lambda v: not v)
    matcher_spec: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    mmtasks_version: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _public_args(cls, data: Any) -> Any:
        """Header values are secrets: ``***`` in every ``*_args`` and ``*_spec.args``, on writing and
        on reading (a file written before this rule publishes none either)."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key, value in data.items():
            if isinstance(key, str) and key.endswith("_args"):
                out[key] = public_args(value)
            elif isinstance(key, str) and key.endswith("_spec") and isinstance(value, dict) and "args" in value:
                out[key] = {**value, "args": public_args(value["args"])}
        return out

    @property
    def chance_judge(self) -> bool:
        """The judge is the ``random`` baseline: its verdicts are chance, not a judgement."""
        backend = (self.judge_spec or {}).get("backend")
        return self.judge == "random" or backend == "random"

    @property
    def public_model(self) -> str:
        """The model spec as a page may show it: a ``replay:`` spec names the file (or folder) it
        replays, never its path on the machine that ran it."""
        return public_spec(self.model)

    @property
    def public_judge(self) -> str | None:
        """The judge's spec as a page may show it (:func:`public_spec`); None without a judge."""
        return public_spec(self.judge) if self.judge else None

    @property
    def display_name(self) -> str:
        """What a page calls the run: its ``run_name``, else the public model spec and the variant."""
        if self.run_name:
            return self.run_name
        return self.public_model + "".join(f" + {v}" for v in self.variant())

    def variant(self) -> list[str]:
        """What, beyond model and args, makes a different evaluation setting."""
        parts = [self.strategy] if self.strategy else []
        if self.image_mode and self.image_mode != "separate":
            parts.append(f"{self.image_mode} images")
        if self.history and self.history != "self":
            parts.append(f"{self.history} history")
        if self.probe and self.probe != "independent":
            parts.append(f"{self.probe} probes")
        if self.limit is not None:
            parts.append(f"limit {self.limit:g}")
        parts += self.protocol_changes()
        if self.matcher:  # replies no rule read were read by an LLM: another row than the rule's alone
            parts.append(f"matcher {public_spec(self.matcher)}")
        return parts

    def protocol_changes(self) -> list[str]:
        """What the run changed of the tasks' own protocol, one label each: ``--gen-kwargs``, a
        preset's generation settings, the model's ``chat_template_kwargs`` (a thinking switch),
        ``--system-instruction``. Empty: the benchmark's official protocol."""
        parts = []
        if self.gen_kwargs:
            parts.append("gen-kwargs " + _settings_label(self.gen_kwargs))
        if self.video:
            parts.append("frames " + ",".join(f"{k}={v:g}" for k, v in sorted(self.video.items())))
        if self.num_fewshot is not None:
            parts.append(f"{self.num_fewshot}-shot")
        spec = self.model_spec if isinstance(self.model_spec, dict) else {}
        preset_generation = spec.get("generation")
        if isinstance(preset_generation, dict) and preset_generation:
            parts.append("preset generation " + _settings_label(preset_generation))
        args = spec.get("args") if isinstance(spec.get("args"), dict) else self.model_args
        template_kwargs = args.get("chat_template_kwargs") if isinstance(args, dict) else None
        if template_kwargs:
            parts.append("chat_template_kwargs " + _settings_label(template_kwargs))
        if self.system_instruction is not None:
            parts.append("system instruction " + text_label(self.system_instruction))
        return parts

    @property
    def official_protocol(self) -> bool:
        """False when the run changed the tasks' generation settings, prompt or frame rule:
        ``--gen-kwargs``, a preset's ``generation``, the model's ``chat_template_kwargs``,
        ``--system-instruction``, ``--num-frames``/``--fps``, ``--num-fewshot`` (:meth:`protocol_changes`)."""
        return not self.protocol_changes()


#: characters of a free text (a system instruction) that a label shows; its hash tells apart texts
#: that begin alike
LABEL_CHARS = 60


def text_label(text: str) -> str:
    """A free text as a label may show it: its first :data:`LABEL_CHARS` characters in quotes
    (``...`` after them when there are more), control characters escaped
    (:func:`mmtasks.errors.printable`), and the first 8 hex digits of the SHA-256 of all of it:
    ``"Answer briefly." #1a2b3c4d``. Two runs whose texts differ get different labels."""
    shown = text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS] + "..."
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f'"{printable(shown)}" #{digest}'


def _settings_label(settings: Any) -> str:
    """``k=v,...`` of a settings dict, sorted (a JSON string as it is)."""
    import json

    if isinstance(settings, str):
        return settings
    if not isinstance(settings, dict):
        return str(settings)
    return ",".join(f"{k}={json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v}"
                    for k, v in sorted(settings.items(), key=lambda kv: str(kv[0])))


class MatcherResult(_Strict):
    """``matcher[task]``: the LLM answer matcher's part in a task's scores (runs with ``--matcher``)."""

    read_by: dict[str, NonNegativeInt]
    """How the scored answers were read: ``rule``, ``option_text``, ``matcher``, ``random`` (a guess),
    ``none`` (not read: unparsed)."""
    asked: NonNegativeInt = 0
    """Replies shown to the matcher (those no rule read)."""
    failed: NonNegativeInt = 0
    """Matcher requests that failed or were not sent (the reply stays as the rule read it)."""
    without_matcher: dict[str, MetricValue] = Field(default_factory=dict)
    """The task's metrics from the rule's readings alone (what a run without ``--matcher`` gives on
    the same replies); ``results[task]`` holds them with the matcher."""


class ReasoningLength(_Strict):
    """``replies[task].reasoning``: how long the model's reasoning was."""

    n: NonNegativeInt
    """Replies that had reasoning (a reasoning field, or a block between the reasoning tags)."""
    unit: Literal["tokens", "characters"]
    """``tokens`` when the backend counted every reasoning's tokens (a server's ``reasoning_tokens``),
    else ``characters``."""
    mean: float = Field(ge=0, allow_inf_nan=False)
    total: NonNegativeInt


class ReplyStats(_Strict):
    """``replies[task]``: how the model's replies to the task ended (re-asks included; the judge's
    replies are not counted; requests that got no reply are ``problems.request_failures``)."""

    n: NonNegativeInt
    finish_reasons: dict[str, NonNegativeInt] = Field(default_factory=dict)
    """Why each reply ended: ``stop`` (the model ended it), ``length`` (it hit ``max_new_tokens``),
    the backend's own word (``content_filter`` ...), or ``unknown`` (the backend does not say)."""
    reasoning: ReasoningLength | None = Field(default=None, exclude_if=lambda v: v is None)
    """The reasoning's length, when some replies had reasoning."""
    tokens: dict[str, dict[str, NonNegativeInt]] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """Per component (``model``, ``judge``, ``matcher``, ``notetaker``): the tokens its backend
    reported for the replies the results rest on (a reply from the response cache as reported when
    it was received: a resumed run counts what an uninterrupted one does), ``prompt``,
    ``completion``, ``reasoning``, ``cached`` (the provider's prompt cache, where reported), and
    ``replies``, how many replies reported some."""

    @property
    def at_limit(self) -> int:
        """Replies that hit the token limit (finish reason ``length``)."""
        return self.finish_reasons.get("length", 0)

    @property
    def at_limit_share(self) -> float | None:
        """The share of replies that hit the token limit (None: no reply)."""
        return self.at_limit / self.n if self.n else None


class TokenCounts(_Strict):
    """``tokens[task][component]``: the replies of one component (``model``, ``judge``, ``matcher``,
    ``notetaker``) to the task and the tokens its backend counted for them (summed; a kind the backend
    does not report is absent)."""

    replies: NonNegativeInt = 0
    """Replies, those served from the response cache included (their tokens as counted when they were
    sent; how many came from the cache is ``run_stats.tokens_from_cache``)."""
    without_counts: NonNegativeInt = 0
    """Replies whose backend reported no prompt or completion tokens (their component's cost is null)."""
    prompt: NonNegativeInt = 0
    """Prompt tokens, images included (the provider's cached prompt tokens among them)."""
    completion: NonNegativeInt = 0
    """Completion tokens, reasoning included."""
    reasoning: NonNegativeInt = 0
    cached: NonNegativeInt = 0
    """Prompt tokens the provider served from its prompt cache."""


class ComponentCost(_Open):
    """``cost.components[component]``: its model, the price row used (None: no price) and its cost."""

    model: str
    batch: bool = False
    price: dict[str, Any] | None = None
    total: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class RunCost(_Open):
    """``cost``: what the run's tokens cost by ``models/prices.yaml`` (:mod:`mmtasks.results.costs`).
    ``total``: every reply, the cached ones at what they cost when sent (what this run paid for is
    ``run_stats.cost_sent``: it differs between a resumed run and an uninterrupted one). Null where a component has no price or some replies no token counts (``notes`` say
    which), never 0."""

    currency: str = "USD"
    total: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    tasks: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """task -> ``total`` and ``components`` (component -> cost or null)."""
    components: dict[str, ComponentCost] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


class RunStats(_Open):
    """``run_stats``: what the scheduler did, per target (``model``, ``judge``, ``notetaker``)."""

    waves: NonNegativeInt = 0
    sent: dict[str, NonNegativeInt] = Field(default_factory=dict)
    cached: dict[str, NonNegativeInt] = Field(default_factory=dict)
    failed: dict[str, NonNegativeInt] = Field(default_factory=dict)
    tokens_from_cache: dict[str, dict[str, NonNegativeInt]] = Field(default_factory=dict)
    """task -> component -> how many of its replies (``tokens[task][component].replies``) came from the
    response cache."""
    cost_sent: dict[str, Any] = Field(default_factory=dict)
    """What this run paid for, the replies from the cache left out: ``total``, ``tasks`` (task -> cost)
    and ``components`` (component -> cost), each null where ``cost`` is."""


#: dimension -> bucket -> {metric: value, "n": count}
TaskBreakdowns = dict[str, dict[str, dict[str, MetricValue]]]

_PER_TASK = ("breakdowns", "problems", "coverage", "replies", "tokens", "configs", "config_hashes", "versions", "n_samples", "higher_is_better", "matcher",
             "generation", "repeats", "variants")


class VariantResult(_Strict):
    """``variants[task][name]``: the task's replies scored the way of one of its scoring variants
    (``variants:`` of the task; the same samples, no request sent)."""

    description: str = ""
    """The variant's one line: whose rule and how it differs from the headline."""
    source: str | None = None
    """Where the variant's rule comes from (repository, file, commit)."""
    metrics: dict[str, MetricValue] = Field(default_factory=dict)
    """The task's metrics (and their ``_stderr``/``_all`` ...) as the variant scores them."""
    breakdowns: TaskBreakdowns = Field(default_factory=dict)
    """Per dimension and bucket, as ``breakdowns[task]``."""
    coverage: Coverage | None = None
    """How much the variant scored (a variant that leaves unparsed replies out scores fewer)."""


class RepeatsResult(BaseModel):
    """``repeats[task]`` (``--repeats K``, tasks that sample): the headline of each repeat, their
    spread, and the per-document reducers (``mmtasks.scoring.repeats``)."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(ge=2)
    metric: str
    per_repeat: list[float | None]
    mean: float | None = None
    sd: float | None = None
    """Standard deviation (ddof 1) of the repeats' headlines: how far a second run would move."""
    reducers: dict[str, float | None] = Field(default_factory=dict)
    """``mean``, and for a right/wrong metric ``majority`` and ``any_correct`` (pass@k)."""


class ResultsFile(_Open):
    """The whole ``results.json``.

    Unknown top-level keys load (a newer writer's additions are kept); the writer
    (:func:`mmtasks.results.results_json.build_results`) fills the declared fields only.
    """

    results: dict[str, TaskMetrics]
    """task -> ``alias`` and its metrics (numbers or null)."""
    groups: dict[str, GroupResult] = Field(default_factory=dict)
    """group -> its average over the member tasks, and which members the run lacks."""
    breakdowns: dict[str, TaskBreakdowns] = Field(default_factory=dict)
    """task -> dimension (``n_images``, ``category``, ``turn``, ``length``) -> bucket -> ``{metric: value, "n": count}``."""
    problems: dict[str, dict[str, NonNegativeInt]] = Field(default_factory=dict)
    """task -> kind (:data:`PROBLEM_KINDS`) -> count. Every task run has an entry."""
    coverage: dict[str, Coverage] = Field(default_factory=dict)
    """task -> how much of its data was scored (tasks whose aggregator reports it)."""
    replies: dict[str, ReplyStats] = Field(default_factory=dict)
    """task -> how the model's replies ended (finish reasons) and how long their reasoning was."""
    configs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """task -> its TaskConfig as run (``mmtasks/config/task_config.py``)."""
    config_hashes: dict[str, str] = Field(default_factory=dict)
    """task -> a hash of its config as run, the same on any machine (plugin files by name and
    content, not by path): two runs whose hashes differ ran different task definitions under one
    name (``mmtasks compare`` refuses them; the two-run view flags them)."""
    versions: dict[str, int | float | str] = Field(default_factory=dict)
    generation: dict[str, dict[str, dict[str, Any] | None]] = Field(default_factory=dict)
    """task -> target (``model``, ``judge``, ``matcher``, ``notetaker``) -> the generation settings its requests carried, as the
    backend put them on the requests it built (its own names: ``max_tokens``, ``temperature``,
    ``chat_template_kwargs`` ...; after the sampling rule, ``--gen-kwargs`` and the model's args);
    null for a backend that sends none (``random``, ``replay``)."""
    n_samples: dict[str, NSamples] = Field(default_factory=dict, alias="n-samples")
    higher_is_better: dict[str, dict[str, bool | None]] = Field(default_factory=dict)
    """task -> metric -> whether a larger value is better; null for a metric with no direction
    (a yes ratio, ideal at 50%), which nothing ranks by."""
    matcher: dict[str, MatcherResult] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """task -> the LLM answer matcher's part (how answers were read, metrics without it), for
    runs with ``--matcher`` and tasks with an ``answer.matcher``; absent otherwise."""
    repeats: dict[str, RepeatsResult] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """task -> its ``--repeats`` record (tasks that ran more than once); absent otherwise."""
    variants: dict[str, dict[str, VariantResult]] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """task -> scoring variant -> its metrics, breakdowns and coverage (tasks that declare
    ``variants:``; ``results[task]`` is the task's own rule); absent otherwise."""
    config: RecordedRunConfig
    run_stats: RunStats | None = None
    tokens: dict[str, dict[str, TokenCounts]] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """task -> component -> replies and the tokens counted (absent in files written before)."""
    cost: RunCost | None = Field(default=None, exclude_if=lambda v: v is None)
    """The run's cost by the price table (absent in files written before it was recorded)."""
    run_card: RunCard | None = Field(default=None, exclude_if=lambda v: v is None)
    """What produced the results: data and model revisions, versions, hardware (absent in files
    written before it was recorded)."""
    git_hash: str | None = None
    date: float = Field(ge=0, le=1e11, allow_inf_nan=False,
                        description="Seconds since the epoch (UTC), as lm-evaluation-harness writes it")

    @model_validator(mode="after")
    def _tasks_have_results(self) -> ResultsFile:
        from mmtasks.config.task_config import safe_name

        for task in self.results:
            # task names name files (samples/<task>.jsonl): names, never paths, in a received run too
            safe_name(task, "task")
        for name in _PER_TASK:
            unknown = sorted(set(getattr(self, name)) - set(self.results))
            if unknown:
                key = "n-samples" if name == "n_samples" else name
                raise ValueError(f"{key} names task(s) with no results: {', '.join(unknown)}")
        return self

    # --- reading ---------------------------------------------------------------------------

    def metrics(self, task: str) -> dict[str, float]:
        """The numeric metrics of ``task`` (``alias``, nulls and counters left out)."""
        record = self.results.get(task)
        return record.metrics() if record is not None else {}

    def variant_metrics(self, task: str, variant: str) -> dict[str, float]:
        """The numeric metrics of ``task`` as scoring variant ``variant`` gives them ({} when the
        task has no such variant)."""
        record = self.variants.get(task, {}).get(variant)
        if record is None:
            return {}
        return {k: float(v) for k, v in record.metrics.items() if v is not None}

    def task_hash(self, task: str) -> str | None:
        """The recorded hash of ``task``'s config (:attr:`config_hashes`); None for a file written
        before hashes were recorded (nothing to compare)."""
        return self.config_hashes.get(task)

    def judged(self, task: str) -> bool:
        """Whether ``task`` was scored by a judge model (its config has a ``judge`` and the run
        was not ``--predict-only``)."""
        return not self.config.predict_only and bool((self.configs.get(task) or {}).get("judge"))

    def chance_judged(self, task: str) -> bool:
        """Whether ``task``'s scores come from the chance-level ``random`` judge."""
        return self.judged(task) and self.config.chance_judge

    def to_json(self) -> dict[str, Any]:
        """The file's JSON object (``n-samples`` spelt as lm-eval does)."""
        return self.model_dump(mode="json", by_alias=True)


def read_results(path: Path) -> ResultsFile:
    """Read and validate ``results.json``; :class:`DataError` names the file and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"cannot read: {err}", file=path) from None
    # NaN/Infinity, 1e400, 400-digit integers, 100,000-deep nesting: one line naming the field
    return parse_results(loads_checked(text, file=path), file=path)


def parse_results(raw: Any, *, file: Path | None = None) -> ResultsFile:
    """Validate a results.json object already in memory."""
    try:
        return ResultsFile.model_validate(raw)
    except ValidationError as err:
        raise validation_error(err, file=file) from err


def validation_error(err: ValidationError, *, file: Path | None) -> DataError:
    problems = err.errors(include_url=False)
    first = problems[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    message = f"not a valid {RESULTS_FILE}: {_message(first)}"
    if len(problems) > 1:
        others = "; ".join(
            f"{'.'.join(str(p) for p in problem['loc'])}: {_message(problem)}" for problem in problems[1:4]
        )
        more = f" (+{len(problems) - 4} more)" if len(problems) > 4 else ""
        message += f"; also {others}{more}"
    return DataError(message, file=file, field=field)


def _message(problem: ErrorDetails) -> str:
    return str(problem["msg"]).removeprefix("Value error, ")
