"""What every tracker is given (mmtasks/trackers/records.py), on a hand-written results.json object and
samples: the flat metrics (each task's metrics with stderr, coverage, problems, tokens summed over the
replies, groups, run stats), the flat params, and the samples table (first documents, first image)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from mmtasks.trackers.records import COLUMNS, flat_params, metrics_of, table_of, token_totals

RESULTS = {
    "results": {"t1": {"alias": "t1", "acc": 50.0, "acc_stderr": 5.0, "note": None}},
    "groups": {"g": {"average": 50.0, "n_tasks": 1, "partial_average": None, "tasks": ["t1"]}},
    "coverage": {"t1": {"unit": "documents", "scored": 3, "total": 4, "percent": 75.0, "unscored": {"unparsed": 1}}},
    "problems": {"t1": {"unparsed": 1, "request_failures": 0}},
    "n-samples": {"t1": {"original": 10, "effective": 4}},
    "replies": {"t1": {"n": 4, "finish_reasons": {"stop": 3, "length": 1}}},
    "run_stats": {"waves": 2, "sent": {"model": 4}, "cost_usd": 0.25},
}
SAMPLES = [
    {"doc_id": "d1", "prompt": [{"role": "user", "content": [{"type": "text", "text": "Q1 "}, {"type": "image", "image": "IMG"}]}],
     "responses": ["A"], "parsed": "A", "target": "B", "metrics": {"acc": 0.0}, "tokens": [{"prompt": 10, "completion": 2}]},
    {"doc_id": "d2", "prompt": [{"role": "user", "content": "Q2"}], "responses": ["B"], "parsed": "B", "target": "B",
     "metrics": {"acc": 1.0}, "tokens": [{"prompt": 7, "completion": 3}]},
    {"doc_id": "d3", "prompt": [], "responses": [None], "parsed": None, "target": "C", "metrics": {}, "tokens": [None],
     "failures": ["request failed"]},
]


def test_every_number_flat_with_tokens_summed() -> None:
    tokens = {"t1": token_totals(SAMPLES)}
    assert tokens == {"t1": {"prompt": 17.0, "completion": 5.0}}
    assert metrics_of(RESULTS, tokens) == {
        "t1/acc": 50.0, "t1/acc_stderr": 5.0,
        "t1/coverage/scored": 3.0, "t1/coverage/total": 4.0, "t1/coverage/percent": 75.0, "t1/coverage/unscored/unparsed": 1.0,
        "t1/problems/unparsed": 1.0, "t1/problems/request_failures": 0.0,
        "t1/n_samples/original": 10.0, "t1/n_samples/effective": 4.0,
        "t1/replies/n": 4.0, "t1/replies/finish_reasons/stop": 3.0, "t1/replies/finish_reasons/length": 1.0,
        "t1/tokens/prompt": 17.0, "t1/tokens/completion": 5.0,
        "groups/g/average": 50.0, "groups/g/n_tasks": 1.0,
        "run/waves": 2.0, "run/sent/model": 4.0, "run/cost_usd": 0.25,
    }


def test_params_flat_and_the_table_holds_the_first_documents_with_their_first_image(tmp_path: Path) -> None:
    assert flat_params({"config": {"model": "random", "limit": 3, "args": {}, "tags": ["a"]}, "x": None}) == {
        "config.model": "random", "config.limit": "3", "config.tags": '["a"]'}
    image = tmp_path / "one.png"
    Image.new("RGB", (600, 300), "red").save(image)
    samples = [dict(SAMPLES[0], prompt=[{"role": "user", "content": [{"type": "text", "text": "Q1 "},
                                                                      {"type": "image", "image": str(image)}]}]),
               *SAMPLES[1:]]
    table = table_of("t1", samples, limit=2)
    assert table.columns == COLUMNS and table.total == 3 and [row[0] for row in table.rows] == ["d1", "d2"]
    thumb = table.rows[0][1]
    assert thumb.size == (256, 128)  # the longer side 256, the aspect kept
    assert table.rows[1][1] is None  # no image in the prompt
    assert table.rows[0][2:6] == ["Q1 ", "A", "A", "B"]
