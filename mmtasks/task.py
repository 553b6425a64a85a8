"""A task ready to run: its validated config plus the pieces built from it
(templates, parser, metrics, transforms), and the per-document operations the
protocols use."""

from __future__ import annotations

import dataclasses
import difflib
import importlib.util
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from mmtasks import registry
from mmtasks.config.task_config import TaskConfig, TransformConfig, is_template, space_problem
from mmtasks.config.task_registry import BUILTIN_TASKS_DIR
from mmtasks.core.conversation import Image, Message, Text
from mmtasks.dialogues.protocols import ProtocolSpec
from mmtasks.dialogues.transforms import Transform, apply_transforms
from mmtasks.documents.adapters import Adapter
from mmtasks.core.sample import Sample
from mmtasks.documents.dataset import Document, Exclusions, Report, load_documents
from mmtasks.documents.fewshot import draw, same_source
from mmtasks.documents.fewshot import source_config as fewshot_source
from mmtasks.errors import ConfigError, DataError, MmtasksError, TemplateError
from mmtasks.scoring.aggregation import AggregatorSpec
from mmtasks.scoring.hf_evaluate import EvaluateMetric, is_evaluate, load_evaluate_metric
from mmtasks.scoring.metrics import CorpusFunction, bind_metric, declared_references, is_corpus_function
from mmtasks.scoring.variants import BoundVariant, bind_variants, score_answer
from mmtasks.scoring.parsers import BoundParser, LabelArgs, ParserSpec, bind, document_labels, is_guess, onto_labels, option_letters
from mmtasks.config.task_regex import PatternTimeout, compile_task_pattern
from mmtasks.templates import TagError, render, split_on_images, split_on_tags

ImageMode = Literal["separate", "combined"]

#: a metric computed once over the task's (answer, reference) pairs
CorpusMetric = EvaluateMetric | CorpusFunction
#: a per-sample metric: (parsed, target, doc record) -> score (None: not applicable to this sample)
Metric = Callable[[Any, Any, dict], "float | None"]


