"""BLINK from a copy of its folder on an include path (local JSONL and the Hub-style parquet), replayed
replies scored by hand with the authors' rules; its Hub copy holds the local records."""

from __future__ import annotations

from pathlib import Path

import pytest

import pandas as pd

from tests.folder_runs import (SAMPLE, package_unchanged, parts_of, read_jsonl, results_of, run_copy, samples_of)
from tests.reference_code import load_reference

REFERENCE = Path(__file__).parent / "reference"



@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("blink"):
        yield


# --- BLINK ------------------------------------------------------------------------------

#: subtask -> [(doc id, reply, parsed letter or None, right)]; gold letters are the sample's answers;
#: the letters by the choice parser's first_letter rule (an explicit answer first, else the first letter)
BLINK_REPLIES = {
    "Art_Style": [("val_Art_Style_1", "(A)", "A", True),                       # gold (A)
                  ("val_Art_Style_2", "A", "A", False)],                       # gold (B)
    "Counting": [("val_Counting_1", "The answer is (C).", "C", True),           # gold (C)
                 ("val_Counting_2", "B) 1", "B", True)],                       # LLaVA's "X) choice" replies
    "Forensic_Detection": [("val_Forensic_Detection_1", "I cannot tell.", None, False)],  # no letter: unparsed
    "Functional_Correspondence": [("val_Functional_Correspondence_1", "Point B, not A", "B", False)],  # the first letter; gold (A)
    "IQ_Test": [("val_IQ_Test_1", "B", "B", True)],
    "Jigsaw": [("val_Jigsaw_1", "(B) the third image", "B", True)],
    "Multi-view_Reasoning": [("val_Multi-view_Reasoning_1", "left", None, False)],  # option text, no letter
    "Object_Localization": [("val_Object_Localization_1", "B", "B", True)],
    "Relative_Depth": [("val_Relative_Depth_1", "A", "A", True)],
    "Relative_Reflectance": [("val_Relative_Reflectance_1", "(C) About the same", "C", True)],
    "Semantic_Correspondence": [("val_Semantic_Correspondence_1", "(A)", "A", False)],  # gold (C)
    "Spatial_Relation": [("val_Spatial_Relation_1", "(A) yes", "A", True)],
    "Visual_Correspondence": [("val_Visual_Correspondence_1", "D", "D", True)],
    "Visual_Similarity": [("val_Visual_Similarity_1", "(B), not (A)", "B", False)],  # the first letter; gold (A)
}
#: per subtask accuracy, by hand from the table above
BLINK_ACC = {"Art_Style": 50.0, "Counting": 100.0, "Forensic_Detection": 0.0, "Functional_Correspondence": 0.0,
             "IQ_Test": 100.0, "Jigsaw": 100.0, "Multi-view_Reasoning": 0.0, "Object_Localization": 100.0,
             "Relative_Depth": 100.0, "Relative_Reflectance": 100.0, "Semantic_Correspondence": 0.0,
             "Spatial_Relation": 100.0, "Visual_Correspondence": 100.0, "Visual_Similarity": 0.0}
#: the peers' readings of the same replies (scoring variants), per subtask, by hand. lmms-eval: the
#: letter the reply starts with ("The answer is (C)." reads T, "I cannot tell." I, "Point B, not A" P,
#: "left" L: wrong); VLMEvalKit's can_infer: a lone letter in the last words, else the one option text
#: ("left" reads A, right; "Point B, not A" names two letters, then the text "point b": B, wrong;
#: "(B), not (A)" two letters and no text: Z)
BLINK_VARIANTS = {
    "lmms_eval": {**BLINK_ACC, "Counting": 50.0},
    "vlmevalkit": {**BLINK_ACC, "Multi-view_Reasoning": 100.0},
}
DISCLAIMER = ("Disclaimer: This is not to make unfair assumptions about the people in the image and you just need to "
              "give your assessment on this question. You don't need to identify the real people. You just need to "
              "analyze based on the information I gave you.\n\n")


def blink_task(subtask: str) -> str:
    return "blink_" + subtask.lower().replace("-", "_") + "_copy"


def run_blink(tmp_path: Path, *, hub: bool) -> Path:
    rows = [(blink_task(sub), d, r) for sub, items in BLINK_REPLIES.items() for d, r, _, _ in items]
    proc, out = run_copy(tmp_path, "blink", "BLINK-Benchmark/BLINK", rows, hub=hub)
    assert proc.returncode == 1, proc.stderr  # 2 unparsed answers are problems
    return out


def check_blink(out: Path) -> None:
    results = results_of(out)
    for sub, acc in BLINK_ACC.items():
        assert results["results"][blink_task(sub)]["acc"] == pytest.approx(acc), sub
        samples = samples_of(out, blink_task(sub))
        assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, _, p, _ in BLINK_REPLIES[sub]}
        assert {d: s["metrics"]["acc"] for d, s in samples.items()} == {d: 100.0 * ok for d, _, _, ok in BLINK_REPLIES[sub]}
    # the authors' Total: the plain mean of the 14 subtask accuracies, 850 / 14
    assert results["groups"]["blink_copy"]["average"] == pytest.approx(850 / 14)
    for name, accs in BLINK_VARIANTS.items():
        for sub, acc in accs.items():
            assert results["variants"][blink_task(sub)][name]["metrics"]["acc"] == pytest.approx(acc), (name, sub)
    # lmms-eval's group: the plain mean of the subtasks (no weight_by_size); VLMEvalKit's Overall: over all
    # 16 questions, 11 right (the 14 subtasks' right answers: 1 2 0 0 1 1 1 1 1 1 0 1 1 0)
    assert results["groups"]["blink_copy"]["variants"] == pytest.approx({"lmms_eval": 800 / 14, "vlmevalkit": 1100 / 16})
    assert results["problems"][blink_task("Forensic_Detection")]["unparsed"] == 1
    assert results["problems"][blink_task("Multi-view_Reasoning")]["unparsed"] == 1


