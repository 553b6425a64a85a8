"""MME against its authors' code and lmms-eval's, run verbatim on the same hand-written replies.

- The authors' ``eval_tool/calculation.py`` (unlicensed: read from MMTASKS_REFERENCE_DIR, see
  ``reference/README.md``) on the 30 replies of ``mme_replies.py`` gives the task's own figures: each
  subtask's score and the perception and cognition sums; on the authors' published LaVIN replies
  (``LaVIN/*.txt`` beside it) our reading and sums give what it prints.
- VLMEvalKit's ``YOrN_Extraction`` and ``MME_rating`` (bundled, Apache-2.0) give the ``vlmevalkit``
  variant's reading and sums.
- lmms-eval's ``parse_pred_ans``/``mme_process_results``/``mme_aggregate_results`` (bundled, MIT)
  give the ``lmms_eval`` variant's sums.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import sys
import types
from contextlib import redirect_stdout
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mme_replies import AUTHORS, AUTHORS_SUMS, LMMS_EVAL_SUMS, REPLIES, VLMEVALKIT, VLMEVALKIT_SUMS
from tests.folder_runs import SAMPLE, parts_of, plugin, read_jsonl, run_mmtasks, samples_of
from tests.reference_code import load_reference

REFERENCE = Path(__file__).parent / "reference"
#: replies beyond the sample's, read one by one by both rules
MORE = ["yes", "no", "Yes", "No.", "no.", "y", "n", "Y.", "", " ", ".", "nah", "yeah", "Yep", "yes no", "no yes",
        "On the", "I don't know", "cannot tell", "Nope.", "NO", "n/a", "know", "  no", "   no", "\tyes", "no\n",
        "Answer: yes", "It is not", "Yes, no", ".yes", "..no", "y es", "ye s"]


def scoring() -> ModuleType:
    registry, path = plugin("mme", "mme_scoring.py")
    return registry._PLUGIN_MODULES[path]


def reference(name: str) -> ModuleType:
    return load_reference(name, REFERENCE)


def _confusion(gts: list[int], preds: list[int], labels: list[int]) -> list[list[int]]:
    return [[sum(1 for g, p in zip(gts, preds) if g == a and p == b) for b in labels] for a in labels]


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def sklearn_stand_in() -> types.ModuleType:
    """``sklearn.metrics`` as calculation.py calls it (binary labels 1/0, -1 for "other")."""
    metrics = types.ModuleType("sklearn.metrics")
    metrics.accuracy_score = lambda gts, preds: sum(g == p for g, p in zip(gts, preds)) / len(gts)  # type: ignore[attr-defined]
    metrics.confusion_matrix = lambda gts, preds, labels: __import__("numpy").array(_confusion(gts, preds, labels))  # type: ignore[attr-defined]
    metrics.precision_score = lambda gts, preds, average: _ratio(  # type: ignore[attr-defined]
        sum(g == 1 and p == 1 for g, p in zip(gts, preds)), sum(p == 1 for p in preds))
    metrics.recall_score = lambda gts, preds, average: _ratio(  # type: ignore[attr-defined]
        sum(g == 1 and p == 1 for g, p in zip(gts, preds)), sum(g == 1 for g in gts))
    package = types.ModuleType("sklearn")
    package.metrics = metrics  # type: ignore[attr-defined]
    return package


def authors_calculation(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, Path]:
    folder = os.environ.get("MMTASKS_REFERENCE_DIR")
    if not folder or not (Path(folder) / "calculation.py").is_file():
        pytest.skip("needs eval_tool/calculation.py (unlicensed upstream, not bundled) in MMTASKS_REFERENCE_DIR")
    package = sklearn_stand_in()
    monkeypatch.setitem(sys.modules, "sklearn", package)
    monkeypatch.setitem(sys.modules, "sklearn.metrics", package.metrics)
    monkeypatch.setattr(sys, "argv", ["calculation.py"])
    spec = importlib.util.spec_from_file_location("reference_mme_calculation", Path(folder) / "calculation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, Path(folder)


def run_calculation(module: ModuleType, results_dir: Path) -> tuple[dict[str, float], dict[str, float]]:
    """What ``process_result`` prints: the two sums, and each subtask's score."""
    out = io.StringIO()
    with redirect_stdout(out):
        module.calculate_metrics().process_result(str(results_dir))
    text = out.getvalue()
    totals = [float(v) for v in re.findall(r"total score: (\S+)", text)]
    tasks = {m.group(1): float(m.group(2)) for m in re.finditer(r"\t (\S+)  score: (\S+)", text)}
    return {"perception": totals[0], "cognition": totals[1]}, tasks


