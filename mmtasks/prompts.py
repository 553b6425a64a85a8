"""A task's prompts: its templates (``prompt.system``, ``prompt.user``, the few-shot layout)
rendered for one document into the text, images, video frames and messages the model is sent.

Split from :mod:`mmtasks.task` (its "prompts" section): :class:`Prompts` holds only what
rendering reads (the config, the task file for errors, the image mode, ``--system-instruction``);
the protocols reach it through a document's state
(:class:`~mmtasks.dialogues.state.DocumentState`), never through the task.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mmtasks.config.task_config import TaskConfig
from mmtasks.config.task_regex import PatternTimeout, compile_task_pattern
from mmtasks.core.conversation import Image, Message, Text
from mmtasks.documents.dataset import Document
from mmtasks.errors import DataError, TemplateError
from mmtasks.templates import TagError, render, split_on_images, split_on_tags

ImageMode = Literal["separate", "combined"]


@dataclass(frozen=True)
class Prompts:
    """The task's templates, rendered for a document (errors name the task file, the document
    and the key)."""

    config: TaskConfig
    #: the task file, named by template errors
    file: Path
    image_mode: ImageMode = "separate"
    #: ``--system-instruction`` (lm-eval's name): the system message of every model request, as
    #: written (not a template), in place of the task's ``prompt.system`` or where it has none
    system_instruction: str | None = None

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
        out: list[Any] = [(p, -1) if isinstance(p, int) else p[1] if isinstance(p, tuple) and p[0] == "image" else p for p in found]
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

    def initial_messages(self, doc: Document, demonstration_answer: Callable[[Document], str]) -> tuple[Message, ...]:
        """The system message, the few-shot demonstrations (``fewshot.layout``: as earlier turns,
        or inline in the question's message), then the question: every one rendered by
        ``prompt.user`` (a demonstration's images are its own), each demonstration's answer by
        ``demonstration_answer`` (:meth:`mmtasks.answers.Answers.demonstration_answer`)."""
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
                msgs.append(Message.text("assistant", demonstration_answer(demo)))
            msgs.append(Message("user", question))
        else:
            parts: list[Text | Image] = []
            for demo in doc.demonstrations:
                parts += [*self.parts(self.config.prompt.user, demo, "prompt.user"),
                          Text(fs.target_delimiter + demonstration_answer(demo) + fs.fewshot_delimiter)]
            msgs.append(Message("user", _joined((*parts, *question))))
        return tuple(msgs)


def _joined(parts: tuple[Text | Image, ...]) -> tuple[Text | Image, ...]:
    """Adjacent text parts as one (an inline demonstration's answer and the next question)."""
    out: list[Text | Image] = []
    for part in parts:
        if isinstance(part, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text + part.text)
        else:
            out.append(part)
    return tuple(out)


def n_source_images(doc: Document) -> int:
    """How many images the document had before any combining."""
    return sum(len(img.parts) or 1 for img in doc.images)
