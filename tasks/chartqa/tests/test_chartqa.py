"""ChartQA: a replay on the bundled sample to figures computed by hand (the local copy and the Hub
layout), the prompt of the task and of its lmms-eval variant, and a replay of tricky replies whose
figures equal those of the authors' rule (pix2struct's relaxed_correctness), lmms-eval's and
VLMEvalKit's scoring code, each run verbatim (tests/reference/)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from mmtasks.api import evaluate
from mmtasks.scoring.vqa_metrics import relaxed_correct
from tests.folder_runs import SAMPLE, package_unchanged, read_jsonl, results_of, run_copy
from tests.reference_code import load_reference

REFERENCE = Path(__file__).resolve().parent / "reference"


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("chartqa"):
        yield


def load(name: str) -> ModuleType:
    return load_reference(name, REFERENCE)


# --- the sample, by hand ------------------------------------------------------------

#: doc -> reply, on the sample's six questions (gold: 45, Beta, Yes | 19, 15%, 0.43)
SAMPLE_REPLIES = {
    "0": "46",        # human, 45: 1/45 = 2.2% off: right
    "1": "beta ",     # human, Beta: text, the trailing space kept: wrong (VLMEvalKit strips it: right)
    "2": "Yes.",      # human, Yes: the period: wrong
    "3": "20",        # augmented, 19: 1/19 = 5.3% off: wrong
    "4": "0.15",      # augmented, 15% = 0.15: right
    "5": "0.45",      # augmented, 0.43: 0.02/0.43 = 4.7% off: right
}


def check_sample_figures(results: dict, task: str) -> None:
    ours = results["results"][task]
    # the authors' rule: 3 of 6; human 1 of 3; augmented 2 of 3
    assert ours["relaxed"] == pytest.approx(50.0)
    assert ours["relaxed_human"] == pytest.approx(100 / 3)
    assert ours["relaxed_augmented"] == pytest.approx(200 / 3)
    # VLMEvalKit strips "beta ": 4 of 6; human 2 of 3
    theirs = results["variants"][task]["vlmevalkit"]["metrics"]
    assert theirs["relaxed"] == pytest.approx(400 / 6)
    assert theirs["relaxed_human"] == pytest.approx(200 / 3)
    assert theirs["relaxed_augmented"] == pytest.approx(200 / 3)
    by_type = results["breakdowns"][task]["type"]
    assert by_type["human_test"]["relaxed"] == pytest.approx(100 / 3)
    assert by_type["augmented_test"]["relaxed"] == pytest.approx(200 / 3)


@pytest.mark.parametrize("hub", [False, True], ids=["local", "hub"])
def test_chartqa_sample_by_hand(tmp_path: Path, hub: bool) -> None:
    if hub:
        pytest.importorskip("datasets")
    rows = [("chartqa_copy", doc, reply) for doc, reply in SAMPLE_REPLIES.items()]
    proc, out = run_copy(tmp_path, "chartqa", "lmms-lab/ChartQA", rows, hub=hub)
    assert proc.returncode == 0, proc.stderr
    check_sample_figures(results_of(out), "chartqa_copy")
    sample = json.loads((out / "samples" / "chartqa_copy.jsonl").read_text(encoding="utf-8").splitlines()[0])
    parts = sample["prompt"][-1]["content"]
    assert [p["type"] for p in parts] == ["image", "text"]
    assert parts[1]["text"] == "How much were the sales in 2020?\nAnswer the question using a single word or phrase."


def test_chartqa_lmms_eval_prompt(tmp_path: Path) -> None:
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "chartqa_lmms_eval", "doc_id": d, "responses": [r]}) + "\n"
                            for d, r in SAMPLE_REPLIES.items()), encoding="utf-8")
    evaluate("chartqa_lmms_eval", f"replay:{pred}", data_dir=SAMPLE, output_path=tmp_path / "out", use_cache=False)
    out = tmp_path / "out"
    check_sample_figures(json.loads((out / "results.json").read_text(encoding="utf-8")), "chartqa_lmms_eval")
    sample = read_jsonl(out / "samples" / "chartqa_lmms_eval.jsonl")[3]
    assert sample["prompt"][-1]["content"][1]["text"] == (
        "What is the difference between the sales in 2021 and 2019?\nAnswer the question with a single word.")


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    root = SAMPLE / "chartqa"
    hub = datasets.load_dataset(str(root / "hf"), split="test").cast_column("image", datasets.Image(decode=False))
    local = read_jsonl(root / "chartqa.jsonl")
    assert list(hub.features) == ["type", "question", "answer", "image"]
    assert [{k: v for k, v in r.items() if k != "image"} for r in hub] == [
        {k: v for k, v in r.items() if k != "image"} for r in local]
    assert [r["image"]["bytes"] for r in hub] == [(root / r["image"]).read_bytes() for r in local]


# --- tricky replies against the reference code ----------------------------------------

#: (reply, gold answer, half): numbers at and around 5%, percentages, zero, text and whitespace
TRICKY: list[tuple[str, str, str]] = [
    ("45", "45", "human_test"),
    ("46", "45", "human_test"),
    ("47.3", "45", "human_test"),            # 5.1% off
    ("47.25", "45", "augmented_test"),       # 5% off (in floating point)
    ("42.75", "45", "augmented_test"),       # 5% under
    ("45%", "0.45", "augmented_test"),
    ("0.45", "45%", "human_test"),
    ("50 %", "0.5", "augmented_test"),
    (" 45", "45", "human_test"),             # float() reads it
    ("45\n", "45", "augmented_test"),
    ("Yes", "Yes", "human_test"),
    ("yes", "Yes", "human_test"),
    ("Yes.", "Yes", "augmented_test"),
    (" Yes", "Yes", "augmented_test"),       # text: the space counts (VLMEvalKit strips it)
    ("Beta\n", "Beta", "human_test"),
    ("0", "0", "augmented_test"),            # a zero gold answer is compared as text
    ("0.0", "0", "augmented_test"),
    ("1,000", "1000", "human_test"),         # not a float: text
    ("1000", "1,000", "augmented_test"),
    ("1e3", "1000", "human_test"),
    ("1_000", "1000", "human_test"),
    ("nan", "12", "human_test"),
    ("inf", "inf", "augmented_test"),        # inf - inf is nan: wrong
    ("-5", "5", "augmented_test"),
    ("$45", "45", "human_test"),
    ("The answer is 45", "45", "augmented_test"),
    ("", "45", "human_test"),
    ("BETA", "Beta", "augmented_test"),
]


@pytest.fixture(scope="module")
def tricky_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("chartqa")
    folder = tmp / "data" / "chartqa"
    (folder / "images").mkdir(parents=True)
    shutil.copy(SAMPLE / "chartqa" / "images" / "sales.jpg", folder / "images" / "chart.jpg")
    records = [{"type": half, "question": f"Question {k}?", "answer": gold, "image": "images/chart.jpg"}
               for k, (_, gold, half) in enumerate(TRICKY)]
    (folder / "chartqa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    pred = tmp / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "chartqa", "doc_id": str(k), "responses": [reply]}) + "\n"
                            for k, (reply, _, _) in enumerate(TRICKY)), encoding="utf-8")
    evaluate("chartqa", f"replay:{pred}", data_dir=tmp / "data", output_path=tmp / "out", use_cache=False)
    return json.loads((tmp / "out" / "results.json").read_text(encoding="utf-8"))


def _by_half(scores: list[float]) -> dict[str, float]:
    def mean(xs: list[float]) -> float:
        return 100.0 * sum(xs) / len(xs)

    return {"relaxed": mean(scores),
            "relaxed_human": mean([s for s, (_, _, h) in zip(scores, TRICKY) if h == "human_test"]),
            "relaxed_augmented": mean([s for s, (_, _, h) in zip(scores, TRICKY) if h == "augmented_test"])}


def test_tricky_replies_by_hand(tricky_run: dict) -> None:
    # right: 45, 46, 47.25, 42.75, 45%, 0.45, 50 %, " 45", "45\n", Yes, yes, 0, 1e3, 1_000, BETA: 15 of 28
    assert tricky_run["results"]["chartqa"]["relaxed"] == pytest.approx(100 * 15 / 28)


def test_the_authors_rule_is_pix2structs(tricky_run: dict) -> None:
    pix2struct = load("pix2struct_metrics")
    scores = [float(pix2struct.relaxed_correctness(gold, reply)) for reply, gold, _ in TRICKY]
    theirs = _by_half(scores)
    assert theirs["relaxed"] == pytest.approx(pix2struct.aggregate_metrics(
        targets=[[g] for _, g, _ in TRICKY], predictions=[r for r, _, _ in TRICKY],
        metric_fn=pix2struct.relaxed_correctness))
    ours = tricky_run["results"]["chartqa"]
    assert {k: ours[k] for k in theirs} == pytest.approx(theirs)


def test_lmms_eval_scores_as_the_authors(tricky_run: dict) -> None:
    lmms = load("lmms_eval_chartqa_utils")
    rows = [lmms.chartqa_process_results({"type": half, "answer": gold}, [reply]) for reply, gold, half in TRICKY]
    theirs = {name: 100.0 * sum(r[name] for r in rows if name in r) / sum(name in r for r in rows)
              for name in ("relaxed_overall", "relaxed_human_split", "relaxed_augmented_split")}
    ours = tricky_run["results"]["chartqa"]
    assert [ours["relaxed"], ours["relaxed_human"], ours["relaxed_augmented"]] == pytest.approx(
        [theirs["relaxed_overall"], theirs["relaxed_human_split"], theirs["relaxed_augmented_split"]])


def test_the_vlmevalkit_variant_is_vlmevalkits(tricky_run: dict) -> None:
    vlm = load_reference("vlmevalkit_vqa_eval_e8e78f0")
    # its evaluate_heuristic: str() of both columns, process_line(method="relaxed_accuracy"), hit_calculate
    res = [vlm.process_line({"answer": str(gold), "prediction": str(reply)}, method="relaxed_accuracy")
           for reply, gold, _ in TRICKY]
    hits = [float(h) for h in vlm.hit_calculate(res, "ChartQA_TEST")]
    theirs = _by_half(hits)
    ours = tricky_run["variants"]["chartqa"]["vlmevalkit"]["metrics"]
    assert {k: ours[k] for k in theirs} == pytest.approx(theirs)
    # " Yes" and "Beta\n" are the replies the two read differently (float() reads " 45" alike): 2 more right
    assert theirs["relaxed"] == pytest.approx(100 * 17 / 28)


# --- many drawn replies ---------------------------------------------------------------

PIECES = ["0", "1", "5", "9", ".", "%", "-", "e", "_", " ", "\n", "yes", "Yes", "nan", "inf", ","]


def _draw(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 5)))


def _near(rng: random.Random, gold: str) -> str:
    """A number near the gold one (within about 8%), written as a float or a percentage."""
    value = float(gold.rstrip("%")) / (100 if gold.endswith("%") else 1) * rng.uniform(0.92, 1.08)
    return rng.choice([f"{value:.3g}", f"{value * 100:.3g}%", f" {value:.4g}"])


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # VLMEvalKit's istype eval()s each gold answer
def test_relaxed_accuracy_equals_the_references_on_drawn_replies() -> None:
    """5,000 (reply, gold) pairs drawn (seeded): numbers near the gold one, percentages, signs,
    exponents, underscores, nan/inf, text, spaces. The generic relaxed_accuracy equals pix2struct's
    relaxed_correctness and lmms-eval's (reply as given), and with strip VLMEvalKit's process_line."""
    pix2struct = load("pix2struct_metrics")
    lmms = load("lmms_eval_chartqa_utils")
    vlm = load_reference("vlmevalkit_vqa_eval_e8e78f0")
    rng = random.Random(36)
    near = 0
    for _ in range(5000):
        gold = rng.choice([_draw(rng) or "0", f"{rng.uniform(-50, 500):.2f}", f"{rng.randint(1, 99)}%", "Yes"])
        try:
            reply = _near(rng, gold) if rng.random() < 0.5 else _draw(rng)
        except ValueError:  # a gold answer that is no number
            reply = _draw(rng)
        ours = relaxed_correct(reply, gold)
        assert ours == pix2struct.relaxed_correctness(gold, reply), (reply, gold)
        assert ours == lmms.relaxed_correctness(reply, gold), (reply, gold)
        line = vlm.process_line({"answer": str(gold), "prediction": str(reply)}, method="relaxed_accuracy")
        assert relaxed_correct(reply.strip(), gold) == bool(vlm.hit_calculate([line], "ChartQA_TEST")[0]), (reply, gold)
        near += ours and reply.strip() != gold
    assert near > 500  # many numbers right within the tolerance without being the gold text


def test_every_task_of_the_folder_has_a_column_in_its_tab() -> None:
    """A run of any of the folder's tasks (the peer variant too) lands on its tab, not on the
    automatic 'Other tasks' one."""
    import yaml

    from mmtasks.leaderboard.sections import load_section

    folder = Path(__file__).resolve().parents[1]
    tasks = {doc["task"] for f in folder.glob("*.yaml") if f.name != "leaderboard.yaml"
             for doc in [yaml.safe_load(f.read_text(encoding="utf-8"))] if isinstance(doc, dict) and "task" in doc}
    assert "chartqa_lmms_eval" in tasks
    assert tasks <= set(load_section(folder / "leaderboard.yaml").tasks)
