"""MMMU, MMIU, MUIRBench and BLINK read from a loopback Hugging Face Hub (tests/hub_server.py,
reached through ``HF_ENDPOINT``) holding each dataset in the layout of its dataset card: the
README's ``configs`` and its parquet files, every split the card lists. The records hold the
irregularities the real data holds, each declared by the task's ``dataset.record_policy`` as the
authors treat it; the runs go to the end, the counts are in results.json and the printed table, and
only the split a task reads is downloaded (counted from the server's requests).

The built-in tasks run unchanged, in a subprocess; the model replays scripted replies, and every
score is worked out by hand (written beside each reply).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.hub_server import HubState, running_hub

datasets = pytest.importorskip("datasets")

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def hub() -> Iterator[tuple[str, HubState]]:
    with running_hub() as served:
        yield served


def png(color: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (12, 8), color).save(buf, format="PNG")
    return buf.getvalue()


def parquet(rows: list[dict[str, Any]], features: Any) -> bytes:
    buf = io.BytesIO()
    datasets.Dataset.from_list(rows, features=features).to_parquet(buf)
    return buf.getvalue()


def card(features_yaml: str, configs: dict[str, list[tuple[str, str]]]) -> bytes:
    """A dataset card's front matter: its features and, per config, split -> file pattern."""
    lines = ["---", "dataset_info:", "  features:", features_yaml.rstrip("\n"), "configs:"]
    for name, splits in configs.items():
        lines += [f"- config_name: {name}", "  data_files:"]
        lines += [f"  - split: {split}\n    path: {path}" for split, path in splits]
    return ("\n".join(lines) + "\n---\n\n# a loopback copy of the card's layout\n").encode()


def run(args: list[str], tmp_path: Path, endpoint: str, replies: list[tuple[str, str, str]],
        cwd: Path = REPO, offline: bool = False, out: Path | None = None) -> tuple[subprocess.CompletedProcess, Path]:
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": t, "doc_id": d, "responses": [r]}) + "\n" for t, d, r in replies))
    out = out or tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_", "HF_", "TRANSFORMERS_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": endpoint,
                "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1"})
    if offline:
        env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    proc = subprocess.run([sys.executable, "-m", "mmtasks", *args, "--model", f"replay:{pred}", "--output-path", str(out),
                           "--no-progress"], cwd=cwd, env=env, capture_output=True, text=True, timeout=240)
    return proc, out