@dataclass(frozen=True)
class Gold:
    """A document's gold answer: ``value`` as the sample records it (and a judge is shown), and
    ``scored``, what the metric functions compare a parsed reply with."""

    value: Any
    scored: Any


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

    def _check_matcher(self) -> None:
        """An ``answer.matcher`` needs a parser whose options it can name (``choice`` or ``label``),
        and its prompt file is read now."""
        matcher = self.config.answer.matcher
        assert matcher is not None
        if self.protocol.name != "single_turn":
            raise ConfigError(f"an answer matcher is asked by the single_turn protocol only, not by {self.protocol.name!r}",
                              file=self.file, field="answer.matcher", hint="remove the matcher, or use protocol: single_turn")
        if self.parser.name not in ("choice", "label"):
            raise ConfigError(f"an answer matcher names one of the options, but parser {self.parser.name!r} reads no options",
                              file=self.file, field="answer.matcher", hint="use the choice or label parser, or remove the matcher")
        if matcher.prompt_file:
            self.matcher_prefix = read_prompt_file(self.file.parent / matcher.prompt_file, task_file=self.file,
                                                   roots=(*self.roots, BUILTIN_TASKS_DIR), field_name="answer.matcher.prompt_file")

    def answer_labels(self, doc: Document) -> list[str]:
        """The options a reply to ``doc`` may name, as the task's parser reads them (``choice``:
        the record's letters or the fixed ones; ``label``: the space's labels); [] for another parser."""
        args = self.parser.args
        if isinstance(args, LabelArgs):
            return document_labels(doc.record, args)
        if self.parser.name == "choice" and args is not None:
            letters = getattr(args, "letters", None)
            return list(letters) if letters else option_letters(doc.record, getattr(args, "options_field"))
        return []

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
            where = ".".join(str(p) for p in ("protocol_args", *err["loc"]))
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
            elif corpus_fn:
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

    @property
    def scores_answers(self) -> bool:
        """Whether answers are parsed and scored by metric functions (per sample or over the corpus)."""
        return bool(self.metric_fns or self.corpus_metrics)

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
                    self.demonstration_answer(demo)
                except MmtasksError as exc:
                    if report is None:
                        raise
                    report(exc)
                    continue
                pool.append(demo)
            self._demonstrations[key] = tuple(pool)
        return self._demonstrations[key]

    def demonstration_answer(self, demo: Document) -> str:
        """A demonstration's answer as shown: ``fewshot.answer`` rendered, else the target as text."""
        fs = self.config.fewshot
        assert fs is not None
        if fs.answer is not None:
            return self.render(fs.answer, demo, "fewshot.answer")
        value = self.target(demo)
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

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

    # -- prompts ---------------------------------------------------------
    def variables(self, doc: Document, **extra: Any) -> dict[str, Any]:
        return {
            **self.config.prompt.variables,
            "doc": doc.record,
            "doc_id": doc.doc_id,
            "images": [img.label or img.describe() for img in doc.images],
            "n_images": len(doc.images),
            "n_source_images": n_source_images(doc),
            "videos": [clip.describe() for clip in doc.videos],
            "n_videos": len(doc.videos),
            "image_mode": self.image_mode,
            **extra,
        }

    def render(self, template: str, doc: Document, field_name: str, **extra: Any) -> str:
        return render(template, self.variables(doc, **extra), origin=str(self.file), doc_id=doc.doc_id, field=field_name)

    def parts(self, template: str, doc: Document, field_name: str, **extra: Any) -> tuple[Text | Image, ...]:
        """Render a template into interleaved text and image parts: images at their ``image(i)``
        and at the tags of ``prompt.image_tags``; the text as written (``prompt.strip_around_images``
        strips the newlines beside images)."""
        prompt = self.config.prompt
        pieces = split_on_images(self.render(template, doc, field_name, **extra))
        for piece in pieces:
            if isinstance(piece, int) and not 0 <= piece < len(doc.images):
                raise TemplateError(f"image({piece}) is out of range: the document has {len(doc.images)} images",
                                    file=self.file, doc_id=doc.doc_id, field=field_name)
        pieces = self._video_frames(self._video_tags(pieces, doc, field_name), doc, field_name)
        if prompt.image_tags is not None:
            tags = prompt.image_tags
            rule = self.config.dataset.record_rule("image_tag_unmatched")
            unmatched: Callable[[str], None] | None = None
            if rule is not None:  # the dataset's own records name images they lack: kept as text, counted
                reason = rule.reason

                def keep_as_text(tag: str) -> None:
                    doc.treated["kept_as_text"] = reason

                unmatched = keep_as_text
            try:
                pieces = split_on_tags(pieces, compile_task_pattern(tags.pattern), len(doc.images), tags.base, unmatched)
            except (TagError, PatternTimeout) as exc:
                raise DataError(str(exc), file=doc.source, doc_id=doc.doc_id, field=field_name,
                                hint="prompt.image_tags names the images by their tags in the text") from None
            if tags.untagged == "first":
                placed = {p for p in pieces if isinstance(p, int)}
                pieces = [i for i in range(len(doc.images)) if i not in placed] + pieces
        if prompt.strip_around_images:
            pieces = [p if isinstance(p, (int, Image)) else p.strip("\n") for p in pieces if isinstance(p, (int, Image)) or p.strip()]
        detail = prompt.image_detail  # the task's word to an API model on each image it sends (BLINK: low)

        def image(part: Image) -> Image:
            return part if detail is None else dataclasses.replace(part, detail=detail)

        return tuple(image(doc.images[p]) if isinstance(p, int) else image(p) if isinstance(p, Image) else Text(p)
                     for p in pieces if p != "")

    def _video_tags(self, pieces: list[Any], doc: Document, field_name: str) -> list[Any]:
        """The tags of ``prompt.video_tags`` in the text pieces as ``(video, -1)`` pieces (every frame)."""
        tags = self.config.prompt.video_tags
        if tags is None:
            return pieces
        boxed = [("image", p) if isinstance(p, int) else p for p in pieces]  # images pass through as they are
        try:
            found = split_on_tags(boxed, compile_task_pattern(tags.pattern), len(doc.videos), tags.base)
        except (TagError, PatternTimeout) as exc:
            raise DataError(str(exc).replace("image", "video"), file=doc.source, doc_id=doc.doc_id, field=field_name,
                            hint="prompt.video_tags names the videos by their tags in the text") from None
        out = [(p, -1) if isinstance(p, int) else p[1] if isinstance(p, tuple) and p[0] == "image" else p for p in found]
        if tags.untagged == "first":
            placed = {p[0] for p in out if isinstance(p, tuple)}
            out = [(i, -1) for i in range(len(doc.videos)) if i not in placed] + out
        return out

    def _video_frames(self, pieces: list[Any], doc: Document, field_name: str) -> list[Any]:
        """``video(i)`` and ``frame(i, k)`` pieces as the frames' image parts."""
        out: list[Any] = []
        for piece in pieces:
            if not isinstance(piece, tuple):
                out.append(piece)
                continue
            i, k = piece
            if not 0 <= i < len(doc.videos):
                raise TemplateError(f"video({i}) is out of range: the document has {len(doc.videos)} video(s)"
                                    + ("" if self.config.dataset.video else " (the task declares no dataset.video)"),
                                    file=self.file, doc_id=doc.doc_id, field=field_name)
            frames = doc.videos[i].frame_images()
            if k >= len(frames):
                raise TemplateError(f"frame({i}, {k}) is out of range: {len(frames)} frames of video {i} are sampled",
                                    file=self.file, doc_id=doc.doc_id, field=field_name)
            out.extend(frames if k < 0 else (frames[k],))
        return out

    def system_prompt(self, doc: Document) -> str | None:
        """The system message of the model's requests for ``doc``: ``--system-instruction`` when
        the run gives one, else the task's ``prompt.system`` rendered; None: no system message."""
        if self.system_instruction is not None:
            return self.system_instruction
        if self.config.prompt.system:
            return self.render(self.config.prompt.system, doc, "prompt.system")
        return None

    def initial_messages(self, doc: Document) -> tuple[Message, ...]:
        """The system message, the few-shot demonstrations (``fewshot.layout``: as earlier turns,
        or inline in the question's message), then the question: every one rendered by
        ``prompt.user`` (a demonstration's images are its own), each demonstration's answer by
        :meth:`demonstration_answer`."""
        msgs: list[Message] = []
        system = self.system_prompt(doc)
        if system:
            msgs.append(Message.text("system", system))
        question = self.parts(self.config.prompt.user, doc, "prompt.user")
        fs = self.config.fewshot
        if fs is None or not doc.demonstrations:
            msgs.append(Message("user", question))
        elif fs.layout == "turns":
            for demo in doc.demonstrations:
                msgs.append(Message("user", self.parts(self.config.prompt.user, demo, "prompt.user")))
                msgs.append(Message.text("assistant", self.demonstration_answer(demo)))
            msgs.append(Message("user", question))
        else:
            parts: list[Text | Image] = []
            for demo in doc.demonstrations:
                parts += [*self.parts(self.config.prompt.user, demo, "prompt.user"),
                          Text(fs.target_delimiter + self.demonstration_answer(demo) + fs.fewshot_delimiter)]
            msgs.append(Message("user", _joined((*parts, *question))))
        return tuple(msgs)

    # -- answers ---------------------------------------------------------
    def target(self, doc: Document) -> Any:
        """The gold answer as the sample records it, checked against the answer space (see
        :meth:`gold`)."""
        return self.gold(doc).value

    def gold(self, doc: Document) -> Gold:
        """The gold answer, checked against the answer space: the task's parser must read an
        answer in it (a letter within the record's options, an integer where one is expected);
        with what the metrics compare: the answer the parser read in it, the rule the check
        applied (unless the parser's ``target`` rule is ``raw``, or the target is a list of
        references)."""
        spec = self.config.target
        if spec.startswith("field:"):
            name = spec[len("field:"):]
            if name not in doc.record:
                raise DataError("target field is missing", file=doc.source, line=doc.line, doc_id=doc.doc_id, field=name)
            value = doc.record[name]
        else:
            name = "target"
            value = self.render(spec, doc, name)
        parsed = self._check_target(value, doc, name)
        # a label of a declared space is recorded in the space's spelling: gold "true" (or a JSON
        # true) is the label "True" that the replies are read onto
        recorded = parsed if self.parser.name == "label" or (self.space_labels and isinstance(parsed, str)) else value
        references = isinstance(value, list) and "several" in self.metric_references.values()
        if parsed is None or references or self.parser.target_rule(doc.record) == "raw":
            return Gold(recorded, recorded)
        return Gold(recorded, parsed)

    def _check_target(self, value: Any, doc: Document, field_name: str) -> Any:
        if isinstance(value, list):
            self._check_references(value, doc, field_name)
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        try:
            parsed = self.parser(text, doc.record)
        except DataError as exc:  # the record's answer vocabulary itself is malformed (e.g. its options)
            raise DataError(exc.message, file=doc.source, line=doc.line, doc_id=doc.doc_id, field=exc.field, hint=exc.hint) from None
        if parsed is None or is_guess(parsed):  # a parser's random fallback (a guess) is not an answer in the target
            rule = self.config.dataset.record_rule("target_outside_space")
            if rule is not None:  # the dataset's own gold beyond its options: asked, scored wrong, counted
                doc.treated["scored_wrong"] = rule.reason
                return
            raise DataError(f"target {value!r} is outside the answer space: parser {self.parser.name!r} reads no answer in it",
                            file=doc.source, line=doc.line, doc_id=doc.doc_id, field=field_name,
                            hint=self._answer_vocabulary(doc))
        return parsed

    def _check_references(self, value: list[Any], doc: Document, field_name: str) -> None:
        """A list target is several references: every metric function must take several (see
        :func:`~mmtasks.scoring.metrics.takes_references`), and, for a metric that does, each
        reference must be a non-empty string."""
        where = {"file": doc.source, "line": doc.line, "doc_id": doc.doc_id, "field": field_name}
        one = [name for name, kind in self.metric_references.items() if kind == "one"]
        if one:
            several = sorted(n for n in registry.metrics.names(self.plugins)
                             if declared_references(registry.metrics.get(n, plugins=self.plugins)) == "several")
            raise DataError(f"the target is a list of references, but metric {one[0]!r} "
                            f"({self._function_of(one[0])}) takes one reference", **where,
                            hint=f"metrics that take several: {', '.join(several)}; or a target of one string")
        if any(kind == "several" for kind in self.metric_references.values()):
            bad = next((r for r in value if not isinstance(r, str) or not r.strip()), None) if value else ""
            if bad is not None:
                raise DataError(f"a reference must be a non-empty string, got {str(bad)[:80]!r} "
                                f"(the target is {str(value)[:80]!r})", **where)

    def _function_of(self, metric_name: str) -> str:
        return next((str(m.function) for m in self.config.metrics if m.name == metric_name), metric_name)

    def _answer_vocabulary(self, doc: Document) -> str | None:
        """What the parser accepts for this record, where its arguments say (a field of options)."""
        args = self.parser.args
        labels = getattr(args, "labels", None)
        if labels:
            return "the answer space is " + ", ".join(labels)
        letters = getattr(args, "letters", None)
        if letters:
            return "the task's letters are " + ", ".join(letters)
        field_name = getattr(args, "labels_field", None)
        if isinstance(field_name, str) and field_name in doc.record:
            try:
                return f"the record's labels ({field_name}) are " + ", ".join(document_labels(doc.record, args))
            except DataError:
                return None
        options = getattr(args, "options_field", None)
        if isinstance(options, str) and options in doc.record:
            try:
                return f"the record's options ({options}) are " + ", ".join(option_letters(doc.record, options))
            except DataError:
                return None
        return None

    def answer_space(self, doc: Document) -> dict[str, Any]:
        """The answer space for the random baseline, with templated values rendered."""
        # A text answer is drawn from ``source_text`` when the task names it (what the model is
        # shown, e.g. the question), else from the prompt - never from the record, which holds the gold.
        return self.rendered_space(self.config.answer.space, doc, "answer.space")

    def rendered_space(self, space: dict[str, Any], doc: Document, field_name: str, **extra: Any) -> dict[str, Any]:
        """An answer space (see ``AnswerConfig.space``) with its template strings rendered (JSON when they parse)."""
        out: dict[str, Any] = {"n_images": n_source_images(doc)}
        for k, v in space.items():
            if isinstance(v, str) and "{" in v:
                rendered = self.render(v, doc, f"{field_name}.{k}", **extra)
                try:
                    out[k] = json.loads(rendered)
                except json.JSONDecodeError:
                    out[k] = rendered
            else:
                out[k] = v
        problem = space_problem(out, any_kind=is_template(space.get("kind")))
        if problem is not None:
            raise TemplateError(problem[1], file=self.file, doc_id=doc.doc_id, field=f"{field_name}.{problem[0]}")
        return out

    def score(self, parsed: Any, target: Any, doc: Document) -> dict[str, float | None]:
        """The metric functions' scores of an answer read as ``parsed``; a reply read as nothing
        gets 0 from them, or no score under ``answer.unparsed: unscored``."""
        return score_answer(self.metric_fns, parsed, target, doc.record, self.config.answer.unparsed)

    def cluster_of(self, doc: Document) -> str | None:
        """The document's cluster (``cluster:``): its own id for ``dialogue``, else the value of
        the named record field (dotted for a nested one); None when the task declares none. A
        record without the field is a data error (the preflight reports it before any model)."""
        name = self.config.cluster
        if name is None:
            return None
        if name == "dialogue":
            return doc.doc_id
        value: Any = doc.record
        for part in name.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is None or isinstance(value, (dict, list)):
            raise DataError("the task's cluster field is missing or not a single value", file=doc.source,
                            line=doc.line, doc_id=doc.doc_id, field=name)
        return str(value)

    def breakdown_values(self, doc: Document) -> dict[str, str]:
        out: dict[str, str] = {}
        for b in self.config.breakdowns:
            # A template that does not render is an error (the preflight reports it before any
            # model loads); a document left out of a breakdown renders "" (e.g. doc.get('x', '')).
            raw = self.render(b.value, doc, f"breakdowns.{b.name}").strip()
            if not raw:
                continue
            if b.bins:
                try:
                    num = float(raw)
                except ValueError:
                    continue
                label = next((lab for lab, (lo, hi) in b.bins.items() if lo <= num <= hi), None)
                if label is not None:
                    out[b.name] = label
            else:
                out[b.name] = raw
        return out


