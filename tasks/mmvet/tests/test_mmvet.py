"""MM-Vet from a copy of its folder (local and Hub layout): replayed replies, replayed judge verdicts,
totals computed by hand; the same replies and verdicts through the authors' mm-vet_evaluator.py
(runs and export_result, with a scripted client), lmms-eval's and VLMEvalKit's MM-Vet code, all run
verbatim (reference/ beside this file), give the same prompts, scores and totals."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from tests.folder_runs import SAMPLE, hub_folder, package_unchanged, plugin, read_jsonl, results_of, samples_of
from tests.folder_runs import run_mmtasks

REFERENCE = Path(__file__).parent / "reference"
RECORDS = {r["question_id"]: r for r in read_jsonl(SAMPLE / "mmvet" / "mmvet.jsonl")}


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mmvet"):
        yield


#: doc -> (the model's reply, the judge's reply); v1_4's judge never gives a number: after the
#: re-asks it scores 0, as the authors' five tries do
REPLIES = {
    "v1_0": ("The shape is blue.", "1.0"),
    "v1_1": ("OPEN", "0.5"),
    "v1_2": ("12 dollars", "0.0"),
    "v1_3": ("A red square", "0.8 The prediction names both."),
    "v1_4": ("x is -1", "Correct"),
    "v1_5": ("It is a funny sign.", "0.3"),
}
#: score x100 per doc: 100, 50, 0, 80, 0 (judge failure), 30; capabilities as the sample's records
EXPECTED = {
    "total": (100 + 50 + 0 + 80 + 0 + 30) / 6,   # 43.33
    "rec": (100 + 80 + 30) / 3,                  # v1_0, v1_3, v1_5
    "ocr": (50 + 0 + 0 + 30) / 4,                # v1_1, v1_2, v1_4, v1_5
    "know": 30.0, "gen": 30.0,                   # v1_5
    "spat": (80 + 0) / 2,                        # v1_3, v1_4
    "math": (0 + 0) / 2,                         # v1_2, v1_4
    "score": (100 + 50 + 0 + 80 + 30) / 5,       # the judged questions only
}
#: the variant vlmevalkit: v1_0 (rec alone) and v1_1 (ocr alone) count twice in their capability
VLMEVALKIT = {"rec": (100 + 100 + 80 + 30) / 4, "ocr": (50 + 50 + 0 + 0 + 30) / 5}


def run_copy(tmp_path: Path, *, hub: bool = False, tasks: tuple[str, ...] = ("mmvet",)) -> tuple[subprocess.CompletedProcess, Path]:
    """Run a copy of the folder (every task NAME renamed NAME_copy) on ``tasks`` with REPLIES replayed
    as the model's answers and the judge's replies."""
    import shutil

    folder = tmp_path / "tasks" / "mmvet_copy"
    shutil.copytree(Path(__file__).parents[1], folder, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    (folder / "leaderboard.yaml").unlink()
    for yaml_file in folder.glob("*.yaml"):
        text = yaml_file.read_text(encoding="utf-8")
        text = text.replace(f"task: {yaml_file.stem}\n", f"task: {yaml_file.stem}_copy\n")
        if hub:
            text = text.replace("path: lmms-lab/MMVet", f"path: {hub_folder('mmvet', 'hf')}")
        yaml_file.write_text(text, encoding="utf-8")

    def lines(k: int) -> str:
        return "".join(json.dumps({"task": f"{t}_copy", "doc_id": d, "responses": [r[k]]}) + "\n"
                       for t in tasks for d, r in REPLIES.items())

    (tmp_path / "model.jsonl").write_text(lines(0), encoding="utf-8")
    (tmp_path / "judge.jsonl").write_text(lines(1), encoding="utf-8")
    out = tmp_path / "out"
    data = [] if hub else ["--data-dir", str(SAMPLE)]
    proc = run_mmtasks(["--tasks", ",".join(f"{t}_copy" for t in tasks), "--include-path", str(folder.parent), *data,
                        "--model", f"replay:{tmp_path / 'model.jsonl'}", "--judge", f"replay:{tmp_path / 'judge.jsonl'}",
                        "--output-path", str(out)], tmp_path)
    return proc, out


def check(proc: subprocess.CompletedProcess, out: Path) -> dict:
    assert proc.returncode == 1, proc.stderr  # the one judge failure is a counted problem
    results = results_of(out)
    res = results["results"]["mmvet_copy"]
    assert {k: round(res[k], 4) for k in EXPECTED} == {k: round(v, 4) for k, v in EXPECTED.items()}
    assert results["problems"]["mmvet_copy"]["judge_failures"] == 1
    variant = results["variants"]["mmvet_copy"]["vlmevalkit"]["metrics"]
    assert {k: round(variant[k], 4) for k in EXPECTED} == {k: round(VLMEVALKIT.get(k, v), 4) for k, v in EXPECTED.items()}
    by_set = results["breakdowns"]["mmvet_copy"]["capabilities"]
    assert {k: v["n"] for k, v in by_set.items()} == {"rec": 1, "ocr": 1, "ocr_math": 1, "rec_spat": 1,
                                                     "ocr_spat_math": 1, "rec_ocr_know_gen": 1}
    return samples_of(out, "mmvet_copy")


def authors_judge_prompt(evaluator: ModuleType, qid: str) -> str:
    """The prompt runs() of mm-vet_evaluator.py builds for a question (its first try)."""
    line, pred = RECORDS[qid], REPLIES[qid][0]
    return (evaluator.prompt + "\n" + " | ".join(
        [line["question"], line["answer"].replace("<AND>", " <AND> ").replace("<OR>", " <OR> "), pred, ""]))


def test_mmvet_from_the_local_sample(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path)
    samples = check(proc, out)
    evaluator = load("mm_vet_evaluator_acde843")
    for qid in REPLIES:
        (judged,) = [j for j in samples[qid]["judge"] if j["prompt"]][:1]
        text = "".join(p["text"] for p in judged["prompt"][-1]["content"] if p["type"] == "text")
        assert text == authors_judge_prompt(evaluator, qid), qid
    # the model saw the image, then the question as it is
    parts = samples["v1_2"]["prompt"][-1]["content"]
    assert [p["type"] for p in parts] == ["image", "text"] and parts[1]["text"] == RECORDS["v1_2"]["question"]


def test_mmvet_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    proc, out = run_copy(tmp_path, hub=True)
    check(proc, out)


# --- the peers' code, verbatim ---------------------------------------------------------------------

def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"reference_mmvet_{name}", REFERENCE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ScriptedClient:
    """The OpenAI client runs() calls: replies by question (found by its line in the prompt)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, *, model: str, max_tokens: int, temperature: float, messages: list[dict]):
        prompt = messages[-1]["content"]
        self.calls.append((prompt, temperature))
        # (the question alone is ambiguous: "What is x in the equation?" is also a few-shot example)
        (qid,) = [q for q, r in RECORDS.items() if f"\n{r['question']} | " in prompt and f" | {REPLIES[q][0]} | " in prompt]
        message = SimpleNamespace(content=REPLIES[qid][1])
        return SimpleNamespace(model=model, choices=[SimpleNamespace(message=message)])


