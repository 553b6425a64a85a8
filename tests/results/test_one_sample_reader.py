"""Every command that reads a run's samples reads them through the one reader
(:mod:`mmtasks.documents.samples`): the run's own aggregation and the API's ``.samples``
(SamplesFile), ``replay:``, ``compare``, ``view`` and ``judge agreement`` each pass every line
they read through its ``parse_sample`` (spied on here), and its schema's errors are what they
report. An old run folder (no ``failure_kinds``) is read with each failure's kind from its text."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import mmtasks
from mmtasks.cli import main
from mmtasks.core.request import FailureKind
from mmtasks.documents import samples as reader
from mmtasks.documents.samples import SampleRecord, iter_samples
from mmtasks.errors import DataError

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
EXAMPLE = ROOT / "docs" / "examples" / "ask_again"
RUN = ["--include-path", str(EXAMPLE / "tasks"), "--tasks", "ask_again", "--data-dir", str(EXAMPLE / "data"),
       "--no-progress", "--no-cache"]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """The samples files the one reader parsed lines of, by file name, with how many lines."""
    seen: Counter[str] = Counter()
    parse = reader.parse_sample

    def counting(raw: bytes, path: Path, *args: object, **kwargs: object) -> reader.SampleLine:
        seen[Path(path).name] += 1
        return parse(raw, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reader, "parse_sample", counting)
    yield seen


def test_every_command_that_reads_samples_goes_through_the_one_reader(tmp_path: Path, spy: Counter[str],
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    # a run writes its samples, then aggregates them read back from the file
    assert main([*RUN, "--model", f"replay:{EXAMPLE / 'predictions.jsonl'}", "--output-path", str(a)]) == 0
    # replay read the predictions file (4 lines); the aggregation read the run's samples file
    assert spy["predictions.jsonl"] == 4 and spy["ask_again.jsonl"] >= 4
    spy.clear()
    assert main([*RUN, "--model", f"replay:{a}", "--output-path", str(b)]) == 0
    assert spy["ask_again.jsonl"] >= 8  # A's samples replayed, B's read back
    for command in (["compare", str(a), str(b)], ["view", str(a), str(b), "--out", str(tmp_path / "page")],
                    ["judge", "agreement", str(a), str(b)]):
        spy.clear()
        code = main(command)
        assert spy["ask_again.jsonl"] >= 4, command
        assert code in (0, 1), (command, capsys.readouterr().err)  # agreement: no verdict to pair, said so
    spy.clear()
    result = mmtasks.evaluate(tasks="ask_again", include_path=str(EXAMPLE / "tasks"), data_dir=EXAMPLE / "data",
                              model=f"replay:{a}", output_path=tmp_path / "c", use_cache=False, progress=False)
    assert [s.doc_id for s in result.samples["ask_again"]] == ["q1", "q2", "q3", "q4"]
    assert spy["ask_again.jsonl"] >= 8


def test_a_line_the_schema_refuses_is_one_error_naming_file_line_and_field(tmp_path: Path, spy: Counter[str],
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a"
    assert main([*RUN, "--model", f"replay:{EXAMPLE / 'predictions.jsonl'}", "--output-path", str(a)]) == 0
    file = a / "samples" / "ask_again.jsonl"
    lines = file.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["responses"] = ["5", 6]  # a reply is text (or null), never a number
    file.write_text("\n".join([lines[0], json.dumps(bad), *lines[2:]]) + "\n")
    for command in (["compare", str(a), str(a)], ["judge", "agreement", str(a), str(a)],
                    [*RUN, "--model", f"replay:{a}", "--output-path", str(tmp_path / "r")]):
        assert main(command) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{file}:2" in err[0] and "field 'responses.1'" in err[0], (command, err)
    with pytest.raises(DataError, match="not a sample record: metrics expected"):
        list(iter_samples(EXAMPLE / "predictions.jsonl", need=("metrics",)))


def test_an_old_run_folders_failures_get_their_kind_from_their_text() -> None:
    old = SampleRecord.model_validate({"task": "t", "doc_id": "d", "failures": [
        "turn 2: context_overflow: HTTP 400: too long", "truncated: the reply hit the token limit", "HTTP 500"]})
    assert old.failure_kinds is None
    assert old.failure_kinds_or_derived() == [FailureKind.CONTEXT_OVERFLOW, FailureKind.TRUNCATED,
                                              FailureKind.REQUEST_FAILURE]
    new = SampleRecord.model_validate({"task": "t", "doc_id": "d", "failures": ["turn 1: the server said no"],
                                       "failure_kinds": ["context_overflow"]})
    assert new.failure_kinds_or_derived() == [FailureKind.CONTEXT_OVERFLOW]  # the recorded kind, not the text's


def test_a_failures_kind_is_the_one_recorded_with_it_through_the_samples_file(tmp_path: Path) -> None:
    from mmtasks.core.request import Reply
    from mmtasks.core.sample import Sample
    from mmtasks.results.files import SamplesFile, dumps
    from mmtasks.scoring.aggregation import count_problems

    # the backend says the kind; the text need not (a plugin backend's own words)
    refused = Reply.failure("the server said the prompt is too long", FailureKind.CONTEXT_OVERFLOW)
    assert refused.kind is FailureKind.CONTEXT_OVERFLOW and Reply(text="7").kind is None
    # a reply made without a kind: the one its text names
    assert Reply(text=None, error="context_overflow: HTTP 400").kind is FailureKind.CONTEXT_OVERFLOW
    new = Sample(task="t", doc_id="new", doc_index=0)
    new.add_failure(f"turn 1: {refused.error}", refused.kind)
    old = {"task": "t", "doc_id": "old", "doc_index": 1, "failures": ["turn 2: truncated: no answer", "HTTP 500"]}
    file = tmp_path / "t.jsonl"
    file.write_text(dumps(new.to_json()) + "\n" + json.dumps(old) + "\n")
    assert json.loads(file.read_text().splitlines()[0])["failure_kinds"] == ["context_overflow"]
    problems = count_problems(SamplesFile(file))
    assert problems == {"request_failures": 1, "unparsed": 0, "judge_failures": 0, "context_overflow": 1, "truncated": 1}
