"""POPE against its authors' evaluate.py, lmms-eval's utils.py (both MIT) and VLMEvalKit's yorn.py
(Apache-2.0), bundled and run verbatim on the same hand-written replies: per reply, what each reads;
per split, the figures."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pope_replies import AUTHORS, LMMS_EVAL, METRICS, REPLIES, VLMEVALKIT, VLMEVALKIT_READINGS
from tests.folder_runs import SAMPLE, parts_of, plugin, read_jsonl, run_mmtasks, samples_of
from tests.reference_code import load_reference

REFERENCE = Path(__file__).parent / "reference"
#: replies beyond the sample's, read one by one by both rules (with alternating answers)
MORE = ["", " ", "No", "no.", "NO.", "Yes, no doubt", "Not sure", "not sure", "I don't know", "There's no",
        "No,there is none", "It is, no", "yes. no.", "no\nyes", "Yes\nno", "nothing", "none", "Answer: no",
        "(no)", "no!", "I see no cat, so yes", "Yes. There is not.", "it's not. yes", "Cannot tell", "N/A"]


def scoring() -> ModuleType:
    registry, path = plugin("pope", "pope_scoring.py")
    return registry._PLUGIN_MODULES[path]


def run_evaluate(replies: list[str], golds: list[str]) -> tuple[list[str], dict[str, float]]:
    """The authors' evaluate.py on the answers (JSONL, {"question", "answer"}) and the labels (the POPE
    file, {"label"}): its reading of each answer, and the figures it prints."""
    files = [io.StringIO("".join(json.dumps({"question": "q", "answer": r}) + "\n" for r in replies)),
             io.StringIO("".join(json.dumps({"question_id": i, "label": g}) + "\n" for i, g in enumerate(golds)))]
    printed: list[str] = []

    def fake_open(path: str, mode: str = "r") -> io.StringIO:
        assert path == "" and mode == "r"  # ans_file, then label_file, as published
        return files.pop(0)

    namespace: dict[str, Any] = {"open": fake_open, "print": lambda *a: printed.append(" ".join(map(str, a)))}
    code = compile((REFERENCE / "pope_evaluate.py").read_text(encoding="utf-8"), "pope_evaluate.py", "exec")
    exec(code, namespace)  # noqa: S102 - the authors' script, run as it is
    figures = dict(line.split(": ") for line in printed if ": " in line)
    names = {"acc": "Accuracy", "precision": "Precision", "recall": "Recall", "f1": "F1 score", "yes_ratio": "Yes ratio"}
    return [a["answer"] for a in namespace["answers"]], {k: 100 * float(figures[v]) for k, v in names.items()}


def ours(replies: list[str], golds: list[str], read: Callable[[str], Any], yes_ratio: str) -> dict[str, float | None]:
    """The task's figures for ``replies``: the plain means of its per-question metrics, F1 from them."""
    m = scoring()
    fns = {"acc": m.pope_correct, "precision": m.pope_precision_unit, "recall": m.pope_recall_unit,
           "yes_ratio": getattr(m, yes_ratio)}
    out: dict[str, float | None] = {}
    for name, fn in fns.items():
        values = [v for r, g in zip(replies, golds) if (v := fn(read(r), g, {})) is not None]
        out[name] = sum(values) / len(values) if values else None
    out["f1"] = m.f1_of(out["precision"], out["recall"])
    return out


def split_rows(split: str) -> tuple[list[str], list[str]]:
    docs = REPLIES[split]
    return [r for _, r, _, _ in docs.values()], [g for g, _, _, _ in docs.values()]


@pytest.mark.parametrize("split", list(REPLIES))
def test_authors_evaluate_verbatim(split: str) -> None:
    replies, golds = split_rows(split)
    readings, theirs = run_evaluate(replies, golds)
    assert readings == [a for _, _, a, _ in REPLIES[split].values()]
    mine = ours(replies, golds, scoring().read_yes_no, "pope_said_yes")
    assert mine == pytest.approx(theirs)
    assert tuple(theirs[m] for m in METRICS) == pytest.approx(AUTHORS[split])


def test_authors_reading_of_more_replies() -> None:
    golds = ["yes" if i % 2 else "no" for i in range(len(MORE))]
    readings, theirs = run_evaluate(MORE, golds)
    m = scoring()
    assert readings == [m.read_yes_no(r) for r in MORE]
    assert ours(MORE, golds, m.read_yes_no, "pope_said_yes") == pytest.approx(theirs)


def reference(name: str) -> ModuleType:
    return load_reference(name, REFERENCE)


