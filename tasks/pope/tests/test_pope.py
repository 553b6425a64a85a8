"""POPE from a copy of its folder: hand-written replies replayed and scored by hand with the authors'
rules (F1, accuracy, precision, recall, yes ratio per split; the group's mean F1) and lmms-eval's
(the variant); the sample's Hub copy holds the local records."""

from __future__ import annotations

from pathlib import Path

import pytest

from pope_replies import AUTHORS, LMMS_EVAL, METRICS, REPLIES, VLMEVALKIT
from tests.folder_runs import (SAMPLE, copy_bench_files, package_unchanged, parts_of, predictions, read_jsonl,
                               results_of, run_mmtasks, samples_of)

SPLITS = ("adversarial", "popular", "random")


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("pope"):
        yield


def run_pope(tmp_path: Path, *, hub: bool) -> Path:
    tasks = tmp_path / "tasks"
    folder = str(SAMPLE / "pope" / "hf")
    copy_bench_files("pope", tasks, replace={"_base.yaml": {"path: lmms-lab/POPE": f'path: "{folder}"'}} if hub else None)
    rows = [(f"pope_{split}_copy", q, reply) for split, docs in REPLIES.items() for q, (_, reply, _, _) in docs.items()]
    out = tmp_path / "out"
    data = [] if hub else ["--data-dir", str(SAMPLE)]
    proc = run_mmtasks(["--tasks", "pope_copy", "--include-path", str(tasks), *data,
                        "--model", f"replay:{predictions(tmp_path / 'pred.jsonl', rows)}", "--output-path", str(out)],
                       tmp_path)
    assert proc.returncode == 0, proc.stderr  # the authors' rule reads every reply
    results = results_of(out)
    for split in SPLITS:
        task = f"pope_{split}_copy"
        res = results["results"][task]
        assert tuple(res[m] for m in METRICS) == pytest.approx(AUTHORS[split]), split
        variant = results["variants"][task]["lmms_eval"]["metrics"]
        assert tuple(variant[m] for m in METRICS) == pytest.approx(LMMS_EVAL[split]), split
        vlmevalkit = results["variants"][task]["vlmevalkit"]["metrics"]
        assert tuple(vlmevalkit[m] for m in METRICS) == pytest.approx(VLMEVALKIT[split]), split
        # the yes ratio has no direction (the data holds 50% yes): nothing ranks or compares by it
        assert results["higher_is_better"][task] == {"f1": True, "acc": True, "precision": True, "recall": True,
                                                     "yes_ratio": None}
        assert {d: s["parsed"] for d, s in samples_of(out, task).items()} == {
            q: authors for q, (_, _, authors, _) in REPLIES[split].items()}
    group = results["groups"]["pope_copy"]
    assert group["average"] == pytest.approx((200 / 3 + 200 / 3 + 80) / 3)  # the mean F1
    assert group["variants"]["lmms_eval"] == pytest.approx((100 + 50 + 100) / 3)
    assert group["variants"]["vlmevalkit"] == pytest.approx((80 + 200 / 3 + 50) / 3)
    return out


def test_pope_replay_local_data(tmp_path: Path) -> None:
    out = run_pope(tmp_path, hub=False)
    sample = samples_of(out, "pope_random_copy")["2"]
    assert parts_of(sample) == ["<img>", "Is there a circle in the image?"]
    assert sample["target"] == "no"


def test_pope_replay_hub_layout(tmp_path: Path) -> None:
    run_pope(tmp_path, hub=True)


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    for split in SPLITS:
        local = read_jsonl(SAMPLE / "pope" / f"{split}.jsonl")
        hub = datasets.load_dataset(str(SAMPLE / "pope" / "hf"), "Full", split=split)
        hub = hub.cast_column("image", datasets.Image(decode=False))
        assert len(hub) == len(local) == 6
        for rec, row in zip(local, hub):
            assert {k: v for k, v in row.items() if k != "image"} == {k: v for k, v in rec.items() if k != "image"}
            assert row["image"]["bytes"] == (SAMPLE / "pope" / rec["image"]).read_bytes()
        assert sorted(r["answer"] for r in local) == ["no"] * 3 + ["yes"] * 3
