"""MMRC (shared/specs/mmrc.md), a plugin file of the MMRC tasks (``plugins: [mmrc.py]``):
everything the generic ``replay_probe`` protocol leaves to the benchmark.

- The six abilities, written once (:data:`ABILITIES`): their codes, metric names,
  long names (for the Hub adapter) and the verdict fields the judge must give.
- The record (the local format): turns and evaluation questions, checked and
  normalised by the dataset adapter ``mmrc`` (local files) or ``mmrc_hf`` (the
  Hugging Face release, PROVISIONAL: see :func:`mmrc_hf`).
- Parsing an answer for exact match (``answer.parser: mmrc_answer``: the option
  letter of a choice question, true/false of a tf question, the text of an open
  one) and the metric ``mmrc_exact_match``.
- The judge's verdict (``judge.parser: mmrc_judge``): the reply's last JSON
  object, with the fields the question's ability requires.
- The ``mmrc`` aggregator: per-ability judge scores, overall, the precision
  metrics EP / IMP / RP, exact match, and the length / category / updates
  breakdowns.

Every value is computed per question (one sample is a conversation holding its
questions in ``extra["questions"]``, see mmtasks/dialogues/replay_probe.py) and
averaged over questions:

- ``ie cr iu im mr ar``: mean judge score (0-5) of the ability's questions;
  ``overall`` = mean of the six ability means (None unless all six are scored).
- ``ep`` (0-1): mean over IE questions of matched_items / model_items, 0 when
  the answer states no item.
- ``imp`` (0-1): mean over IM questions of |named ∩ gold| / |gold|, gold = the
  question's ``images`` (a question without gold images has no IMP).
- ``rp`` (percent): 100 x share of AR questions with ``refuse: true`` that the
  judge says the model refused.
- ``exact_match`` (0-1): choice and true/false questions, the parsed answer
  against the gold letter / truth value (unparsable: 0, and counted as unparsed).

A judge failure or a failed model request leaves the question unscored: it is
counted as a problem (by the generic counter), never scored as 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from mmtasks.errors import DataError
from mmtasks.registry import adapters
from mmtasks.scoring.aggregation import TaskResult, aggregator, label_sort_key, mean, mean_and_stderr
from mmtasks.scoring.json_reply import last_json_object
from mmtasks.scoring.metrics import metric
from mmtasks.scoring.parsers import parser
from mmtasks.scoring.text_normalize import nfkc, strip_answer_prefix
from mmtasks.scoring.verdicts import verdict_parser

if TYPE_CHECKING:
    from mmtasks.core.sample import Sample
    from mmtasks.task import Task


# --- the six abilities ----------------------------------------------------------


@dataclass(frozen=True)
class Ability:
    code: str
    """As the record and the YAML write it (``IE``)."""
    metric: str
    """Its metric in results.json (``ie``)."""
    names: tuple[str, ...]
    """Other names a release may use for it (lower case), for the Hub adapter."""
    verdict_fields: tuple[str, ...]
    """The fields the judge's verdict must hold for a question of this ability."""


#: The one list of MMRC's abilities, in the paper's column order.
ABILITIES: dict[str, Ability] = {a.code: a for a in (
    Ability("IE", "ie", ("information extraction",), ("score", "matched_items", "model_items")),
    Ability("CR", "cr", ("cross-turn reasoning", "cross turn reasoning", "multi-turn reasoning"), ("score",)),
    Ability("IU", "iu", ("information update",), ("score",)),
    Ability("IM", "im", ("image management",), ("score", "named_images")),
    Ability("MR", "mr", ("memory recall", "long-term memory recall"), ("score",)),
    Ability("AR", "ar", ("answer refusal",), ("score", "refused")),
)}
ABILITY_METRICS: dict[str, str] = {code: a.metric for code, a in ABILITIES.items()}
PRECISION_METRICS = ("ep", "imp", "rp")
METRICS = (*ABILITY_METRICS.values(), "overall", *PRECISION_METRICS, "exact_match")


# --- the record -------------------------------------------------------------------
class _Record(BaseModel):
    # Unknown keys are kept (the official data may carry more), never rejected.
    model_config = ConfigDict(extra="allow", frozen=True)


