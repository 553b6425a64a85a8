"""What a protocol gets for one document: :class:`DocumentState`.

A protocol (``@protocol``) is called as ``fn(state, ctx)`` once per document: ``state`` is the
document with everything the task resolved for it (its rendered messages, target, answer space
and breakdown labels, the parser and metric functions, the render function for the protocol's
own templates), ``ctx`` the run's settings (:class:`~mmtasks.dialogues.protocols.DialogueContext`).
It is never the :class:`~mmtasks.task.Task`: what a protocol may use is what this class
holds, the same for the built-in protocols and a plugin's. ``docs/authors/plugin-api.md`` documents it.

What is rendered from a template (the messages, the target, the answer space, the breakdown
labels, the system prompt) is rendered on first use and kept: a protocol that never reads one
never renders its template, and a template that fails raises its one-line error (file,
document, key) where the protocol first reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mmtasks.answers import Answers, Gold
from mmtasks.config.task_config import TaskConfig
from mmtasks.core.conversation import Image, Message, Text
from mmtasks.documents.dataset import Document
from mmtasks.prompts import ImageMode, Prompts
from mmtasks.scoring.metrics import Metric
from mmtasks.scoring.parsers import BoundParser
from mmtasks.scoring.variants import BoundVariant, score_answer


@dataclass(frozen=True, eq=False)
class DocumentState:
    """One document of a task, as a protocol sees it."""

    doc: Document
    #: the task's name (``Sample.task``, ``Request.task``)
    task: str
    #: the task's validated config: ``generation``, ``answer`` (retries, matcher), ``judge``, ``prompt`` ...
    config: TaskConfig
    #: ``protocol_args`` (with the run's overrides), validated by the protocol's args model
    args: BaseModel
    #: the task file, for the one-line errors a protocol raises (``ConfigError(..., file=state.file)``)
    file: Path
    #: ``--image-mode``: ``separate``, or ``combined`` (all of a document's images stitched into one)
    image_mode: ImageMode
    #: the answer parser with its ``answer.parser_args``: ``parser(text, record) -> answer | None``
    parser: BoundParser
    #: the per-sample metric functions by metric name: ``fn(parsed, target, record) -> float | None``
    #: (empty while the preflight checks the documents: the stand-in's replies are not scored)
    metric_fns: Mapping[str, Metric]
    #: the names of the task's corpus metrics (``aggregation: corpus``): when there are any, the
    #: protocol keeps each scored answer and its reference (:func:`~mmtasks.scoring.aggregation.add_corpus_pair`)
    corpus_metrics: tuple[str, ...]
    #: the task's prompt templates (what :meth:`render` and :meth:`parts` use)
    prompts: Prompts = field(repr=False)
    #: the task's answers (what :attr:`target` and :attr:`answer_space` use)
    answers: Answers = field(repr=False)
    #: the judge-verdict parser with its ``judge.parser_args`` (None: the task has no judge)
    judge_parser: BoundParser | None = None
    #: the text of ``judge.prompt_file``, read byte-exact ("" when there is none)
    judge_prefix: str = ""
    #: the text of ``answer.matcher.prompt_file``, read byte-exact ("" when there is none)
    matcher_prefix: str = ""
    #: the task's scoring variants (``variants:``; :func:`~mmtasks.scoring.variants.score_variants`)
    variants: tuple[BoundVariant, ...] = ()

    # -- rendered on first use -------------------------------------------------
    @cached_property
    def messages(self) -> tuple[Message, ...]:
        """The first request's messages: the system message, the few-shot demonstrations, the
        question rendered by ``prompt.user``."""
        return self.prompts.initial_messages(self.doc, self.answers.demonstration_answer)

    @cached_property
    def gold(self) -> Gold:
        """The gold answer (``target:``), checked against the answer space: ``gold.value`` as the
        sample records it (and a judge is shown), ``gold.scored`` what the metric functions compare."""
        return self.answers.gold(self.doc)

    @property
    def target(self) -> Any:
        """The gold answer as the sample records it (``gold.value``)."""
        return self.gold.value

    @cached_property
    def system_prompt(self) -> str | None:
        """The system message: ``--system-instruction``, else ``prompt.system`` rendered; None: none."""
        return self.prompts.system_prompt(self.doc)

    @cached_property
    def answer_space(self) -> dict[str, Any]:
        """``answer.space`` rendered: what a valid answer looks like, for the random baseline."""
        return self.answers.answer_space(self.doc)

    @cached_property
    def breakdown(self) -> dict[str, str]:
        """The document's label under each of the task's ``breakdowns`` (``Sample.breakdown``)."""
        return self.answers.breakdown_values(self.doc)

    # -- functions ---------------------------------------------------------------
    def render(self, template: str, field_name: str, **extra: Any) -> str:
        """A template rendered with the document's variables (``doc``, ``images`` ...) and ``extra``;
        ``field_name``: the key an error names (``protocol_args.probe_prompt``)."""
        return self.prompts.render(template, self.doc, field_name, **extra)

    def parts(self, template: str, field_name: str, **extra: Any) -> tuple[Text | Image, ...]:
        """A template rendered into interleaved text and image parts (``{{ image(0) }}``, tags)."""
        return self.prompts.parts(template, self.doc, field_name, **extra)

    def variables(self, **extra: Any) -> dict[str, Any]:
        """The variables a template of this document sees, with ``extra``."""
        return self.prompts.variables(self.doc, **extra)

    def rendered_space(self, space: dict[str, Any], field_name: str, **extra: Any) -> dict[str, Any]:
        """An answer space (``answer.space``'s form) with its template strings rendered."""
        return self.answers.rendered_space(space, self.doc, field_name, **extra)

    def score(self, parsed: Any, target: Any, record: Mapping[str, Any] | None = None) -> dict[str, float | None]:
        """Every metric function's score of ``parsed`` against ``target`` (a reply read as nothing
        gets 0, or no score under ``answer.unparsed: unscored``); ``record``: what the functions
        see as the record (default: the document's; replay_probe passes the question)."""
        seen = self.doc.record if record is None else record
        return score_answer(self.metric_fns, parsed, target, seen, self.config.answer.unparsed)

    def answer_labels(self) -> list[str]:
        """The options a reply may name, as the task's parser reads them ([] for a parser of no options)."""
        return self.answers.answer_labels(self.doc)

    @property
    def scores_answers(self) -> bool:
        """Whether answers are parsed and scored by metric functions (per sample or over the corpus)."""
        return bool(self.metric_fns or self.corpus_metrics)
