"""VLMEvalKit's reading of a yes/no reply, ``YOrN_Extraction``, as a generic rule.

VLMEvalKit reads the reply of every yes/no dataset by ``YOrN_Extraction`` of
github.com/open-compass/VLMEvalKit ``vlmeval/dataset/utils/yorn.py`` (commit ``e8e78f05``),
reimplemented here from its description (the benchmarks' tests compare it with that code, bundled
under the repository's ``tests/reference/``): the reply lower-cased, then ``process_punctuation``
(:func:`mmtasks.scoring.vqa_metrics.vlmevalkit_punctuation`: each mark of vqaEval.py's list dropped
where it touches a space, or anywhere once the text holds digit,digit, else made a space; up to 32
periods not beside a digit dropped), split at whitespace: "yes" a word and "no" not reads yes, "no" a
word and "yes" not reads no, else Unknown (None here). VLMEvalKit's LLM matcher for the Unknown
replies (with a judge model) is not part of the rule.
"""

from __future__ import annotations

from mmtasks.scoring.vqa_metrics import vlmevalkit_punctuation


def yorn_words(reply: str) -> list[str]:
    """The words ``YOrN_Extraction`` looks for "yes" and "no" among."""
    return vlmevalkit_punctuation(reply.lower()).split()


def vlmevalkit_yes_no(reply: str) -> str | None:
    """``YOrN_Extraction``: "yes", "no", or None (its Unknown)."""
    words = yorn_words(reply)
    if "yes" in words and "no" not in words:
        return "yes"
    if "no" in words and "yes" not in words:
        return "no"
    return None


__all__ = ["vlmevalkit_yes_no", "yorn_words"]