def test_the_authors_evaluator_gives_the_same_scores_and_totals(tmp_path: Path, capsys) -> None:
    evaluator = load("mm_vet_evaluator_acde843")
    mmvet = tmp_path / "mm-vet"
    mmvet.mkdir()
    # mm-vet.json: id -> {imagename, capability (a list), question, answer}
    (mmvet / "mm-vet.json").write_text(json.dumps({
        q: {"imagename": f"{q}.jpg", "capability": r["capability"].split(","), "question": r["question"],
            "answer": r["answer"]} for q, r in RECORDS.items()}), encoding="utf-8")
    (tmp_path / "model.json").write_text(json.dumps({q: r[0] for q, r in REPLIES.items()}), encoding="utf-8")
    args = argparse.Namespace(mmvet_path=str(mmvet), result_file=str(tmp_path / "model.json"),
                              result_path=str(tmp_path), gpt_model="gpt-4-0613", prompt=evaluator.prompt,
                              use_sub_set=False, decimal_places=1, num_run=1)
    client = ScriptedClient()
    evaluator.client = client
    meta = evaluator.load_metadata(args)
    sub_set, sub_set_name, data, counter, cap_set_list, cap_set_counter, len_data, df, df2, cap_set_names = meta
    grade_file, cap_score_file, cap_int_score_file = evaluator.get_file_names(args, "model", sub_set_name)
    grades = evaluator.runs(args, grade_file, data, len_data, sub_set)
    # export_result reads these as the __main__ block leaves them
    evaluator.__dict__.update(sub_set=sub_set, counter=counter, len_data=len_data, cap_set_list=cap_set_list,
                              cap_score_file=cap_score_file, cap_int_score_file=cap_int_score_file)
    df, df2 = evaluator.export_result(args, "model", df, df2, grades, data, cap_set_counter, cap_set_names)
    theirs = df.loc["model"]
    for name, value in EXPECTED.items():
        if name != "score":
            assert theirs[name] == round(value, 1), name
    assert {q: g["score"][0] * 100 for q, g in grades.items()} == {"v1_0": 100, "v1_1": 50, "v1_2": 0, "v1_3": 80,
                                                                  "v1_4": 0, "v1_5": 30}
    # their first prompt for each question is ours; v1_4 was asked five more times (then 0.0)
    firsts = {q: authors_judge_prompt(evaluator, q) for q in REPLIES}
    assert [p for p, _ in client.calls if p in firsts.values()] == list(firsts.values())
    assert len(client.calls) == 6 + 5
    # the capability integration table: the same sets, counted as ours
    assert {frozenset(c.split("_")) for c in df2.columns[:-3]} == {
        frozenset(c.split("_")) for c in ("rec", "ocr", "ocr_math", "rec_spat", "ocr_spat_math", "rec_ocr_know_gen")}