class Turn(_Record):
    user: str
    """The user's message text ("" when the turn is images only)."""
    images: list[str] = Field(default_factory=list)
    """Image paths relative to the data folder, in the order shown."""
    assistant: str | None = None
    """The reply recorded in the original conversation (used by ``history: reference``)."""


class Question(_Record):
    ability: str
    format: Literal["open", "choice", "tf"] = "open"
    question: str
    answer: str
    """Reference answer: free text, the option letter (choice) or ``true``/``false`` (tf)."""
    options: dict[str, str] | None = None
    items: list[str] | None = None
    """IE: the facts a correct answer lists (label items)."""
    images: list[int] | None = None
    """IM: 1-based numbers of the images that belong to the correct answer."""
    refuse: bool | None = None
    """AR: true when the history lacks the answer and the model should decline."""
    updates: int | None = None
    """IU: how many times the asked-about information was updated in the conversation."""

    @field_validator("ability", mode="before")
    @classmethod
    def _known(cls, v: Any) -> Any:
        code = v.upper() if isinstance(v, str) else v
        if code not in ABILITIES:
            raise ValueError(f"unknown ability {v!r}; expected one of {' '.join(ABILITIES)}")
        return code

    @field_validator("answer", mode="after")
    @classmethod
    def _stripped(cls, v: str) -> str:
        return v.strip()

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_text(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return "true" if v else "false"
        return v

    @model_validator(mode="after")
    def _format_fields(self) -> "Question":
        if self.format == "choice":
            if not self.options:
                raise ValueError("a choice question needs options")
            if self.answer.strip() not in self.options:
                raise ValueError(f"the answer {self.answer!r} is not one of the options {sorted(self.options)}")
        if self.format == "tf" and self.answer.strip().lower() not in ("true", "false"):
            raise ValueError(f"a tf answer must be true or false, got {self.answer!r}")
        return self


class Conversation(_Record):
    turns: list[Turn] = Field(min_length=1)
    questions: list[Question] = Field(min_length=1)
    category: str | None = None

    @property
    def n_images(self) -> int:
        return sum(len(t.images) for t in self.turns)

    def image_numbers(self) -> list[list[int]]:
        """Per turn, the 0-based global indices of its images."""
        out, offset = [], 0
        for t in self.turns:
            out.append(list(range(offset, offset + len(t.images))))
            offset += len(t.images)
        return out


def conversation_of(rec: Mapping[str, Any]) -> Conversation:
    """Validate a record as an MMRC conversation; errors name the document and the field."""
    doc_id = str(rec["id"]) if "id" in rec else None
    try:
        conv = Conversation.model_validate(rec)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or None
        raise DataError(err["msg"].removeprefix("Value error, "), doc_id=doc_id, field=loc) from None
    for qi, q in enumerate(conv.questions):
        bad = [n for n in q.images or [] if not 1 <= n <= conv.n_images]
        if bad:
            raise DataError(f"image numbers {bad} are out of range: the conversation has {conv.n_images} images",
                            doc_id=doc_id, field=f"questions.{qi}.images")
    return conv


@adapters.register("mmrc")
def mmrc_record(rec: dict[str, Any]) -> dict[str, Any]:
    """A local MMRC record, checked and normalised (every question field present, abilities in
    upper case, answers stripped, true/false answers as text): what the templates and the
    scoring read."""
    return conversation_of(rec).model_dump(mode="json")


# --- the Hugging Face release (PROVISIONAL) ----------------------------------------

ID_KEYS = ("id", "conversation_id", "dialog_id", "dialogue_id", "conv_id")
TURNS_KEYS = ("turns", "conversation", "conversations", "dialogue", "dialog", "history", "messages")
QUESTIONS_KEYS = ("questions", "qa", "qas", "qa_pairs", "eval_questions", "evaluation", "evaluation_questions")
CATEGORY_KEYS = ("category", "topic", "domain")
USER_KEYS = ("user", "human", "query", "text", "content", "value")
ASSISTANT_KEYS = ("assistant", "gpt", "bot", "model", "response")
IMAGES_KEYS = ("images", "image", "image_paths", "image_path", "imgs", "img")
QUESTION_KEYS = ("question", "q", "query", "prompt")
ANSWER_KEYS = ("answer", "a", "gt", "ground_truth", "reference", "label")
ABILITY_KEYS = ("ability", "type", "task", "capability", "category", "dimension")
FORMAT_KEYS = ("format", "question_type", "qtype", "answer_type")
OPTIONS_KEYS = ("options", "choices")
ROLE_KEYS = ("role", "from", "speaker")

ABILITY_NAMES = {name: code for code, a in ABILITIES.items() for name in (code.lower(), *a.names)}
FORMAT_NAMES = {
    "open": "open", "open-ended": "open", "open question": "open", "open_question": "open",
    "choice": "choice", "multiple choice": "choice", "multiple-choice": "choice", "multiple_choice": "choice", "mcq": "choice",
    "tf": "tf", "true/false": "tf", "true_false": "tf", "true-false": "tf", "judgment": "tf", "yes/no": "tf", "boolean": "tf",
}
USER_ROLES = {"user", "human"}


def _pick(rec: dict[str, Any], keys: tuple[str, ...], where: str, doc_id: str | None, *, required: bool = True) -> Any:
    for k in keys:
        if k in rec and rec[k] is not None:
            return rec[k]
    if required:
        raise DataError(f"mmrc_hf (provisional adapter): no {where} field; looked for {', '.join(keys)}",
                        doc_id=doc_id, field=where, hint=f"the record has: {', '.join(sorted(rec)) or 'no fields'}")
    return None


def _images(raw: Any, doc_id: str | None, where: str) -> list[str]:
    items = raw if isinstance(raw, list) else [] if raw is None else [raw]
    out: list[str] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            item = item["path"]
        if not isinstance(item, str):
            raise DataError("mmrc_hf (provisional adapter): images must be paths; embedded images are not supported",
                            doc_id=doc_id, field=where)
        out.append(item)
    return out


def _turns(raw: Any, doc_id: str | None) -> list[dict[str, Any]]:
    if not isinstance(raw, list) or not raw:
        raise DataError("mmrc_hf (provisional adapter): expected a non-empty list of turns", doc_id=doc_id, field="turns")
    if all(isinstance(m, dict) and _pick(m, ROLE_KEYS, "role", doc_id, required=False) is not None for m in raw):
        return _turns_from_messages(raw, doc_id)
    out = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict):
            raise DataError("mmrc_hf (provisional adapter): a turn must be an object", doc_id=doc_id, field=f"turns.{i}")
        turn = {"user": str(_pick(t, USER_KEYS, f"turns.{i}.user", doc_id)),
                "images": _images(_pick(t, IMAGES_KEYS, "images", doc_id, required=False), doc_id, f"turns.{i}.images")}
        reply = _pick(t, ASSISTANT_KEYS, "assistant", doc_id, required=False)
        if reply is not None:
            turn["assistant"] = str(reply)
        out.append(turn)
    return out


