"""A task can name a Hugging Face dataset; its embedded images stay encoded until a backend needs them."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from mmtasks.cli import main

datasets = pytest.importorskip("datasets")


def png(color: str, size: tuple[int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def test_task_reads_a_hf_dataset_with_image_features(tmp_path: Path) -> None:
    rows = {
        "id": ["h-1", "h-2"],
        "text": ["note Figure_", "another Figure_"],
        "images": [[{"bytes": png("red", (20, 10)), "path": None}, {"bytes": png("blue", (8, 8)), "path": None}],
                   [{"bytes": png("green", (5, 9)), "path": None}]],
        "answer": ["B", "A"],
    }
    features = datasets.Features({"id": datasets.Value("string"), "text": datasets.Value("string"),
                                  "images": datasets.Sequence(datasets.Image()), "answer": datasets.Value("string")})
    parquet = tmp_path / "test.parquet"
    datasets.Dataset.from_dict(rows, features=features).to_parquet(str(parquet))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "hub_task.yaml").write_text(f"""\
task: hub_task
dataset:
  hf: {{path: parquet, data_files: {json.dumps(str(parquet))}, split: train}}
prompt:
  user: "{{{{ doc.text }}}} {{% for i in range(n_images) %}}{{{{ image(i) }}}}{{% endfor %}} A or B?"
target: "field:answer"
answer: {{parser: choice, parser_args: {{letters: [A, B]}}, space: {{kind: choice, choices: [A, B]}}}}
metrics: [{{name: acc, function: choice_acc}}]
""")
    out = tmp_path / "out"
    code = main(["--tasks", "hub_task", "--include-path", str(tasks), "--model", "random", "--output-path", str(out),
                 "--no-cache", "--no-progress"])
    assert code == 0
    rows_out = [json.loads(l) for l in (out / "samples" / "hub_task.jsonl").read_text().splitlines()]
    assert [r["doc_id"] for r in rows_out] == ["h-1", "h-2"]
    first_images = [p for p in rows_out[0]["prompt"][0]["content"] if p["type"] == "image"]
    assert len(first_images) == 2

    # the images are the embedded bytes, decoded only on demand
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.task import Task

    config, path = TaskRegistry.discover([tasks]).load("hub_task")
    doc = next(Task(config, path).documents(None))
    assert [img.path for img in doc.images] == [None, None]
    assert [img.load().size for img in doc.images] == [(20, 10), (8, 8)]
    assert doc.images[1].load().getpixel((0, 0)) == (0, 0, 255)


def test_a_single_image_column_is_one_image(tmp_path: Path) -> None:
    """images_field naming a Hub ``Image`` column (one image per row, not a list): each row's image
    (it was "expected a list of image paths")."""
    features = datasets.Features({"id": datasets.Value("string"), "image": datasets.Image(), "answer": datasets.Value("string")})
    parquet = tmp_path / "test.parquet"
    datasets.Dataset.from_dict({"id": ["a", "b"], "image": [{"bytes": png("red", (4, 3)), "path": None},
                                                            {"bytes": png("blue", (2, 5)), "path": None}],
                                "answer": ["x", "y"]}, features=features).to_parquet(str(parquet))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "one_image.yaml").write_text(
        f"task: one_image\ndataset:\n  hf: {{path: parquet, data_files: {json.dumps(str(parquet))}, split: train}}\n"
        "  images_field: image\nprompt: {user: '{{ image(0) }}?'}\n")
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.task import Task

    config, path = TaskRegistry.discover([tasks]).load("one_image")
    docs = list(Task(config, path).documents(None))
    assert [[img.load().size for img in d.images] for d in docs] == [[(4, 3)], [(2, 5)]]