def test_lmms_eval_and_vlmevalkit_aggregate_as_the_authors(monkeypatch) -> None:
    """The same per-question scores, aggregated by lmms-eval's mmvet_aggregate_results and VLMEvalKit's
    MMVet_acc: the same total and capability scores (their differences are the judge and its prompt)."""
    import pandas as pd

    scores = {"v1_0": 1.0, "v1_1": 0.5, "v1_2": 0.0, "v1_3": 0.8, "v1_4": 0.0, "v1_5": 0.3}
    lmms = load("mmvet_utils_75571cf")
    results = [{"question_id": q, "question": RECORDS[q]["question"], "gt_answer": RECORDS[q]["answer"],
                "capabilities": RECORDS[q]["capability"], "pred_answer": REPLIES[q][0], "score": s, "eval_model": "x"}
               for q, s in scores.items()]
    assert lmms.mmvet_aggregate_results(results) == pytest.approx(EXPECTED["total"])
    # it logs the capabilities, then the capability sets ("rec" twice: the capability, then the set {rec})
    logged: dict[str, str] = {}
    for line in lmms.eval_logger.lines:
        if line.startswith("Score for "):
            name, value = line.removeprefix("Score for ").split(": ")
            logged.setdefault(name, value)
    for cap in ("rec", "ocr", "know", "gen", "spat", "math"):
        assert float(logged[cap]) == round(EXPECTED[cap], 2), cap

    vlm = load("mmvet_e8e78f0")
    frame = pd.DataFrame({"category": [RECORDS[q]["capability"] for q in scores], "score": list(scores.values())})
    res, res2 = vlm.MMVet_acc(frame)
    acc = dict(zip(res["Category"], res["acc"]))
    assert acc.pop("Overall") == pytest.approx(EXPECTED["total"])
    # VLMEvalKit counts a question of one capability twice in it (v1_0 in rec, v1_1 in ocr): the variant
    assert acc == pytest.approx({k: VLMEVALKIT.get(k, EXPECTED[k]) for k in ("rec", "ocr", "know", "gen", "spat", "math")})
    assert acc != pytest.approx({k: EXPECTED[k] for k in acc})


@pytest.mark.parametrize(("reply", "authors", "vlmevalkit"), [
    ("0.5", 0.5, 0.5), ("1.0", 1.0, 1.0), ("0", 0.0, 0.0), ("0.8 The prediction names both.", 0.8, None),
    ("0.7\n", 0.7, 0.7), ("1.5", None, None), ("-0.1", None, None), ("Correct", None, None), ("", None, None),
    (" 0.6", None, 0.6), ("0.6.", None, None), ("nan", None, None),
])
def test_verdict_readings(reply: str, authors: float | None, vlmevalkit: float | None) -> None:
    """The authors' (and lmms-eval's) first token, VLMEvalKit's whole reply, each as their code reads it."""
    registry, path = plugin("mmvet", "mmvet_scoring.py")
    for name, expected in (("mmvet_correctness", authors), ("mmvet_correctness_whole", vlmevalkit)):
        spec = registry.verdict_parsers.get(name, plugins=[path])
        fields = getattr(spec, "fn", spec)(reply, {})
        assert (None if fields is None else fields["score"]) == expected, name
    # the authors' expression (runs(): content.split(" ")[0].strip(), 0 <= score <= 1) and VLMEvalKit's float_cvt
    try:
        theirs = float(reply.split(" ")[0].strip())
        theirs = theirs if 0.0 <= theirs <= 1.0 else None
    except ValueError:
        theirs = None
    assert theirs == authors