def _turns_from_messages(messages: list[dict[str, Any]], doc_id: str | None) -> list[dict[str, Any]]:
    """Role-tagged messages (``{"role": "user", "content": ...}`` or ShareGPT's ``from``/``value``)."""
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        role = str(_pick(m, ROLE_KEYS, f"turns.{i}.role", doc_id)).lower()
        text = str(_pick(m, ("content", "value", "text"), f"turns.{i}.content", doc_id, required=False) or "")
        if role in USER_ROLES:
            out.append({"user": text, "images": _images(_pick(m, IMAGES_KEYS, "images", doc_id, required=False), doc_id, f"turns.{i}.images")})
        elif out:
            out[-1]["assistant"] = text
    if not out:
        raise DataError("mmrc_hf (provisional adapter): the conversation has no user message", doc_id=doc_id, field="turns")
    return out


def _options(raw: Any) -> dict[str, str] | None:
    if raw is None or isinstance(raw, dict):
        return {str(k): str(v) for k, v in raw.items()} if raw else None
    out: dict[str, str] = {}
    for i, opt in enumerate(raw):
        m = re.match(r"^\s*\(?([A-Z])[.)：:、]\s*(.*)$", str(opt), re.S)
        letter, text = (m.group(1), m.group(2)) if m else (chr(ord("A") + i), str(opt))
        out[letter] = text.strip()
    return out


