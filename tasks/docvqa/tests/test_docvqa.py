"""DocVQA (val): a replay on the bundled sample to the ANLS computed by hand (the local copy and the
Hub layout), and a replay of tricky replies whose per-question scores and mean equal those of the
Robust Reading Competition's evaluation script (read from MMTASKS_REFERENCE_DIR: it carries no
license), of lmms-eval's ``anls`` and of VLMEvalKit's ``process_line``/``hit_calculate`` (both
bundled verbatim in tests/reference/)."""

from __future__ import annotations

import json
import random
import shutil
from argparse import Namespace
from pathlib import Path
from types import ModuleType

import pytest

from mmtasks.api import evaluate
from mmtasks.scoring.vqa_metrics import anls
from tests.folder_runs import SAMPLE, package_unchanged, read_jsonl, results_of, run_copy
from tests.reference_code import load_file, load_reference, reference_dir_file

REFERENCE = Path(__file__).resolve().parent / "reference"
TASK = "docvqa_val"

#: the RRC evaluation script has no license, so it is not redistributed: the test comparing with it
#: reads it from MMTASKS_REFERENCE_DIR (the file as downloaded from docvqa.org / rrc.cvc.uab.es; the
#: copy in github.com/QwenLM/Qwen-VL eval_mm/infographicsvqa_eval.py at
#: aa00ed04091eea5fcdd32985e7915f1c53e7d599 is the same script) and is skipped without it
RRC_SCRIPT = "infographicsvqa_eval.py"


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("docvqa"):
        yield


def load(name: str) -> ModuleType:
    if name == "rrc":
        return load_file(reference_dir_file(RRC_SCRIPT, "the RRC's evaluation script, unlicensed, not bundled"))
    return load_reference(name, REFERENCE)


# --- the sample, by hand ------------------------------------------------------------

SAMPLE_REPLIES = {
    "49153": "4417",          # 4417: 1
    "49154": "03/17/1998",    # 03/17/98: 2 insertions over 10 characters: 0.8
    "49155": "1250",          # 1,250.00: 4 over 8: 0.5, at the threshold, kept ($1,250.00: 0.44)
    "57349": " j.  doe ",     # J. Doe: the same once lowercased and whitespace collapsed: 1
    "57350": "Budget",        # budget review: 7 over 13: 0.46, below 0.5: 0
}


@pytest.mark.parametrize("hub", [False, True], ids=["local", "hub"])
def test_docvqa_sample_by_hand(tmp_path: Path, hub: bool) -> None:
    if hub:
        pytest.importorskip("datasets")
    rows = [(f"{TASK}_copy", doc, reply) for doc, reply in SAMPLE_REPLIES.items()]
    proc, out = run_copy(tmp_path, "docvqa", "lmms-lab/DocVQA", rows, hub=hub)
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    # (1 + 0.8 + 0.5 + 1 + 0) / 5
    assert results["results"][f"{TASK}_copy"]["anls"] == pytest.approx(66.0)
    sample = json.loads((out / "samples" / f"{TASK}_copy.jsonl").read_text(encoding="utf-8").splitlines()[0])
    parts = sample["prompt"][-1]["content"]
    assert [p["type"] for p in parts] == ["image", "text"]
    assert parts[1]["text"] == "What is the invoice number?\nAnswer the question using a single word or phrase."


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    root = SAMPLE / "docvqa"
    hub = datasets.load_dataset(str(root / "hf"), "DocVQA", split="validation")
    hub = hub.cast_column("image", datasets.Image(decode=False))
    local = read_jsonl(root / "docvqa_val.jsonl")
    assert list(hub.features) == ["questionId", "question", "question_types", "image", "docId", "ucsf_document_id",
                                  "ucsf_document_page_no", "answers", "data_split"]
    assert [{k: v for k, v in r.items() if k != "image"} for r in hub] == [
        {k: v for k, v in r.items() if k != "image"} for r in local]
    assert [r["image"]["bytes"] for r in hub] == [(root / r["image"]).read_bytes() for r in local]


# --- tricky replies against the reference code ----------------------------------------

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


