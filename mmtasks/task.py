"""A task ready to run: its validated config linked to the pieces built from it (the protocol,
aggregator, parser, metric functions, transforms, adapter and judge resolved by name, each
setting checked), and the documents it reads.

This module is the linking; what a task does with one document lives beside it:
:mod:`mmtasks.prompts` (its templates rendered into messages) and :mod:`mmtasks.answers`
(targets, answer spaces, breakdowns). A protocol is given neither the task nor these: it gets
one :class:`~mmtasks.dialogues.state.DocumentState` per document (:meth:`Task.state`), and an
aggregator gets :class:`~mmtasks.scoring.aggregation.TaskScoring` (:attr:`Task.scoring`).
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from mmtasks import registry
from mmtasks.answers import Answers, Gold, declares_letter_space, onto_space
from mmtasks.config.task_config import TaskConfig, TransformConfig
from mmtasks.config.task_registry import BUILTIN_TASKS_DIR
from mmtasks.core.sample import Sample
from mmtasks.dialogues.protocols import ProtocolSpec
from mmtasks.dialogues.state import DocumentState
from mmtasks.dialogues.transforms import Transform, apply_transforms
from mmtasks.documents.adapters import Adapter
from mmtasks.documents.dataset import Document, Exclusions, Report, load_documents
from mmtasks.documents.fewshot import draw, same_source
from mmtasks.documents.fewshot import source_config as fewshot_source
from mmtasks.errors import ConfigError, MmtasksError
from mmtasks.prompts import ImageMode, Prompts, n_source_images
from mmtasks.scoring.aggregation import AggregatorSpec, CorpusMetric, TaskScoring
from mmtasks.scoring.group_aggregation import GroupAggregatorSpec
from mmtasks.scoring.hf_evaluate import is_evaluate, load_evaluate_metric
from mmtasks.scoring.metrics import CorpusFunction, Metric, bind_metric, declared_references, is_corpus_function
from mmtasks.scoring.parsers import BoundParser, bind
from mmtasks.scoring.variants import BoundVariant, bind_variants

__all__ = ["CorpusMetric", "Gold", "ImageMode", "Metric", "Task", "n_source_images", "read_prompt_file"]


@dataclass
class Task:
    """A task whose every name is resolved and whose settings are checked.

    Building one loads the task's plugin files, then resolves the protocol, the
    aggregator, the parser, the metric functions, the transforms, the dataset
    adapter and the judge's verdict parser, validates ``protocol_args`` (with the
    run's overrides) against the protocol's args model, and checks that a
    ``judge:`` block is used by the protocol and that every ``metrics:`` name is
    one the aggregator reports. Any problem is a one-line :class:`ConfigError`
    naming the file and the key, raised before a model is loaded.
    """

    config: TaskConfig
    file: Path
    image_mode: ImageMode = "separate"
    #: run-level protocol overrides (``--history reference`` -> ``{"history": "reference"}``)
    protocol_overrides: dict[str, Any] = field(default_factory=dict)
    #: the folders the task's plugin files must lie in (its task folder); default: the YAML's folder
    roots: tuple[Path, ...] = ()
    #: ``--system-instruction`` (lm-eval's name): the system message of every model request, as
    #: written (not a template), in place of the task's ``prompt.system`` or where it has none
    system_instruction: str | None = None
    #: the resolved plugin files this task loaded (their names are visible to it)
    plugins: tuple[Path, ...] = field(init=False, default=())
    protocol: ProtocolSpec = field(init=False)
    #: ``protocol_args`` (with the run's overrides) validated by the protocol's args model
    args: BaseModel = field(init=False)
    aggregator: AggregatorSpec = field(init=False)
    #: group -> the group aggregator this task names for it (``group_aggregators``)
    group_aggregators: dict[str, GroupAggregatorSpec] = field(init=False, default_factory=dict)
    #: the answer parser with its ``answer.parser_args``: ``parser(text, doc.record) -> value | None``
    parser: BoundParser = field(init=False)
    #: the per-sample metric functions (``aggregation: mean``), by metric name
    metric_fns: dict[str, Metric] = field(init=False)
    #: the ``evaluate:`` metrics (``aggregation: corpus``) and corpus metric functions
    #: (``corpus_bleu``, ``cider_d``) computed once over the task's (answer, reference) pairs, by metric name
    corpus_metrics: "dict[str, CorpusMetric]" = field(init=False, default_factory=dict)
    #: how many references each metric function takes (``one``, ``several``; None: it reads its
    #: target its own way), by metric name: a list target for a ``one`` metric is a data error
    metric_references: dict[str, str | None] = field(init=False, default_factory=dict)
    transforms: tuple[tuple[Transform, TransformConfig], ...] = field(init=False, default=())
    #: the resolved ``dataset.adapter`` (None: records are read as they are)
    adapter: Adapter | None = field(init=False, default=None)
    #: the judge-verdict parser with its ``judge.parser_args``:
    #: ``judge_parser(text, context) -> fields | None`` (None: the task has no judge)
    judge_parser: BoundParser | None = field(init=False, default=None)
    #: the text of ``judge.prompt_file``, read byte-exact ("" when there is none)
    judge_prefix: str = field(init=False, default="")
    #: the ``fewshot:`` source's demonstrations, by data root (read once)
    _demonstrations: dict[str, tuple[Document, ...]] = field(init=False, default_factory=dict, repr=False)
    #: the text of ``answer.matcher.prompt_file``, read byte-exact ("" when there is none)
    matcher_prefix: str = field(init=False, default="")
    #: the labels of a literal text space that a parser other than ``label`` reads its answers onto
    space_labels: list[str] | None = field(init=False, default=None)
    #: the task's templates, rendered for a document (built once the task is linked)
    prompts: Prompts = field(init=False, repr=False)
    #: the task's targets, answer spaces and breakdowns (built once the task is linked)
    answers: Answers = field(init=False, repr=False)
    #: the task's scoring variants (``variants:``), resolved (:mod:`mmtasks.scoring.variants`)
    variants: tuple[BoundVariant, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        cfg, origin = self.config, str(self.file)
        self.plugins = self._load_plugins()

        def get(reg: registry.Registry[Any], name: str, where: str) -> Any:
            return reg.get(name, plugins=self.plugins, file=origin, field=where)

        if cfg.dataset.video is not None:
            _needs_pyav(self.file)
        self.protocol = get(registry.protocols, cfg.protocol, "protocol")
        self.args = self._protocol_args()
        if cfg.judge is not None and not self.protocol.uses_judge:
            raise ConfigError(f"protocol {cfg.protocol!r} does not use a judge, so this judge: block would never be called",
                              file=origin, field="judge", hint="remove it, or use a protocol that judges")
        if self.image_mode == "combined" and not self.protocol.supports_combined_images:
            raise ConfigError(f"protocol {cfg.protocol!r} of task {cfg.task!r} does not support --image-mode combined",
                              field="--image-mode", hint="run it with --image-mode separate")
        if cfg.fewshot is not None:
            if not self.protocol.fewshot:
                raise ConfigError(f"protocol {cfg.protocol!r} does not show few-shot demonstrations", file=origin,
                                  field="fewshot", hint="few-shot applies to single_turn tasks")
            fewshot_source(cfg, file=origin)  # a source the dataset cannot have is a load error
        if cfg.aggregator is None:  # the protocol's own; results.json's configs record it
            self.config = cfg = cfg.model_copy(update={"aggregator": self.protocol.default_aggregator})
        assert cfg.aggregator is not None
        self.aggregator = get(registry.aggregators, cfg.aggregator, "aggregator")
        self.group_aggregators = {g: get(registry.group_aggregators, name, f"group_aggregators.{g}")
                                  for g, name in cfg.group_aggregators.items()}
        self.parser = self._answer_parser()
        self.metric_fns, self.corpus_metrics = self._metric_functions(get)
        self._check_metrics()
        self.variants = bind_variants(self)
        self.transforms = tuple((get(registry.transforms, t.name, f"transforms[{i}].name"), t)
                                for i, t in enumerate(cfg.transforms))
        if cfg.dataset.adapter:
            self.adapter = get(registry.adapters, cfg.dataset.adapter, "dataset.adapter")
        if cfg.answer.matcher is not None:
            self._check_matcher()
        if cfg.judge is not None:
            self.judge_parser = bind(cfg.judge.parser, cfg.judge.parser_args, registry=registry.verdict_parsers,
                                     plugins=self.plugins, file=origin, field="judge")
            if cfg.judge.prompt_file:
                self.judge_prefix = read_prompt_file(self.file.parent / cfg.judge.prompt_file, task_file=self.file,
                                                     roots=(*self.roots, BUILTIN_TASKS_DIR))
        self.prompts = Prompts(cfg, self.file, self.image_mode, self.system_instruction)
        self.answers = Answers(cfg, self.file, self.prompts, self.parser, self.metric_references, self.plugins,
                               self.space_labels)

    def state(self, doc: Document, *, scored: bool = True) -> DocumentState:
        """What the protocol gets for ``doc`` (``protocol.run(task.state(doc), ctx)``);
        ``scored=False``: without the metric functions (the preflight's stand-in replies are not
        worth scoring, nor worth loading a tokenizer for)."""
        return DocumentState(doc=doc, task=self.name, config=self.config, args=self.args, file=self.file,
                             image_mode=self.image_mode, parser=self.parser,
                             metric_fns=self.metric_fns if scored else {}, corpus_metrics=tuple(self.corpus_metrics),
                             prompts=self.prompts, answers=self.answers, judge_parser=self.judge_parser,
                             judge_prefix=self.judge_prefix, matcher_prefix=self.matcher_prefix, variants=self.variants)

    @property
    def scoring(self) -> TaskScoring:
        """What the aggregator gets (``aggregator.fn(task.scoring, samples, seed)``)."""
        return TaskScoring(name=self.name, config=self.config, corpus_metrics=self.corpus_metrics)

    def _check_matcher(self) -> None:
        """An ``answer.matcher`` needs a parser whose options it can name (``choice`` or ``label``),
        and its prompt file is read now."""
        matcher = self.config.answer.matcher
        assert matcher is not None
        if self.protocol.name != "single_turn":
            raise ConfigError(f"an answer matcher is asked by the single_turn protocol only, not by {self.protocol.name!r}",
                              file=self.file, field="answer.matcher", hint="remove the matcher, or use protocol: single_turn")
        if matcher.labels is None and self.parser.name not in ("choice", "label") and not declares_letter_space(self.config):
            raise ConfigError(f"an answer matcher names one of the options, but parser {self.parser.name!r} reads no options",
                              file=self.file, field="answer.matcher",
                              hint="use the choice or label parser, declare answer.space {kind: choice, choices: [letters]} "
                                   "or answer.matcher.labels, or remove the matcher")
        if matcher.prompt_file:
            self.matcher_prefix = read_prompt_file(self.file.parent / matcher.prompt_file, task_file=self.file,
                                                   roots=(*self.roots, BUILTIN_TASKS_DIR), field_name="answer.matcher.prompt_file")
        self.variants = tuple(
            dataclasses.replace(v, matcher_prefix=read_prompt_file(
                self.file.parent / own.prompt_file, task_file=self.file, roots=(*self.roots, BUILTIN_TASKS_DIR),
                field_name=f"variants[{i}].matcher_prompt.prompt_file"))
            if (own := v.config.matcher_prompt) is not None and own.prompt_file else v
            for i, v in enumerate(self.variants))

    def _answer_parser(self) -> BoundParser:
        """``answer.parser`` with its arguments; the default ``text`` parser under a declared text
        space (``answer.space: [True, False]``, a ``choice`` space of literal choices) reads
        replies onto that space: it is the ``label`` parser with the space's choices."""
        answer, origin = self.config.answer, str(self.file)
        space = answer.space
        if answer.parser == "text" and space.get("kind") == "choice" and "choices" in space:
            choices = space["choices"]
            if not isinstance(choices, list):  # a template: each document's own labels
                raise ConfigError("the text parser reads replies onto a literal list of choices; this space's "
                                  "choices are a template", file=origin, field="answer.space.choices",
                                  hint="use parser: label with parser_args: {labels_field: FIELD} (the record's list "
                                       "of labels), or choice with its options_field")
            if not answer.parser_args:
                try:
                    return bind("label", {"labels": choices}, plugins=self.plugins, file=origin, field="answer")
                except ConfigError as exc:
                    raise ConfigError(exc.message.split(": ", 1)[-1], file=origin, field="answer.space.choices") from None
        bound = bind(answer.parser, answer.parser_args, plugins=self.plugins, file=origin, field="answer")
        choices = space.get("choices")
        if space.get("kind") == "choice" and isinstance(choices, list) and choices and all(isinstance(c, str) for c in choices):
            # another parser under a literal text space: what it reads is read onto the space too
            # (true_false's "true" is the label "True"; a string outside the space is unparsed)
            self.space_labels = list(choices)
            return onto_space(bound, self.space_labels)
        return bound

    def _load_plugins(self) -> tuple[Path, ...]:
        # the built-in benchmark folders are package data, trusted like the task's own folder
        roots = (*(self.roots or (self.file.parent,)), BUILTIN_TASKS_DIR)
        # Paths are relative to the YAML file that lists them: the task registry makes inherited
        # ones absolute; a relative one here was written in this task's own file.
        return tuple(dict.fromkeys(registry.load_plugin_file(self.file.parent / p, roots=roots, task_file=self.file)
                                   for p in self.config.plugins))

    def _protocol_args(self) -> BaseModel:
        model = self.protocol.args
        known = set(model.model_fields)
        for key in self.protocol_overrides:
            if key not in known:
                raise ConfigError(f"--{key.replace('_', '-')} does not apply to task {self.name!r}: protocol "
                                  f"{self.protocol.name!r} has no {key!r} setting", field=f"--{key.replace('_', '-')}")
        try:
            return model.model_validate({**self.config.protocol_args, **self.protocol_overrides})
        except ValidationError as exc:
            err = exc.errors()[0]
            key = str(err["loc"][0]) if err["loc"] else ""
            if key in self.protocol_overrides and len(err["loc"]) == 1:
                raise ConfigError(err["msg"], field=f"--{key.replace('_', '-')}") from None
            where = "protocol_args" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
            if err["type"] == "extra_forbidden":
                close = difflib.get_close_matches(key, sorted(known), n=1)
                hint = (f"did you mean {close[0]!r}?" if close else
                        f"protocol {self.protocol.name!r} takes: {', '.join(sorted(known))}" if known else
                        f"protocol {self.protocol.name!r} takes no protocol_args")
                raise ConfigError("unknown key", file=self.file, field=where, hint=hint) from None
            if err["type"] == "missing":
                raise ConfigError("required key is missing", file=self.file, field=where) from None
            if err["type"] == "answer_space":
                raise ConfigError(err["ctx"]["message"], file=self.file, field=f"{where}.{err['ctx']['key']}") from None
            if err["type"] == "value_error":  # the validator's own words, without pydantic's "Value error, "
                raise ConfigError(str(err["ctx"]["error"]), file=self.file, field=where) from None
            raise ConfigError(err["msg"], file=self.file, field=where) from None

    def _metric_functions(self, get: Callable[[Any, str, str], Any]) -> tuple[dict[str, Metric], dict[str, CorpusMetric]]:
        """The per-sample metric functions and the corpus metrics of ``metrics:``, each checked
        (the ``evaluate:`` ones loaded) before any model is built."""
        per_sample: dict[str, Metric] = {}
        corpus: dict[str, CorpusMetric] = {}
        roots = (*(self.roots or (self.file.parent,)), BUILTIN_TASKS_DIR)
        for i, m in enumerate(self.config.metrics):
            where = f"metrics[{i}].function"
            evaluate_fn = is_evaluate(m.function)
            if not evaluate_fn:
                for key in ("key", "report_factor"):
                    if key in m.model_fields_set:
                        raise ConfigError(f"{key} applies to evaluate: metrics only", file=self.file, field=f"metrics[{i}].{key}")
            fn = None if evaluate_fn or not m.function else get(registry.metrics, m.function, where)
            corpus_fn = is_corpus_function(fn)
            if corpus_fn and m.aggregation == "mean" and "aggregation" in m.model_fields_set:
                raise ConfigError(f"metric function {m.function!r} is computed over the whole corpus, not per answer",
                                  file=self.file, field=f"metrics[{i}].aggregation", hint="aggregation: corpus, or leave it out")
            if m.aggregation == "corpus" and not evaluate_fn and not corpus_fn:
                raise ConfigError("aggregation: corpus needs an evaluate: metric or a corpus metric function "
                                  "(corpus_bleu, cider_d); this function scores one answer",
                                  file=self.file, field=f"metrics[{i}].aggregation",
                                  hint="e.g. function: corpus_bleu; or aggregation: mean")
            if (m.aggregation == "corpus" or corpus_fn) and not self.protocol.corpus_metrics:
                raise ConfigError(f"protocol {self.protocol.name!r} keeps no (answer, reference) pairs, so it cannot "
                                  "give a corpus metric", file=self.file, field=f"metrics[{i}].aggregation")
            if not m.function:
                continue
            if evaluate_fn:
                metric = load_evaluate_metric(m, task_file=self.file, roots=roots, field_name=where)
                if m.aggregation == "corpus":
                    corpus[m.name] = metric
                else:
                    per_sample[m.name] = metric
                continue
            assert fn is not None  # a registered function is named (not evaluate:)
            if corpus_fn:
                for module in getattr(fn, "requires", ()):
                    if importlib.util.find_spec(module) is None:
                        raise ConfigError(f"metric function {m.function!r} needs the {module!r} package", file=self.file,
                                          field=where, hint="pip install 'mmtasks[captions]'")
                if "args" in m.model_fields_set:
                    raise ConfigError(f"metric function {m.function!r} takes no args", file=self.file, field=f"metrics[{i}].args")
                self.metric_references[m.name] = declared_references(fn)
                corpus[m.name] = CorpusFunction(m.name, fn)
            else:
                self.metric_references[m.name] = declared_references(fn)
                if "args" in m.model_fields_set:
                    fn = bind_metric(m.function, fn, m.args, file=self.file, field=f"metrics[{i}].args")
                per_sample[m.name] = fn
        return per_sample, corpus

    def _check_metrics(self) -> None:
        emitted = set(self.aggregator.emits(self.config)) | set(self.corpus_metrics)
        for i, m in enumerate(self.config.metrics):
            if m.name not in emitted:
                reports = ", ".join(sorted(emitted)) or "none for this task"
                hint = f"it reports: {reports}" + ("" if m.function else "; or give the metric a function")
                raise ConfigError(f"metric {m.name!r} is not one that aggregator {self.aggregator.name!r} reports",
                                  file=self.file, field=f"metrics[{i}].name", hint=hint)

    @property
    def name(self) -> str:
        return self.config.task

    def cluster_of(self, doc: Document) -> str | None:
        """The document's cluster (``cluster:``; see :meth:`mmtasks.answers.Answers.cluster_of`)."""
        return self.answers.cluster_of(doc)

    def documents(self, data_root: Path | None, limit: int | None = None, report: Report | None = None,
                  only: Callable[[int], bool] | None = None, frames: Any = None,
                  excluded: Exclusions | None = None) -> Iterator[Document]:
        """The first ``limit`` documents, transformed. With ``report``, a record's problems go
        there and the record is left out; ``only`` reads a share of them; ``frames``: the store
        videos are decoded into; the records the task's record policy excludes are counted in
        ``excluded`` (see :func:`load_documents`)."""
        fs = self.config.fewshot
        pool = self.demonstrations(data_root, report, frames) if fs is not None and fs.k > 0 else ()
        exclude_own = fs is not None and same_source(self.config, data_root)
        for doc in load_documents(self.config, data_root, task_file=self.file, adapter=self.adapter, limit=limit,
                                  report=report, only=only, frames=frames, excluded=excluded):
            doc = apply_transforms(doc, self.transforms, self.image_mode)
            if pool:
                assert fs is not None
                doc = dataclasses.replace(doc, demonstrations=draw(pool, doc, fs, fs.k, exclude_own=exclude_own, file=self.file))
            yield doc

    def demonstrations(self, data_root: Path | None, report: Report | None = None, frames: Any = None) -> tuple[Document, ...]:
        """Every usable demonstration of the ``fewshot:`` source, read (once per data root) by the
        documents' loader and transformed alike; each one's answer is rendered here, so a record
        whose answer template fails is reported (with ``report``) and never drawn."""
        key = str(data_root)
        if key not in self._demonstrations:
            config = fewshot_source(self.config, file=self.file)
            pool = []
            for demo in load_documents(config, data_root, task_file=self.file, adapter=self.adapter, report=report,
                                       frames=frames):
                demo = apply_transforms(demo, self.transforms, self.image_mode)
                try:
                    self.answers.demonstration_answer(demo)
                except MmtasksError as exc:
                    if report is None:
                        raise
                    report(exc)
                    continue
                pool.append(demo)
            self._demonstrations[key] = tuple(pool)
        return self._demonstrations[key]

    def treated(self, sample: Sample, doc: Document) -> Sample:
        """``sample`` of ``doc`` with what the record policy did to the record while it was
        evaluated (``Sample.irregular``); a record scored wrong has 0 on every metric, whatever
        the reply (a failed request stays a failure: nothing was answered)."""
        if not doc.treated:
            return sample
        sample.irregular = dict(doc.treated)
        if "scored_wrong" in doc.treated and not sample.failures:
            sample.metrics = {name: 0.0 for name in {*sample.metrics, *self.metric_fns}}
            sample.unparsed = sample.guessed = 0  # however the reply reads, the record is wrong
        return sample


