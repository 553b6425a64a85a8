"""MMT-Bench (multi-image): which VLMEvalKit the task reads replies as, and its variants, against
VLMEvalKit's code run verbatim (reference/ beside this file).

- the task's parser ``vlmeval_option`` is ``can_infer`` of VLMEvalKit at e8e78f05; the variant
  ``vlmevalkit_84012c9`` is ``can_infer`` of the copy MMT-Bench's own repository ships (84012c9);
- the variant ``l2_subtask_mean`` gives each meta-task (``l2-category``) the mean of its subtasks'
  accuracies, as ``report_acc_MMT`` does.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image as PILImage

from mmtasks.api import evaluate
from tests.plugins import plugin
from tests.reference_code import load_reference

REFERENCE = Path(__file__).parent / "reference"
OPTIONS = {"A": "the red one", "B": "the blue one", "C": "the green one", "D": "none of them"}
#: (subtask, meta-task, gold, reply)
CASES = [
    ("spot_the_diff", "multiple_image_analysis", "B", "B"),
    ("spot_the_diff", "multiple_image_analysis", "B", "B is the answer since the left image shows a blue square in the corner."),
    ("spot_the_diff", "multiple_image_analysis", "A", "The correct answer is **A**. The first picture is different from all the others."),
    ("spot_the_diff", "multiple_image_analysis", "C", "(C)"),
    ("spot_the_diff", "multiple_image_analysis", "C", "C. the green one"),
    ("image_similarity", "multiple_image_analysis", "A", "the red one"),
    ("image_similarity", "multiple_image_analysis", "D", "I think it is D, because the two images show different scenes entirely here."),
    ("image_similarity", "multiple_image_analysis", "A", "Looking at both images carefully, I would say that the red one is what the question is asking about in this case."),
    ("shape_matching", "cross_image_matching", "A", "A"),
    ("shape_matching", "cross_image_matching", "B", "Option B"),
    ("shape_matching", "cross_image_matching", "A", "Cannot determine the answer"),
    ("shape_matching", "cross_image_matching", "A", "I cannot tell."),
    ("point_tracking", "cross_image_matching", "D", "D"),
    ("point_tracking", "cross_image_matching", "C", "Answer: C"),
    ("point_tracking", "cross_image_matching", "B", "The answer is B"),
    ("point_tracking", "cross_image_matching", "B", "A"),
]


def load(name: str) -> ModuleType:
    return load_reference(name, REFERENCE)


def letter(value: object) -> str | None:
    return None if value is None or value is False else str(value)


def test_the_parsers_are_the_two_can_infers() -> None:
    scoring, _ = plugin("mmt_bench_mi", "mmt_scoring.py")
    current, pinned = load_reference("vlmevalkit_matching_util_e8e78f0"), load("matching_util_84012c9")
    doc = {**OPTIONS, "E": None}
    differ = 0
    for *_, reply in CASES:
        assert letter(scoring.vlmeval_option(reply, doc)) == letter(current.can_infer(reply, dict(OPTIONS))), reply
        assert letter(scoring.vlmeval_option_84012c9(reply, doc)) == letter(pinned.can_infer(reply, dict(OPTIONS))), reply
        differ += letter(current.can_infer(reply, dict(OPTIONS))) != letter(pinned.can_infer(reply, dict(OPTIONS)))
    # "B is the answer since ...", "I think it is D, because ...": the pinned copy takes a lone letter
    # anywhere, e8e78f05 only among the last four words; the long "... the red one ...": the pinned
    # copy's can_infer_text has no length cap
    assert differ == 3


def test_the_variants_give_vlmevalkits_figures(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    folder = tmp_path / "data" / "mmt_bench_mi"
    (folder / "images").mkdir(parents=True)
    PILImage.new("RGB", (8, 8), (200, 0, 0)).save(folder / "images" / "x.jpg")
    records = [{"index": i + 1, "question": f"q{i}", **OPTIONS, "answer": gold, "category": sub, "l2-category": l2,
                "split": "VAL", "image": ["images/x.jpg", "images/x.jpg"]} for i, (sub, l2, gold, _) in enumerate(CASES)]
    (folder / "mmt_bench_mi.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "mmt_bench_mi", "doc_id": str(i + 1), "responses": [reply]}) + "\n"
                            for i, (*_, reply) in enumerate(CASES)), encoding="utf-8")
    evaluate("mmt_bench_mi", f"replay:{pred}", data_dir=tmp_path / "data", output_path=tmp_path / "out", use_cache=False,
             allow_failures=True)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    current, pinned, report = load_reference("vlmevalkit_matching_util_e8e78f0"), load("matching_util_84012c9"), load("report_acc_mmt_e8e78f0")
    for name, reader, acc in (("", current, results["results"]["mmt_bench_mi"]["acc"]),
                              ("vlmevalkit_84012c9", pinned, results["variants"]["mmt_bench_mi"]["vlmevalkit_84012c9"]["metrics"]["acc"])):
        hits = [int(letter(reader.can_infer(reply, dict(OPTIONS))) == gold) for (_, _, gold, reply) in CASES]
        # report_acc_MMT makes a column for every meta-task of MMT_abbrs and fails on one with no
        # question: each other meta-task gets one question of its own subtask (not compared)
        others = [k for k in report.MMT_abbrs if k not in {c[1] for c in CASES}]
        frame = pd.DataFrame({"category": [c[0] for c in CASES] + [f"only_{k}" for k in others],
                              "l2-category": [c[1] for c in CASES] + others, "hit": hits + [0] * len(others)})
        table = report.report_acc_MMT(frame)
        assert acc == pytest.approx(100 * sum(hits) / len(hits)), name  # Overall: the mean of the hits
        if not name:  # the meta-tasks as report_acc_MMT gives them: means of subtask means
            rows = results["variants"]["mmt_bench_mi"]["l2_subtask_mean"]["breakdowns"]["l2_category"]
            for l2, abbr in (("multiple_image_analysis", "MIA"), ("cross_image_matching", "CIM")):
                assert rows[l2]["acc"] == pytest.approx(100 * float(table[table["split"] == "ALL"][abbr].iloc[0]))
            # by hand: spot_the_diff 4 of 5 right, image_similarity 1 of 3: MIA (4/5 + 1/3) / 2 = 56.67,
            # where the questions' mean (the task's own breakdown) is 5/8 = 62.5
            assert rows["multiple_image_analysis"]["acc"] == pytest.approx(100 * (4 / 5 + 1 / 3) / 2)
            assert results["breakdowns"]["mmt_bench_mi"]["l2_category"]["multiple_image_analysis"]["acc"] == pytest.approx(62.5)
    # the pinned copy reads 3 more right: 13 of 16, where e8e78f05 gives 10 of 16
    assert results["results"]["mmt_bench_mi"]["acc"] == pytest.approx(100 * 10 / 16)
    assert results["variants"]["mmt_bench_mi"]["vlmevalkit_84012c9"]["metrics"]["acc"] == pytest.approx(100 * 13 / 16)
