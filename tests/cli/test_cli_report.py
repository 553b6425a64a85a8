"""The results table: 80 columns without wrapping, problem rows only when non-zero, partial
groups not called the benchmark's score, the total evaluation time in the footer."""

from __future__ import annotations

from typing import Any

from mmtasks.report import WIDTH, format_duration, results_table_lines


def _results(**overrides: Any) -> dict[str, Any]:
    long_task = "custom_benchmark_with_a_remarkably_long_task_name_for_tables"
    data: dict[str, Any] = {
        "results": {
            "realbench_ranking_easy": {"alias": "realbench_ranking_easy", "acc": 22.2222, "acc_stderr": 13.48,
                                       "unparsed": 0, "failures": 0},
            "mmdu": {"alias": "mmdu", "creativity": 42.08, "creativity_stderr": 3.89, "creativity_micro": 40.0,
                     "image_relationship_understanding": 51.67, "image_relationship_understanding_stderr": 4.34,
                     "overall": 52.92, "overall_stderr": 5.21, "judged_turns": 24, "judge_failures": 2},
            long_task: {"alias": long_task, "exact_match_with_a_very_long_metric_name_too": 1.0},
        },
        "groups": {"realbench": {"average": 22.2222, "n_tasks": 1, "missing_tasks": [f"t{i}" for i in range(7)]},
                   "mmdu": {"average": 52.92, "n_tasks": 1}},
        "problems": {"realbench_ranking_easy": {"request_failures": 0, "unparsed": 0},
                     "mmdu": {"judge_failures": 2, "request_failures": 0}, long_task: {}},
        "configs": {"mmdu": {"metrics": [{"name": "creativity"}, {"name": "overall", "primary": True}]}},
        "n-samples": {"realbench_ranking_easy": {"original": 300, "effective": 9}, "mmdu": {"original": 6, "effective": 6},
                      long_task: {"original": 4, "effective": 4}},
        "higher_is_better": {"realbench_ranking_easy": {"acc": True},
                             "mmdu": {"creativity": True, "image_relationship_understanding": True, "overall": True},
                             long_task: {"exact_match_with_a_very_long_metric_name_too": True}},
        "config": {"model": "hf:Qwen/Qwen2-VL-72B-Instruct", "judge": "openai:gpt-4o-2024-05-13"},
        "run_stats": {"total_evaluation_time_s": 125.4, "sent": {"model": 40, "judge": 24}, "cached": {"model": 8}},
    }
    data.update(overrides)
    return data


def test_fits_80_columns_without_wrapping():
    lines = results_table_lines(_results())
    assert max(len(line) for line in lines) <= WIDTH
    assert any(line.startswith("custom_benchmark_with_a_remarkably_long_task_name") and line.rstrip().endswith("4")
               for line in lines), "a long name is shortened, its numbers stay on its line"


def test_rows_headline_first_problems_only_when_non_zero():
    lines = results_table_lines(_results())
    text = "\n".join(lines)
    mmdu = lines.index(next(line for line in lines if line.startswith("mmdu ")))
    assert lines[mmdu].split() == ["mmdu", "6"]
    assert lines[mmdu + 1].split() == ["overall", "52.92", "5.21"]
    assert lines[mmdu + 2].split() == ["creativity", "42.08", "3.89"]
    assert "! judge_failures" in text and text.count("! ") == 1  # zero counts get no row
    assert "unparsed" not in text and "judged_turns" not in text
    assert not any(line.split()[:1] in (["failures"], ["request_failures"], ["! request_failures"]) for line in lines)
    assert "creativity_micro" not in text
    ranking = next(line for line in lines if line.startswith("realbench_ranking_easy"))
    assert ranking.split() == ["realbench_ranking_easy", "9/300"]


def test_partial_group_is_not_the_benchmarks_score():
    lines = results_table_lines(_results())
    realbench = next(line for line in lines if line.startswith("realbench ("))
    assert realbench.split() == ["realbench", "(partial", "mean)", "22.22", "1", "of", "8"]
    mmdu = next(line for line in lines if line.startswith("mmdu ("))
    assert mmdu.split() == ["mmdu", "(mean)", "52.92", "1", "task"]
    assert any("not the benchmark's score" in line for line in lines)
    complete = results_table_lines(_results(groups={"mmdu": {"average": 52.92, "n_tasks": 1}}))
    assert not any("partial" in line for line in complete)


def test_footer_gives_the_total_time_and_the_cache_share():
    lines = results_table_lines(_results())
    assert lines[0] == "mmtasks results: hf:Qwen/Qwen2-VL-72B-Instruct (judge openai:gpt-4o-2024-05-13)"
    assert lines[-2] == "total evaluation time 2 min 05 s; 64 requests sent, 8 replies from the cache"
    assert lines[-1] == "8 of 72 replies (11%) came from the response cache (--no-cache asks again)"  # issue 23


def test_durations():
    assert format_duration(3.21) == "3.2 s"
    assert format_duration(125.4) == "2 min 05 s"
    assert format_duration(3 * 3600 + 7 * 60 + 10) == "3 h 07 min"


def test_a_multi_turn_task_shows_its_headline_per_turn():
    """The turn breakdown of results.json, one row a turn under the task: the headline and its n."""
    turns = {"1": {"overall": 60.0, "creativity": 1.0, "n": 6}, "2": {"overall": 45.5, "creativity": 2.0, "n": 5},
             "10": {"overall": None, "n": 0}}
    lines = results_table_lines(_results(breakdowns={"mmdu": {"turn": turns, "category": {"x": {"overall": 1.0}}}}))
    rows = [line.split() for line in lines if line.startswith("  overall turn")]
    assert rows == [["overall", "turn", "1", "60.00", "6"], ["overall", "turn", "2", "45.50", "5"],
                    ["overall", "turn", "10", "-", "0"]]
    assert not any("category" in line or "creativity turn" in line for line in lines)
    # a single-turn task has no turn breakdown: no such rows
    assert not any("turn" in line for line in results_table_lines(_results()) if line.startswith("  acc"))
