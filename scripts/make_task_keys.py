#!/usr/bin/env python
"""Write docs/task-keys.md, the task-key reference page, from the config models.

    python scripts/make_task_keys.py

The page is :func:`mmtasks.config.reference.task_keys_markdown`: every key of a task YAML with
its type, default, range and docstring, read from ``TaskConfig`` and the models nested in it.
tests/config/test_task_keys_page.py fails when the page in the repository differs from what this
writes now: run this after changing a config model.
"""

from __future__ import annotations

from pathlib import Path

from mmtasks.config.reference import PAGE, task_keys_markdown

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    path = ROOT / PAGE
    path.write_text(task_keys_markdown(), encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
