"""A task's answers: the gold target of a document checked against the answer space, the answer
space the random baseline draws from, the options a reply may name, and the document's
breakdown labels and cluster.

Split from :mod:`mmtasks.task` (its "answers" section): :class:`Answers` holds what these
read (the config, the bound parser, the metric functions' reference counts), and renders its
templates with the task's :class:`~mmtasks.prompts.Prompts`; the protocols reach it through a
document's state (:class:`~mmtasks.dialogues.state.DocumentState`), never through the task.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmtasks import registry
from mmtasks.config.task_config import TaskConfig, is_template, space_problem
from mmtasks.documents.dataset import Document
from mmtasks.errors import DataError, TemplateError, Where
from mmtasks.prompts import Prompts, n_source_images
from mmtasks.scoring.metrics import declared_references
from mmtasks.scoring.parsers import (BoundParser, LabelArgs, ParserSpec, document_labels, is_guess, is_letter, onto_labels,
                                     option_letters)


@dataclass(frozen=True)
class Gold:
    """A document's gold answer: ``value`` as the sample records it (and a judge is shown), and
    ``scored``, what the metric functions compare a parsed reply with."""

    value: Any
    scored: Any


@dataclass(frozen=True)
class Answers:
    """What a task's answers are, for one document at a time."""

    config: TaskConfig
    #: the task file, named by template errors
    file: Path
    prompts: Prompts
    #: the answer parser with its ``answer.parser_args``: ``parser(text, doc.record) -> value | None``
    parser: BoundParser
    #: how many references each metric function takes (``one``, ``several``; None: it reads its
    #: target its own way), by metric name: a list target for a ``one`` metric is a data error
    metric_references: dict[str, str | None]
    #: the plugin files the task loaded (the metrics a hint may name)
    plugins: tuple[Path, ...] = ()
    #: the labels of a literal text space that a parser other than ``label`` reads its answers onto
    space_labels: list[str] | None = None

    def render(self, template: str, doc: Document, field_name: str, **extra: Any) -> str:
        return self.prompts.render(template, doc, field_name, **extra)

    def answer_labels(self, doc: Document) -> list[str]:
        """The options a reply to ``doc`` may name, as the task's parser reads them (``choice``:
        the record's letters or the fixed ones; ``label``: the space's labels); for another parser,
        the letters of a declared ``choice`` answer space (a plugin parser of option letters, e.g.
        VLMEvalKit's matching); [] otherwise."""
        args = self.parser.args
        if isinstance(args, LabelArgs):
            return document_labels(doc.record, args)
        if self.parser.name == "choice" and args is not None:
            letters = getattr(args, "letters", None)
            return list(letters) if letters else option_letters(doc.record, getattr(args, "options_field"))
        if declares_letter_space(self.config):
            choices = self.rendered_space(self.config.answer.space, doc, "answer.space").get("choices")
            if isinstance(choices, list) and choices and all(isinstance(c, str) and is_letter(c) for c in choices):
                return list(choices)
        return []

    def demonstration_answer(self, demo: Document) -> str:
        """A demonstration's answer as shown: ``fewshot.answer`` rendered, else the target as text."""
        fs = self.config.fewshot
        assert fs is not None
        if fs.answer is not None:
            return self.render(fs.answer, demo, "fewshot.answer")
        value = self.target(demo)
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

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
        where: Where = {"file": doc.source, "line": doc.line, "doc_id": doc.doc_id}
        one = [name for name, kind in self.metric_references.items() if kind == "one"]
        if one:
            several = sorted(n for n in registry.metrics.names(self.plugins)
                             if declared_references(registry.metrics.get(n, plugins=self.plugins)) == "several")
            raise DataError(f"the target is a list of references, but metric {one[0]!r} "
                            f"({self._function_of(one[0])}) takes one reference", field=field_name, **where,
                            hint=f"metrics that take several: {', '.join(several)}; or a target of one string")
        if any(kind == "several" for kind in self.metric_references.values()):
            bad = next((r for r in value if not isinstance(r, str) or not r.strip()), None) if value else ""
            if bad is not None:
                raise DataError(f"a reference must be a non-empty string, got {str(bad)[:80]!r} "
                                f"(the target is {str(value)[:80]!r})", field=field_name, **where)

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
        if isinstance(args, LabelArgs) and isinstance(field_name, str) and field_name in doc.record:
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
        # A task that declares no space gets its parser's (``choice``: the document's own options).
        if "space" not in self.config.answer.model_fields_set:
            declared = self.parser.space(doc.record)
            if declared is not None:
                return self.rendered_space(declared, doc, "answer.space")
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


def declares_letter_space(config: TaskConfig) -> bool:
    """Whether the task declares a ``choice`` answer space (its letters are then the options an
    answer matcher may name, whatever the parser)."""
    return "space" in config.answer.model_fields_set and config.answer.space.get("kind") == "choice"


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
