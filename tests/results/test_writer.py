"""Finding 1 of issue 23: every file mmtasks writes goes through one writer
(:mod:`mmtasks.results.writer`): exclusive, never through a link, renamed into place whole; the
leaderboard's files are switched as one; a failed write keeps the previous version and is one line.

The subprocess tests stop a real ``mmtasks leaderboard build`` at a chosen point (a hook in the
child, never a timer), so they show the same thing on every run however loaded the machine is."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mmtasks.results import writer
from mmtasks.results.writer import OutputError, finish_interrupted_switch, write_file_set

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "tests" / "fixtures" / "runs"
ONE_RUN = RUNS / "qwen2vl7b-realbench-2025-11-26"
OTHER_RUN = RUNS / "qwen2vl7b-mmdu-mmrc-2025-11-27"

#: a child running `mmtasks leaderboard build` with a hook installed first (argv[1]: the hook's source)
CHILD = """
import os, signal, sys
hook = sys.argv[1]
exec(hook)
from mmtasks.cli import main
sys.exit(main(sys.argv[2:]))
"""


def build(out: Path, *runs: Path, hook: str = "", limit_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if limit_bytes is not None:
            import resource

            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, "-c", CHILD, hook, "leaderboard", "build", *map(str, runs), "--out", str(out)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300,
        preexec_fn=limit,
    )


def board_ids(out: Path) -> tuple[str, str]:
    """The generation stamp of leaderboard.json and of leaderboard.js (equal when one build wrote both)."""
    data = json.loads((out / "leaderboard.json").read_text())
    script = (out / "leaderboard.js").read_text()
    assert script.startswith("window.LEADERBOARD = ")
    js = json.loads(script.removeprefix("window.LEADERBOARD = ").rstrip().removesuffix(";"))
    return (data["generated_at"] + str(len(data["benchmarks"])) + str(sorted(e["id"] for b in data["benchmarks"] for e in b["entries"])),
            js["generated_at"] + str(len(js["benchmarks"])) + str(sorted(e["id"] for b in js["benchmarks"] for e in b["entries"])))


def entry_count(out: Path) -> int:
    return sum(len(b["entries"]) for b in json.loads((out / "leaderboard.json").read_text())["benchmarks"])


def test_a_link_planted_at_the_boards_files_is_replaced_never_written_through(tmp_path: Path) -> None:
    out = tmp_path / "board"
    assert build(out, ONE_RUN).returncode == 0  # an earlier board (links in a folder of no board are refused)
    victims = {name: tmp_path / f"victim-{name}" for name in ("leaderboard.json", "index.html", "leaderboard.js")}
    for name, victim in victims.items():
        victim.write_text("precious\n")
        (out / name).unlink()
        (out / name).symlink_to(victim)
    proc = build(out, ONE_RUN)
    assert proc.returncode == 0, proc.stderr
    for name, victim in victims.items():
        assert victim.read_text() == "precious\n"  # before: both overwritten
        assert not (out / name).is_symlink()
    assert json.loads((out / "leaderboard.json").read_text())["benchmarks"]


def test_a_full_disk_keeps_the_previous_board_whole_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "board"
    assert build(out, ONE_RUN).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # RLIMIT_FSIZE under the new leaderboard.json's size: its write fails with EFBIG as on a full disk
    proc = build(out, ONE_RUN, OTHER_RUN, limit_bytes=len(before["leaderboard.json"]) + 100)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr  # before: a traceback
    assert "cannot write" in lines[0] and "kept: every file of the previous leaderboard, unchanged" in lines[0]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # before: leaderboard.json truncated


# SIGTERM while the new board's data is being made, after leaderboard.json's text is made: before,
# leaderboard.json was already written and leaderboard.js was still the old build's
SIGTERM_WHILE_MAKING = """
import mmtasks.leaderboard.site as site
real = site.leaderboard_js
def leaderboard_js(board):
    os.kill(os.getpid(), signal.SIGTERM)
    return real(board)
site.leaderboard_js = leaderboard_js
"""

# SIGTERM as the first file is renamed into place: the switch completes, then the signal ends the command
SIGTERM_WHILE_SWITCHING = """
import mmtasks.results.writer as w
real = os.replace
def replace(a, b, **kw):
    real(a, b, **kw)
    if str(b).endswith("leaderboard.json"):
        os.kill(os.getpid(), signal.SIGTERM)
w.os.replace = replace
"""


@pytest.mark.parametrize("hook", [SIGTERM_WHILE_MAKING, SIGTERM_WHILE_SWITCHING], ids=["while-making", "while-switching"])
def test_sigterm_mid_build_never_leaves_json_and_js_of_two_builds(tmp_path: Path, hook: str) -> None:
    out = tmp_path / "board"
    assert build(out, ONE_RUN).returncode == 0
    old = board_ids(out)
    proc = build(out, ONE_RUN, OTHER_RUN, hook=hook)
    assert proc.returncode == 143, proc.stderr
    json_id, js_id = board_ids(out)
    assert json_id == js_id  # before: a new leaderboard.json beside the old leaderboard.js
    if hook is SIGTERM_WHILE_MAKING:
        assert json_id == old[0]  # stopped before its switch: the previous board, whole
    else:
        assert json_id != old[0]  # the switch had begun: it completed before the signal was acted on
    assert not [p.name for p in out.iterdir() if p.name.startswith(".mmtasks-stage-") or p.name == writer.SWITCH_RECORD]


# kill -9 (nothing can be held) right after the first file of the switch is in place
KILLED_WHILE_SWITCHING = """
import mmtasks.results.writer as w
real = os.replace
def replace(a, b, **kw):
    real(a, b, **kw)
    if str(b).endswith("leaderboard.json"):
        os._exit(137)
