"""Issue 31, finding 11: regular expressions from task files are bounded.

``prompt.image_tags: {pattern: '<image>(?:x+x+)+y'}`` with a record of ``<image>`` + 40 ``x``
used to hold ``mmtasks check`` for ever (templates had their 5 s, tag splitting no bound, and the
pattern check accepted it). Now nested quantifiers are refused when the task loads (one line
naming the field), and every task pattern runs in the ``regex`` module under a time bound, so
one that backtracks some other way is an error of its document, never a hang."""

from __future__ import annotations

import pytest

from mmtasks.config import task_regex
from mmtasks.config.task_regex import PatternTimeout, compile_task_pattern, nested_quantifier
from mmtasks.errors import ConfigError, DataError
from mmtasks.scoring.text_metrics import ExactMatchArgs, exact_match_form
from mmtasks.templates import split_on_tags
from tests.documents.test_image_tags import IMGS, make_task, rendered


@pytest.mark.timeout(120)
def test_a_nested_quantifier_in_image_tags_is_one_line_at_load(tmp_path, capsys) -> None:
    records = [{"id": "a", "images": IMGS, "q": "<image>" + "x" * 40}]
    with pytest.raises(ConfigError) as info:  # before: check never answered
        make_task(tmp_path, records, "  image_tags: {pattern: '<image>(?:x+x+)+y'}\n  user: '{{ doc.q }}'\n")
    text = str(info.value)
    assert "prompt.image_tags.pattern" in text and "nested quantifiers ('+' inside '+')" in text


@pytest.mark.parametrize(("pattern", "nested"), [
    (r"<image>(?:x+x+)+y", "'+' inside '+'"), (r"(a*)*", "'*' inside '*'"), (r"(a{2,3})+b", "'{2,3}' inside '+'"),
    (r"(?>a+)+", "'+' inside '+'"), (r"(?:(?:a|b+)c)*", "'+' inside '*'"),
    (r"<image (\d+)>", None), (r"<image>", None), (r"\[img(\d)\]", None), (r"(?:ab)+", None), (r"(a?)+", None),
])
def test_which_patterns_nest_quantifiers(pattern: str, nested: str | None) -> None:
    assert nested_quantifier(pattern) == nested


def test_a_slow_pattern_of_another_kind_is_an_error_of_its_document(tmp_path, monkeypatch) -> None:
    """``(?:x|xx)+y`` nests no quantifier but backtracks exponentially on a run of ``x``: the time
    bound stops it (lowered here so the test is quick; the pattern would run for years)."""
    monkeypatch.setattr(task_regex, "MAX_MATCH_SECONDS", 0.2)
    records = [{"id": "slow-doc", "images": IMGS, "q": "<image>" + "x" * 60 + "!y"}]
    task = make_task(tmp_path, records, "  image_tags: {pattern: '<image>(?:x|xx)+y'}\n  user: '{{ doc.q }}'\n")
    with pytest.raises(DataError) as info:
        rendered(task, tmp_path)
    assert "slow-doc" in str(info.value) and "ran for more than 0.2 s" in str(info.value)
    with pytest.raises(PatternTimeout):
        split_on_tags(["x" * 60 + "!y"], compile_task_pattern("(?:x|xx)+y"), 3)
    with pytest.raises(DataError, match="regexes_to_ignore"):
        exact_match_form("x" * 60 + "!y", ExactMatchArgs(regexes_to_ignore=["(?:x|xx)+y"]))


def test_regexes_to_ignore_nesting_quantifiers_are_refused() -> None:
    with pytest.raises(ValueError, match="nested quantifiers"):
        ExactMatchArgs(regexes_to_ignore=["(a+)+$"])
    assert exact_match_form("The answer: B.", ExactMatchArgs(regexes_to_ignore=["^The answer: ", r"\.$"])) == "B"
