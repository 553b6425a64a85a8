"""``dataset.records_field``: a source line holding a list of records (LVBench's
``video_info.meta.jsonl``: one line per video, its questions in ``qa``) read as one document per
item, the outer fields beside the item's, numbered across the file; ``--limit`` and the scan count
the documents; a line whose field is no list is a one-line error naming the file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.config.task_config import TaskConfig
from mmtasks.documents.dataset import load_documents, scan_documents
from mmtasks.errors import DataError


def task(**dataset: object) -> TaskConfig:
    return TaskConfig.model_validate({
        "task": "nested", "dataset": {"local": {"dir": "nested", "file": "meta.jsonl"}, "id_field": "uid",
                                      "images_field": None, **dataset},
        "prompt": {"user": "{{ doc.question }}"}, "target": "field:answer",
        "metrics": [{"name": "acc", "function": "exact_match"}]})


def write(root: Path, lines: list[object]) -> Path:
    folder = root / "nested"
    folder.mkdir(parents=True)
    (folder / "meta.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return root


LINES = [
    {"key": "v1", "type": "cartoon", "qa": [{"uid": 1, "question": "q1", "answer": "A"},
                                            {"uid": 2, "question": "q2", "answer": "B", "type": "own"}]},
    {"key": "v2", "type": "sports", "qa": []},
    {"key": "v3", "type": "news", "qa": [{"uid": 3, "question": "q3", "answer": "C"}]},
]


def test_each_item_is_a_document_beside_its_outer_fields(tmp_path: Path) -> None:
    docs = list(load_documents(task(records_field="qa"), write(tmp_path, LINES)))
    assert [(d.index, d.doc_id, d.line) for d in docs] == [(0, "1", 1), (1, "2", 1), (2, "3", 3)]
    assert docs[0].record == {"key": "v1", "type": "cartoon", "uid": 1, "question": "q1", "answer": "A"}
    assert docs[1].record["type"] == "own"  # the item's field wins
    assert "qa" not in docs[2].record and docs[2].record["key"] == "v3"
    limited = list(load_documents(task(records_field="qa"), tmp_path, limit=2))
    assert [d.doc_id for d in limited] == ["1", "2"]
    scan = scan_documents(task(records_field="qa"), tmp_path)
    assert (scan.count, scan.total) == (3, 3)


def test_without_it_a_line_is_a_document(tmp_path: Path) -> None:
    docs = list(load_documents(task(id_field="key"), write(tmp_path, LINES)))
    assert [d.doc_id for d in docs] == ["v1", "v2", "v3"]


@pytest.mark.parametrize("bad, message", [({"key": "v", "qa": {"uid": 1}}, "expected a list of records"),
                                          ({"key": "v", "qa": [{"uid": 9}, "q"]}, "item 1: expected a record")])
def test_a_line_that_holds_no_list_of_records(tmp_path: Path, bad: dict, message: str) -> None:
    with pytest.raises(DataError, match=message) as caught:
        list(load_documents(task(records_field="qa"), write(tmp_path, [LINES[0], bad])))
    assert caught.value.line == 2 and caught.value.field == "qa" and str(caught.value.file).endswith("meta.jsonl")