def _question(q: Any, i: int, doc_id: str | None) -> dict[str, Any]:
    where = f"questions.{i}"
    if not isinstance(q, dict):
        raise DataError("mmrc_hf (provisional adapter): a question must be an object", doc_id=doc_id, field=where)
    ability = str(_pick(q, ABILITY_KEYS, f"{where}.ability", doc_id)).strip()
    code = ABILITY_NAMES.get(ability.lower())
    if code is None:
        raise DataError(f"mmrc_hf (provisional adapter): unknown ability {ability!r}", doc_id=doc_id, field=f"{where}.ability",
                        hint=f"expected one of {' '.join(ABILITIES)} or their names")
    options = _options(_pick(q, OPTIONS_KEYS, "options", doc_id, required=False))
    fmt_raw = _pick(q, FORMAT_KEYS, f"{where}.format", doc_id, required=False)
    fmt = FORMAT_NAMES.get(str(fmt_raw).strip().lower()) if fmt_raw is not None else ("choice" if options else "open")
    if fmt is None:
        raise DataError(f"mmrc_hf (provisional adapter): unknown question format {fmt_raw!r}", doc_id=doc_id, field=f"{where}.format")
    answer = _pick(q, ANSWER_KEYS, f"{where}.answer", doc_id)
    out: dict[str, Any] = {"ability": code, "format": fmt, "question": str(_pick(q, QUESTION_KEYS, f"{where}.question", doc_id)),
                           "answer": ("true" if answer else "false") if isinstance(answer, bool) else str(answer)}
    if options:
        out["options"] = options
    for name in ("items", "images", "refuse", "updates"):
        if q.get(name) is not None:
            out[name] = q[name]
    return out


def hub_to_local(rec: dict[str, Any]) -> dict[str, Any]:
    """A Hub record mapped to the local field names (not yet checked)."""
    doc_id = _pick(rec, ID_KEYS, "id", None)
    doc_id = str(doc_id)
    questions = _pick(rec, QUESTIONS_KEYS, "questions", doc_id)
    if not isinstance(questions, list) or not questions:
        raise DataError("mmrc_hf (provisional adapter): expected a non-empty list of questions", doc_id=doc_id, field="questions")
    out: dict[str, Any] = {"id": doc_id, "turns": _turns(_pick(rec, TURNS_KEYS, "turns", doc_id), doc_id),
                           "questions": [_question(q, i, doc_id) for i, q in enumerate(questions)]}
    category = _pick(rec, CATEGORY_KEYS, "category", doc_id, required=False)
    if category is not None:
        out["category"] = str(category)
    return out


@adapters.register("mmrc_hf")
def mmrc_hf(rec: dict[str, Any]) -> dict[str, Any]:
    """A Hub record in the local format, checked and normalised like a local one (PROVISIONAL:
    the release's schema is unverified).

    The release's schema has not been seen. :func:`hub_to_local` accepts the field names such
    a release most likely uses (the ``*_KEYS`` tuples above; the local names come first, so
    local records pass through unchanged) and raises a :class:`DataError` naming the missing
    field otherwise. Images must be paths (relative to the data dir) or ``{"path": ...}``
    dicts; embedded pixels are not supported. Use it with::

        dataset:
          hf: {path: WUUE/MMRC_Real_World_Conversation, split: test}
          adapter: mmrc_hf
    """
    return mmrc_record(hub_to_local(rec))


# --- answers: exact match of choice and true/false questions ---------------------------

_TF = re.compile(r"(?<![A-Za-z])(true|false|yes|no|incorrect|correct|wrong)(?![A-Za-z])|(不正确|不对|正确|错误|对|错|是|否)",
                 re.IGNORECASE)
_TF_VALUE = {"true": "true", "yes": "true", "correct": "true", "正确": "true", "对": "true", "是": "true",
             "false": "false", "no": "false", "incorrect": "false", "wrong": "false",
             "不正确": "false", "不对": "false", "错误": "false", "错": "false", "否": "false"}


