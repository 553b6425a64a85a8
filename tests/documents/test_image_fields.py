"""``images_field`` as a list of fields (BLINK's and MMMU's ``image_1`` .. ``image_n``): a YAML-only
task, local JSONL and a Hub parquet file, run through the loopback chat server; the images a
backend receives are checked by their pixel sizes (each image of the data has its own size)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image as PILImage

from mmtasks.cli import main
from mmtasks.documents.dataset import image_entries
from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text

FIELDS = ["image_1", "image_2", "image_3", "image_4", "image_5"]

#: doc -> the value of image_1..image_5 (a width, or None / "" / absent for no image)
DOCS: dict[str, dict[str, int | str | None]] = {
    "d1": {"image_1": 11, "image_2": 12, "image_3": None, "image_4": None, "image_5": None},
    "d2": {"image_1": 21, "image_2": None, "image_3": 23, "image_4": "", "image_5": 25},
    "d3": {"image_1": 31, "image_2": 32, "image_3": 33, "image_4": 34, "image_5": 35},
    "d4": {"image_1": None, "image_2": 42, "image_3": "", "image_4": 44, "image_5": None},
    "d5": {"image_1": 51, "image_3": 53, "image_4": 54},  # JSONL only: image_2, image_5 absent
}
#: hand-listed: the widths each document's request must carry, in order
EXPECTED = {"d1": [11, 12], "d2": [21, 23, 25], "d3": [31, 32, 33, 34, 35], "d4": [42, 44], "d5": [51, 53, 54]}

TASK_YAML = """\
task: five_fields
dataset:
  {source}
  id_field: id
  images_field: [image_1, image_2, image_3, image_4, image_5]
prompt:
  user: "{{% for i in range(n_images) %}}{{{{ image(i) }}}}{{% endfor %}}Question {{{{ doc.id }}}}: which is widest?"
target: "field:answer"
answer: {{parser: choice, parser_args: {{letters: [A, B, C, D, E]}}}}
metrics: [{{name: acc, function: choice_acc}}]
"""


def png(width: int) -> bytes:
    buf = io.BytesIO()
    PILImage.new("RGB", (width, 7), (width * 5 % 256, 40, 90)).save(buf, format="PNG")
    return buf.getvalue()


def received_widths(server: ChatServer) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for body in server.bodies:
        text = last_user_text(body)
        if text == "ping":  # the backend's start-up probe
            continue
        doc = text.split("Question ", 1)[1].split(":", 1)[0]
        urls = [p["image_url"]["url"] for m in body["messages"] if isinstance(m["content"], list)
                for p in m["content"] if p.get("type") == "image_url"]
        out[doc] = [PILImage.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))).size[0] for u in urls]
    return out


def run(tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch, source: str, *extra: str) -> int:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "five_fields.yaml").write_text(TASK_YAML.format(source=source), encoding="utf-8")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    return main(["--tasks", "five_fields", "--include-path", str(tasks), "--model", "openai:mm-model",
                 "--model-args", "max_retries=1", "--output-path", str(tmp_path / "out"), "--no-progress", *extra])


def test_local_jsonl_sends_each_documents_present_images_in_field_order(tmp_path: Path, chat_server: ChatServer,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "data" / "bench"
    (folder / "images").mkdir(parents=True)
    lines = []
    for doc, fields in DOCS.items():
        rec: dict = {"id": doc, "answer": "A"}
        for name, value in fields.items():
            if isinstance(value, int):
                (folder / "images" / f"{doc}_{name}.png").write_bytes(png(value))
                rec[name] = f"images/{doc}_{name}.png"
            else:
                rec[name] = value
        lines.append(json.dumps(rec) + "\n")
    (folder / "test.jsonl").write_text("".join(lines), encoding="utf-8")
    chat_server.reply = lambda body: "A"
    code = run(tmp_path, chat_server, monkeypatch, "local: {dir: bench, file: test.jsonl}",
               "--data-dir", str(tmp_path / "data"))
    assert code == 0
    assert received_widths(chat_server) == EXPECTED
    assert sorted(len(v) for v in received_widths(chat_server).values()) == [2, 2, 3, 3, 5]
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples" / "five_fields.jsonl").read_text().splitlines()]
    assert {s["doc_id"]: sum(p["type"] == "image" for p in s["prompt"][-1]["content"]) for s in samples} == \
        {d: len(w) for d, w in EXPECTED.items()}


def test_hub_parquet_null_image_columns_are_skipped(tmp_path: Path, chat_server: ChatServer,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    docs = {d: f for d, f in DOCS.items() if d != "d5"}  # a parquet row has every column
    features = datasets.Features({"id": datasets.Value("string"), "answer": datasets.Value("string"),
                                  **{name: datasets.Image() for name in FIELDS}})
    columns: dict[str, list] = {"id": list(docs), "answer": ["A"] * len(docs)}
    for name in FIELDS:
        columns[name] = [{"bytes": png(f[name]), "path": None} if isinstance(f[name], int) else None
                         for f in docs.values()]
    parquet = tmp_path / "test.parquet"
    datasets.Dataset.from_dict(columns, features=features).to_parquet(str(parquet))
    chat_server.reply = lambda body: "A"
    code = run(tmp_path, chat_server, monkeypatch,
               f"hf: {{path: parquet, data_files: {json.dumps(str(parquet))}, split: train}}")
    assert code == 0
    assert received_widths(chat_server) == {d: EXPECTED[d] for d in docs}


def test_labels_and_wrong_shapes() -> None:
    rec = {"image_1": "a.png", "image_2": None, "image_3": ["b.png", "", None, "c.png"],
           "image_4": {"bytes": None, "path": None}, "image_5": {"bytes": b"x", "path": None}}
    assert image_entries(rec, FIELDS) == ["a.png", "b.png", "c.png", {"bytes": b"x", "path": None}]
    assert image_entries({"image_1": 3}, FIELDS) is None
    # a single field keeps its old meaning: a string is one image, null is a wrong shape
    assert image_entries({"image": "a.png"}, "image") == ["a.png"]
    assert image_entries({"image": None}, "image") is None


def test_a_wrong_shape_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "data" / "bench"
    folder.mkdir(parents=True)
    (folder / "test.jsonl").write_text(json.dumps({"id": "x", "answer": "A", "image_1": None, "image_2": 7}) + "\n")
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "five_fields.yaml").write_text(TASK_YAML.format(source="local: {dir: bench, file: test.jsonl}"))
    code = main(["--tasks", "five_fields", "--include-path", str(tasks), "--model", "random", "--no-cache",
                 "--data-dir", str(tmp_path / "data"), "--output-path", str(tmp_path / "out"), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "test.jsonl:1, document 'x', field 'image_2'" in err


@pytest.mark.parametrize(("value", "message"), [
    ("[]", "an empty list names no field"),
    ("[image_1, image_1]", "image_1 listed twice"),
])
def test_bad_field_lists_are_load_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, message: str) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    text = TASK_YAML.format(source="local: {dir: bench, file: test.jsonl}").replace(
        "[image_1, image_2, image_3, image_4, image_5]", value)
    (tasks / "five_fields.yaml").write_text(text)
    code = main(["--tasks", "five_fields", "--include-path", str(tasks), "--model", "random", "--no-cache",
                 "--output-path", str(tmp_path / "out"), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "five_fields.yaml" in err and message in err and "images_field" in err
