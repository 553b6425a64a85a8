"""LVBench on the bundled sample (the authors' video_info.meta.jsonl, one line per video, its
questions in qa), in a subprocess, with ``--model replay:`` to scores computed by hand: accuracy
and each capability's (a question of two capabilities counts in both); the prompt and frames sent;
the random baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("av")

from tests.folder_copies import SAMPLE, predictions_by_task as predictions, results_of, run_mmtasks  # noqa: E402
from tests.folder_copies import samples_of, text_of  # noqa: E402

#: uid -> (gold, reply)
REPLIES = {
    "101": ("A", "(A) Red"),
    "102": ("C", "Answer: C"),  # the first character of the first word: the A of "Answer:", wrong
    "103": ("D", "D. Left to right"),
    "201": ("B", "The answer is (B)"),  # before the first ")", after the "(": B
    "202": ("B", "b"),  # no capital letter: read as nothing, wrong
    "301": ("B", "B) 00:04"),
    "302": ("C", "Grey (C)"),
}


def test_lvbench_replayed_to_hand_computed_scores(tmp_path: Path) -> None:
    pred = predictions(tmp_path / "pred.jsonl", {"lvbench": {uid: reply for uid, (_, reply) in REPLIES.items()}})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "lvbench", "--data-dir", str(SAMPLE), "--model", f"replay:{pred}",
                        "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr  # one reply read as nothing
    res = results_of(out)["results"]["lvbench"]
    # right: 101, 103, 201, 301, 302 of 7
    assert res["acc"] == pytest.approx(100 * 5 / 7)
    # ER: 101, 302 right; EU: 102, 202 wrong; KIR: 201, 302 right; TG: 102 wrong, 301 right; Rea: 103 right; Sum: 202 wrong
    assert {k: res[f"acc_{k}"] for k in ("er", "eu", "kir", "tg", "rea", "sum")} == pytest.approx(
        {"er": 100.0, "eu": 0.0, "kir": 100.0, "tg": 50.0, "rea": 100.0, "sum": 0.0})
    # lmms-eval's reading (variant lmms_eval): "Answer: C" ends with C, right; "b" still nothing: 6 of 7
    lmms = results_of(out)["variants"]["lvbench"]["lmms_eval"]["metrics"]
    assert lmms["acc"] == pytest.approx(100 * 6 / 7)
    assert (lmms["acc_eu"], lmms["acc_tg"], lmms["acc_sum"]) == pytest.approx((50.0, 100.0, 0.0))
    samples = {s["doc_id"]: s for s in samples_of(out, "lvbench")}
    assert {d: s["target"] for d, s in samples.items()} == {d: gold for d, (gold, _) in REPLIES.items()}
    assert samples["202"]["unparsed"] == 1
    assert text_of(samples["101"]) == ("What colour is the screen at the start?\n(A) Red\n(B) Green\n(C) Blue\n(D) Yellow\n"
                                       "Answer the question with the option letter")
    # 8 s at 2 fps, 32 frames by linspace: fewer frames than asked, each once
    times = [p["timestamp"] for p in samples["101"]["prompt"][-1]["content"] if p["type"] == "image"]
    assert times == [k / 2 for k in range(16)]
    assert samples["101"]["cluster"] == "lvbSmplKey01"


def test_lvbench_random_baseline(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "lvbench", "--model", "random", "--data-dir", str(SAMPLE), "--output-path", str(out)],
                       tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert results_of(out)["n-samples"]["lvbench"]["effective"] == 7