def parse_tf(text: str) -> str | None:
    """``"true"`` / ``"false"`` from the first true/false word of the answer (yes/no, 对/错 too)."""
    match = _TF.search(nfkc(strip_answer_prefix(text)))
    if match is None:
        return None
    return _TF_VALUE[(match.group(1) or match.group(2)).lower()]


def parse_choice(text: str, options: dict[str, str]) -> str | None:
    """The chosen option letter, or None.

    In order: the letter the answer opens with ("B", "(B)", "B. Paris"); a
    letter after "option"/"answer"/"choice"; the first standalone capital
    letter naming an option (not the article in "A good ..."); else the one
    option whose text the answer quotes.
    """
    clean = nfkc(strip_answer_prefix(text)).strip()
    letters = "".join(re.escape(k) for k in options if len(k) == 1)
    if letters:
        letter = rf"([{letters}])(?![A-Za-z])(?<!A(?= (?!is\b)[a-z]))"  # not the article in "A word"
        for pattern in (rf"^[(\[]?{letter}",
                        rf"(?i:option|answer|choice|选项?)\W{{0,3}}(?:is\W{{0,3}})?\(?{letter}",
                        rf"(?<![A-Za-z]){letter}"):
            match = re.search(pattern, clean)
            if match:
                return match.group(1)
    folded = clean.casefold()
    quoted = [k for k, v in options.items() if v.strip() and v.strip().casefold() in folded]
    return quoted[0] if len(quoted) == 1 else None


@parser("mmrc_answer")
def mmrc_answer(text: str, question: Mapping[str, Any]) -> str | None:
    """The option letter of a choice question, ``true``/``false`` of a tf question (None: not
    found), the answer text of an open one."""
    fmt = question.get("format")
    if fmt == "choice" and question.get("options"):
        return parse_choice(text, question["options"])
    if fmt == "tf":
        return parse_tf(text)
    return strip_answer_prefix(text)


@metric("mmrc_exact_match")
def exact_match(parsed: str | None, target: Any, question: Mapping[str, Any]) -> float | None:
    """1.0 / 0.0 for choice and tf questions (an unparsed answer scores 0); None for open ones."""
    fmt = question.get("format")
    if fmt == "choice" and question.get("options"):
        return float(parsed == str(target).strip())
    if fmt == "tf":
        return float(parsed == str(target).strip().lower())
    return None


# --- the judge's verdict ---------------------------------------------------------------

def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _valid(fields: dict[str, Any]) -> bool:
    """Type and range checks of the known fields that are present."""
    score = fields.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 5):
        return False
    for name in ("matched_items", "model_items"):
        if name in fields and not _is_count(fields[name]):
            return False
    if _is_count(fields.get("matched_items")) and _is_count(fields.get("model_items")) and fields["matched_items"] > fields["model_items"]:
        return False
    if "named_images" in fields:
        named = fields["named_images"]
        if not isinstance(named, list) or not all(_is_count(n) and n >= 1 for n in named):
            return False
    if "refused" in fields and not isinstance(fields["refused"], bool):
        return False
    return True


def judge_verdict(text: str) -> dict[str, Any] | None:
    """The verdict object (last ``{...}`` of the reply) with a valid ``score``, or None."""
    fields = last_json_object(text)
    if fields is None or "score" not in fields or not _valid(fields):
        return None
    return fields


def verdict_for(text: str, ability: str) -> dict[str, Any] | None:
    """The verdict of a question of ``ability``: :func:`judge_verdict` plus the fields the ability requires."""
    fields = judge_verdict(text)
    if fields is None or any(name not in fields for name in ABILITIES[ability].verdict_fields):
        return None
    return fields


