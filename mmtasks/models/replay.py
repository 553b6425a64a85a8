"""``replay:PATH`` - answer from a previous run, for rescoring without re-running a model.

PATH is a run's output folder (its ``samples/`` is read), a samples folder, a
samples ``.jsonl`` file, or a predictions JSONL with lines
``{"task": ..., "doc_id": ..., "responses": [...]}`` (optionally ``reasoning`` and
``finish_reasons`` and ``tokens`` beside them, as samples record). The k-th request the
protocol makes for a document gets the k-th recorded reply, with its recorded reasoning,
finish reason and token counts; a re-ask beyond the recording gets the last recorded reply (the same request,
the same answer).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any
from pathlib import Path

from mmtasks.core.request import OPTIONAL_SETTINGS
from mmtasks.documents.samples import iter_samples
from mmtasks.errors import ModelError
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec
from mmtasks.core.reasoning import LENGTH
from mmtasks.core.request import TOKEN_FIELDS, Reply, Request


class ReplayModel(ChatModel):
    cacheable = False
    #: generates nothing: every setting is accepted and none is sent (results.json records none)
    takes_settings = frozenset(OPTIONAL_SETTINGS)

    def __init__(self, spec: ModelSpec, context: ModelContext | None = None) -> None:
        super().__init__(spec, context)
        self.path = Path(spec.name).expanduser()
        #: the replies, the note taker's, and beside each reply its reasoning and finish reason
        self.recorded, self.recorded_notes, self.reasoning, self.finish, self.tokens = load_recorded(self.path)
        self.source_model = _source_model(self.path)

    def generate(self, requests: Sequence[Request]) -> Iterable[tuple[int, Reply]]:
        for i, req in enumerate(requests):
            yield i, self.reply_for(req)

    def reply_for(self, req: Request) -> Reply:
        if req.target == "notetaker":
            # A note-taking run is replayed with the note taker's recorded replies too.
            notes = self.recorded_notes.get((req.task, req.doc_id))
            if notes is None or req.position >= len(notes):
                return Reply.failure(f"replay: no recorded note for task {req.task!r}, document {req.doc_id!r}, turn {req.position + 1}")
            text = notes[req.position]
            return Reply(text=text) if text is not None else Reply.failure("replay: the recorded note request had failed")
        responses = self.recorded.get((req.task, req.doc_id))
        if responses is None:
            return Reply.failure(f"replay: no recorded replies for task {req.task!r}, document {req.doc_id!r}")
        if req.position < len(responses):
            k = req.position
        elif req.attempt > 0 and responses:
            k = len(responses) - 1
        else:
            return Reply.failure(f"replay: document {req.doc_id!r} has {len(responses)} recorded replies, request #{req.position + 1} asked")
        text = responses[k]
        reasoning, finish = _at(self.reasoning.get((req.task, req.doc_id)), k), _at(self.finish.get((req.task, req.doc_id)), k)
        # the token counts as the first run recorded them (a rescoring run reports what produced the replies)
        counted = _at(self.tokens.get((req.task, req.doc_id)), k) or {}
        tokens = {f"{name}_tokens": value for name, value in counted.items() if f"{name}_tokens" in TOKEN_FIELDS}
        if text is None and (reasoning is not None or finish == LENGTH):
            # a reply recorded without an answer after its reasoning: truncated again when split
            return Reply(text="", reasoning=reasoning, finish_reason=finish, **tokens)
        if text is None:
            return Reply.failure("replay: the recorded request had failed")
        return Reply(text=text, reasoning=reasoning, finish_reason=finish, **tokens)


def _at(values: list[Any] | None, k: int) -> Any:
    return values[k] if values is not None and k < len(values) else None


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if (path / "samples").is_dir():
        path = path / "samples"
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if files:
            return files
    raise ModelError(f"replay: nothing to replay at {path} (expected a run folder, a samples folder or a .jsonl file)", field="--model")


Recorded = dict[tuple[str, str], list[str | None]]


def load_recorded(path: Path) -> tuple[Recorded, Recorded, Recorded, Recorded, dict[tuple[str, str], list[Any]]]:
    """(task, doc_id) -> the model's replies in order; -> the note taker's replies (note-taking runs);
    -> each reply's reasoning, -> its finish reason and -> its token counts, as samples record them
    beside the replies (optional: a line without them has none)."""
    out: Recorded = {}
    notes: Recorded = {}
    beside: dict[str, Recorded] = {"reasoning": {}, "finish_reasons": {}}
    tokens: dict[tuple[str, str], list[Any]] = {}
    for file in _files(path):
        for line in iter_samples(file, need=("task", "responses")):
            rec = line.record  # a sample, or a predictions line: task, doc_id, responses
            key = (rec.task, str(rec.doc_id))
            out[key] = list(rec.responses)
            for name, recorded in beside.items():
                values: list[str | None] = getattr(rec, name)
                if values:
                    recorded[key] = list(values)
            if rec.tokens:
                tokens[key] = list(rec.tokens)
            note_log = rec.extra.get("notes")
            if isinstance(note_log, list):
                notes[key] = [n.get("reply") if isinstance(n, dict) else None for n in note_log]
    return out, notes, beside["reasoning"], beside["finish_reasons"], tokens


def _source_model(path: Path) -> str | None:
    """The model that produced a run folder, from its results.json (for the results' config)."""
    results = (path if path.is_dir() else path.parent) / "results.json"
    if not results.is_file() and path.name == "samples":
        results = path.parent / "results.json"
    try:
        return json.loads(results.read_text(encoding="utf-8")).get("config", {}).get("model")
    except (OSError, json.JSONDecodeError, AttributeError):
        return None
