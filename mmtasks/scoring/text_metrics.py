"""Generic per-sample text metrics: chrF and BLEU (sacrebleu), a character-level
ROUGE-L that can be checked by hand, and exact match.

Each is registered in the ``metrics`` registry under its name and has the
per-sample metric signature ``metric(parsed, target, doc) -> float`` on a 0-100
scale. A reply that could not be parsed (``parsed`` None) scores 0; a target
that is not a non-empty string is a :class:`~mmtasks.errors.DataError` naming
the document.

- ``chrf``: ``sacrebleu.sentence_chrf(hyp, [ref])`` with sacrebleu's defaults
  (character n-grams up to 6, no word n-grams, beta 2, whitespace ignored).
- ``bleu``: ``sacrebleu.sentence_bleu(hyp, [ref])`` with sacrebleu's defaults
  (the ``13a`` tokenizer, exponential smoothing of zero n-gram counts). The
  ``13a`` tokenizer splits on spaces and punctuation, so a Chinese sentence is
  one token: use ``bleu_zh`` (sacrebleu's ``zh`` tokenizer: each CJK character
  is a token) for Chinese.
- ``rouge_l_char``: the F1 of the longest common subsequence of the two texts'
  characters (whitespace removed, case kept):
  ``P = LCS / len(hyp)``, ``R = LCS / len(ref)``, ``F1 = 2PR / (P + R)``.
  No tokenizer and no dictionary, so it scores Chinese, English or mixed text
  the same way (RealBench's ``rouge_l_zh`` segments with jieba instead).
- ``exact_match``: 100 when the answer equals the reference after both are
  stripped of surrounding whitespace (case and inner text kept), else 0; its
  ``args`` are lm-evaluation-harness's: ``regexes_to_ignore``, ``ignore_case``,
  ``ignore_punctuation``, ``ignore_numbers`` (see :class:`ExactMatchArgs`).

These are built in rather than taken from Hugging Face ``evaluate`` (which a
task may still name: ``function: evaluate:NAME``, :mod:`mmtasks.scoring.hf_evaluate`):
its metrics are scripts downloaded from the Hub when first loaded, and its ROUGE
(Google's ``rouge_score``) lowercases the text and replaces every character
outside ``a-z0-9`` with a space, so Chinese text is dropped entirely.
"""

from __future__ import annotations

import string
from typing import Any

from pydantic import Field, field_validator

from mmtasks.errors import DataError
from mmtasks.registry import metrics
from mmtasks.scoring.metrics import MetricArgs, reference_list, takes_args, takes_references


def _reference(target: Any, doc: dict) -> str:
    if not isinstance(target, str) or not target.strip():
        doc_id = next((str(doc[k]) for k in ("id", "doc_id", "idx", "question_id") if k in doc), None)
        raise DataError(f"the target must be a non-empty string, got {target!r}", doc_id=doc_id, field="target")
    return target


def _sacrebleu() -> Any:
    """sacrebleu, imported on first use (~50 ms; most tasks score without it)."""
    import sacrebleu

    return sacrebleu


def _hypothesis(parsed: Any) -> str | None:
    if parsed is None:
        return None
    return parsed if isinstance(parsed, str) else str(parsed)


def _sentence_score(parsed: Any, target: Any, doc: dict, score: Any) -> float:
    """``score(hypothesis, references).score`` as a float (one reference, or the target's
    several); an unparsed answer scores 0."""
    refs = reference_list(target, doc)
    hyp = _hypothesis(parsed)
    if hyp is None:
        return 0.0
    return float(score(hyp, refs).score)


@metrics.register("chrf")
@takes_references("several")
def chrf(parsed: Any, target: Any, doc: dict) -> float:
    """chrF (sacrebleu's sentence-level defaults), 0-100; with several references, sacrebleu's
    (the statistics of the best-scoring reference)."""
    return _sentence_score(parsed, target, doc, _sacrebleu().sentence_chrf)


@metrics.register("bleu")
@takes_references("several")
def bleu(parsed: Any, target: Any, doc: dict) -> float:
    """Sentence BLEU (sacrebleu's defaults: ``13a`` tokenizer, ``exp`` smoothing), 0-100; with
    several references, n-gram counts clipped by the most in any reference and the closest
    reference length (sacrebleu's multi-reference BLEU)."""
    return _sentence_score(parsed, target, doc, _sacrebleu().sentence_bleu)