@pytest.fixture(scope="module")
def tricky_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict[str, float]]:
    tmp = tmp_path_factory.mktemp("docvqa")
    folder = tmp / "data" / "docvqa"
    (folder / "images").mkdir(parents=True)
    shutil.copy(SAMPLE / "docvqa" / "images" / "txpp0227_3.jpg", folder / "images" / "page.jpg")
    records = [{"questionId": str(1000 + k), "question": f"Question {k}?", "answers": answers, "image": "images/page.jpg"}
               for k, (_, answers, _) in enumerate(TRICKY)]
    (folder / "docvqa_val.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    pred = tmp / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": TASK, "doc_id": str(1000 + k), "responses": [reply]}) + "\n"
                            for k, (reply, _, _) in enumerate(TRICKY)), encoding="utf-8")
    evaluate(TASK, f"replay:{pred}", data_dir=tmp / "data", output_path=tmp / "out", use_cache=False)
    results = json.loads((tmp / "out" / "results.json").read_text(encoding="utf-8"))
    per_doc = {s["doc_id"]: s["metrics"]["anls"] for s in read_jsonl(tmp / "out" / "samples" / f"{TASK}.jsonl")}
    return results, per_doc


def test_tricky_replies_by_hand(tricky_run: tuple[dict, dict[str, float]]) -> None:
    results, per_doc = tricky_run
    assert [per_doc[str(1000 + k)] for k in range(len(TRICKY))] == pytest.approx([100 * s for _, _, s in TRICKY])
    assert results["results"][TASK]["anls"] == pytest.approx(100 * sum(s for _, _, s in TRICKY) / len(TRICKY))


def test_the_rrc_script_scores_as_the_task(tricky_run: tuple[dict, dict[str, float]], tmp_path: Path) -> None:
    rrc = load("rrc")
    gt = {"dataset_name": "docvqa", "data": [{"questionId": 1000 + k, "question": f"Question {k}?", "answers": answers}
                                             for k, (_, answers, _) in enumerate(TRICKY)]}
    sub = [{"questionId": 1000 + k, "answer": reply} for k, (reply, _, _) in enumerate(TRICKY)]
    (tmp_path / "gt.json").write_text(json.dumps(gt), encoding="utf-8")
    (tmp_path / "sub.json").write_text(json.dumps(sub), encoding="utf-8")
    rrc.validate_data(str(tmp_path / "gt.json"), str(tmp_path / "sub.json"))
    out = rrc.evaluate_method(str(tmp_path / "gt.json"), str(tmp_path / "sub.json"),
                              Namespace(anls_threshold=0.5, answer_types=False))
    results, per_doc = tricky_run
    assert {k: 100 * v["score"] for k, v in out["per_sample_result"].items()} == pytest.approx(per_doc)
    assert results["results"][TASK]["anls"] == pytest.approx(100 * out["result"]["score"])


def test_lmms_eval_scores_as_the_task(tricky_run: tuple[dict, dict[str, float]]) -> None:
    lmms = load_reference("lmms_eval_anls_75571cf")
    theirs = {str(1000 + k): 100 * lmms.anls(answers, [reply])["anls"] for k, (reply, answers, _) in enumerate(TRICKY)}
    assert theirs == pytest.approx(tricky_run[1])


def test_vlmevalkit_scores_as_the_task(tricky_run: tuple[dict, dict[str, float]]) -> None:
    vlm = load_reference("vlmevalkit_vqa_eval_e8e78f0")
    # its evaluate_heuristic: str() of both columns (a list of answers as its repr), process_line(method="anls")
    res = [vlm.process_line({"answer": str(answers), "prediction": str(reply)}, method="anls")
           for reply, answers, _ in TRICKY]
    hits = [100 * float(h) for h in vlm.hit_calculate(res, "DocVQA_VAL")]
    assert hits == pytest.approx([tricky_run[1][str(1000 + k)] for k in range(len(TRICKY))])


# --- many drawn replies ---------------------------------------------------------------

ALPHABET = ["a", "b", "A", "B", "1", " ", "  ", "\n", ".", "ß", "İ", "é"]


def _draw(rng: random.Random, most: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, most)))


def test_anls_equals_the_references_on_drawn_replies() -> None:
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
        assert ours == pytest.approx(float(vlm.hit_calculate([line], "DocVQA_VAL")[0])), (reply, answers)
        kept += 0 < ours < 1
    assert kept > 500  # many partial scores, not only 0 and 1
