"""End-to-end runs of the CLI on the bundled RealBench sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample"
ALL = ["realbench", "realbench_contamination", "realbench_unanswerable"]


def run(tmp_path: Path, out: str, *extra: str, tasks: str = ",".join(ALL)) -> dict:
    code = main(["--tasks", tasks, "--data-dir", str(SAMPLE), "--output-path", str(tmp_path / out),
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra])
    assert code == 0
    return json.loads((tmp_path / out / "results.json").read_text())


def samples(tmp_path: Path, out: str, task: str) -> list[dict]:
    lines = (tmp_path / out / "samples" / f"{task}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_random_baseline_all_subtasks(tmp_path):
    res = run(tmp_path, "r", "--model", "random")
    expected = {f"realbench_{t}_{d}" for t in ("retrieval", "ranking", "extraction", "reasoning") for d in ("easy", "hard")}
    expected |= {"realbench_ranking_easy_shuffled", "realbench_ranking_hard_shuffled", "realbench_unanswerable"}
    assert set(res["results"]) == expected
    for task, metrics in res["results"].items():
        primary = "rouge_l" if "extraction" in task or "reasoning" in task else "acc"
        assert 0 <= metrics[primary] <= 100 and metrics[f"{primary}_stderr"] >= 0
        assert res["n-samples"][task] == {"original": 9, "effective": 9}
    # the group average is the plain mean of the 8 subtasks' headline metrics
    heads = [res["results"][t]["rouge_l" if ("extraction" in t or "reasoning" in t) else "acc"]
             for t in res["groups"]["realbench"] and expected - {"realbench_ranking_easy_shuffled", "realbench_ranking_hard_shuffled", "realbench_unanswerable"}]
    assert res["groups"]["realbench"]["average"] == pytest.approx(sum(heads) / 8)
    assert res["groups"]["realbench"]["n_tasks"] == 8
    # breakdowns by image count and category
    bd = res["breakdowns"]["realbench_ranking_hard"]
    assert set(bd["n_images"]) <= {"1-6", "7-9", "10-18"} and sum(r["n"] for r in bd["n_images"].values()) == 9
    assert sum(r["n"] for r in bd["category"].values()) == 9
    # lm-evaluation-harness layout
    for key in ("results", "groups", "configs", "versions", "n-samples", "higher_is_better", "config", "git_hash", "date"):
        assert key in res
    # samples: doc_id is the record id, every reply, parsed answer, target, metrics
    rows = samples(tmp_path, "r", "realbench_ranking_easy")
    records = [json.loads(l) for l in (SAMPLE / "realbench" / "ranking_easy.jsonl").read_text().splitlines()]
    assert [r["doc_id"] for r in rows] == [rec["id"] for rec in records]
    first = rows[0]
    assert first["target"] == records[0]["answer"] and first["parsed"] in "ABCD" and first["responses"]
    assert first["metrics"]["acc"] == (100.0 if first["parsed"] == first["target"] else 0.0)
    images = [p["image"] for p in first["prompt"][0]["content"] if p["type"] == "image"]
    assert len(images) == len(records[0]["images"]) and images[0].endswith(records[0]["images"][0])


def test_random_is_seeded(tmp_path):
    a = run(tmp_path, "a", "--model", "random", "--seed", "3", tasks="realbench_ranking")
    b = run(tmp_path, "b", "--model", "random", "--seed", "3", "--batch-size", "2", tasks="realbench_ranking")
    c = run(tmp_path, "c", "--model", "random", "--seed", "4", tasks="realbench_ranking")
    assert samples(tmp_path, "a", "realbench_ranking_hard") == samples(tmp_path, "b", "realbench_ranking_hard")
    assert [s["responses"] for s in samples(tmp_path, "a", "realbench_ranking_hard")] != [s["responses"] for s in samples(tmp_path, "c", "realbench_ranking_hard")]
    assert a["results"] == b["results"] and a["results"] != c["results"]


def test_replay_reproduces_scores(tmp_path):
    original = run(tmp_path, "orig", "--model", "random", "--seed", "7")
    replayed = run(tmp_path, "replay", "--model", f"replay:{tmp_path / 'orig'}")
    for task, metrics in original["results"].items():
        assert replayed["results"][task] == metrics, task


def test_replay_predictions_file_and_reask(tmp_path):
    """A predictions JSONL: an unparseable first reply is re-asked and gets the next recorded reply."""
    rec = json.loads((SAMPLE / "realbench" / "ranking_easy.jsonl").read_text().splitlines()[0])
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"task": "realbench_ranking_easy", "doc_id": rec["id"],
                                 "responses": ["I am not sure", f"The answer is: {rec['answer']}"]}) + "\n")
    code = main(["--tasks", "realbench_ranking_easy", "--model", f"replay:{preds}", "--limit", "1",
                 "--data-dir", str(SAMPLE), "--output-path", str(tmp_path / "p"), "--no-progress", "--no-cache"])
    assert code == 0
    (row,) = samples(tmp_path, "p", "realbench_ranking_easy")
    assert row["responses"] == ["I am not sure", f"The answer is: {rec['answer']}"]
    assert row["parsed"] == rec["answer"] and row["metrics"]["acc"] == 100.0 and not row["unparsed"]


def test_unparseable_answers_are_reasked_five_times_then_counted(tmp_path):
    recs = [json.loads(l) for l in (SAMPLE / "realbench" / "ranking_easy.jsonl").read_text().splitlines()]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"task": "realbench_ranking_easy", "doc_id": r["id"], "responses": ["no idea"]}) + "\n" for r in recs))
    code = main(["--tasks", "realbench_ranking_easy", "--model", f"replay:{preds}", "--data-dir", str(SAMPLE),
                 "--output-path", str(tmp_path / "u"), "--no-progress", "--no-cache"])
    assert code == 1  # unparsed answers are problems unless --allow-failures
    res = json.loads((tmp_path / "u" / "results.json").read_text())
    assert res["problems"]["realbench_ranking_easy"]["unparsed"] == len(recs)
    assert "unparsed" not in res["results"]["realbench_ranking_easy"]  # a counter, not a metric
    assert res["results"]["realbench_ranking_easy"]["acc"] == 0.0
    row = samples(tmp_path, "u", "realbench_ranking_easy")[0]
    assert len(row["responses"]) == 6 and row["unparsed"] and row["parsed"] is None


def test_shuffled_options_change_the_letter(tmp_path):
    run(tmp_path, "s", "--model", "random", tasks="realbench_ranking_easy,realbench_ranking_easy_shuffled")
    plain = {r["doc_id"]: r for r in samples(tmp_path, "s", "realbench_ranking_easy")}
    shuffled = samples(tmp_path, "s", "realbench_ranking_easy_shuffled")
    for row in shuffled:
        assert row["target"] != plain[row["doc_id"]]["target"]
        # the correct order is the same list of images, under a different letter
        text_plain = plain[row["doc_id"]]["prompt"][0]["content"][0]["text"]
        text_shuf = row["prompt"][0]["content"][0]["text"]
        order = next(l for l in text_plain.splitlines() if l.startswith(f"{plain[row['doc_id']]['target']}. ")).split(". ", 1)[1]
        assert f"{row['target']}. {order}" in text_shuf


def test_combined_image_mode(tmp_path):
    run(tmp_path, "c", "--model", "random", "--image-mode", "combined", tasks="realbench_ranking_hard")
    row = samples(tmp_path, "c", "realbench_ranking_hard")[0]
    images = [p["image"] for p in row["prompt"][0]["content"] if p["type"] == "image"]
    assert len(images) == 1 and images[0].startswith("combined(")
    from mmtasks.core.pixels import combine
    from PIL import Image as PIL

    parts = [PIL.new("RGB", (10, 20), "red"), PIL.new("RGB", (30, 10), "blue"), PIL.new("RGB", (5, 5), "green")]
    grid = combine(parts, gap=2)
    assert grid.size == (2 * 30 + 2, 2 * 20 + 2)  # 2x2 grid of 30x20 cells
    assert grid.getpixel((0, 0)) == (255, 0, 0) and grid.getpixel((32, 0)) == (0, 0, 255)


def test_new_benchmark_from_an_include_path(tmp_path):
    """Adding a benchmark is dropping a folder of YAML into an include path."""
    bench = tmp_path / "my_tasks" / "colours"
    bench.mkdir(parents=True)
    (bench / "colour_count.yaml").write_text("""\
