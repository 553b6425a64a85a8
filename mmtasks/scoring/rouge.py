"""ROUGE-L for Chinese text: jieba segmentation + the ``rouge-chinese`` package.

This is the recipe of the RealBench spec: both texts are segmented with
``jieba.cut`` and joined by single spaces, then scored with
``Rouge().get_scores(hyp, ref)[0]["rouge-l"]["f"]``. ``rouge-chinese``
computes the LCS over all tokens of the text (line breaks and Chinese
sentence ends only split it into "sentences" that are concatenated again),
compares tokens case-sensitively and returns 0.999999995 for identical texts.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rouge_chinese import Rouge

_init_lock = threading.Lock()
_rouge: "Rouge | None" = None

#: rouge-chinese's message for an empty or whitespace-only hypothesis.
_EMPTY_HYPOTHESIS = "Hypothesis is empty."


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
                _rouge = Rouge(metrics=["rouge-l"])  # not rouge-1/2: half the time, same ROUGE-L
    return _rouge


def segment(text: str) -> str:
    """``text`` cut by jieba, tokens joined by single spaces."""
    _ensure_ready()
    import jieba

    return " ".join(jieba.cut(text))


def rouge_l_f1(hypothesis: str, reference: str) -> float:
    """ROUGE-L F1 in [0, 1]; 0.0 for an empty or whitespace-only hypothesis.

    ``reference`` must contain a token: an empty reference is a data problem
    and rouge-chinese's ``ValueError("Reference is empty.")`` propagates.
    """
    rouge = _ensure_ready()
    if not hypothesis.strip():
        return 0.0
    try:
        scores = rouge.get_scores(segment(hypothesis), segment(reference))
    except ValueError as exc:
        if str(exc) == _EMPTY_HYPOTHESIS:
            return 0.0
        raise
    return float(scores[0]["rouge-l"]["f"])
