"""The ANLS conformance checks shared by the folders whose metric is ANLS: tricky replies with their
ANLS computed by hand, replayed through a folder's task, and compared with the Robust Reading
Competition's evaluation script (unlicensed: read from MMTASKS_REFERENCE_DIR), lmms-eval's ``anls``
and VLMEvalKit's ``process_line``/``hit_calculate`` (bundled in tests/reference/); and seeded drawn
replies on which the generic ``anls`` equals both peers'. Each folder's tests call these with its own
task, data folder, image and VLMEvalKit dataset name."""

from __future__ import annotations

import json
import random
import shutil
from argparse import Namespace
from pathlib import Path

import pytest

from mmtasks.api import evaluate
from mmtasks.scoring.vqa_metrics import anls
from tests.folder_runs import read_jsonl
from tests.reference_code import load_file, load_reference, reference_dir_file

Run = tuple[dict, dict[str, float]]

#: (reply, accepted answers, ANLS by hand)
TRICKY: list[tuple[str, list[str], float]] = [
    ("4417", ["4417"], 1.0),
    ("4417 ", ["4417"], 1.0),                        # distance 0 whatever the length
    ("441", ["4417"], 0.75),
    ("44", ["4417"], 0.5),                           # exactly the threshold: kept
    ("4", ["4417"], 0.0),
    ("abcdefg     ", ["abcdefgh"], 1 - 1 / 12),     # distance 1 over the reply's raw length 12
    ("ABCDEFG", ["abcdefgh"], 0.875),
    ("", ["x"], 0.0),
    ("J.  Doe", ["J. Doe"], 1.0),
    ("Jd", ["J. Doe", "JD"], 1.0),                   # the best answer
    ("March 17 1998", ["March 17, 1998"], 1 - 1 / 14),
    ("The answer is 4417", ["4417"], 0.0),
    ("ß", ["s"], 0.5),                               # divided by len("ß".upper()) = len("SS") = 2
    ("\n1,250.00\n", ["$1,250.00"], 0.9),            # 1 over the reply's raw length 10
    ("1 250", ["1,250"], 0.8),
    ("n/a", ["N/A", "not applicable"], 1.0),
    ("yes", ["no"], 0.0),
    ("No", ["no"], 1.0),
    ("12", ["12.0"], 0.5),
    ("12.", ["12.0"], 0.75),
]


def tricky_run(tmp: Path, task: str, bench: str, image: Path) -> Run:
    """:data:`TRICKY` replayed through ``task`` on records written to ``<tmp>/data/<bench>/<task>.jsonl``
    (each with ``image``): the results and each question's ``anls``."""
    folder = tmp / "data" / bench
    (folder / "images").mkdir(parents=True)
    shutil.copy(image, folder / "images" / "page.jpg")
    records = [{"questionId": str(1000 + k), "question": f"Question {k}?", "answers": answers, "image": "images/page.jpg"}
               for k, (_, answers, _) in enumerate(TRICKY)]
    (folder / f"{task}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    pred = tmp / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": task, "doc_id": str(1000 + k), "responses": [reply]}) + "\n"
                            for k, (reply, _, _) in enumerate(TRICKY)), encoding="utf-8")
    evaluate(task, f"replay:{pred}", data_dir=tmp / "data", output_path=tmp / "out", use_cache=False)
    results = json.loads((tmp / "out" / "results.json").read_text(encoding="utf-8"))
    per_doc = {s["doc_id"]: s["metrics"]["anls"] for s in read_jsonl(tmp / "out" / "samples" / f"{task}.jsonl")}
    return results, per_doc


def check_by_hand(run: Run, task: str) -> None:
    results, per_doc = run
    assert [per_doc[str(1000 + k)] for k in range(len(TRICKY))] == pytest.approx([100 * s for _, _, s in TRICKY])
    assert results["results"][task]["anls"] == pytest.approx(100 * sum(s for _, _, s in TRICKY) / len(TRICKY))


