"""The Python API: mmtasks.evaluate runs on the sample data and returns the results.json
layout with the samples; options are validated like the CLI's flags; the CLI is a thin
layer over the same function; `import mmtasks` and the random path stay free of torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import mmtasks
from mmtasks.cli import main
from mmtasks.errors import ConfigError
from tests.cli_process import REPO, SAMPLE, VOLATILE_RESULT_KEYS


def test_evaluate_on_the_sample_data(tmp_path: Path):
    result = mmtasks.evaluate(tasks="realbench_ranking_easy,mmdu", model="random", judge="random",
                              data_dir=SAMPLE, output_path=tmp_path / "out", use_cache=False)
    assert isinstance(result, dict) and isinstance(result, mmtasks.EvaluationResult)
    assert set(result["results"]) == {"realbench_ranking_easy", "mmdu"}
    assert result["n-samples"]["realbench_ranking_easy"] == {"original": 9, "effective": 9}
    assert result["config"]["model"] == "random" and result["config"]["judge"] == "random"
    # the dictionary is what results.json holds
    written = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert json.loads(json.dumps(result, default=str))["results"] == written["results"]
    assert result.results_path == tmp_path / "out" / "results.json"
    # samples: per task, in document order, scored
    ranking = list(result.samples["realbench_ranking_easy"])
    assert [s.doc_index for s in ranking] == list(range(9))
    acc = sum(s.metrics["acc"] for s in ranking) / len(ranking)
    assert result["results"]["realbench_ranking_easy"]["acc"] == pytest.approx(acc)
    assert len(result.samples["mmdu"]) == 6 and all("overall" in s.metrics for s in result.samples["mmdu"])
    assert result.problems == {}
    assert result["run_stats"]["total_evaluation_time_s"] > 0


def test_evaluate_without_output_path_keeps_slim_samples():
    result = mmtasks.evaluate(["realbench_ranking_hard"], "random", data_dir=SAMPLE, limit=3, use_cache=False)
    assert result["n-samples"]["realbench_ranking_hard"] == {"original": 9, "effective": 3}
    assert [s.doc_id for s in result.samples["realbench_ranking_hard"]] and result.results_path is None


def test_cli_and_api_give_the_same_results(tmp_path: Path, capsys):
    args = ["--tasks", "realbench_retrieval_hard", "--model", "random", "--data-dir", str(SAMPLE),
            "--no-cache", "--seed", "3", "--output-path", str(tmp_path / "cli")]
    assert main(args) == 0
    capsys.readouterr()
    api = mmtasks.evaluate("realbench_retrieval_hard", "random", data_dir=SAMPLE, use_cache=False, seed=3,
                           output_path=tmp_path / "api")
    cli = json.loads((tmp_path / "cli" / "results.json").read_text(encoding="utf-8"))
    strip = lambda d: {k: v for k, v in json.loads(json.dumps(d, default=str)).items() if k not in VOLATILE_RESULT_KEYS}  # noqa: E731
    assert strip(cli) == strip(api)


@pytest.mark.parametrize(("options", "field", "text"), [
    ({"limit": 0}, "--limit", "must be at least 1"),
    ({"limit": -1}, "--limit", "must be at least 1"),
    ({"max_live": 0}, "--max-live", "must be at least 1"),
    ({"batch_size": 0}, "--batch-size", "must be at least 1"),
    ({"image_mode": "tiled"}, "--image-mode", "'separate' or 'combined'"),
    ({"bogus": 1}, "bogus", "unknown option 'bogus'"),
    ({"judge_args": "base_url"}, "judge_args", "key=value"),
])
def test_bad_options_are_config_errors(options, field, text):
    with pytest.raises(ConfigError) as info:
        mmtasks.evaluate("realbench_ranking_easy", "random", data_dir=SAMPLE, **options)
    assert info.value.field == field and text in str(info.value)


def test_model_args_as_text_or_dict():
    from mmtasks.config.run_config import RunConfig

    assert RunConfig.build(tasks="a, b,", model="random").tasks == ["a", "b"]
    with pytest.raises(ConfigError, match="no task given"):
        RunConfig.build(tasks=" , ", model="random")


def test_import_is_cheap_and_the_random_path_needs_no_torch(tmp_path: Path):
    code = (
        "import sys, mmtasks\n"
        "heavy = ('torch', 'transformers', 'mmtasks.runner', 'pydantic', 'openai')\n"
        "print('import:', [m for m in heavy if m in sys.modules])\n"
        f"mmtasks.evaluate('realbench,mmdu,mmrc', 'random', judge='random', data_dir={str(SAMPLE)!r}, use_cache=False)\n"
        "print('run:', [m for m in ('torch', 'transformers') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, check=True).stdout
    assert "import: []" in out and "run: []" in out, out


def test_docstring_examples_run(monkeypatch):
    """The examples in mmtasks/api.py are tests: each line's output is what the API gives."""
    import doctest

    import mmtasks.api

    monkeypatch.chdir(REPO)
    outcome = doctest.testmod(mmtasks.api, optionflags=doctest.ELLIPSIS, report=True)
    assert outcome.attempted >= 8 and outcome.failed == 0


def test_samples_carry_replies_parsed_answers_targets_and_verdicts(tmp_path: Path):
    for output in (tmp_path / "out", None):  # read lazily from the samples file, or kept in memory
        result = mmtasks.evaluate("realbench_ranking_easy,llava_bench_wild", "random", judge="random", data_dir=SAMPLE,
                                  output_path=output, limit=3, use_cache=False)
        for sample in result.samples["realbench_ranking_easy"]:
            assert sample.responses and sample.responses[-1] == sample.parsed and sample.target in "ABCD"
            assert sample.prompt and sample.metrics["acc"] == (100.0 if sample.parsed == sample.target else 0.0)
        judged = result.samples["llava_bench_wild"]
        assert all(s.judge and s.judge[0]["fields"] is not None and s.target for s in judged)
        if output is not None:
            written = [json.loads(line) for line in (output / "samples" / "llava_bench_wild.jsonl").read_text().splitlines()]
            assert [w["responses"] for w in written] == [s.responses for s in judged]


def test_include_path_alias_and_did_you_mean_on_options(tmp_path: Path):
    from mmtasks.config.run_config import RunConfig

    assert RunConfig.build(tasks="a", model="random", include_path=str(tmp_path)).include_paths == [tmp_path]
    assert RunConfig.build(tasks="a", model="random", include_path=[tmp_path]).include_paths == [tmp_path]
    for bad, good in (("include_pahts", "include_paths"), ("outptu_path", "output_path"), ("use_cahce", "use_cache")):
        with pytest.raises(ConfigError) as info:
            mmtasks.evaluate("realbench_ranking_easy", "random", data_dir=SAMPLE, **{bad: 1})
        assert info.value.field == bad and f"did you mean {good!r}?" in str(info.value)