def _needs_pyav(task_file: Path) -> None:
    """A task with videos needs PyAV: one line at load, not one per video."""
    import importlib.util

    try:
        found = importlib.util.find_spec("av") is not None
    except (ImportError, ValueError):  # sys.modules["av"] is None (refused), or a broken entry
        found = False
    if not found:
        raise ConfigError("this task has videos (dataset.video), and reading them needs the PyAV package (av)",
                          file=task_file, field="dataset.video", hint="pip install 'mmtasks[video]'")


def read_prompt_file(path: Path, *, task_file: Path, roots: tuple[Path, ...] = (), field_name: str = "judge.prompt_file") -> str:
    """A prompt file's exact text: bytes decoded as UTF-8, no newline translation, nothing stripped.
    It must be a regular file (links followed) inside the task file's folder or ``roots``, never anywhere else.
    ``field_name``: the key that names it (``judge.prompt_file``, ``answer.matcher.prompt_file``)."""
    what = "matcher" if "matcher" in field_name else "judge"
    folders = [r.resolve() for r in (task_file.parent, *roots)]
    real = path.resolve()
    if not any(real.is_relative_to(f) for f in folders) or (real.exists() and not real.is_file()):
        raise ConfigError(f"the {what} prompt file {path} is not a file inside the task's folder or the task folders",
                          file=task_file, field=field_name)
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the {what} prompt file {path}: {exc.strerror}", file=task_file, field=field_name) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"the {what} prompt file {path} is not UTF-8 ({exc.reason} at byte {exc.start})", file=task_file, field=field_name) from None