def check_rrc_script(run: Run, task: str, tmp_path: Path, script: str, dataset_name: str) -> None:
    """The RRC script (``script`` in MMTASKS_REFERENCE_DIR, else skipped) on the same replies."""
    rrc = load_file(reference_dir_file(script, "the RRC's evaluation script, unlicensed, not bundled"))
    gt = {"dataset_name": dataset_name, "data": [{"questionId": 1000 + k, "question": f"Question {k}?", "answers": answers}
                                                 for k, (_, answers, _) in enumerate(TRICKY)]}
    sub = [{"questionId": 1000 + k, "answer": reply} for k, (reply, _, _) in enumerate(TRICKY)]
    (tmp_path / "gt.json").write_text(json.dumps(gt), encoding="utf-8")
    (tmp_path / "sub.json").write_text(json.dumps(sub), encoding="utf-8")
    rrc.validate_data(str(tmp_path / "gt.json"), str(tmp_path / "sub.json"))
    out = rrc.evaluate_method(str(tmp_path / "gt.json"), str(tmp_path / "sub.json"),
                              Namespace(anls_threshold=0.5, answer_types=False))
    results, per_doc = run
    assert {k: 100 * v["score"] for k, v in out["per_sample_result"].items()} == pytest.approx(per_doc)
    assert results["results"][task]["anls"] == pytest.approx(100 * out["result"]["score"])


def check_lmms_eval(run: Run) -> None:
    lmms = load_reference("lmms_eval_anls_75571cf")
    theirs = {str(1000 + k): 100 * lmms.anls(answers, [reply])["anls"] for k, (reply, answers, _) in enumerate(TRICKY)}
    assert theirs == pytest.approx(run[1])


def check_vlmevalkit(run: Run, dataset_name: str) -> None:
    """VLMEvalKit's scoring of ``dataset_name`` (a name its ``hit_calculate`` reads as ANLS)."""
    vlm = load_reference("vlmevalkit_vqa_eval_e8e78f0")
    # its evaluate_heuristic: str() of both columns (a list of answers as its repr), process_line(method="anls")
    res = [vlm.process_line({"answer": str(answers), "prediction": str(reply)}, method="anls")
           for reply, answers, _ in TRICKY]
    hits = [100 * float(h) for h in vlm.hit_calculate(res, dataset_name)]
    assert hits == pytest.approx([run[1][str(1000 + k)] for k in range(len(TRICKY))])


ALPHABET = ["a", "b", "A", "B", "1", " ", "  ", "\n", ".", "ß", "İ", "é"]


def _draw(rng: random.Random, most: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, most)))


def check_drawn_replies(dataset_name: str) -> None:
    """5,000 (reply, answers) pairs drawn (seeded) from an alphabet of cases, spaces, newlines and
    letters whose lower or upper case changes length: the generic anls equals lmms-eval's anls and
    VLMEvalKit's anls_compute + hit_calculate on each (the threshold kept on both sides)."""
    lmms = load_reference("lmms_eval_anls_75571cf")
    vlm = load_reference("vlmevalkit_vqa_eval_e8e78f0")
    rng = random.Random(36)
    kept = 0
    for _ in range(5000):
        answers = [_draw(rng, 6) or "x" for _ in range(rng.randint(1, 3))]
        reply = rng.choice([_draw(rng, 6), rng.choice(answers) + _draw(rng, 2)])
        ours = anls(reply, answers)
        assert ours == pytest.approx(lmms.anls(answers, [reply])["anls"]), (reply, answers)
        line = vlm.process_line({"answer": str(answers), "prediction": str(reply)}, method="anls")
        assert ours == pytest.approx(float(vlm.hit_calculate([line], dataset_name)[0])), (reply, answers)
        kept += 0 < ours < 1
    assert kept > 500  # many partial scores, not only 0 and 1
