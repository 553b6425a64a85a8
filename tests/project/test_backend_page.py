"""The backend authors' page (docs/backends/index.md) is true: its example backend, registered
as the page shows, answers a whole run of the tutorial's benchmark."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import mmtasks
from mmtasks.registry import backends

#: the repository root, wherever under tests/ this file sits
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
PAGE = ROOT / "docs" / "backends" / "index.md"
TUTORIAL = ROOT / "docs" / "tutorial"


def test_the_pages_example_backend_answers_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backends.names()  # the built-ins first, so that the example's registration is undone below
    monkeypatch.setattr(backends, "_entries", dict(backends._entries))
    (code,) = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    exec(compile(code, str(PAGE), "exec"), {"__name__": "echo_backend"})

    result = mmtasks.evaluate(tasks="colour_pick", model="echo:toy", data_dir=TUTORIAL / "data",
                              output_path=tmp_path / "run", include_paths=[TUTORIAL / "my_bench"], use_cache=False)
    samples = result.samples["colour_pick"]
    assert len(samples) == 6
    # the echo is the prompt's last text: no number in it, so each is asked twice (retries: 1)
    for sample in samples:
        assert [r.strip() for r in sample.responses] == ["Which image shows a red square? Answer with the image number."] * 2
    assert result.problems["colour_pick"]["unparsed"] == 6
    assert result["config"]["model"] == "echo:toy"
