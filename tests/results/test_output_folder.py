"""An output folder belongs to one run at a time (issue 12).

A second run into a folder in use is refused with one line (exit 2) and touches nothing; a
folder holding another run's results is refused unless ``--overwrite``, and then none of the
old run's samples survive; the same command again resumes. Files are created exclusively,
never through a symlink, with the umask's mode; a full disk is one line saying what was kept.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from mmtasks.cli import main
from mmtasks.core.sample import Sample
from mmtasks.results import files, writer
from mmtasks.results.files import SamplesWriter, atomic_write_text, claim_output_folder
from mmtasks.results.writer import create_exclusive
from tests.builders import ranking_record, write_realbench
from tests.chat_server import ChatServer
from tests.cli_process import SAMPLE, cli_env, start_cli, wait_until
from tests.realbench_oracle import RealBenchOracle


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("mmtasks: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    write_realbench(tmp_path / "data", "ranking_easy.jsonl", [ranking_record(f"r-{i}") for i in range(4)])
    write_realbench(tmp_path / "data", "ranking_hard.jsonl", [ranking_record(f"h-{i}") for i in range(3)])
    return tmp_path / "data"


def run(capsys: pytest.CaptureFixture[str], data: Path, tmp_path: Path, out: Path, *extra: str,
        tasks: str = "realbench_ranking_easy") -> tuple[int, str]:
    code = main(["--tasks", tasks, "--model", "random", "--data-dir", str(data), "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress", "--output-path", str(out), *extra])
    return code, capsys.readouterr().err


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file()}


class HeldReplies:
    """A chat server reply function that holds every call until :meth:`release`."""

    def __init__(self) -> None:
        self.oracle = RealBenchOracle()
        self.waiting = 0
        self._go = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> str:
        with self._lock:
            self.waiting += 1
        self._go.wait(120)
        return self.oracle(body)

    def release(self) -> None:
        self._go.set()


def test_two_runs_at_once_into_one_folder_the_second_is_refused_and_touches_nothing(tmp_path: Path) -> None:
    """The reproduction: on the old code the second finisher wrote n=0 results and exited 0."""
    held = HeldReplies()
    out = tmp_path / "out"
    args = ["--tasks", "realbench_ranking_easy", "--model", "openai:test-model", "--data-dir", str(SAMPLE),
            "--output-path", str(out), "--no-progress"]
    with ChatServer(reply=held) as server:
        first = start_cli([*args, "--cache-dir", str(tmp_path / "cache1")], cli_env(server.base_url), tmp_path / "logs")
        try:
            wait_until(lambda: held.waiting > 0, timeout=60, what="the first run to send requests")
            before = snapshot(out)
            second = start_cli([*args, "--cache-dir", str(tmp_path / "cache2")], cli_env(server.base_url), tmp_path / "logs")
            assert second.wait(60) == 2, second.stderr
            line = error_line(second.stderr)
            assert "in use by another run" in line and str(out) in line and f"pid {first.process.pid}" in line
            assert snapshot(out) == before
            assert not (tmp_path / "cache2").exists()  # refused before anything was set up
        finally:
            held.release()
        assert first.wait(120) == 0, first.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["results"]["realbench_ranking_easy"]["acc"] is not None
    assert len((out / "samples" / "realbench_ranking_easy.jsonl").read_text().splitlines()) == 9


def test_folder_in_use_is_reported_before_any_model_is_loaded(capsys, data, tmp_path) -> None:
    out = tmp_path / "out"
    with claim_output_folder(out, "another run", {"model": "x"}):
        code = main(["--tasks", "realbench_ranking_easy", "--model", "hf:/no/such/checkpoint", "--data-dir", str(data),
                     "--no-progress", "--output-path", str(out)])
        err = capsys.readouterr().err
    assert code == 2
    assert "in use by another run" in error_line(err) and "checkpoint" not in err
    assert sorted(p.name for p in out.iterdir()) == [".mmtasks-run.json", ".mmtasks.lock"]


def test_the_lock_is_released_when_the_run_ends(capsys, data, tmp_path) -> None:
    out = tmp_path / "out"
    assert run(capsys, data, tmp_path, out)[0] == 0
    with claim_output_folder(out, "x", {}, overwrite=True):  # would raise if the finished run still held it
        pass


def test_another_runs_results_are_refused_unless_overwrite(capsys, data, tmp_path) -> None:
    out = tmp_path / "out"
    assert run(capsys, data, tmp_path, out, "--seed", "1")[0] == 0
    before = snapshot(out)
    code, err = run(capsys, data, tmp_path, out, "--seed", "2")
    assert code == 2
    line = error_line(err)
    assert "holds the results of another run (model random, tasks realbench_ranking_easy)" in line and "--overwrite" in line
    assert snapshot(out) == before
    code, err = run(capsys, data, tmp_path, out, "--seed", "2", "--overwrite")
    assert code == 0, err
    assert json.loads((out / "results.json").read_text())["config"]["seed"] == 2


def test_a_folder_of_results_without_a_fingerprint_is_refused(capsys, data, tmp_path) -> None:
    out = tmp_path / "out"
    (out / "samples").mkdir(parents=True)
    (out / "samples" / "realbench_ranking_easy.jsonl").write_text('{"doc_index": 0}\n')
    code, err = run(capsys, data, tmp_path, out)
    assert code == 2 and "holds the results of another run (an unknown run)" in error_line(err)


def test_the_same_command_again_resumes_into_its_own_folder(capsys, data, tmp_path) -> None:
    out = tmp_path / "out"
    assert run(capsys, data, tmp_path, out)[0] == 0
    first = (out / "results.json").read_text()
    code, err = run(capsys, data, tmp_path, out)
    assert code == 0, err
    strip = lambda text: {k: v for k, v in json.loads(text).items() if k not in ("date", "run_stats")}  # noqa: E731
    assert strip((out / "results.json").read_text()) == strip(first)


def test_overwrite_leaves_none_of_the_old_runs_samples_for_replay(capsys, data, tmp_path) -> None:
    """A reused folder must not let ``replay:`` judge another run's samples as this run's."""
    out = tmp_path / "out"
    both = "realbench_ranking_easy,realbench_ranking_hard"
    assert run(capsys, data, tmp_path, out, "--seed", "1", tasks=both)[0] == 0
    assert (out / "samples" / "realbench_ranking_hard.jsonl").exists()
    assert run(capsys, data, tmp_path, out, "--seed", "2", "--overwrite")[0] == 0
    assert sorted(p.name for p in (out / "samples").iterdir()) == ["realbench_ranking_easy.jsonl"]
    code, err = run(capsys, data, tmp_path, tmp_path / "replayed", "--model", f"replay:{out}", tasks=both)
    assert code != 0 and "realbench_ranking_hard" in err


def test_partial_file_symlink_is_never_followed(tmp_path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "t.jsonl.partial").symlink_to(victim)
    writer = SamplesWriter(samples)
    writer.write(Sample(task="t", doc_id="d0", doc_index=0))
    writer.finish("t")
    assert victim.read_text() == "precious\n"
    assert json.loads((samples / "t.jsonl").read_text())["doc_id"] == "d0"


def test_temporary_files_are_created_exclusively_and_not_through_links(tmp_path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "link").symlink_to(victim)
    with pytest.raises(FileExistsError):
        create_exclusive(tmp_path / "link")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileExistsError):
        create_exclusive(tmp_path / "dangling")
    assert not (tmp_path / "nowhere").exists() and victim.read_text() == "precious\n"


def test_a_samples_folder_that_is_a_symlink_is_refused(capsys, data, tmp_path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (out / "samples").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    code, err = run(capsys, data, tmp_path, out)
    assert code == 2 and "symlink" in error_line(err)
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_output_files_follow_the_umask(capsys, data, tmp_path) -> None:
    old = os.umask(0o022)
    try:
        assert run(capsys, data, tmp_path, tmp_path / "out")[0] == 0
    finally:
        os.umask(old)
    for path in (tmp_path / "out" / "results.json", tmp_path / "out" / "samples" / "realbench_ranking_easy.jsonl"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


def test_output_path_that_is_a_file_is_one_line_before_models_load(capsys, data, tmp_path) -> None:
    target = tmp_path / "taken"
    target.write_text("not a folder\n")
    code = main(["--tasks", "realbench_ranking_easy", "--model", "hf:/no/such/checkpoint", "--data-dir", str(data),
                 "--no-progress", "--output-path", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and "--output-path is a file, not a folder" in error_line(err)
    assert target.read_text() == "not a folder\n"


def test_output_path_naming_results_json_is_refused_with_the_folder_as_hint(capsys, data, tmp_path) -> None:
    code, err = run(capsys, data, tmp_path, tmp_path / "x" / "results.json")
    assert code == 2
    line = error_line(err)
    assert "names a folder, not a file" in line and f"--output-path {tmp_path / 'x'}" in line
    assert not (tmp_path / "x").exists()


class FullDisk:
    """``create_exclusive`` on a disk with ``room`` bytes left: writes past it fail with ENOSPC."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.real = writer.create_exclusive

    def __call__(self, path: Path, binary: bool = True, **kwargs: Any) -> Any:
        fh = self.real(path, binary, **kwargs)
        disk = self

        class Limited:
            def __getattr__(self, name: str) -> Any:
                return getattr(fh, name)

            def __enter__(self) -> "Limited":
                return self

            def __exit__(self, *exc: object) -> None:
                fh.close()

            def write(self, data: Any) -> int:
                size = len(data.encode() if isinstance(data, str) else data)
                if size > disk.room:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                disk.room -= size
                return fh.write(data)

        return Limited()


