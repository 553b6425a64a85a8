"""The peers' MMMU scoring, run verbatim from ``reference/`` (lmms-eval 75571cfe, VLMEvalKit e8e78f05),
for the tests beside this file."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any
from tests.reference_code import load_reference

REFERENCE = Path(__file__).parent / "reference"
#: what lmms-eval's random fallback returns here: the draw itself is not compared (see the notes)
GUESSED = "<random>"


def load(name: str, **given: Any) -> ModuleType:
    return load_reference(name, REFERENCE, **given)


def lmms_eval() -> ModuleType:
    """lmms-eval's ``mmmu/utils.py`` functions, their random fallback returning :data:`GUESSED`."""
    mcq = load("lmms_eval_mmmu_mcq_utils_75571cf")
    mcq.random = SimpleNamespace(choice=lambda choices: GUESSED)  # type: ignore[attr-defined]
    return load("lmms_eval_mmmu_utils_75571cf", shared_get_multi_choice_info=mcq.get_multi_choice_info,
                parse_mmmu_multi_choice_response=mcq.parse_mmmu_multi_choice_response)


def lmms_eval_verdicts(docs: Sequence[dict[str, Any]], replies: Sequence[str]) -> list[tuple[Any, bool]]:
    """Per document: lmms-eval's parsed prediction and verdict (``mmmu_process_results``, then
    ``evaluate_mmmu`` on the document alone)."""
    module = lmms_eval()
    out = []
    for doc, reply in zip(docs, replies):
        result = module.mmmu_process_results(doc, [reply])["mmmu_acc"]
        judged, _ = module.evaluate_mmmu([result])
        out.append((result["parsed_pred"][0], judged[doc["id"]] == "Correct"))
    return out


class ScriptedJudge:
    """VLMEvalKit's judge model (``model.generate(prompt)``), answering by ``answer(prompt)``."""

    def __init__(self, answer: Callable[[str], str]) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def generate(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer(prompt)


def vlmevalkit() -> ModuleType:
    matching = load_reference("vlmevalkit_matching_util_e8e78f0")
    store: dict[str, Any] = {}

    def track_progress_rich(fn: Callable[..., Any], tups: list[dict[str, Any]], nproc: int, chunksize: int, save: str,
                            keys: list[Any]) -> list[Any]:
        res = [fn(**t) for t in tups]
        store[save] = dict(zip(keys, res))
        return res

    return load("multiple_choice_e8e78f0", can_infer=matching.can_infer, cn_string=lambda s: False,
                load=lambda path: store[path], track_progress_rich=track_progress_rich,
                logger=logging.getLogger("vlmevalkit"))


def vlmevalkit_table(docs: Sequence[dict[str, Any]], replies: Sequence[str]) -> Any:
    """The records as VLMEvalKit's MMMU_DEV_VAL TSV lays them out (index, question, A..I, answer;
    an open question has no options) with the replies as ``prediction``."""
    import pandas as pd
    import ast

    rows = []
    for i, (doc, reply) in enumerate(zip(docs, replies)):
        row: dict[str, Any] = {"index": i, "question": doc["question"], "answer": doc["answer"], "prediction": reply}
        options = ast.literal_eval(doc["options"]) if doc["question_type"] == "multiple-choice" else []
        for k, letter in enumerate("ABCDEFGHI"):
            row[letter] = options[k] if k < len(options) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def vlmevalkit_hits(docs: Sequence[dict[str, Any]], replies: Sequence[str], judge: ScriptedJudge | None = None) -> list[int]:
    """Per document: VLMEvalKit's ``hit`` by ``mcq_vanilla_eval`` (its exact matching without a
    judge, else ``judge``)."""
    module = vlmevalkit()
    data = vlmevalkit_table(docs, replies)
    meta = data.drop(columns=["prediction"])
    scored = module.mcq_vanilla_eval(judge, data.copy(), meta, 1, "/nonexistent/mmmu_result.pkl", "MMMU_DEV_VAL")
    return [int(h) for h in scored.sort_values(by="index")["hit"]]
