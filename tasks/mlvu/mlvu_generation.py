"""MLVU's generation tasks (sub-scene captioning, video summary): the authors' GPT-4 grading read.

Loaded as a plugin file by ``mlvu_dev_sub_scene.yaml`` and ``mlvu_dev_summary.yaml``. The authors'
``evaluation/generation_evaluation/calculate.py`` and ``calculate_sum.py`` (github.com/JUNJIE99/MLVU,
commit fd060c1) read each judge reply with ``extract_scores``: for each of two keys
(``score_accuracy``, ``score_relevance``; ``score_completeness``, ``score_reliability``), where the
key first occurs, the number from two characters past the next ":" up to the next "," (to the
reply's last character but one when no "," follows), as a float; a key not found is skipped. Then
``accu += scores[0]; rele += scores[1]`` inside a ``try`` whose ``except`` adds 0: a reply with no
key scores 0 and 0, one with a single key scores that number first and 0 second (whichever key it
was). The sums are divided by the number of judged replies and printed with their sum.

Here each judged reply's fields are those two numbers and their ``total``; a number that is no
float (the authors' script stops on it) makes the reply no verdict, re-asked and then counted as a
judge failure (ours). The means are the authors' figures; ``total``'s mean is their sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mmtasks.scoring.verdicts import verdict_parser

SUB_SCENE_KEYS = ("score_accuracy", "score_relevance")
SUMMARY_KEYS = ("score_completeness", "score_reliability")


def extract_scores(text: str, keys: tuple[str, str]) -> list[float] | None:
    """The authors' ``extract_scores``; None where their ``float()`` would raise."""
    scores = []
    for key in keys:
        start_index = text.find(key)
        if start_index == -1:
            continue
        start = text.find(":", start_index) + 2
        end = text.find(",", start)
        try:
            scores.append(float(text[start:end]))
        except ValueError:
            return None
    return scores


def _fields(text: str, keys: tuple[str, str], names: tuple[str, str]) -> dict[str, float] | None:
    scores = extract_scores(text, keys)
    if scores is None:
        return None
    first = scores[0] if scores else 0.0
    second = scores[1] if len(scores) > 1 else 0.0
    return {names[0]: first, names[1]: second, "total": first + second}


def _space(keys: tuple[str, str]) -> Any:
    def space(context: Mapping[str, Any], args: Any = None) -> dict[str, Any]:
        """The authors' asked-for verdict, "{'score_x': a, 'score_y': b}", each score 1 to 5."""
        return {"kind": "verdict", "fields": {keys[0]: [1, 5], keys[1]: [1, 5]}}
    return space


@verdict_parser("mlvu_sub_scene_scores", space=_space(SUB_SCENE_KEYS))
def mlvu_sub_scene_scores(text: str, context: Mapping[str, Any]) -> dict[str, float] | None:
    return _fields(text, SUB_SCENE_KEYS, ("accuracy", "relevance"))


@verdict_parser("mlvu_summary_scores", space=_space(SUMMARY_KEYS))
def mlvu_summary_scores(text: str, context: Mapping[str, Any]) -> dict[str, float] | None:
    return _fields(text, SUMMARY_KEYS, ("completeness", "reliability"))