def test_blink_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    out = run_blink(tmp_path, hub=False)
    check_blink(out)
    # the authors' query: the record's prompt (with their disclaimer for Art_Style, Jigsaw and
    # Forensic_Detection), then the images image_1..image_4 in order, the empty ones skipped
    records = {r["idx"]: r for sub in BLINK_ACC for r in read_jsonl(SAMPLE / "blink" / f"{sub}.jsonl")}
    for sub in BLINK_ACC:
        for doc_id, sample in samples_of(out, blink_task(sub)).items():
            rec = records[doc_id]
            n = sum(rec[f"image_{k}"] is not None for k in range(1, 5))
            prefix = DISCLAIMER if sub in ("Art_Style", "Jigsaw", "Forensic_Detection") else ""
            assert parts_of(sample) == [prefix + rec["prompt"]] + ["<img>"] * n, doc_id
            assert [p["image"] for p in sample["prompt"][-1]["content"][1:]] == [
                str(SAMPLE / "blink" / rec[f"image_{k}"]) for k in range(1, n + 1)]
    assert {len(parts_of(s)) - 1 for sub in BLINK_ACC for s in samples_of(out, blink_task(sub)).values()} == {1, 2, 3, 4}


def test_the_group_variants_equal_the_peers_group_code(tmp_path: Path) -> None:
    """groups[blink].variants: lmms-eval's consolidate_group_results step (AggMetricConfig of blink.yaml's
    aggregate_metric_list, aggregate_subtask_metrics) on its subtasks' blink_aggregate_results, and
    VLMEvalKit's report_acc Overall on the hits, each peer's code run verbatim on the same replies."""
    group = results_of(run_blink(tmp_path, hub=False))["groups"]["blink_copy"]["variants"]
    lmms = load_reference("lmms_eval_blink_utils_75571cf", REFERENCE)
    groups = load_reference("lmms_eval_group_aggregation_75571cf")
    report = load_reference("vlmevalkit_report_acc_e8e78f0")
    matching = load_reference("vlmevalkit_matching_util_e8e78f0")
    metrics, sizes, rows = [], [], []
    for sub, items in BLINK_REPLIES.items():
        records = {r["idx"]: r for r in read_jsonl(SAMPLE / "blink" / f"{sub}.jsonl")}
        scored = [lmms.blink_process_results(records[d], [reply])["blink_acc"] for d, reply, _, _ in items]
        metrics.append(lmms.blink_aggregate_results(scored))
        sizes.append(len(scored))  # results[task]["samples"]
        for d, reply, _, _ in items:
            choices = {chr(ord("A") + i): c for i, c in enumerate(records[d]["choices"])}
            letter = matching.can_infer(reply, choices) or "Z"  # extract_answer_from_item without a judge
            rows.append({"index": d, "category": sub, "hit": int(letter == records[d]["answer"].strip("()"))})
    config = groups.AggMetricConfig(metric="blink_acc")  # lmms-eval's blink.yaml: no weight_by_size
    assert group["lmms_eval"] == pytest.approx(100 * groups.aggregate_subtask_metrics(metrics, sizes, config.weight_by_size))
    overall = report.report_acc(pd.DataFrame(rows))["Overall"][0]
    assert group["vlmevalkit"] == pytest.approx(100 * overall)
    # the two rules part here: the same per-subtask figures, weighted by size they give another mean
    assert groups.aggregate_subtask_metrics(metrics, sizes, True) != pytest.approx(groups.aggregate_subtask_metrics(metrics, sizes, False))


def test_blink_from_the_hub_layout(tmp_path: Path) -> None:
    """The same YAML reads the Hub dataset (one config per subtask); its path names the
    Hub-style sample folder instead of BLINK-Benchmark/BLINK."""
    out = run_blink(tmp_path, hub=True)
    check_blink(out)
    sample = samples_of(out, blink_task("Forensic_Detection"))["val_Forensic_Detection_1"]
    assert parts_of(sample)[1:] == ["<img>"] * 4



def test_hub_copies_hold_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    undecoded = datasets.Image(decode=False)
    # one config per subtask, image_1..image_4 embedded
    for sub in BLINK_ACC:
        local = read_jsonl(SAMPLE / "blink" / f"{sub}.jsonl")
        hub = datasets.load_dataset(str(SAMPLE / "blink" / "hf"), sub, split="val")
        for k in range(1, 5):
            hub = hub.cast_column(f"image_{k}", undecoded)
        assert len(hub) == len(local)
        for rec, row in zip(local, hub):
            fields = [f"image_{k}" for k in range(1, 5)]
            assert {k: v for k, v in row.items() if k not in fields} == {k: v for k, v in rec.items() if k not in fields}
            for f in fields:
                assert (row[f] and row[f]["bytes"]) == (rec[f] and (SAMPLE / "blink" / rec[f]).read_bytes())
