"""Corpus metrics over several references (captioning): corpus BLEU and CIDEr-D.

Both are computed once over every (answer, target) pair of a task (and of each breakdown
group), where a target is one reference or a list of them (``target: "field:captions"``):

- ``corpus_bleu``: ``sacrebleu.corpus_bleu`` with sacrebleu's defaults (``13a`` tokenizer, no
  lowercasing, no smoothing at corpus level), the references of a document as its reference
  streams; documents with fewer references than the most have the missing ones as ``None``,
  which sacrebleu reads as "no reference" (its variable-reference support). 0-100.
- ``cider_d``: CIDEr-D (Vedantam et al., CVPR 2015, arXiv 1411.5726: tf-idf n-grams for
  n = 1..4, idf over the references of the corpus, clipped counts, a Gaussian length penalty
  with sigma 6, times 10) computed by the reference implementation, ``pycocoevalcap``'s
  ``CiderScorer`` (the COCO caption evaluation code, tylin/coco-caption, packaged on PyPI;
  the ``captions`` extra). It is reported x100 (``1.0`` CIDEr-D is 100, as papers write it;
  ours: every mmtasks metric is on 0-100 where it can be; lmms-eval's COCO tasks report the
  package's value as it is, 1.0).

Tokenization for CIDEr-D: the COCO code runs the Stanford PTBTokenizer (Java) lowercased and
drops punctuation tokens. mmtasks runs no Java: :func:`ptb_tokens` is ours, written after the
same rules (lowercase; clitics split as PTB does, ``don't`` -> ``do n't``, ``dog's`` ->
``dog 's``; abbreviations such as ``u.s.`` and ``p.m.`` kept whole; brackets named as PTB names
them, ``(`` -> ``-lrb-``, and kept, as the COCO code keeps them; punctuation split off, then the
COCO list of punctuation tokens dropped). tests/scoring/test_several_references.py compares it with the Java tokenizer where Java is
installed. Words the Stanford tokenizer knows as abbreviations without a second period
(``mr.``), URLs and e-mail addresses may still differ. The answer and the
references are tokenized alike, so the period that ends a caption counts in neither. The
answer is the reply as written (the ``verbatim`` parser), as lmms-eval's COCO caption tasks pass
it (``lmms_eval/tasks/coco_cap/utils.py``, ``coco_process_result``: the reply whole, then the
PTB tokenizer on the reply and the references alike).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mmtasks.errors import DataError
from mmtasks.scoring.metrics import corpus_metric, reference_list

#: the punctuation tokens the COCO caption evaluation drops after PTB tokenization, as it lists
#: them (pycocoevalcap/tokenizer/ptbtokenizer.py, PUNCTUATIONS). Its bracket names are upper case
#: while the tokenizer's output is lower-cased, so a bracket (``-lrb-``) is kept as a token.
COCO_PUNCTUATION = frozenset(["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-",
                              "--", "...", ";"])
_CLITIC = re.compile(r"(?i)(\w)(n't)\b|(\w)('(?:s|re|ve|ll|d|m))\b")
_TOKEN = re.compile(r"(?:[^\W\d_]\.){2,}"          # an abbreviation with its periods: e.g. u.s. p.m.
                    r"|n't|'(?:s|re|ve|ll|d|m)\b"   # clitics, split off by _CLITIC
                    r"|\w+(?:[-./:]\w+)*"           # words, numbers (3.5, 5:30), hyphenated words
                    r"|\.\.\.|--|!!+|\?\?+|[^\w\s]")  # ellipses, dashes, "!!", any other mark
#: PTB's names of brackets; a double quote becomes `` or '' (both dropped by COCO)
_PTB_MARKS = {"(": "-lrb-", ")": "-rrb-", "{": "-lcb-", "}": "-rcb-", "[": "-lsb-", "]": "-rsb-", '"': "''"}


def ptb_tokens(text: str) -> list[str]:
    """A caption's tokens as the COCO evaluation reads them (see the module docstring)."""
    text = _CLITIC.sub(lambda m: f"{m.group(1)} {m.group(2)}" if m.group(1) else f"{m.group(3)} {m.group(4)}", text.lower())
    tokens = (_PTB_MARKS.get(t, t) for t in _TOKEN.findall(text))
    return [t for t in tokens if t not in COCO_PUNCTUATION]


def _references(references: Sequence[Any]) -> list[list[str]]:
    return [reference_list(r, {}) for r in references]


@corpus_metric("corpus_bleu", references="several")
def corpus_bleu(predictions: Sequence[str], references: Sequence[Any]) -> float:
    """Corpus BLEU over several references (sacrebleu's defaults), 0-100."""
    import sacrebleu

    refs = _references(references)
    width = max(len(r) for r in refs)
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
    # a None in a reference stream: that sentence has fewer references (sacrebleu skips it; its annotation says str)
    return float(sacrebleu.corpus_bleu(list(predictions), streams).score)  # type: ignore[arg-type]


@corpus_metric("cider_d", references="several", requires=("pycocoevalcap",))
def cider_d(predictions: Sequence[str], references: Sequence[Any]) -> float:
    """CIDEr-D of the corpus, by pycocoevalcap's ``CiderScorer`` (n = 4, sigma = 6), x100."""
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    scorer = CiderScorer(n=4, sigma=6.0)
    for prediction, refs in zip(predictions, _references(references)):
        scorer += (" ".join(ptb_tokens(prediction)), [" ".join(ptb_tokens(r)) for r in refs])
    if not scorer.size():
        raise DataError("cider_d: no answers to score", field="metrics")
    score, _ = scorer.compute_score()
    return 100.0 * float(score)
