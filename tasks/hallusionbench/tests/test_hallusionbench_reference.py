"""HallusionBench against its authors' utils.py and lmms-eval's, both bundled and run verbatim.

The authors' ``evaluate_by_chatgpt`` is run with a scripted judge (a stand-in for the ``openai`` module
that answers each prompt with the judge reply of ``hb_replies.py`` and keeps the prompt): the prompts it
writes are the ones the task sends its judge, its verdicts are the task's, and ``assign_correctness``,
``get_eval_all``, ``get_eval_fig``, ``get_eval_pair_all`` give the task's aAcc, fAcc and qAcc. lmms-eval's
functions on the image split give the ``lmms_eval`` variant's.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
import types
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from hb_replies import AUTHORS, LMMS_EVAL, REPLIES
from tests.folder_runs import (SAMPLE, copy_bench_files, plugin, predictions, read_jsonl, results_of, run_mmtasks,
                               samples_of)

REFERENCE = Path(__file__).parent / "reference"
ENTRY, CHECK = "model_prediction", "gpt4v_output_gpt_check"


class ScriptedJudge:
    """``openai.ChatCompletion.create`` as utils.py calls it: the judge replies in order for the
    correctness prompts; "same" for the consistency prompts (check_same_by_chatgpt)."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def create(self, model: str, messages: list[dict[str, str]], **kwargs: Any) -> dict[str, Any]:
        prompt = messages[0]["content"]
        if "Thoroughly read the two responses" in prompt:
            return {"choices": [{"message": {"content": "same"}}]}
        assert model == "gpt-4"
        self.prompts.append(prompt)
        return {"choices": [{"message": {"content": self.replies.pop(0)}}]}