def test_full_disk_while_writing_samples_is_one_line_saying_what_was_kept(capsys, data, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(writer, "create_exclusive", FullDisk(room=2000))
    code, err = run(capsys, data, tmp_path, tmp_path / "out")
    assert code == 2
    line = error_line(err)
    assert "No space left on device" in line and "kept:" in line and "response cache" in line
    assert "samples of 'realbench_ranking_easy' written so far" in line


def test_full_disk_while_writing_results_keeps_the_previous_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "results.json"
    atomic_write_text(path, '{"old": true}\n')
    monkeypatch.setattr(writer, "create_exclusive", FullDisk(room=10))
    with pytest.raises(files.OutputError, match="No space left on device; kept: the previous results.json, unchanged"):
        atomic_write_text(path, '{"new": true, "padding": "' + "x" * 100 + '"}\n')
    assert path.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary file left behind


def test_replaying_a_folder_into_itself_is_refused(capsys, data, tmp_path) -> None:
    out = tmp_path / "out"
    assert run(capsys, data, tmp_path, out)[0] == 0
    before = snapshot(out)
    code, err = run(capsys, data, tmp_path, out, "--model", f"replay:{out}", "--overwrite")
    assert code == 2 and "reads the samples that this run would write" in error_line(err)
    assert snapshot(out) == before