@metrics.register("bleu_zh")
@takes_references("several")
def bleu_zh(parsed: Any, target: Any, doc: dict) -> float:
    """Sentence BLEU with sacrebleu's ``zh`` tokenizer (CJK characters are tokens), 0-100."""
    return _sentence_score(parsed, target, doc, lambda hyp, refs: _sacrebleu().sentence_bleu(hyp, refs, tokenize="zh"))


def lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence of two sequences (O(len(a) * len(b)) time, O(len(b)) memory)."""
    if len(a) < len(b):
        a, b = b, a
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0  # row[j - 1] of the previous row
        for j, y in enumerate(b, start=1):
            above = row[j]
            row[j] = diagonal + 1 if x == y else max(above, row[j - 1])
            diagonal = above
    return row[len(b)]


def rouge_l_char_f1(hypothesis: str, reference: str) -> float:
    """ROUGE-L F1 over characters, whitespace removed, in [0, 1]."""
    hyp = "".join(hypothesis.split())
    ref = "".join(reference.split())
    if not hyp or not ref:
        return 0.0
    lcs = lcs_length(hyp, ref)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(hyp), lcs / len(ref)
    return 2 * precision * recall / (precision + recall)


@metrics.register("rouge_l_char")
@takes_references("several")
def rouge_l_char(parsed: Any, target: Any, doc: dict) -> float:
    """Character-level ROUGE-L F1 (see the module docstring), 0-100; with several references,
    the best F1 over them (Lin 2004, "ROUGE", section 2.1: the maximum of the pairwise scores)."""
    refs = reference_list(target, doc)
    hyp = _hypothesis(parsed)
    if hyp is None:
        return 0.0
    return 100.0 * max(rouge_l_char_f1(hyp, ref) for ref in refs)


class ExactMatchArgs(MetricArgs):
    """lm-evaluation-harness's ``exact_match`` options (its ``exact_match_hf_evaluate``, from
    Hugging Face ``evaluate``'s exact_match), applied to the answer and the reference alike."""

    regexes_to_ignore: list[str] = Field(default_factory=list)
    """Each regular expression's matches are removed (``re.sub(rx, "", text)``), one after the
    other in the order listed, before anything else."""
    ignore_case: bool = False
    """Lower-case both (after the regexes)."""
    ignore_punctuation: bool = False
    """Remove the characters of Python's ``string.punctuation`` (ASCII ``!"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~``)."""
    ignore_numbers: bool = False
    """Remove the digits 0-9."""

    @field_validator("regexes_to_ignore")
    @classmethod
    def _compiles(cls, v: list[str]) -> list[str]:
        from mmtasks.config.task_regex import compile_task_pattern

        for rx in v:
            try:
                compile_task_pattern(rx)  # nested quantifiers refused; matching bounded in time
            except ValueError as exc:
                raise ValueError(f"{rx!r}: {exc}") from None
        return v


_PUNCTUATION = str.maketrans("", "", string.punctuation)
_DIGITS = str.maketrans("", "", string.digits)


def exact_match_form(text: str, args: ExactMatchArgs) -> str:
    """``text`` as :func:`exact_match` compares it: lm-eval's steps in lm-eval's order (regexes,
    case, punctuation, numbers), then surrounding whitespace stripped (ours: lm-eval keeps it)."""
    from mmtasks.config import task_regex

    for rx in args.regexes_to_ignore:
        try:
            text = task_regex.sub(task_regex.compile_task_pattern(rx), "", text)
        except task_regex.PatternTimeout as exc:
            raise DataError(str(exc), field="metrics.args.regexes_to_ignore",
                            hint="write the pattern so that it cannot backtrack over a long reply") from None
    if args.ignore_case:
        text = text.lower()
    if args.ignore_punctuation:
        text = text.translate(_PUNCTUATION)
    if args.ignore_numbers:
        text = text.translate(_DIGITS)
    return text.strip()


@metrics.register("exact_match")
@takes_references("one")
@takes_args(ExactMatchArgs)
def exact_match(parsed: Any, target: Any, doc: dict, args: ExactMatchArgs | None = None) -> float:
    """100 when the answer equals the reference, both stripped of surrounding whitespace (and,
    with ``args``, compared as :func:`exact_match_form` says); else 0."""
    args = args or ExactMatchArgs()
    if isinstance(target, (int, float)) and not isinstance(target, bool):
        target = str(target)
    ref = _reference(target, doc)
    hyp = _hypothesis(parsed)
    return 100.0 if hyp is not None and exact_match_form(hyp, args) == exact_match_form(ref, args) else 0.0
