"""``mmtasks run --config FILE``: a run file takes every run option; a results.json's recorded
config is itself a run file (rerunning it gives the same results); flags given win; an unknown
option names the file."""

from __future__ import annotations

import json
from pathlib import Path

from mmtasks.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
VOLATILE = {"date", "run_stats"}


def results(folder: Path) -> dict:
    data = json.loads((folder / "results.json").read_text())
    return {k: v for k, v in data.items() if k not in VOLATILE}


def test_a_run_file_and_a_results_json_rerun_the_same_evaluation(tmp_path, monkeypatch):
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    common = ["--data-dir", str(SAMPLE), "--no-progress", "--allow-failures"]
    assert main(["--tasks", "realbench_ranking_easy,mmdu", "--model", "random", "--judge", "random", "--seed", "2",
                 "--limit", "3", "--gen-kwargs", "max_new_tokens=64", "--output-path", str(tmp_path / "flags"), *common]) == 0
    run_file = tmp_path / "run.yaml"
    run_file.write_text("tasks: [realbench_ranking_easy, mmdu]\nmodel: random\njudge: random\nseed: 2\nlimit: 3\n"
                        "gen-kwargs: {max_new_tokens: 64}\n")
    assert main(["run", "--config", str(run_file), "--output-path", str(tmp_path / "file"), *common]) == 0
    assert results(tmp_path / "file") == results(tmp_path / "flags")
    recorded = json.loads((tmp_path / "flags" / "results.json").read_text())["config"]
    assert recorded["tasks"] == ["realbench_ranking_easy", "mmdu"]
    assert main(["run", "--config", str(tmp_path / "flags" / "results.json"), "--output-path", str(tmp_path / "again"), *common]) == 0
    assert results(tmp_path / "again") == results(tmp_path / "flags")
    # a flag given on the command line wins over the file
    assert main(["run", "--config", str(run_file), "--limit", "2", "--output-path", str(tmp_path / "two"), *common]) == 0
    assert json.loads((tmp_path / "two" / "results.json").read_text())["config"]["limit"] == 2


def test_an_unknown_option_names_the_file(tmp_path, capsys):
    run_file = tmp_path / "run.yaml"
    run_file.write_text("tasks: mmdu\nmodel: random\nlimt: 3\n")
    assert main(["run", "--config", str(run_file)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"mmtasks: error: {run_file}, field 'limt': unknown option 'limt' (did you mean 'limit'?)")


def test_tasks_and_model_are_needed_without_a_run_file(capsys):
    assert main(["run", "--model", "random"]) == 2
    assert "--tasks is required (or a run file: --config run.yaml)" in capsys.readouterr().err
