"""A task ready to run: its validated config plus the pieces built from it
(templates, parser, metrics, transforms), and the per-document operations the
protocols use."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mmtasks.config.task_config import TaskConfig
from mmtasks.core.conversation import Image, Message, Text
from mmtasks.dialogues.transforms import apply_transforms
from mmtasks.documents.dataset import Document, load_documents
from mmtasks.errors import ConfigError, DataError, TemplateError
from mmtasks.scoring.registry import Metric, Parser, get_metric, get_parser
from mmtasks.templates import render, split_on_images

ImageMode = Literal["separate", "combined"]


@dataclass
class Task:
    config: TaskConfig
    file: Path
    image_mode: ImageMode = "separate"
    #: run-level protocol overrides (``--history reference``)
    protocol_overrides: dict[str, Any] = field(default_factory=dict)
    parser: Parser = field(init=False)
    metric_fns: dict[str, Metric] = field(init=False)
    #: the judge-reply parser (None: the task has no judge)
    judge_parser: Parser | None = field(init=False, default=None)
    #: the text of ``judge.prompt_file``, read byte-exact ("" when there is none)
    judge_prefix: str = field(init=False, default="")
    #: the task folders searched (built-in tasks, ``--include-path``): files a task reads stay inside them
    roots: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        origin = str(self.file)
        self.parser = get_parser(self.config.answer.parser, file=origin)
        self.metric_fns = {m.name: get_metric(m.function, file=origin) for m in self.config.metrics if m.function}
        judge = self.config.judge
        if judge is not None:
            self.judge_parser = get_parser(judge.parser, file=origin)
            if judge.prompt_file:
                self.judge_prefix = read_prompt_file(self.file.parent / judge.prompt_file, task_file=self.file, roots=self.roots)

    @property
    def name(self) -> str:
        return self.config.task

    @property
    def protocol_args(self) -> dict[str, Any]:
        return {**self.config.protocol_args, **self.protocol_overrides}

    def documents(self, data_root: Path | None, limit: int | None = None) -> Iterator[Document]:
        for i, doc in enumerate(load_documents(self.config, data_root, task_file=self.file)):
            if limit is not None and i >= limit:
                return
            yield apply_transforms(doc, list(self.config.transforms), self.image_mode)

    # -- prompts ---------------------------------------------------------
    def variables(self, doc: Document, **extra: Any) -> dict[str, Any]:
        return {
            **self.config.prompt.variables,
            "doc": doc.record,
            "doc_id": doc.doc_id,
            "images": [img.label or img.describe() for img in doc.images],
            "n_images": len(doc.images),
            "n_source_images": n_source_images(doc),
            "image_mode": self.image_mode,
            **extra,
        }

    def render(self, template: str, doc: Document, field_name: str, **extra: Any) -> str:
        return render(template, self.variables(doc, **extra), origin=str(self.file), doc_id=doc.doc_id, field=field_name)

    def parts(self, template: str, doc: Document, field_name: str, **extra: Any) -> tuple[Text | Image, ...]:
        """Render a template into interleaved text and image parts."""
        out: list[Text | Image] = []
        for piece in split_on_images(self.render(template, doc, field_name, **extra)):
            if isinstance(piece, int):
                if not 0 <= piece < len(doc.images):
                    raise TemplateError(f"image({piece}) is out of range: the document has {len(doc.images)} images",
                                        file=self.file, doc_id=doc.doc_id, field=field_name)
                out.append(doc.images[piece])
            else:
                out.append(Text(piece.strip("\n")))
        return tuple(p for p in out if not (isinstance(p, Text) and not p.text))

    def initial_messages(self, doc: Document) -> tuple[Message, ...]:
        msgs: list[Message] = []
        if self.config.prompt.system:
            msgs.append(Message.text("system", self.render(self.config.prompt.system, doc, "prompt.system")))
        msgs.append(Message("user", self.parts(self.config.prompt.user, doc, "prompt.user")))
        return tuple(msgs)

    # -- answers ---------------------------------------------------------
    def target(self, doc: Document) -> Any:
        spec = self.config.target
        if spec.startswith("field:"):
            name = spec[len("field:"):]
            if name not in doc.record:
                raise DataError("target field is missing", file=doc.source, doc_id=doc.doc_id, field=name)
            return doc.record[name]
        return self.render(spec, doc, "target")

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
        return out

    def score(self, parsed: Any, target: Any, doc: Document) -> dict[str, float | None]:
        return {name: fn(parsed, target, doc.record) for name, fn in self.metric_fns.items()}

    def breakdown_values(self, doc: Document) -> dict[str, str]:
        out: dict[str, str] = {}
        for b in self.config.breakdowns:
            try:
                raw = self.render(b.value, doc, f"breakdowns.{b.name}")
            except TemplateError:
                continue  # a document without the field is simply not in this breakdown
            raw = raw.strip()
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


def read_prompt_file(path: Path, *, task_file: Path, roots: tuple[Path, ...] = ()) -> str:
    """A prompt file's exact text: bytes decoded as UTF-8, no newline translation, nothing stripped.
    It must be a regular file (links followed) inside the task file's folder or ``roots``, never anywhere else."""
    folders = [r.resolve() for r in (task_file.parent, *roots)]
    real = path.resolve()
    if not any(real.is_relative_to(f) for f in folders) or (real.exists() and not real.is_file()):
        raise ConfigError(f"the judge prompt file {path} is not a file inside the task's folder or the task folders",
                          file=task_file, field="judge.prompt_file")
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the judge prompt file {path}: {exc.strerror}", file=task_file, field="judge.prompt_file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"the judge prompt file {path} is not UTF-8 ({exc.reason} at byte {exc.start})", file=task_file, field="judge.prompt_file") from None


def n_source_images(doc: Document) -> int:
    """How many images the document had before any combining."""
    return sum(len(img.parts) or 1 for img in doc.images)
