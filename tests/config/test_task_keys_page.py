"""docs/task-keys.md is what scripts/make_task_keys.py writes from the config models now: a
key added, renamed, re-typed or re-documented in the code without regenerating the page fails here."""

from __future__ import annotations

from pathlib import Path

from mmtasks.config.reference import PAGE, task_keys_markdown
from mmtasks.config.task_config import TaskConfig

ROOT = Path(__file__).resolve().parents[2]


def test_the_task_key_page_is_current() -> None:
    page = (ROOT / PAGE).read_text(encoding="utf-8")
    assert page == task_keys_markdown(), "docs/task-keys.md is stale: run `python scripts/make_task_keys.py`"


def test_every_key_of_every_nested_model_is_on_the_page_with_a_description() -> None:
    page = task_keys_markdown()
    for key in TaskConfig.model_fields:
        assert f"| `{key}` |" in page, key
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    undocumented = [row.split("|")[1].strip() for row in rows if row.rstrip().endswith("|  |")]
    assert not undocumented, undocumented
    for setting in ("top_k", "min_p", "repetition_penalty", "chat_template_kwargs", "reasoning_effort"):
        assert f"| `{setting}` |" in page, setting
    assert "Range: at least 1" in page  # max_new_tokens's bound is shown


def test_a_new_key_makes_the_page_stale(monkeypatch) -> None:
    """The page follows the models: a field added to one shows up (so the first test can fail)."""
    from pydantic.fields import FieldInfo

    from mmtasks.config import task_config

    fields = dict(task_config.PromptConfig.model_fields)
    fields["new_key"] = FieldInfo(annotation=str, default="", description="A key added to the code.")
    monkeypatch.setattr(task_config.PromptConfig, "model_fields", fields)
    assert "| `new_key` | str | `\"\"` | A key added to the code. |" in task_keys_markdown()