w.os.replace = replace
"""


def test_a_switch_cut_by_kill_9_is_finished_by_the_next_writer(tmp_path: Path) -> None:
    out = tmp_path / "board"
    assert build(out, ONE_RUN).returncode == 0
    proc = build(out, ONE_RUN, OTHER_RUN, hook=KILLED_WHILE_SWITCHING)
    assert proc.returncode == 137
    assert (out / writer.SWITCH_RECORD).exists()  # committed, not complete
    assert finish_interrupted_switch(out)
    json_id, js_id = board_ids(out)
    assert json_id == js_id and entry_count(out) > 0
    assert not [p.name for p in out.iterdir() if p.name.startswith(".") and p.name != writer.CLAIM_MARKER]


def test_a_build_killed_while_staging_leaves_the_old_set_and_its_stage_is_cleared(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_file_set(out, {"a.txt": b"old a", "b.txt": b"old b"})

    def boom(fh: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_file_set(out, {"a.txt": b"new a", "b.txt": boom})
    assert (out / "a.txt").read_bytes() == b"old a" and (out / "b.txt").read_bytes() == b"old b"
    stage = out / ".mmtasks-stage-0123456789ab"  # as a process killed while staging leaves it
    stage.mkdir()
    (stage / "a.txt").write_bytes(b"half")
    write_file_set(out, {"a.txt": b"new a", "b.txt": b"new b"})
    assert (out / "a.txt").read_bytes() == b"new a" and (out / "b.txt").read_bytes() == b"new b"
    assert sorted(p.name for p in out.iterdir()) == [writer.CLAIM_MARKER, "a.txt", "b.txt"]


def test_a_planted_switch_record_cannot_move_files_from_elsewhere(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "secret").write_text("s")
    for record in ({"stage": "../x", "files": ["a"]}, {"stage": ".mmtasks-stage-0123456789ab", "files": ["../../secret"]}, "[}"):
        (out / writer.SWITCH_RECORD).write_text(json.dumps(record) if not isinstance(record, str) else record)
        assert not finish_interrupted_switch(out)
        assert not (out / writer.SWITCH_RECORD).exists()
    assert (tmp_path / "secret").read_text() == "s"


def test_judge_agreement_json_is_written_whole_and_never_through_a_link(tmp_path: Path) -> None:
    from tests.agreement.test_judge_agreement import _run, _sample

    a = _run(tmp_path / "a", [_sample("d", [{"score": v} for v in (3, 4, 5, 2)])])
    b = _run(tmp_path / "b", [_sample("d", [{"score": v} for v in (3, 4, 4, 2)])])
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    report = tmp_path / "report.json"
    report.symlink_to(victim)
    from mmtasks.cli import main

    main(["judge", "agreement", str(a), str(b), "--json", str(report), "--resamples", "10"])
    assert victim.read_text() == "precious\n"  # before: overwritten through the link
    assert not report.is_symlink() and json.loads(report.read_text())["n_items"] == 4


def test_figures_are_never_written_through_a_link(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from mmtasks.leaderboard.cli import main

    out = tmp_path / "figures"
    assert main(["plot", str(ONE_RUN), "--out", str(out), "--format", "svg"]) == 0  # earlier figures
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (out / "realbench_bar.svg").unlink()
    (out / "realbench_bar.svg").symlink_to(victim)
    assert main(["plot", str(ONE_RUN), "--out", str(out), "--format", "svg"]) == 0
    assert victim.read_text() == "precious\n"  # before: overwritten through the link
    assert (out / "realbench_bar.svg").read_text().lstrip().startswith("<?xml")


def test_a_folder_in_the_way_is_one_line_and_nothing_changes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_file_set(out, {"a.txt": b"old a"})
    (out / "b.txt").mkdir()
    with pytest.raises(OutputError, match="a folder is in the way; kept: every file of the previous files, unchanged"):
        write_file_set(out, {"a.txt": b"new a", "b.txt": b"new b"})
    assert (out / "a.txt").read_bytes() == b"old a"


def test_the_response_cache_is_never_written_through_a_link(tmp_path: Path) -> None:
    from mmtasks.cache.response_cache import CacheError, ResponseCache

    victim = tmp_path / "victim.db"
    victim.write_bytes(b"precious")
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    for name in ("responses.sqlite", "responses.sqlite-wal"):
        (cache_dir / name).symlink_to(victim)
        with pytest.raises(CacheError, match="symlink; refusing to write through it"):  # before: SQLite wrote through it
            ResponseCache(cache_dir)
        (cache_dir / name).unlink()
    assert victim.read_bytes() == b"precious"