# --- the peers' own runs: task variants ------------------------------------------------------------

def judge_prompt_of(sample: dict) -> str:
    judged = [j for j in sample["judge"] if j["prompt"]][0]
    return "".join(p["text"] for p in judged["prompt"][-1]["content"] if p["type"] == "text")


def score_of(sample: dict) -> float:
    """The sample's score on 0-1 (a judge failure: 0, as every harness counts it)."""
    value = sample["metrics"].get("score")
    return 0.0 if value is None else value / 100.0


def test_the_peers_task_variants_judge_as_their_code(tmp_path: Path, monkeypatch) -> None:
    """mmvet_lmms_eval and mmvet_vlmevalkit on the same answers and judge replies: the judge prompt, the
    score of each question and the totals are those of lmms-eval's mmvet_process_results and
    mmvet_aggregate_results, and of VLMEvalKit's build_mmvet_gpt4_prompt, MMVet_auxeval and MMVet_acc."""
    import pandas as pd

    proc, out = run_copy(tmp_path, tasks=("mmvet_lmms_eval", "mmvet_vlmevalkit"))
    assert proc.returncode == 1, proc.stderr  # judge failures: v1_4 in both, v1_3 in VLMEvalKit's reading
    results = results_of(out)

    # lmms-eval: its prompt f-string, its first-token reading (the scripted judge answers every call alike)
    lmms = load("mmvet_utils_75571cf")
    monkeypatch.setattr(lmms, "time", SimpleNamespace(sleep=lambda seconds: None))
    samples = samples_of(out, "mmvet_lmms_eval_copy")
    theirs = []
    for qid, (answer, verdict) in REPLIES.items():
        asked: list[str] = []
        lmms.get_chat_response = lambda prompt, temperature=0.0, v=verdict: (asked.append(prompt), (v, "judge"))[1]
        doc = {**RECORDS[qid], "capability": RECORDS[qid]["capability"]}
        result = lmms.mmvet_process_results(doc, [answer])["gpt_eval_score"]
        assert judge_prompt_of(samples[qid]) == asked[0], qid
        assert score_of(samples[qid]) == result["score"], qid
        theirs.append({**result, "capabilities": RECORDS[qid]["capability"]})
    res = results["results"]["mmvet_lmms_eval_copy"]
    assert res["total"] == pytest.approx(lmms.mmvet_aggregate_results(theirs)) == pytest.approx(EXPECTED["total"])
    # the model was asked to reason step by step first (lmms-eval's pre_prompt)
    parts = samples["v1_2"]["prompt"][-1]["content"]
    assert parts[1]["text"] == lmms.doc_to_text(RECORDS["v1_2"], {
        "pre_prompt": "First please perform reasoning, and think step by step to provide best answer to the following question: \n\n",
        "post_prompt": ""})

    # VLMEvalKit: its prompt, float() of the whole reply ("0.8 The prediction ..." is no score: 0 after five tries)
    vlm = load("mmvet_e8e78f0")
    samples = samples_of(out, "mmvet_vlmevalkit_copy")
    scores = {}
    for qid, (answer, verdict) in REPLIES.items():
        line = {"question": RECORDS[qid]["question"], "answer": RECORDS[qid]["answer"], "prediction": answer}
        assert judge_prompt_of(samples[qid]) == vlm.build_mmvet_gpt4_prompt(line), qid
        model = SimpleNamespace(generate=lambda prompt, temperature=0.0, v=verdict: v)
        scores[qid] = vlm.MMVet_auxeval(model, line)["score"]
        assert score_of(samples[qid]) == scores[qid], qid
    assert scores["v1_3"] == 0.0
    frame = pd.DataFrame({"category": [RECORDS[q]["capability"] for q in scores], "score": list(scores.values())})
    acc = dict(zip(*vlm.MMVet_acc(frame)[0][["Category", "acc"]].T.values))
    res = results["results"]["mmvet_vlmevalkit_copy"]
    assert res["total"] == pytest.approx(acc.pop("Overall")) == pytest.approx((100 + 50 + 0 + 0 + 0 + 30) / 6)
    assert {k: res[k] for k in acc} == pytest.approx(acc)
    assert res["rec"] == pytest.approx((100 + 100 + 0 + 30) / 4)   # v1_0 twice, v1_3 now 0
