"""Issue 31, findings 4 and 10: a run received from elsewhere is data, confined to its folder.

A results.json whose task names are ``../../../outside`` or an absolute path used to make
``mmtasks view`` copy those JSONL files (outside the run) into the view's data; a samples file
that is a link out of the run was read the same way; an image path naming a FIFO hung the view."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import mmtasks
from mmtasks.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
TASK = "muirbench"
SECRET_LINE = {"doc_id": "outside-secret", "responses": ["the contents of a file outside the run"]}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("received") / "run"
    mmtasks.evaluate(tasks=TASK, model="random", data_dir=SAMPLE, output_path=out, use_cache=False, limit=3)
    return out


def _renamed(run: Path, tmp_path: Path, name: str) -> Path:
    hostile = tmp_path / "a" / "b" / "c" / "run"
    shutil.copytree(run, hostile)
    data = json.loads((hostile / "results.json").read_text())
    for key in ("results", "problems", "coverage", "configs", "config_hashes", "versions", "n-samples", "higher_is_better",
                "breakdowns"):
        if isinstance(data.get(key), dict) and TASK in data[key]:
            data[key][name] = data[key].pop(TASK)
    (hostile / "results.json").write_text(json.dumps(data))
    return hostile


def _linking_out(run: Path, tmp_path: Path, samples_file: str) -> Path:
    """A copy of the run whose ``samples/<samples_file>`` is a link to a copy of its samples outside it."""
    hostile = tmp_path / "run"
    shutil.copytree(run, hostile)
    outside = tmp_path / "outside.jsonl"
    shutil.copyfile(run / "samples" / f"{TASK}.jsonl", outside)
    (hostile / "samples" / samples_file).unlink(missing_ok=True)
    (hostile / "samples" / samples_file).symlink_to(outside)
    return hostile


@pytest.mark.parametrize("kind", ["relative", "absolute"])
def test_task_names_of_a_received_run_are_names_not_paths(run: Path, tmp_path: Path, kind: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text(json.dumps({**json.loads((run / "samples" / f"{TASK}.jsonl").read_text().splitlines()[0]),
                                   **SECRET_LINE}) + "\n")
    # samples/<name>.jsonl is the outside file (five levels up from a/b/c/run/samples/)
    name = "../../../../../outside" if kind == "relative" else str(tmp_path / "outside")
    hostile = _renamed(run, tmp_path, name)
    assert (hostile / "samples" / f"{name}.jsonl").resolve() == outside.resolve()
    site = tmp_path / "site"
    assert cli_main(["view", str(hostile), "--out", str(site)]) == 2  # before: exit 0, the outside file in the view
    err = capsys.readouterr().err
    assert "results.json" in err and "is not a safe name" in err and len(err.strip().splitlines()) == 1
    assert not site.exists() or "outside-secret" not in "".join(p.read_text() for p in site.rglob("*.js"))
    assert cli_main(["leaderboard", "build", str(hostile), "--out", str(tmp_path / "board"), "--no-paper"]) == 2


def test_a_samples_file_linking_out_of_the_run_is_refused(run: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    hostile = _linking_out(run, tmp_path, f"{TASK}.jsonl")
    assert cli_main(["view", str(hostile), "--out", str(tmp_path / "site")]) == 2
    assert "links out of the run folder" in capsys.readouterr().err


@pytest.mark.timeout(120)
def test_a_fifo_named_as_an_image_does_not_hang_the_view(run: Path, tmp_path: Path) -> None:
    hostile = tmp_path / "run"
    shutil.copytree(run, hostile)
    fifo = tmp_path / "image.png"
    os.mkfifo(fifo)
    path = hostile / "samples" / f"{TASK}.jsonl"
    samples = [json.loads(line) for line in path.read_text().splitlines()]
    samples[0]["prompt"][0]["content"].append({"type": "image", "image": str(fifo)})
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    from mmtasks.view.records import load_view_run
    from mmtasks.view.site import build_view

    site = tmp_path / "site"
    build_view([load_view_run(hostile)], site)  # before: blocked for ever opening the FIFO
    chunk = next((site).glob("d-*/t0/c0.js")).read_text()
    assert "image.png" in chunk and "not a regular file" in chunk


def test_a_task_name_holding_terminal_escapes_never_reaches_the_terminal_raw(
        run: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    name = "x\x1b]0;owned\x07\x1b[2J"
    hostile = _renamed(run, tmp_path, name)
    (hostile / "samples" / f"{TASK}.jsonl").rename(hostile / "samples" / f"{name}.jsonl")
    code = cli_main(["view", str(hostile), "--out", str(tmp_path / "site")])
    out, err = capfd.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out + err  # before: the task name printed raw to stderr
    assert code == 2 and "is not a safe name" in err


def test_judge_agreement_reads_no_samples_file_linking_out_of_the_run(run: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    hostile = _linking_out(run, tmp_path, "other.jsonl")
    assert cli_main(["judge", "agreement", str(hostile), str(run)]) == 2
    assert "links out of the run folder" in capsys.readouterr().err