@pytest.mark.parametrize("split", [*REPLIES, "more"])
def test_lmms_eval_verbatim_gives_the_variant(split: str) -> None:
    if split == "more":
        replies, golds = MORE, ["yes" if i % 2 else "no" for i in range(len(MORE))]
    else:
        replies, golds = split_rows(split)
    ref = reference("lmms_eval_pope")
    results: dict[str, list[dict[str, Any]]] = {}
    for i, (reply, gold) in enumerate(zip(replies, golds)):
        for key, value in ref.pope_process_results({"question_id": str(i), "answer": gold}, [reply]).items():
            results.setdefault(key, []).append(value)
    theirs = {"acc": 100 * ref.pope_aggregate_accuracy(results["pope_accuracy"]),
              "precision": 100 * ref.pope_aggregate_precision(results["pope_precision"]),
              "recall": 100 * ref.pope_aggregate_recall(results["pope_recall"]),
              "f1": 100 * ref.pope_aggregate_f1_score(results["pope_f1_score"]),
              "yes_ratio": 100 * ref.pope_aggregate_yes_ratio(results["pope_yes_ratio"])}
    mine = ours(replies, golds, scoring().read_lmms_eval, "pope_gold_yes")
    # lmms-eval gives 0 where nothing is read as yes (precision) or no yes answer is read (recall); ours null
    assert {k: (0.0 if v is None else v) for k, v in mine.items()} == pytest.approx(theirs)
    if split != "more":
        assert tuple(theirs[m] for m in METRICS) == pytest.approx(LMMS_EVAL[split])


@pytest.mark.parametrize("split", [*REPLIES, "more"])
def test_vlmevalkit_verbatim_gives_the_variant(split: str) -> None:
    pd = pytest.importorskip("pandas")
    if split == "more":
        replies, golds = MORE, ["yes" if i % 2 else "no" for i in range(len(MORE))]
    else:
        replies, golds = split_rows(split)
    ref, m = load_reference("vlmevalkit_yorn_e8e78f0"), scoring()
    names = {"Yes": "yes", "No": "no", "Unknown": None}
    extracted = [ref.YOrN_Extraction(r) for r in replies]
    assert [names[e] for e in extracted] == [m.read_yes_no_vlmevalkit(r) for r in replies]
    if split != "more":
        assert [names[e] for e in extracted] == list(VLMEVALKIT_READINGS[split].values())
    answers = [g.capitalize() for g in golds]
    table = ref.POPE_rating(pd.DataFrame({"answer": answers, "extracted": extracted, "category": [split] * len(replies),
                                          "score": [a == e for a, e in zip(answers, extracted)]})).iloc[0]
    theirs = {"f1": table["Overall"], "acc": table["acc"], "precision": table["precision"], "recall": table["recall"]}
    mine = ours(replies, golds, m.read_yes_no_vlmevalkit, "pope_said_yes")
    mine["recall"] = ours_recall_vlmevalkit(replies, golds)
    mine["f1"] = m.f1_of(mine["precision"], mine["recall"])
    # VLMEvalKit gives 0 where nothing is read as yes; ours null
    assert {k: (0.0 if mine[k] is None else mine[k]) for k in theirs} == pytest.approx(theirs)
    if split != "more":
        assert (theirs["f1"], theirs["acc"], theirs["precision"], theirs["recall"]) == pytest.approx(VLMEVALKIT[split][:4])


def ours_recall_vlmevalkit(replies: list[str], golds: list[str]) -> float | None:
    m = scoring()
    values = [v for r, g in zip(replies, golds)
              if (v := m.pope_recall_unit_vlmevalkit(m.read_yes_no_vlmevalkit(r), g, {})) is not None]
    return sum(values) / len(values) if values else None


def test_lmms_eval_prompt_task_variants(tmp_path: Path) -> None:
    """pope_*_lmms_eval send what lmms-eval's pope_doc_to_text writes with its default kwargs (pope.yaml),
    and are not in the group pope."""
    ref = reference("lmms_eval_pope")
    out = tmp_path / "out"
    tasks = [f"pope_{s}_lmms_eval" for s in REPLIES]
    proc = run_mmtasks(["--tasks", ",".join(tasks), "--data-dir", str(SAMPLE), "--model", "random",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    kwargs = {"pre_prompt": "", "post_prompt": "\nAnswer the question using a single word or phrase."}
    for split, task in zip(REPLIES, tasks):
        records = {r["question_id"]: r for r in read_jsonl(SAMPLE / "pope" / f"{split}.jsonl")}
        for doc_id, sample in samples_of(out, task).items():
            assert parts_of(sample) == ["<img>", ref.pope_doc_to_text(records[doc_id], kwargs)], doc_id
    assert not json.loads((out / "results.json").read_text())["groups"]