task: colour_count
group: my_bench
dataset:
  local: {dir: realbench, file: retrieval_easy.jsonl}
prompt:
  user: |
    {% for i in range(n_images) %}{{ image(i) }}{% endfor %}
    How many images are there? Answer with a number.
target: "{{ doc.images | length }}"
answer: {parser: integer, retries: 1, space: {kind: image_index}}
metrics:
  - {name: acc, function: exact_integer}
""")
    code = main(["tasks", "--include-path", str(tmp_path / "my_tasks")])
    assert code == 0
    res = run(tmp_path, "n", "--model", "random", "--include-path", str(tmp_path / "my_tasks"), tasks="my_bench")
    assert set(res["results"]) == {"colour_count"} and res["groups"]["my_bench"]["n_tasks"] == 1
    row = samples(tmp_path, "n", "colour_count")[0]
    assert row["prompt"][0]["content"][-1]["text"].startswith("How many images")


@pytest.mark.slow
def test_hf_backend_end_to_end(tmp_path, tiny_llava_dir):
    """The hf: backend through the CLI: several images per request, a batch of several requests."""
    res = run(tmp_path, "hf", "--model", f"hf:{tiny_llava_dir}", "--batch-size", "4", "--limit", "4",
              "--model-args", "dtype=float32", "--allow-failures", tasks="realbench_ranking_easy,realbench_extraction_hard")
    assert res["n-samples"]["realbench_ranking_easy"]["effective"] == 4
    assert res["run_stats"]["sent"]["model"] >= 8
    rows = samples(tmp_path, "hf", "realbench_extraction_hard")
    assert all(isinstance(r["responses"][0], str) and r["responses"][0] for r in rows)
    assert all(len([p for p in r["prompt"][0]["content"] if p["type"] == "image"]) >= 2 for r in rows)
    assert res["config"]["model_spec"]["args"]["dtype"] == "float32"


def test_random_text_answers_come_from_what_the_model_is_shown(tmp_path):
    """The chance baseline draws text answers from the question, never from the record's gold answer."""
    run(tmp_path, "t", "--model", "random", tasks="realbench_extraction_hard,realbench_reasoning_easy")
    for task, file in (("realbench_extraction_hard", "extraction_hard.jsonl"), ("realbench_reasoning_easy", "reasoning_easy.jsonl")):
        records = {r["id"]: r for r in map(json.loads, (SAMPLE / "realbench" / file).read_text().splitlines())}
        for row in samples(tmp_path, "t", task):
            reply = row["responses"][0]
            assert reply in " ".join(records[row["doc_id"]]["text"].split()), (task, row["doc_id"], reply)
