"""The tests' own helpers import as ``tests.*`` even when an installed distribution ships a
top-level ``tests`` package of its own (latex2sympy2's wheel does): before ``tests/__init__.py``,
this folder was a namespace package, which loses to any regular package on ``sys.path``, and every
``from tests.chat_server import ...`` failed once such a wheel was installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())


def test_an_installed_tests_package_does_not_shadow_ours(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    (site / "tests").mkdir(parents=True)
    (site / "tests" / "__init__.py").write_text("SHADOW = True\n")
    code = ("import sys; sys.path.append(sys.argv[1]); import tests, tests.chat_wire; "
            "assert not hasattr(tests, 'SHADOW'), tests.__file__; print(tests.__file__)")
    out = subprocess.run([sys.executable, "-c", code, str(site)], cwd=REPO, capture_output=True, text=True,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve() == (REPO / "tests" / "__init__.py").resolve()