def results_of(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def samples_of(out: Path, task: str) -> dict[str, dict[str, Any]]:
    return {s["doc_id"]: s for s in map(json.loads, (out / "samples" / f"{task}.jsonl").read_text().splitlines())}


def table_rows(stdout: str) -> dict[str, str]:
    """The printed table's rows under a task: label -> value."""
    rows = {}
    for line in stdout.splitlines():
        if line.startswith("  ") and "  " in line.strip():
            label, _, rest = line.strip().partition("  ")
            rows[label] = rest.split()[0]
    return rows


# --- MMMU ---------------------------------------------------------------------------------

MMMU_FEATURES = """\
  - {name: id, dtype: string}
  - {name: question, dtype: string}
  - {name: options, dtype: string}
  - {name: explanation, dtype: string}
""" + "".join(f"  - {{name: image_{k}, dtype: image}}\n" for k in range(1, 8)) + """\
  - {name: img_type, dtype: string}
  - {name: answer, dtype: string}
  - {name: topic_difficulty, dtype: string}
  - {name: question_type, dtype: string}
  - {name: subfield, dtype: string}
"""


def mmmu_record(doc_id: str, question: str, options: str, answer: str, n_images: int = 1,
                question_type: str = "multiple-choice") -> dict[str, Any]:
    rec: dict[str, Any] = {"id": doc_id, "question": question, "options": options, "explanation": "", "img_type": "['Paintings']",
                           "answer": answer, "topic_difficulty": "Easy", "question_type": question_type, "subfield": "Art History"}
    for k in range(1, 8):
        rec[f"image_{k}"] = {"bytes": png(["red", "blue", "green"][k % 3]), "path": None} if k <= n_images else None
    return rec


def seed_mmmu(state: HubState) -> None:
    """MMMU/MMMU as its card lays it out: one config per subject, each with dev, validation and
    test files (Art and Design here)."""
    features = datasets.Features({"id": datasets.Value("string"), "question": datasets.Value("string"),
                                  "options": datasets.Value("string"), "explanation": datasets.Value("string"),
                                  **{f"image_{k}": datasets.Image() for k in range(1, 8)},
                                  "img_type": datasets.Value("string"), "answer": datasets.Value("string"),
                                  "topic_difficulty": datasets.Value("string"), "question_type": datasets.Value("string"),
                                  "subfield": datasets.Value("string")})
    files: dict[str, bytes] = {}
    configs: dict[str, list[tuple[str, str]]] = {}
    for subject in ("Art", "Design"):
        configs[subject] = [(split, f"{subject}/{split}-*") for split in ("dev", "validation", "test")]
        files[f"{subject}/dev-00000-of-00001.parquet"] = parquet(
            [mmmu_record(f"dev_{subject}_1", "Which colour is <image 1>?", "['red', 'blue']", "A")], features)
        files[f"{subject}/validation-00000-of-00001.parquet"] = parquet([
            # one image, but the options name <image 2> and <image 3>: kept as text
            mmmu_record(f"validation_{subject}_1", "Which painting matches the style of <image 1>?",
                        "['<image 2>', '<image 3>']", "A"),
            mmmu_record(f"validation_{subject}_2", "Which colour is <image 1>?", "['red', 'blue']", "B"),
        ], features)
        files[f"{subject}/test-00000-of-00001.parquet"] = parquet(
            [mmmu_record(f"test_{subject}_{n}", "Which colour is <image 1>?", "['red', 'blue']", "?") for n in range(1, 4)],
            features)
    files["README.md"] = card(MMMU_FEATURES, configs)
    state.seed("dataset", "MMMU/MMMU", files)


def test_mmmu_runs_to_the_end_with_tags_beyond_its_images_and_downloads_only_its_validation_file(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    seed_mmmu(state)
    replies = [("mmmu_val_art", "validation_Art_1", "(A)"),   # gold A: right
               ("mmmu_val_art", "validation_Art_2", "(A)")]   # gold B: wrong
    proc, out = run(["--tasks", "mmmu_val_art"], tmp_path, endpoint, replies)
    assert proc.returncode == 0, proc.stderr
    # only the subject's validation file (and the card) was downloaded: not dev, not test, not Design
    assert state.fetched("dataset", "MMMU/MMMU") == ["README.md", "Art/validation-00000-of-00001.parquet"]
    results = results_of(out)
    assert results["results"]["mmmu_val_art"]["acc"] == 50.0
    assert results["problems"]["mmmu_val_art"]["kept_as_text"] == 1
    assert results["coverage"]["mmmu_val_art"]["kept_as_text"] == {"image tag beyond its images": 1}
    assert table_rows(proc.stdout)["kept as text: image tag beyond its images"] == "1"
    sample = samples_of(out, "mmmu_val_art")["validation_Art_1"]
    assert sample["irregular"] == {"kept_as_text": "image tag beyond its images"}
    content = sample["prompt"][-1]["content"]
    texts = "".join(p["text"] for p in content if p["type"] == "text")
    assert "(A) <image 2>\n(B) <image 3>" in texts  # the tags beyond the record's one image, as text
    assert [p["type"] for p in content].count("image") == 1
    # offline, a second run reads the same file from the cache: the same results, nothing fetched
    requests = len(state.requests)
    proc, again = run(["--tasks", "mmmu_val_art"], tmp_path, endpoint, replies, offline=True, out=tmp_path / "again")
    assert proc.returncode == 0, proc.stderr
    assert len(state.requests) == requests
    assert results_of(again)["results"] == results["results"] and results_of(again)["coverage"] == results["coverage"]


# --- MMIU ---------------------------------------------------------------------------------

MMIU_FEATURES = """\
  - {name: task, dtype: string}
  - {name: visual_input_component, dtype: string}
  - {name: source, dtype: string}
  - {name: options, dtype: string}
  - {name: question, dtype: string}
  - {name: context, dtype: string}
  - {name: input_image_path, sequence: string}
  - {name: output, dtype: string}
"""


def test_mmiu_runs_to_the_end_excluding_records_without_output_and_scoring_letters_beyond_the_options_wrong(
        hub, tmp_path: Path) -> None:
    endpoint, state = hub
    images = tmp_path / "work" / "2D-spatial" / "jigsaw_puzzle_solving"
    images.mkdir(parents=True)
    for name in ("a.png", "b.png"):
        (images / name).write_bytes(png("red"))
    paths = ["./2D-spatial/jigsaw_puzzle_solving/a.png", "./2D-spatial/jigsaw_puzzle_solving/b.png"]

    def record(output: str | None) -> dict[str, Any]:
        return {"task": "jigsaw_puzzle_solving", "visual_input_component": "natural image", "source": "x",
                "options": "A: first\nB: second\nC: third\nD: fourth", "question": "Which piece fits?",
                "context": "Choose.\nA: first\nB: second\nC: third\nD: fourth", "input_image_path": paths, "output": output}

    features = datasets.Features({k: datasets.Value("string") for k in ("task", "visual_input_component", "source", "options",
                                                                         "question", "context", "output")}
                                 | {"input_image_path": datasets.Sequence(datasets.Value("string"))})
    rows = [record("B"), record(None), record("G"), record(None), record("A")]
    state.seed("dataset", "FanqingM/MMIU-Benchmark", {
        "README.md": card(MMIU_FEATURES, {"default": [("test", "data/test-*")]}),
        "data/test-00000-of-00001.parquet": parquet(rows, features)})
    replies = [("mmiu", "0", "B"),     # gold B: right
               ("mmiu", "2", "A"),     # gold G, beyond the options A-D: scored wrong
               ("mmiu", "4", "C")]     # gold A: wrong
    proc, out = run(["--tasks", "mmiu"], tmp_path, endpoint, replies, cwd=tmp_path / "work")
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    assert results["results"]["mmiu"]["acc"] == pytest.approx(100 / 3)  # 1 of the 3 evaluated
    assert results["n-samples"]["mmiu"] == {"original": 5, "effective": 3, "tasks": 1}
    assert results["problems"]["mmiu"] | {} == {"request_failures": 0, "unparsed": 0, "judge_failures": 0,
                                                "excluded": 2, "scored_wrong": 1}
    cov = results["coverage"]["mmiu"]
    assert (cov["scored"], cov["total"]) == (3, 3)
    assert cov["excluded"] == {"output missing": 2} and cov["scored_wrong"] == {"output beyond the options": 1}
    rows = table_rows(proc.stdout)
    assert rows["excluded: output missing"] == "2" and rows["scored wrong: output beyond the options"] == "1"
    samples = samples_of(out, "mmiu")
    assert sorted(samples) == ["0", "2", "4"]
    assert samples["2"]["irregular"] == {"scored_wrong": "output beyond the options"}
    assert samples["2"]["metrics"]["acc"] == 0.0 and samples["2"]["target"] == "G"


# --- MUIRBench ----------------------------------------------------------------------------

MUIR_FEATURES = """\
  - {name: idx, dtype: int64}
  - {name: task, dtype: string}
  - {name: image_relation, dtype: string}
  - {name: image_type, dtype: string}
  - {name: question, dtype: string}
  - {name: options, sequence: string}
  - {name: answer, dtype: string}
  - {name: image_list, list: image}
"""


def test_muirbench_runs_to_the_end_with_integer_ids_and_a_tag_beyond_its_images(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    features = datasets.Features({"idx": datasets.Value("int64"), "task": datasets.Value("string"),
                                  "image_relation": datasets.Value("string"), "image_type": datasets.Value("string"),
                                  "question": datasets.Value("string"), "options": datasets.Sequence(datasets.Value("string")),
                                  "answer": datasets.Value("string"), "image_list": [datasets.Image()]})

    def record(idx: int, question: str, n_images: int, answer: str) -> dict[str, Any]:
        return {"idx": idx, "task": "Counting", "image_relation": "Narrative", "image_type": "Photograph",
                "question": question, "options": ["one", "two"], "answer": answer,
                "image_list": [{"bytes": png("blue"), "path": None} for _ in range(n_images)]}

    rows = [record(101, "How many stars are in <image>?", 1, "A"),
            record(102, "Compare <image> with <image> and <image>.", 2, "B")]  # three tags, two images
    state.seed("dataset", "MUIRBENCH/MUIRBENCH", {
        "README.md": card(MUIR_FEATURES, {"default": [("test", "data/test-*")]}),
        "data/test-00000-of-00001.parquet": parquet(rows, features)})
    replies = [("muirbench", "101", "A"),   # gold A: right
               ("muirbench", "102", "A")]   # gold B: wrong
    proc, out = run(["--tasks", "muirbench"], tmp_path, endpoint, replies)
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    assert results["results"]["muirbench"]["acc"] == 50.0
    assert results["coverage"]["muirbench"]["kept_as_text"] == {"image tag beyond its images": 1}
    assert table_rows(proc.stdout)["kept as text: image tag beyond its images"] == "1"
    samples = samples_of(out, "muirbench")
    assert sorted(samples) == ["101", "102"]  # the int64 ids, read as their text
    parts = samples["102"]["prompt"][-1]["content"]
    assert [p["type"] for p in parts][:4] == ["text", "image", "text", "image"]
    assert parts[4]["text"].startswith(" and <image>.")


# --- BLINK --------------------------------------------------------------------------------

BLINK_FEATURES = """\
  - {name: idx, dtype: string}
  - {name: question, dtype: string}
  - {name: sub_task, dtype: string}
""" + "".join(f"  - {{name: image_{k}, dtype: image}}\n" for k in range(1, 5)) + """\
  - {name: choices, sequence: string}
  - {name: answer, dtype: string}
  - {name: prompt, dtype: string}
  - {name: explanation, dtype: string}
"""


def test_blink_downloads_only_its_val_split(hub, tmp_path: Path) -> None:
    endpoint, state = hub
    features = datasets.Features({"idx": datasets.Value("string"), "question": datasets.Value("string"),
                                  "sub_task": datasets.Value("string"), **{f"image_{k}": datasets.Image() for k in range(1, 5)},
                                  "choices": datasets.Sequence(datasets.Value("string")), "answer": datasets.Value("string"),
                                  "prompt": datasets.Value("string"), "explanation": datasets.Value("string")})

    def record(idx: str, answer: str) -> dict[str, Any]:
        return {"idx": idx, "question": "Which is brighter?", "sub_task": "Counting",
                "image_1": {"bytes": png("red"), "path": None}, "image_2": None, "image_3": None, "image_4": None,
                "choices": ["1", "2"], "answer": answer, "prompt": "How many? (A) 1 (B) 2", "explanation": ""}

    files = {"README.md": card(BLINK_FEATURES, {"Counting": [("val", "Counting/val-*"), ("test", "Counting/test-*")]}),
             "Counting/val-00000-of-00001.parquet": parquet([record("val_Counting_1", "(A)")], features),
             "Counting/test-00000-of-00001.parquet": parquet([record("test_Counting_1", "")], features)}
    state.seed("dataset", "BLINK-Benchmark/BLINK", files)
    proc, out = run(["--tasks", "blink_counting"], tmp_path, endpoint, [("blink_counting", "val_Counting_1", "(A)")])
    assert proc.returncode == 0, proc.stderr
    assert state.fetched("dataset", "BLINK-Benchmark/BLINK") == ["README.md", "Counting/val-00000-of-00001.parquet"]
    assert results_of(out)["results"]["blink_counting"]["acc"] == 100.0