@verdict_parser("mmrc_judge")
def mmrc_judge(text: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """The verdict parser of MMRC's judge: the fields required by the asked question's ability."""
    return verdict_for(text, context["question"]["ability"])


# --- the aggregator -----------------------------------------------------------------------

def question_values(rec: dict[str, Any]) -> dict[str, float]:
    """The metric values one question contributes (only those that apply and were scored)."""
    out: dict[str, float] = {}
    em = (rec.get("metrics") or {}).get("exact_match")
    if em is not None:
        out["exact_match"] = float(em)
    verdict = rec.get("verdict")
    if verdict is None:
        return out
    ability = rec["ability"]
    out[ABILITY_METRICS[ability]] = float(verdict["score"])
    if ability == "IE":
        stated = verdict["model_items"]
        out["ep"] = verdict["matched_items"] / stated if stated > 0 else 0.0
    elif ability == "IM" and rec.get("images"):
        gold = set(rec["images"])
        out["imp"] = len(gold & set(verdict["named_images"])) / len(gold)
    elif ability == "AR" and rec.get("refuse") is True:
        out["rp"] = 100.0 if verdict["refused"] else 0.0
    return out


def overall_of(ability_means: dict[str, float | None]) -> float | None:
    """Mean of the six ability means; None when any ability is unscored."""
    values = [ability_means.get(m) for m in ABILITY_METRICS.values()]
    if any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None) / len(values)


def collect(records: Iterable[dict[str, Any]]) -> dict[str, list[float]]:
    values: dict[str, list[float]] = {}
    for rec in records:
        for name, v in question_values(rec).items():
            values.setdefault(name, []).append(v)
    return values


def _means(values: dict[str, list[float]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {m: mean(values.get(m, [])) for m in METRICS if m != "overall"}
    out["overall"] = overall_of(out)
    return out


def _records(samples: Sequence["Sample"]) -> list[tuple["Sample", dict[str, Any]]]:
    return [(s, rec) for s in samples for rec in s.extra.get("questions", [])]


def _breakdowns(pairs: list[tuple["Sample", dict[str, Any]]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per-conversation breakdowns (``length`` buckets, ``category``) and IU by ``updates``."""
    groups: dict[str, dict[str, list[tuple["Sample", dict[str, Any]]]]] = {}
    for s, rec in pairs:
        for name, label in s.breakdown.items():
            groups.setdefault(name, {}).setdefault(label, []).append((s, rec))
        if rec["ability"] == "IU" and rec.get("updates") is not None:
            groups.setdefault("updates", {}).setdefault(str(rec["updates"]), []).append((s, rec))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, by_label in groups.items():
        table: dict[str, dict[str, Any]] = {}
        for label in sorted(by_label, key=label_sort_key):
            members = by_label[label]
            means = _means(collect(rec for _, rec in members))
            if name == "updates":
                row: dict[str, Any] = {"iu": means["iu"]}
            else:
                row = {m: means[m] for m in (*ABILITY_METRICS.values(), "overall")}
                row["n_conversations"] = len({id(s) for s, _ in members})
            row["n"] = len(members)
            table[label] = row
        out[name] = table
    return out


@aggregator("mmrc", emits=lambda config: METRICS)
def mmrc(task: "Task", samples: Sequence["Sample"], seed: int) -> TaskResult:
    pairs = _records(samples)
    records = [rec for _, rec in pairs]
    values = collect(records)
    result = TaskResult(n_samples=len(samples))
    stderrs: dict[str, float | None] = {}
    for m in METRICS:
        if m == "overall":
            continue
        result.metrics[m], stderrs[m] = mean_and_stderr(values.get(m, []), seed)
    result.metrics["overall"] = overall_of(result.metrics)  # type: ignore[arg-type]
    # Standard error of a mean of six means, from theirs (treated as independent).
    ability_se = [stderrs[m] for m in ABILITY_METRICS.values()]
    stderrs["overall"] = (math.sqrt(sum(se * se for se in ability_se if se is not None)) / len(ability_se)
                          if result.metrics["overall"] is not None else None)
    for m in METRICS:
        result.metrics[f"{m}_stderr"] = stderrs[m]
        result.higher_is_better[m] = True
    result.counts = {
        "n_questions": len(records),
        "scored_questions": sum(1 for rec in records if rec.get("verdict") is not None),
        "unanswered_questions": sum(1 for rec in records if rec.get("response") is None),
        "note_unparsed": sum(int(s.extra.get("note_unparsed", 0)) for s in samples),
    }
    result.breakdowns = _breakdowns(pairs)
    return result