def ours(rows: list[tuple[str, str, str, str]], read: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(category, image, gold, reply) -> our sums and subtask scores, read by ``read``."""
    m = scoring()
    scored = [(c, img, 100.0 if read(reply) == gold else 0.0) for c, img, gold, reply in rows]
    scores = m.subtask_scores(scored)
    return m.sums(scores), scores


def sample_rows() -> list[tuple[str, str, str, str]]:
    return [(q.split("/")[0], q, gold, reply) for (q, gold), (reply, _, _) in REPLIES.items()]


def test_readings_by_hand() -> None:
    m = scoring()
    for (_, _), (reply, authors, lmms) in REPLIES.items():
        assert m.read_yes_no(reply) == authors, reply
        assert m.read_yes_no_lmms_eval(reply) == lmms, reply
    sums, scores = ours(sample_rows(), m.read_yes_no)
    assert sums == pytest.approx(AUTHORS_SUMS)
    assert {c: (s.acc, s.acc_plus, s.score) for c, s in scores.items()} == {c: pytest.approx(v) for c, v in AUTHORS.items()}


def test_lmms_eval_verbatim_gives_the_variant() -> None:
    ref, m = reference("lmms_eval_mme"), scoring()
    for reply in [r for r, _, _ in REPLIES.values()] + MORE:
        got = ref.parse_pred_ans(reply)
        assert (None if got == "other" else got) == m.read_yes_no_lmms_eval(reply), repr(reply)
    results: dict[str, list[dict[str, Any]]] = {}
    for category, image, gold, reply in sample_rows():
        doc = {"question_id": image, "category": category, "answer": gold.capitalize()}
        for key, value in ref.mme_process_results(doc, [reply]).items():
            results.setdefault(key, []).append(value)
    theirs = {"perception": ref.mme_aggregate_results(results["mme_perception_score"]),
              "cognition": ref.mme_aggregate_results(results["mme_cognition_score"])}
    sums, _ = ours(sample_rows(), m.read_yes_no_lmms_eval)
    assert theirs == pytest.approx({k: LMMS_EVAL_SUMS[k] for k in theirs})
    assert sums == pytest.approx(LMMS_EVAL_SUMS)


def write_results(folder: Path, rows: list[tuple[str, str, str, str]]) -> None:
    """The authors' result files: Image_Name \\t Question \\t Ground_Truth_Answer \\t Response, one line
    each (a reply's newlines deleted, as their readme asks), the two questions of an image together."""
    folder.mkdir()
    lines: dict[str, list[str]] = {}
    for category, image, gold, reply in rows:
        one_line = reply.replace("\n", "")
        lines.setdefault(category, []).append(f"{image.split('/')[-1]}\tQ?\t{gold.capitalize()}\t{one_line}\n")
    for category, text in lines.items():
        (folder / f"{category}.txt").write_text("".join(text), encoding="utf-8")


def test_authors_calculation_verbatim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module, _ = authors_calculation(monkeypatch)
    m = scoring()
    calc = module.calculate_metrics()
    for reply in [r for r, _, _ in REPLIES.values()] + MORE:
        one_line = reply.replace("\n", "")
        for as_read in (one_line.lower(), one_line.lower() + "\n"):  # readlines keeps the line's end
            got = calc.parse_pred_ans(as_read)
            assert (None if got == "other" else got) == m.read_yes_no(reply), repr(reply)
    write_results(tmp_path / "results", sample_rows())
    totals, tasks = run_calculation(module, tmp_path / "results")
    assert totals == pytest.approx({k: AUTHORS_SUMS[k] for k in totals})
    assert tasks == pytest.approx({c: v[2] for c, v in AUTHORS.items()})


def test_authors_published_lavin_replies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The authors' LaVIN replies (2,374 questions): our reading and sums give what calculation.py prints."""
    module, folder = authors_calculation(monkeypatch)
    if not (folder / "LaVIN").is_dir():
        pytest.skip("needs the LaVIN/ folder of eval_tool in MMTASKS_REFERENCE_DIR")
    rows = []
    for path in sorted((folder / "LaVIN").glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            image, _, gold, reply = line.split("\t")
            rows.append((path.stem, image, gold.lower(), reply))
    assert len(rows) == 2374
    totals, tasks = run_calculation(module, folder / "LaVIN")
    sums, scores = ours(rows, scoring().read_yes_no)
    assert {k: sums[k] for k in totals} == pytest.approx(totals)
    assert {c: s.score for c, s in scores.items()} == pytest.approx(tasks)
    # the published leaderboard (README of the Evaluation branch): LaVIN 963.60 perception, 249.64 cognition
    assert totals == pytest.approx({"perception": 963.60, "cognition": 249.64}, abs=0.02)


def test_vlmevalkit_verbatim_gives_the_variant() -> None:
    pd = pytest.importorskip("pandas")
    ref, m = load_reference("vlmevalkit_yorn_e8e78f0"), scoring()
    names = {"Yes": "yes", "No": "no", "Unknown": None}
    for reply in [r for r, _, _ in REPLIES.values()] + MORE:
        assert names[ref.YOrN_Extraction(reply)] == m.read_yes_no_vlmevalkit(reply), repr(reply)
    assert {k: m.read_yes_no_vlmevalkit(r) for k, (r, _, _) in REPLIES.items()} == VLMEVALKIT
    # MME_rating: per category, acc over questions plus acc+ over images (the product of an image's two scores)
    rows = [{"category": c, "image_path": img, "score": ref.YOrN_Extraction(reply) == gold.capitalize()}
            for c, img, gold, reply in sample_rows()]
    table = ref.MME_rating(pd.DataFrame(rows)).iloc[0]
    sums, scores = ours(sample_rows(), m.read_yes_no_vlmevalkit)
    assert {"perception": table["perception"], "cognition": table["reasoning"]} == pytest.approx(
        {k: VLMEVALKIT_SUMS[k] for k in ("perception", "cognition")})
    assert {k: sums[k] for k in ("perception", "cognition")} == pytest.approx(
        {"perception": table["perception"], "cognition": table["reasoning"]})
    assert {c: s.score for c, s in scores.items()} == pytest.approx({c: table[c] for c in scores})


def test_lmms_eval_prompt_task_variant(tmp_path: Path) -> None:
    """mme_lmms_eval sends what lmms-eval's mme_doc_to_text writes with its default kwargs (mme.yaml)."""
    ref = reference("lmms_eval_mme")
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "mme_lmms_eval", "--data-dir", str(SAMPLE), "--model", "random",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    kwargs = {"pre_prompt": "", "post_prompt": "\nAnswer the question using a single word or phrase."}
    records = {f"{r['question_id']}:{r['answer'].lower()}": r for r in read_jsonl(SAMPLE / "mme" / "mme.jsonl")}
    samples = samples_of(out, "mme_lmms_eval")
    assert len(samples) == len(records) == 30
    for doc_id, sample in samples.items():
        assert parts_of(sample) == ["<img>", ref.mme_doc_to_text(records[doc_id], kwargs)], doc_id
    assert json.loads((out / "results.json").read_text())["configs"]["mme_lmms_eval"]["generation"]["max_new_tokens"] == 16