def load(name: str, monkeypatch: pytest.MonkeyPatch, judge: ScriptedJudge | None = None) -> ModuleType:
    openai = types.ModuleType("openai")
    openai.ChatCompletion = judge  # type: ignore[attr-defined]
    prettytable = types.ModuleType("prettytable")
    prettytable.PrettyTable = object  # type: ignore[attr-defined]
    loguru = types.ModuleType("loguru")
    loguru.logger = types.SimpleNamespace(info=lambda *a: None, error=lambda *a: None)  # type: ignore[attr-defined]
    for mod, stub in (("openai", openai), ("prettytable", prettytable), ("loguru", loguru)):
        monkeypatch.setitem(sys.modules, mod, stub)
    spec = importlib.util.spec_from_file_location(f"reference_{name}", REFERENCE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def records() -> list[dict[str, Any]]:
    """The sample's records with the model's replies, in the authors' order (VD, then VS)."""
    rows = []
    for r in read_jsonl(SAMPLE / "hallusionbench" / "hallusionbench.jsonl"):
        key = "_".join(r[f] for f in ("category", "subcategory", "set_id", "figure_id", "question_id"))
        rows.append({**{k: v for k, v in r.items() if k != "image"}, ENTRY: REPLIES[key][0], "key": key})
    return [r for r in rows if r["category"] == "VD"] + [r for r in rows if r["category"] == "VS"]


def scores(utils: ModuleType, data: list[dict[str, Any]]) -> dict[str, float]:
    every, figure, pair = utils.get_eval_all(data, CHECK), utils.get_eval_fig(data), utils.get_eval_pair_all(data, CHECK)
    return {"aAcc": 100 * every["correct"] / every["total"], "fAcc": 100 * figure["correct"] / figure["total"],
            "qAcc": 100 * pair["correct"] / pair["total"]}


def replay(tmp_path: Path) -> Path:
    tasks = tmp_path / "tasks"
    copy_bench_files("hallusionbench", tasks)
    task = "hallusionbench_copy"
    model = predictions(tmp_path / "pred.jsonl", [(task, d, r) for d, (r, _, _, _) in REPLIES.items()])
    judge = predictions(tmp_path / "judge.jsonl", [(task, d, j) for d, (_, j, _, _) in REPLIES.items()])
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", task, "--include-path", str(tasks), "--data-dir", str(SAMPLE), "--model", f"replay:{model}",
                        "--judge", f"replay:{judge}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    return out


def test_authors_utils_verbatim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # utils.py reads apikey.txt where it runs; evaluate_by_chatgpt writes its json there
    data = records()
    judge = ScriptedJudge([REPLIES[r["key"]][1] for r in data])
    utils = load("hallusionbench_utils", monkeypatch, judge)
    data = utils.evaluate_by_chatgpt(data, ENTRY, CHECK, save_json_path=str(tmp_path / "vd_vs.json"))
    data = utils.check_same_by_chatgpt(data, ENTRY, save_json_path=str(tmp_path / "vd_vs.json"))
    data = utils.assign_correctness(data, correctness_entry=CHECK)
    assert {r["key"]: (int(r[CHECK]), r["correct"]) for r in data} == {k: (v, c) for k, (_, _, v, c) in REPLIES.items()}
    theirs = scores(utils, data)
    assert theirs == pytest.approx(AUTHORS)
    # the task gives the same figures, and sent its judge the authors' prompts
    out = replay(tmp_path / "run")
    res = results_of(out)["results"]["hallusionbench_copy"]
    assert {k: res[k] for k in AUTHORS} == pytest.approx(theirs)
    samples = samples_of(out, "hallusionbench_copy")
    sent = {d: s["judge"][0]["prompt"][0]["content"][0]["text"] for d, s in samples.items()}
    assert [sent[r["key"]] for r in data] == judge.prompts


def test_lmms_eval_utils_verbatim_on_the_image_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    utils = load("lmms_eval_hallusion_bench_utils", monkeypatch)
    data = [copy.deepcopy(r) for r in records() if r["visual_input"] != "0"]  # lmms-eval's test_split: image
    for r in data:
        r[CHECK] = str(REPLIES[r["key"]][2])  # its evaluate_by_chatgpt reads a verdict as the authors' does
    data = utils.assign_correctness(data, correctness_entry=CHECK)
    theirs = scores(utils, data)
    assert theirs == pytest.approx(LMMS_EVAL)
    variant = results_of(replay(tmp_path / "run"))["variants"]["hallusionbench_copy"]["lmms_eval"]["metrics"]
    assert {k: variant[k] for k in LMMS_EVAL} == pytest.approx(theirs)


def test_lmms_eval_verdict_reading_is_the_authors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """lmms-eval's evaluate_by_chatgpt (requests to the API, max_tokens 16) reads a judge reply as the
    authors' does: the same three-way rule, checked through a stand-in for requests.post."""
    monkeypatch.chdir(tmp_path)
    replies = ["correct", "Incorrect.", "UNCLEAR", "not incorrect", "Correctly answered", "I am not sure"]
    queue = list(replies)

    class Response:
        def __init__(self, text: str) -> None:
            self.text = text

        def raise_for_status(self) -> None:
            return None

        def json(self) -> dict[str, Any]:
            return {"choices": [{"message": {"content": self.text}}]}

    requests = types.ModuleType("requests")
    requests.post = lambda *a, **k: Response(queue.pop(0))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "requests", requests)
    utils = load("lmms_eval_hallusion_bench_utils", monkeypatch)
    data = [{"question": "q", "gt_answer_details": "d", ENTRY: "a"} for _ in replies]
    out = utils.evaluate_by_chatgpt(data, ENTRY, CHECK, save_json_path=str(tmp_path / "x.json"))
    registry, path = plugin("hallusionbench", "hallusionbench_scoring.py")
    ours = registry._PLUGIN_MODULES[path].read_verdict
    assert [int(r[CHECK]) for r in out] == [ours(t) for t in replies] == [1, 0, 2, 0, 1, 2]
    assert json.loads((tmp_path / "x.json").read_text())  # it wrote its cache as it does
