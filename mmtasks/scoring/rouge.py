"""ROUGE-L for Chinese text: jieba segmentation + the ``rouge-chinese`` package.

This is the recipe of the RealBench spec: both texts are segmented with
``jieba.cut`` and joined by single spaces, then scored as
``Rouge().get_scores(hyp, ref)[0]["rouge-l"]["f"]``. ``rouge-chinese``
computes the LCS over all tokens of the text (line breaks and Chinese
sentence ends only split it into "sentences" that are concatenated again),
compares tokens case-sensitively and returns 0.999999995 for identical texts.

The score is computed here with rouge-chinese's own sentence cutting and
tokenisation and its formula, but with a list-based LCS: rouge-chinese's
dictionary-based table (and its ROUGE-1/2, computed and discarded) made
scoring the costliest per-sample step of a RealBench run.
``tests/test_realbench_scoring.py`` checks the two agree on random texts.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rouge_chinese import Rouge

_init_lock = threading.Lock()
_rouge: "Rouge | None" = None


def _ensure_ready() -> "Rouge":
    """Load jieba's dictionary once, without its INFO lines on stderr."""
    global _rouge
    if _rouge is None:
        with _init_lock:
            if _rouge is None:
                import jieba
                from rouge_chinese import Rouge

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _rouge = Rouge(metrics=["rouge-l"])
    return _rouge


def segment(text: str) -> str:
    """``text`` cut by jieba, tokens joined by single spaces."""
    _ensure_ready()
    import jieba

    return " ".join(jieba.cut(text))


def tokens(segmented: str) -> list[str]:
    """rouge-chinese's tokens of a segmented text: its sentences (``cut_sent``), each with
    whitespace runs collapsed, split on spaces (a whitespace-only sentence is one empty token)."""
    rouge = _ensure_ready()
    return [w for sentence in rouge.cut_sent(segmented) if len(sentence) > 0 for w in " ".join(sentence.split()).split(" ")]


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists."""
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def rouge_l_f1(hypothesis: str, reference: str) -> float:
    """ROUGE-L F1 in [0, 1]; 0.0 for an empty or whitespace-only hypothesis.

    ``reference`` must contain a token: an empty reference is a data problem
    and raises ``ValueError("Reference is empty.")``, as rouge-chinese does.
    """
    _ensure_ready()
    if not hypothesis.strip():
        return 0.0
    hyp = tokens(segment(hypothesis))
    if not hyp:
        return 0.0  # rouge-chinese: "Hypothesis is empty."
    ref = tokens(segment(reference))
    if not ref:
        raise ValueError("Reference is empty.")
    llcs = lcs_length(ref, hyp)
    r_lcs = llcs / len(ref)
    p_lcs = llcs / len(hyp)
    # rouge-chinese's expression, operation for operation, so the floats are identical
    return float(2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8)))
