"""``--shard I/N`` slices merged by ``mmtasks merge``: three slices give exactly the files of one
process (samples byte for byte, results.json but for its volatile keys); slices that do not
make one run are refused, naming the slice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
#: single-turn tasks and a multi-turn dialogue with judge calls
TASKS = "realbench_ranking_easy,realbench_extraction_hard,mmdu"
VOLATILE = {"date", "run_stats"}


def run(out: Path, *extra: str, tasks: str = TASKS) -> int:
    return main(["--tasks", tasks, "--model", "random", "--judge", "random", "--seed", "3", "--limit", "5",
                 "--data-dir", str(SAMPLE), "--output-path", str(out), "--no-progress", "--allow-failures", *extra])


@pytest.fixture
def sliced(tmp_path, monkeypatch):
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    for i in range(3):
        assert run(tmp_path / f"slice{i}", "--shard", f"{i}/3") == 0
    return tmp_path


def test_three_slices_merged_equal_one_process(sliced, capsys):
    tmp = sliced
    assert run(tmp / "single", "--no-cache") == 0
    n = [json.loads((tmp / f"slice{i}" / "results.json").read_text())["n-samples"]["mmdu"]["effective"] for i in range(3)]
    assert n == [2, 2, 1] or sum(n) == 5  # the slices split the documents
    capsys.readouterr()
    assert main(["merge", str(tmp / "merged"), *(str(tmp / f"slice{i}") for i in (2, 0, 1))]) == 0
    assert "merged 3 slices" in capsys.readouterr().out
    a = json.loads((tmp / "merged" / "results.json").read_text())
    b = json.loads((tmp / "single" / "results.json").read_text())
    assert {k: v for k, v in a.items() if k not in VOLATILE} == {k: v for k, v in b.items() if k not in VOLATILE}
    for task in TASKS.split(","):
        assert (tmp / "merged" / "samples" / f"{task}.jsonl").read_bytes() == \
            (tmp / "single" / "samples" / f"{task}.jsonl").read_bytes(), task
    assert a["run_stats"]["merged_slices"] == 3
    assert a["run_stats"]["sent"] == b["run_stats"]["sent"]


def test_merge_refuses_a_missing_and_an_overlapping_slice(sliced, capsys):
    tmp = sliced
    assert main(["merge", str(tmp / "m1"), str(tmp / "slice0"), str(tmp / "slice2")]) == 2
    assert "slice(s) 1/3 missing: 2 of 3 given" in capsys.readouterr().err
    assert main(["merge", str(tmp / "m2"), str(tmp / "slice0"), str(tmp / "slice1"), str(tmp / "slice1"),
                 str(tmp / "slice2")]) == 2
    assert f"slice 1/3 is given more than once (overlapping slices): {tmp / 'slice1'}, {tmp / 'slice1'}" in capsys.readouterr().err
    assert not (tmp / "m1" / "results.json").exists() and not (tmp / "m2" / "results.json").exists()


def test_merge_refuses_slices_of_another_run(sliced, capsys):
    tmp = sliced
    # another split of the same run overlaps the first
    assert run(tmp / "other", "--shard", "1/2") == 0
    assert main(["merge", str(tmp / "m"), str(tmp / "slice0"), str(tmp / "other"), str(tmp / "slice2")]) == 2
    assert f"{tmp / 'other'}: is not a slice of the same run as {tmp / 'slice0'}: it is a slice of 2, not of 3" in capsys.readouterr().err
    # other settings (another seed: another model run)
    assert run(tmp / "seeded", "--shard", "1/3", "--seed", "4") == 0
    assert main(["merge", str(tmp / "m"), str(tmp / "slice0"), str(tmp / "seeded"), str(tmp / "slice2")]) == 2
    assert "config 'seed' is 4, not 3" in capsys.readouterr().err


def test_merge_refuses_slices_of_other_data(sliced, tmp_path, capsys):
    import shutil

    data = tmp_path / "data"
    shutil.copytree(SAMPLE / "realbench", data / "realbench")
    shutil.copytree(SAMPLE / "mmdu", data / "mmdu")
    stale = data / "realbench" / "ranking_easy.jsonl"
    lines = stale.read_text().splitlines(keepends=True)
    stale.write_text("".join(lines[:1] + lines[2:]))
    out = tmp_path / "stale1"
    assert main(["--tasks", TASKS, "--model", "random", "--judge", "random", "--seed", "3", "--limit", "5",
                 "--data-dir", str(data), "--output-path", str(out), "--no-progress", "--allow-failures", "--shard", "1/3"]) == 0
    assert main(["merge", str(tmp_path / "m"), str(tmp_path / "slice0"), str(out), str(tmp_path / "slice2")]) == 2
    err = capsys.readouterr().err
    assert (f"{out}: is not a slice of the same run as {tmp_path / 'slice0'}: task 'realbench_ranking_easy''s "
            "documents differ (other data: same count, other ids or contents)") in err, err