def _joined(parts: tuple[Text | Image, ...]) -> tuple[Text | Image, ...]:
    """Adjacent text parts as one (an inline demonstration's answer and the next question)."""
    out: list[Text | Image] = []
    for part in parts:
        if isinstance(part, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text + part.text)
        else:
            out.append(part)
    return tuple(out)


def onto_space(bound: BoundParser, labels: list[str]) -> BoundParser:
    """``bound`` with its answers read onto ``labels`` (:func:`~mmtasks.scoring.parsers.onto_labels`),
    under the same name and arguments."""

    def read(text: str, doc: Any, *_: Any) -> Any:
        return onto_labels(bound(text, doc), labels)

    spec = ParserSpec(name=bound.spec.name, fn=read, args=None, space=bound.spec.space, takes_doc=True)
    return _SpaceBound(spec, bound.args)


@dataclass(frozen=True)
class _SpaceBound(BoundParser):
    """A bound parser whose answers are read onto a text space: called as ``fn(text, doc)``, its
    arguments kept for what reads them (the choice parser's letters, options field)."""

    def __call__(self, text: str, doc: Any) -> Any:
        return self.spec.fn(text, doc)


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
    what = "matcher" if field_name.startswith("answer.matcher") else "judge"
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


def n_source_images(doc: Document) -> int:
    """How many images the document had before any combining."""
    return sum(len(img.parts) or 1 for img in doc.images)
