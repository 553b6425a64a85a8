"""MME from a copy of its folder: hand-written replies replayed, scored by hand with the authors'
rules (acc, acc+, the subtask scores and the two sums) and with lmms-eval's (the variant); the
sample's Hub copy holds the local records."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_runs import SAMPLE, package_unchanged, parts_of, read_jsonl, results_of, run_copy, samples_of

from mme_replies import AUTHORS, AUTHORS_SUMS, LMMS_EVAL_SUMS, REPLIES, VLMEVALKIT_SUMS, doc_id


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mme"):
        yield


def run_mme(tmp_path: Path, *, hub: bool) -> Path:
    rows = [("mme_copy", doc_id(q, gold), reply) for (q, gold), (reply, _, _) in REPLIES.items()]
    proc, out = run_copy(tmp_path, "mme", "lmms-lab/MME", rows, hub=hub)
    assert proc.returncode == 1, proc.stderr  # six replies the authors' rule reads nothing from
    results = results_of(out)
    res = results["results"]["mme_copy"]
    for name, value in AUTHORS_SUMS.items():
        assert res[name] == pytest.approx(value), name
    assert res["acc"] == pytest.approx(100 * 20 / 30)
    assert res["acc_plus"] == pytest.approx(100 * 6 / 15)  # existence 1, count, color, celebrity, OCR, commonsense
    rows_by_cat = results["breakdowns"]["mme_copy"]["category"]
    got = {c: (r["acc"], r["acc_plus"], r["score"]) for c, r in rows_by_cat.items()}
    assert got == {c: pytest.approx(v) for c, v in AUTHORS.items()}
    assert results["problems"]["mme_copy"]["unparsed"] == 6
    variant = results["variants"]["mme_copy"]["lmms_eval"]["metrics"]
    for name, value in LMMS_EVAL_SUMS.items():
        assert variant[name] == pytest.approx(value), name
    assert variant["acc"] == pytest.approx(100 * 23 / 30)
    assert variant["acc_plus"] == pytest.approx(100 * 8 / 15)
    vlmevalkit = results["variants"]["mme_copy"]["vlmevalkit"]["metrics"]
    for name, value in VLMEVALKIT_SUMS.items():
        assert vlmevalkit[name] == pytest.approx(value), name
    assert vlmevalkit["acc"] == pytest.approx(100 * 19 / 30)
    assert vlmevalkit["acc_plus"] == pytest.approx(100 * 5 / 15)
    samples = samples_of(out, "mme_copy")
    assert {d: s["parsed"] for d, s in samples.items()} == {doc_id(q, g): a for (q, g), (_, a, _) in REPLIES.items()}
    return out


def test_mme_replay_local_data(tmp_path: Path) -> None:
    out = run_mme(tmp_path, hub=False)
    sample = samples_of(out, "mme_copy")["count/000000000003.jpg:no"]
    # the authors' question as the data holds it, the image first
    assert parts_of(sample) == ["<img>", "Are there two squares in the image? Please answer yes or no."]
    assert sample["target"] == "no"


def test_mme_replay_hub_layout(tmp_path: Path) -> None:
    run_mme(tmp_path, hub=True)


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    local = read_jsonl(SAMPLE / "mme" / "mme.jsonl")
    hub = datasets.load_dataset(str(SAMPLE / "mme" / "hf"), split="test").cast_column("image", datasets.Image(decode=False))
    assert len(hub) == len(local) == 30
    for rec, row in zip(local, hub):
        assert {k: v for k, v in row.items() if k != "image"} == {k: v for k, v in rec.items() if k != "image"}
        assert row["image"]["bytes"] == (SAMPLE / "mme" / rec["image"]).read_bytes()
    # two questions per image, one answered Yes and one No
    pairs: dict[str, list[str]] = {}
    for rec in local:
        pairs.setdefault(rec["question_id"], []).append(rec["answer"])
    assert all(sorted(a) == ["No", "Yes"] for a in pairs.values()) and len(pairs) == 15
