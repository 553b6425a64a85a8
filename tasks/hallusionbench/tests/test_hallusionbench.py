"""HallusionBench from a copy of its folder: model replies and judge replies replayed, scored by hand
with the authors' rules (aAcc, fAcc, qAcc; a VS question without its figure answered "unclear" counts
as right), lmms-eval's (the variant: the image split only) and VLMEvalKit's (the variant: the image split,
its yes/no rule in place of the judge); the Hub copy holds the local records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hb_replies import AUTHORS, LMMS_EVAL, REPLIES, VLMEVALKIT
from tests.folder_runs import (SAMPLE, copy_bench_files, package_unchanged, parts_of, predictions, read_jsonl,
                               results_of, run_mmtasks, samples_of)

TASK = "hallusionbench_copy"


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("hallusionbench"):
        yield


def run_hb(tmp_path: Path, *, hub: bool) -> Path:
    tasks = tmp_path / "tasks"
    folder = json.dumps(str(SAMPLE / "hallusionbench" / "hf"))
    copy_bench_files("hallusionbench", tasks,
                     replace={"hallusionbench.yaml": {"path: lmms-lab/HallusionBench": f"path: {folder}"}} if hub else None)
    model = predictions(tmp_path / "pred.jsonl", [(TASK, d, r) for d, (r, _, _, _) in REPLIES.items()])
    judge = predictions(tmp_path / "judge.jsonl", [(TASK, d, j) for d, (_, j, _, _) in REPLIES.items()])
    out = tmp_path / "out"
    data = [] if hub else ["--data-dir", str(SAMPLE)]
    proc = run_mmtasks(["--tasks", TASK, "--include-path", str(tasks), *data, "--model", f"replay:{model}",
                        "--judge", f"replay:{judge}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr  # every judge reply is a verdict
    results = results_of(out)
    res = results["results"][TASK]
    assert {k: res[k] for k in AUTHORS} == pytest.approx(AUTHORS)
    variant = results["variants"][TASK]["lmms_eval"]["metrics"]
    assert {k: variant[k] for k in LMMS_EVAL} == pytest.approx(LMMS_EVAL)
    vlmevalkit = results["variants"][TASK]["vlmevalkit"]["metrics"]
    assert {k: vlmevalkit[k] for k in VLMEVALKIT} == pytest.approx(VLMEVALKIT)
    samples = samples_of(out, TASK)
    assert {d: (s["judge"][0]["fields"]["verdict"], s["metrics"]["correct"]) for d, s in samples.items()} == {
        d: (v, 100.0 * c) for d, (_, _, v, c) in REPLIES.items()}
    assert set(results["breakdowns"][TASK]) == {"category", "subcategory", "visual_input"}
    return out


def test_hallusionbench_replay_local_data(tmp_path: Path) -> None:
    out = run_hb(tmp_path, hub=False)
    samples = samples_of(out, TASK)
    assert parts_of(samples["VD_illusion_0_1_0"]) == ["<img>", "Are the two orange circles the same size?"]
    assert parts_of(samples["VS_chart_0_0_0"]) == ["Were the sales of 2020 higher than those of 2019?"]  # no figure
    assert samples["VS_chart_0_0_0"]["target"] == "Yes" and samples["VS_chart_0_0_1"]["target"] == "No"


def test_hallusionbench_replay_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    run_hb(tmp_path, hub=True)


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    local = read_jsonl(SAMPLE / "hallusionbench" / "hallusionbench.jsonl")
    folder = str(SAMPLE / "hallusionbench" / "hf")
    image = datasets.load_dataset(folder, split="image").cast_column("image", datasets.Image(decode=False))
    non_image = datasets.load_dataset(folder, split="non_image")
    assert [r for r in local if r["image"] is None] == [dict(r) for r in non_image]
    with_image = [r for r in local if r["image"] is not None]
    assert len(image) == len(with_image) == 7
    for rec, row in zip(with_image, image):
        assert {k: v for k, v in row.items() if k != "image"} == {k: v for k, v in rec.items() if k != "image"}
        assert row["image"]["bytes"] == (SAMPLE / "hallusionbench" / rec["image"]).read_bytes()


def test_random_model_and_judge(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "hallusionbench", "--data-dir", str(SAMPLE), "--model", "random", "--judge", "random",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    samples = samples_of(out, "hallusionbench")
    assert {s["responses"][0] for s in samples.values()} <= {"Yes", "No"}
    assert {s["judge"][0]["replies"][0] for s in samples.values()} <= {"correct", "incorrect", "unclear"}
    # the random model answers Yes or No: VLMEvalKit's rule reads every reply, over the image split's 7
    assert set(results_of(out)["variants"]["hallusionbench"]) == {"lmms_eval", "vlmevalkit"}
    assert all(s["extra"]["variants"]["vlmevalkit"]["unparsed"] == 0 for s in samples.values())
    assert "qAcc [vlmevalkit]" in proc.stdout
