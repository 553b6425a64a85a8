"""Issue 31, findings 1 and 5: one claim on every folder a command writes (``view``,
``leaderboard build``, ``leaderboard plot``): a marker written by mmtasks, a folder of other files
refused naming them, the folder's lock held from the first write to the last, and only the
claimed folder's own data removed.

The overlap of two builds is made with events at chosen points (the second build reaching the
folder's lock, the first build between two tasks), never with a clock."""

from __future__ import annotations

import fcntl
import json
import threading
from pathlib import Path
from typing import Any

import pytest

import mmtasks
from mmtasks.cli import main as cli_main
from mmtasks.leaderboard.cli import main as leaderboard_main
from mmtasks.results import writer
from mmtasks.results.writer import CLAIM_MARKER, OutputError, write_file_set
from mmtasks.view.records import load_view_run
from mmtasks.view.site import INDEX_JS, build_view

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
BOARD_RUN = ROOT / "tests" / "fixtures" / "runs" / "qwen2vl7b-realbench-2025-11-26"
TASKS = ("muirbench", "mmiu")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("claim") / "run"
    mmtasks.evaluate(tasks=",".join(TASKS), model="random", data_dir=SAMPLE, output_path=out, use_cache=False,
                     allow_failures=True)
    return out


def web_project(folder: Path) -> dict[str, str]:
    """A folder that is not a view, though it has the names a view has."""
    files = {"index.html": "<p>my site</p>", "index.js": "mine()", "app.js": "app()", "style.css": "p{}",
             "d-archive/notes.txt": "my notes"}
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return files


def unchanged(folder: Path, files: dict[str, str]) -> bool:
    return all((folder / name).read_text() == text for name, text in files.items()) and not (folder / CLAIM_MARKER).exists()


def test_a_web_project_with_a_views_names_is_refused_by_every_command_naming_its_files(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "site"
    files = web_project(site)
    assert cli_main(["view", str(run), "--out", str(site)]) == 2  # before: exit 0, four files replaced, notes deleted
    err = capsys.readouterr().err
    assert "holds files that mmtasks did not write (app.js, d-archive/, index.html, index.js, style.css)" in err
    assert unchanged(site, files)
    assert leaderboard_main(["build", str(BOARD_RUN), "--out", str(site)]) == 2
    assert "holds files that mmtasks did not write" in capsys.readouterr().err and unchanged(site, files)
    with pytest.raises(OutputError, match=r"did not write \(app.js, d-archive/"):
        write_file_set(site, {"x.png": b"png"}, what="figures", kind="figures")
    assert unchanged(site, files) and not (site / "x.png").exists()


def test_a_folder_claimed_by_another_command_is_refused(run: Path, tmp_path: Path) -> None:
    board = tmp_path / "board"
    assert leaderboard_main(["build", str(BOARD_RUN), "--out", str(board)]) == 0
    before = (board / "index.html").read_bytes()
    with pytest.raises(OutputError, match="holds the leaderboard mmtasks wrote there: refusing to write the run view into it"):
        build_view([load_view_run(run)], board)
    assert (board / "index.html").read_bytes() == before
    # a view inside the board (views/<name>, its own claim) leaves the board buildable, before or after
    fresh = tmp_path / "fresh"
    build_view([load_view_run(run)], fresh / "views" / "run")
    assert leaderboard_main(["build", str(BOARD_RUN), "--out", str(fresh)]) == 0
    assert leaderboard_main(["build", str(BOARD_RUN), "--out", str(fresh)]) == 0
    assert (fresh / "views" / "run" / "index.html").is_file()


def test_a_rebuild_removes_only_the_data_its_marker_names(run: Path, tmp_path: Path) -> None:
    site = tmp_path / "view"
    first = build_view([load_view_run(run)], site)
    # the owner's own files put in the view afterwards, with a view's name pattern
    (site / "d-archive").mkdir()
    (site / "d-archive" / "notes.txt").write_text("my notes")
    (site / "README.md").write_text("mine")
    # a build killed while writing its data folder: recorded in the marker before its first file
    claim_data = json.loads((site / CLAIM_MARKER).read_text())
    assert claim_data["kind"] == "view" and claim_data["data"] == [first["data"], "img"]
    with writer.claim_folder(site, "view", what="run view") as claim:
        killed = claim.data_folder("d-killed-000000")
        (killed / "t0").mkdir()
        (killed / "t0" / "rows.js").write_text("half")
    second = build_view([load_view_run(run)], site)
    assert not (site / first["data"]).exists() and not killed.exists()  # its own: the previous set's, and the killed one's
    assert (site / "d-archive" / "notes.txt").read_text() == "my notes"  # before: deleted (every d-* but its own)
    assert (site / "README.md").read_text() == "mine"
    assert sorted(p.name for p in site.glob("d-*")) == sorted(["d-archive", second["data"]])


def _view_files(site: Path) -> dict[str, Any]:
    text = (site / INDEX_JS).read_text()
    return json.loads(text[text.index(",") + 1: text.rindex(")")])


def test_two_views_into_one_folder_take_turns_and_leave_a_whole_view(run: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow build holds the folder between its two tasks; a fast one starts then. Before: both
    exited 0 and the final index.js named a data folder whose first task's files the other build's
    cleanup had deleted."""
    site = tmp_path / "view"
    build_view([load_view_run(run)], site)  # an earlier view
    slow_between_tasks, release_slow, fast_settled = threading.Event(), threading.Event(), threading.Event()
    real_flock = fcntl.flock

    def flock(fd: int, op: int) -> None:
        if threading.current_thread().name == "fast":
            try:
                real_flock(fd, op | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                fast_settled.set()  # the fast build waits for the folder's lock
        real_flock(fd, op)

    monkeypatch.setattr(writer.fcntl, "flock", flock)

    def slow_progress(task: str) -> None:
        if task == TASKS[1]:
            slow_between_tasks.set()
            assert release_slow.wait(120)  # hang guard only

    errors: list[BaseException] = []

    def build(progress: Any) -> None:
        try:
            build_view([load_view_run(run)], site, progress=progress)
        except BaseException as exc:  # noqa: BLE001 (reported by the test)
            errors.append(exc)
        finally:
            if threading.current_thread().name == "fast":
                fast_settled.set()  # before: it ran to its end while the slow build waited

    slow = threading.Thread(target=build, args=(slow_progress,), name="slow")
    slow.start()
    assert slow_between_tasks.wait(120)
    fast = threading.Thread(target=build, args=(None,), name="fast")
    fast.start()
    assert fast_settled.wait(120)  # now: blocked at the folder's lock; before: finished
    release_slow.set()
    slow.join(120)
    fast.join(120)
    assert not errors and not slow.is_alive() and not fast.is_alive()
    index = _view_files(site)
    data = site / index["data"]
    for task in index["tasks"]:
        folder = data / task["dir"]
        assert (folder / "rows.js").is_file(), task["name"]
        assert all((folder / f"c{k}.js").is_file() for k in range(task["chunks"])), task["name"]
    assert [p.name for p in site.glob("d-*")] == [index["data"]]
