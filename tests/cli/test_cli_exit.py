"""The command's quick exit (``mmtasks.cli.exit_now``): what Python's exit does that matters still happens."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_exit_now_runs_atexit_handlers_and_flushes(tmp_path: Path) -> None:
    proc = _python("""
        import atexit, logging, sys
        from mmtasks.cli import exit_now
        atexit.register(lambda: print("atexit ran"))
        handler = logging.FileHandler(%r, delay=True)
        logging.getLogger("t").addHandler(handler)
        logging.getLogger("t").warning("logged")
        sys.stdout.write("buffered, no newline")
        exit_now(3)
    """ % str(tmp_path / "log.txt"), tmp_path)
    assert proc.returncode == 3
    assert proc.stdout == "buffered, no newlineatexit ran\n"
    assert (tmp_path / "log.txt").read_text() == "logged\n"


def test_exit_now_waits_for_a_running_thread(tmp_path: Path) -> None:
    # a non-daemon thread still working after the grace period: Python's own exit waits for it
    marker = tmp_path / "written"
    proc = _python(f"""
        import threading, time
        import mmtasks.cli as cli
        cli._THREAD_GRACE_S = 0.05
        def work():
            time.sleep(0.5)
            open({str(marker)!r}, "w").write("done")
        threading.Thread(target=work).start()
        cli.exit_now(0)
    """, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text() == "done"


def test_the_command_exits_with_mains_code(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mmtasks", "--tasks", "no_such_task", "--model", "random"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "unknown task or group 'no_such_task'" in proc.stderr
