"""TextVQA (val): a replay on the bundled sample to the VQA accuracy computed by hand (the local copy
and the Hub layout); the prompts of the task and its OCR variant equal lmms-eval's
``textvqa_doc_to_text``; and a replay of tricky replies whose per-question scores equal those of
the TextVQA authors' evaluator (MMF's ``TextVQAAccuracyEvaluator``) and lmms-eval's
``textvqa_process_results``, and whose ``vlmevalkit`` variant equals VLMEvalKit's
``process_line``/``hit_calculate``, each run verbatim (tests/reference/)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from mmtasks.api import evaluate
from mmtasks.scoring.vqa_metrics import vqa_accuracy
from tests.folder_runs import SAMPLE, package_unchanged, read_jsonl, results_of, run_copy
from tests.reference_code import load_reference

REFERENCE = Path(__file__).resolve().parent / "reference"
TASK = "textvqa_val"
POST_PROMPT = "\nAnswer the question using a single word or phrase."


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("textvqa"):
        yield


def load(name: str) -> ModuleType:
    return load_reference(name, REFERENCE)


# --- the sample, by hand ------------------------------------------------------------

SAMPLE_REPLIES = {
    34602: "Blue Moon.",  # "blue moon" (6), "the blue moon" (2, the article dropped): 8 of 10 agree: 1
    34603: "42.",         # EvalAI drops the period: 9 of 10 say 42: 1; VLMEvalKit keeps "42.": 0
    34604: "go",          # nobody said it: 0
    34605: "coke",        # 3 said it: left out one of them 2/3 (3 times), one of the others 3/3 (7 times): 0.9
}


@pytest.mark.parametrize("hub", [False, True], ids=["local", "hub"])
def test_textvqa_sample_by_hand(tmp_path: Path, hub: bool) -> None:
    if hub:
        pytest.importorskip("datasets")
    rows = [(f"{TASK}_copy", str(doc), reply) for doc, reply in SAMPLE_REPLIES.items()]
    proc, out = run_copy(tmp_path, "textvqa", "lmms-lab/textvqa", rows, hub=hub)
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    assert results["results"][f"{TASK}_copy"]["acc"] == pytest.approx(100 * (1 + 1 + 0 + 0.9) / 4)
    assert results["variants"][f"{TASK}_copy"]["vlmevalkit"]["metrics"]["acc"] == pytest.approx(100 * 1.9 / 4)


def test_the_prompts_are_lmms_evals(tmp_path: Path) -> None:
    lmms = load("lmms_eval_textvqa")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": t, "doc_id": str(d), "responses": [r]}) + "\n"
                            for t in (TASK, "textvqa_val_ocr") for d, r in SAMPLE_REPLIES.items()), encoding="utf-8")
    evaluate([TASK, "textvqa_val_ocr"], f"replay:{pred}", data_dir=SAMPLE, output_path=tmp_path / "out",
             use_cache=False)
    records = {r["question_id"]: r for r in read_jsonl(SAMPLE / "textvqa" / "textvqa_val.jsonl")}
    for task, ocr in ((TASK, False), ("textvqa_val_ocr", True)):
        for sample in read_jsonl(tmp_path / "out" / "samples" / f"{task}.jsonl"):
            parts = sample["prompt"][-1]["content"]
            assert [p["type"] for p in parts] == ["image", "text"]
            theirs = lmms.textvqa_doc_to_text(records[int(sample["doc_id"])],
                                              {"pre_prompt": "", "post_prompt": POST_PROMPT, "ocr": ocr})
            assert parts[1]["text"] == theirs
    assert parts[1]["text"] == ("What brand is the drink?\nReference OCR token: COCA-COLA, ICE, COLD" + POST_PROMPT)


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    root = SAMPLE / "textvqa"
    hub = datasets.load_dataset(str(root / "hf"), split="validation").cast_column("image", datasets.Image(decode=False))
    local = read_jsonl(root / "textvqa_val.jsonl")
    assert list(hub.features) == ["image_id", "question_id", "question", "question_tokens", "image", "image_width",
                                  "image_height", "flickr_original_url", "flickr_300k_url", "answers", "image_classes",
                                  "set_name", "ocr_tokens"]
    assert [{k: v for k, v in r.items() if k != "image"} for r in hub] == [
        {k: v for k, v in r.items() if k != "image"} for r in local]
    assert [r["image"]["bytes"] for r in hub] == [(root / r["image"]).read_bytes() for r in local]


# --- tricky replies against the reference code ----------------------------------------

COLA = ["coca-cola"] * 4 + ["coca cola"] * 3 + ["coke"] * 3
BUS = ["42"] * 9 + ["forty two"]
JOHN = ["john's"] * 5 + ["johns"] * 5
END = ["the end"] * 10
YES = ["yes"] * 10
TIME = ["10:30"] * 5 + ["10.30"] * 5
DONT = ["dont"] * 5 + ["don't"] * 5
STOP = ["stop"] * 2 + ["go"] * 8
THOUSAND = ["1,000"] * 5 + ["1000"] * 5
SLASH = ["x/y"] * 10
DECIMAL = ["3.5"] * 6 + ["3,5"] * 4

#: (reply, the 10 answers): punctuation around and between words, periods after digits, commas in
#: numbers, number words, articles, contractions and "'s", case, whitespace
TRICKY: list[tuple[str, list[str]]] = [
    ("Coca-Cola", COLA), ("coca cola", COLA), ("COKE.", COLA), ("Coca Cola!", COLA), ("coca - cola", COLA),
    ("forty two", BUS), ("42.", BUS), ("42", BUS), ("Forty-two", BUS),
    ("John's", JOHN), ("johns", JOHN), ("John s", JOHN),
    ("End", END), ("the end.", END), ("An end", END),
    ("Yes, it is", YES), ("yes?", YES), ("yes\n", YES), ("", YES),
    ("10:30", TIME), ("10.30", TIME), ("10.30.", TIME),
    ("Don't", DONT), ("dont", DONT),
    ("stop", STOP), ("Stop\n", STOP), ("go go", STOP),
    ("1000", THOUSAND), ("1,000", THOUSAND), ("1 000", THOUSAND),
    ("x / y", SLASH), ("x/y", SLASH), ("(x/y)", SLASH),
    ("3.5", DECIMAL), ("3,5", DECIMAL), ("three point five", DECIMAL),
    # a comma between words: EvalAI removes it first ("cocacola", no one's answer); vqaEval.py alone
    # would make it a space ("coca cola", seven agree)
    ("coca,cola", COLA),
]


@pytest.fixture(scope="module")
def tricky_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, float], dict[str, float], dict]:
    tmp = tmp_path_factory.mktemp("textvqa")
    folder = tmp / "data" / "textvqa"
    (folder / "images").mkdir(parents=True)
    shutil.copy(SAMPLE / "textvqa" / "images" / "00685bc495504d61.jpg", folder / "images" / "photo.jpg")
    records = [{"question_id": 1000 + k, "question": f"question {k}?", "answers": answers, "ocr_tokens": ["X"],
                "image": "images/photo.jpg"} for k, (_, answers) in enumerate(TRICKY)]
    (folder / "textvqa_val.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    pred = tmp / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": TASK, "doc_id": str(1000 + k), "responses": [reply]}) + "\n"
                            for k, (reply, _) in enumerate(TRICKY)), encoding="utf-8")
    evaluate(TASK, f"replay:{pred}", data_dir=tmp / "data", output_path=tmp / "out", use_cache=False)
    samples = read_jsonl(tmp / "out" / "samples" / f"{TASK}.jsonl")
    ours = {s["doc_id"]: s["metrics"]["acc"] for s in samples}
    variant = {s["doc_id"]: s["extra"]["variants"]["vlmevalkit"]["metrics"]["acc"] for s in samples}
    return ours, variant, json.loads((tmp / "out" / "results.json").read_text(encoding="utf-8"))


def test_the_authors_evaluator_scores_as_the_task(tricky_run: tuple[dict[str, float], dict[str, float], dict]) -> None:
    mmf = load("mmf_m4c_evaluators")
    evaluator = mmf.TextVQAAccuracyEvaluator()
    theirs = {str(1000 + k): 100 * evaluator.eval_pred_list([{"pred_answer": reply, "gt_answers": answers}])
              for k, (reply, answers) in enumerate(TRICKY)}
    ours, _, results = tricky_run
    assert ours == pytest.approx(theirs)
    whole = evaluator.eval_pred_list([{"pred_answer": r, "gt_answers": a} for r, a in TRICKY])
    assert results["results"][TASK]["acc"] == pytest.approx(100 * whole)
    # by hand, three of them: "42." is 42 (9 agree: 1); "forty two" is "forty 2" (1 agrees: 9/10 * 1/3);
    # "John s" is "john s", nobody's answer (EvalAI splits "john's" into "john 's"): 0
    assert [ours["1006"], ours["1005"], ours["1011"]] == pytest.approx([100.0, 30.0, 0.0])


def test_lmms_eval_scores_as_the_authors(tricky_run: tuple[dict[str, float], dict[str, float], dict]) -> None:
    lmms = load("lmms_eval_textvqa")
    theirs = {str(1000 + k): 100 * lmms.textvqa_process_results({"answers": list(answers), "question_id": k},
                                                                [reply])["exact_match"]
              for k, (reply, answers) in enumerate(TRICKY)}
    assert tricky_run[0] == pytest.approx(theirs)


def test_the_vlmevalkit_variant_is_vlmevalkits(tricky_run: tuple[dict[str, float], dict[str, float], dict]) -> None:
    vlm = load_reference("vlmevalkit_vqa_eval_e8e78f0")
    # its evaluate_heuristic: str() of both columns (the answers as the list's repr), process_line(method="vqa_score")
    res = [vlm.process_line({"answer": str(answers), "prediction": str(reply)}, method="vqa_score")
           for reply, answers in TRICKY]
    theirs = {str(1000 + k): 100 * float(h) for k, h in enumerate(vlm.hit_calculate(res, "TextVQA_VAL"))}
    ours, variant, results = tricky_run
    assert variant == pytest.approx(theirs)
    assert results["variants"][TASK]["vlmevalkit"]["metrics"]["acc"] == pytest.approx(sum(theirs.values()) / len(TRICKY))
    # the replies the two normalisations score differently here: "42." and "10.30.", a period after a digit,
    # and "coca,cola", a comma between words (EvalAI removes it, VLMEvalKit makes it a space; EvalAI's "'s"
    # split and comma removal change the reply and the answers alike on the other answers)
    differ = sorted(k for k in ours if ours[k] != pytest.approx(variant[k]))
    assert differ == ["1006", "1021", "1036"]
    assert (ours["1021"], variant["1021"]) == pytest.approx((100.0, 0.0))
    assert (ours["1036"], variant["1036"]) == pytest.approx((0.0, 100.0))


# --- many replies drawn from the normalisation's edge cases ---------------------------------

PIECES = ["the", "a", "an", "two", "none", "ten", "dont", "cant", "isnt", "John's", "it's", "somebody'd", "yall'll",
          "3.", "3.5", "1,000", "1,2", "10:30", "x/y", "x / y", "(a)", "co-op", "-", "?", "!", ",", ".", ";", "\"",
          "@", "`", "\\", "_", "Stop", "STOP", "stop", "go", "\n", "\t", " ", "42", "42.", "forty"]


def _draw(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", " "]) for _ in range(rng.randint(0, 4)))


def test_the_metric_equals_the_reference_processors_on_drawn_replies() -> None:
    """3,000 replies drawn (seeded) from pieces that exercise every normalisation step, each against
    ten answers drawn the same way (some repeated, so that matches of 1-10 occur): the task's metric
    equals MMF's evaluator (evalai) and VLMEvalKit's process_line/hit_calculate (vlmevalkit) on each."""
    mmf = load("mmf_m4c_evaluators").TextVQAAccuracyEvaluator()
    vlm = load_reference("vlmevalkit_vqa_eval_e8e78f0")
    rng = random.Random(36)
    differ = 0
    for _ in range(3000):
        pool = [_draw(rng) for _ in range(3)]
        answers = [rng.choice(pool) for _ in range(10)]
        reply = rng.choice([*pool, _draw(rng)])
        # the same answer written otherwise: case, a final mark, an article, "'s", a comma, spaces
        reply = rng.choice([reply, reply.upper(), reply + ".", reply + "?", "the " + reply, reply + "'s",
                            reply.replace(" ", ", "), reply.replace(" ", "  "), " " + reply + "\n"])
        ours = vqa_accuracy(reply, answers, "evalai")
        assert ours == pytest.approx(mmf.eval_pred_list([{"pred_answer": reply, "gt_answers": answers}])), (reply, answers)
        line = vlm.process_line({"answer": str(answers), "prediction": str(reply)}, method="vqa_score")
        theirs = float(vlm.hit_calculate([line], "TextVQA_VAL")[0])
        assert vqa_accuracy(reply, answers, "vlmevalkit") == pytest.approx(theirs), (reply, answers)
        differ += ours != pytest.approx(theirs)
    # the two normalisations part on 11 of these 3,000: mostly a period after a digit ("42.", "3.5."), and
    # a comma between digits, which makes VLMEvalKit's punctuation rule drop every mark ("x/y 1,2" ->
    # "xy 12") where EvalAI has removed the comma first ("x y 12"): rare, but real
    assert differ == 11
