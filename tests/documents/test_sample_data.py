"""The committed synthetic sample data: reproducible from its script, and well-formed.

The shape checks follow the local data formats of shared/specs (realbench.md,
mmdu.md, mmrc.md). The RealBench retrieval and ranking checks also look at the
pixels: the image an answer points to must show the colour the text names.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import PIL
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
SCRIPT = ROOT / "scripts" / "make_sample_data.py"
DATASETS = ("realbench", "mmdu", "mmrc")

sys.path.insert(0, str(SCRIPT.parent))
from sample_data.drawing import COLORS  # noqa: E402
from tests.builders import sample_generators  # noqa: E402

CATEGORIES = sample_generators("realbench")[0].CATEGORIES

RGB_BY_ZH_NAME = {zh: rgb for zh, _, rgb in COLORS.values()}
REALBENCH_FILES = [f"{task}_{level}" for task in ("retrieval", "ranking", "extraction", "reasoning")
                   for level in ("easy", "hard")] + ["unanswerable"]
MMRC_CATEGORIES = {"game", "travel", "shopping", "food", "sport", "music", "film", "house",
                   "computer", "economy", "job", "society", "biology", "history"}


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix()
                  for name in DATASETS for p in (root / name).rglob("*") if p.is_file())


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _recorded_pillow_version() -> str:
    match = re.search(r"Pillow (\d+\.\d+\.\d+)", (SAMPLE / "README.md").read_text(encoding="utf-8"))
    assert match, "data/sample/README.md must say which Pillow version drew the images"
    return match.group(1)


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample")
    subprocess.run([sys.executable, str(SCRIPT), str(out)], check=True, capture_output=True, timeout=300)
    return out


def test_regeneration_is_byte_identical(regenerated: Path) -> None:
    assert _files(regenerated) == _files(SAMPLE)
    same_pillow = PIL.__version__ == _recorded_pillow_version()
    for rel in _files(SAMPLE):
        committed, fresh = (SAMPLE / rel).read_bytes(), (regenerated / rel).read_bytes()
        if committed == fresh:
            continue
        # Another Pillow/libjpeg may encode the same pixels differently; the
        # records themselves must match byte for byte in any case.
        assert rel.endswith(".jpg") and not same_pillow, f"{rel} differs from a fresh generation"
        a = np.asarray(Image.open(SAMPLE / rel).convert("RGB"), dtype=np.int16)
        b = np.asarray(Image.open(regenerated / rel).convert("RGB"), dtype=np.int16)
        assert a.shape == b.shape and np.abs(a - b).mean() < 2.0, rel


def test_sample_is_small() -> None:
    total = sum((SAMPLE / rel).stat().st_size for rel in _files(SAMPLE))
    assert total < 3 * 1024 * 1024


# --- RealBench -----------------------------------------------------------------

@pytest.fixture(scope="module")
def realbench() -> dict[str, list[dict]]:
    root = SAMPLE / "realbench"
    assert sorted(p.stem for p in root.glob("*.jsonl")) == sorted(REALBENCH_FILES)
    return {stem: _read_jsonl(root / f"{stem}.jsonl") for stem in REALBENCH_FILES}


def _center_color(path: Path) -> str:
    """The palette colour nearest to the mean of the central 5x5 pixels (shapes are centred)."""
    pixels = np.asarray(Image.open(path).convert("RGB"), dtype=np.float64)
    h, w, _ = pixels.shape
    mean = pixels[h // 2 - 2:h // 2 + 3, w // 2 - 2:w // 2 + 3].reshape(-1, 3).mean(axis=0)
    return min(RGB_BY_ZH_NAME, key=lambda name: float(np.sum((np.array(RGB_BY_ZH_NAME[name]) - mean) ** 2)))


def test_realbench_record_shapes(realbench: dict[str, list[dict]]) -> None:
    root = SAMPLE / "realbench"
    ids = [r["id"] for records in realbench.values() for r in records]
    assert len(ids) == len(set(ids))
    for stem, records in realbench.items():
        assert 8 <= len(records) <= 10, stem
        task, _, level = stem.partition("_")
        for r in records:
            assert set(r) <= {"id", "task", "difficulty", "category", "images", "text", "options", "answer"}
            assert r["task"] == task and r["difficulty"] in ("easy", "hard")
            if level:
                assert r["difficulty"] == level
            assert r["category"] in CATEGORIES
            assert isinstance(r["text"], str) and r["text"].strip()
            assert r["images"] == [f"images/{r['id']}/{n}.jpg" for n in range(1, len(r["images"]) + 1)]
            for rel in r["images"]:
                with Image.open(root / rel) as image:
                    assert image.format == "JPEG"
                    assert 96 <= min(image.size) and max(image.size) <= 200, (rel, image.size)
            assert ("options" in r) == (task == "ranking")


def test_realbench_answers(realbench: dict[str, list[dict]]) -> None:
    for r in realbench["retrieval_easy"]:
        assert type(r["answer"]) is int and 1 <= r["answer"] <= len(r["images"])
    for r in realbench["retrieval_hard"]:
        answer = r["answer"]
        assert all(type(n) is int for n in answer) and answer == sorted(set(answer))
        assert len(answer) >= 2 and 1 <= answer[0] and answer[-1] <= len(r["images"])
    for stem in ("extraction_easy", "extraction_hard", "reasoning_easy", "reasoning_hard"):
        for r in realbench[stem]:
            assert isinstance(r["answer"], str) and r["answer"].strip() == r["answer"] != ""
    assert any("\n" in r["answer"] for r in realbench["extraction_easy"])  # several answer points
    assert all("\n" in r["answer"] for r in realbench["extraction_hard"])
    assert all(r["answer"] == "No relevant content mentioned" for r in realbench["unanswerable"])
    assert {r["difficulty"] for r in realbench["unanswerable"]} == {"easy", "hard"}


def test_realbench_image_counts(realbench: dict[str, list[dict]]) -> None:
    counts = {stem: [len(r["images"]) for r in records] for stem, records in realbench.items()}
    assert all(3 <= n <= 6 for n in counts["ranking_easy"])
    assert all(7 <= n <= 18 for n in counts["ranking_hard"]) and max(counts["ranking_hard"]) == 18
    assert all(2 <= n <= 6 for n in counts["retrieval_easy"])
    assert all(n >= 7 for n in counts["retrieval_hard"])
    assert all(n >= 3 for n in counts["extraction_hard"] + counts["reasoning_hard"])


def test_realbench_ranking_options(realbench: dict[str, list[dict]]) -> None:
    root = SAMPLE / "realbench"
    for r in realbench["ranking_easy"] + realbench["ranking_hard"]:
        n, options = len(r["images"]), r["options"]
        assert sorted(options) == ["A", "B", "C", "D"] and r["answer"] in options
        orders = [tuple(order) for order in options.values()]
        assert len(set(orders)) == 4, r["id"]
        assert all(sorted(order) == list(range(1, n + 1)) for order in orders), r["id"]
        assert r["text"].count("Figure_") == n
        # Blank k names a colour; the image the correct order puts there shows it.
        named = re.findall(r"第[^个]+个是(..)", r["text"])
        assert len(named) == n
        for colour, image_number in zip(named, options[r["answer"]]):
            assert _center_color(root / r["images"][image_number - 1]) == colour, (r["id"], image_number)


def test_realbench_retrieval_points_at_the_named_colour(realbench: dict[str, list[dict]]) -> None:
    root = SAMPLE / "realbench"
    colour_names = "|".join(RGB_BY_ZH_NAME)
    for r in realbench["retrieval_easy"]:
        colour = re.search(colour_names, r["text"]).group()
        assert _center_color(root / r["images"][r["answer"] - 1]) == colour, r["id"]
    for r in realbench["retrieval_hard"]:
        colour = re.search(colour_names, r["text"]).group()
        shown = [_center_color(root / rel) for rel in r["images"]]
        assert [i + 1 for i, c in enumerate(shown) if c == colour] == r["answer"], r["id"]


# --- MMDU ------------------------------------------------------------------------

def test_mmdu_benchmark_json() -> None:
    root = SAMPLE / "mmdu"
    records = json.loads((root / "benchmark.json").read_text(encoding="utf-8"))
    assert isinstance(records, list) and 5 <= len(records) <= 8
    assert len({r["id"] for r in records}) == len(records)
    used: set[str] = set()
    images_per_turn: list[int] = []
    first_turn_without_image = False
    for r in records:
        assert set(r) == {"id", "image", "conversations"}
        turns = r["conversations"]
        assert 4 <= len(turns) <= 12 and len(turns) % 2 == 0
        assert [t["from"] for t in turns] == ["user", "assistant"] * (len(turns) // 2)
        assert all(isinstance(t["value"], str) and t["value"].strip() for t in turns)
        assert all("<ImageHere>" not in t["value"] for t in turns if t["from"] == "assistant")
        placeholders = [t["value"].count("<ImageHere>") for t in turns if t["from"] == "user"]
        images_per_turn += placeholders
        first_turn_without_image |= placeholders[0] == 0
        assert sum(placeholders) == len(r["image"])
        for path in r["image"]:
            assert path.startswith("/")  # the authors' absolute paths...
            assert (root / "images" / Path(path).name).is_file()  # ...resolved by file name
            used.add(Path(path).name)
        # "ImageK: <ImageHere>" labels count up across the dialogue.
        labels = [int(k) for t in turns for k in re.findall(r"Image(\d+): <ImageHere>", t["value"])]
        assert labels == list(range(1, len(r["image"]) + 1))
    assert first_turn_without_image
    assert {0, 1, 2} <= set(images_per_turn)
    assert used == {p.name for p in (root / "images").iterdir()}


# --- MMRC ------------------------------------------------------------------------

def test_mmrc_conversations() -> None:
    root = SAMPLE / "mmrc"
    records = _read_jsonl(root / "mmrc.jsonl")
    assert 5 <= len(records) <= 8 and len({r["id"] for r in records}) == len(records)
    lengths = [len(r["turns"]) for r in records]
    for low, high in [(4, 6), (6, 9), (9, 12)]:
        assert any(low <= n < high for n in lengths), (low, high)
    formats, on_disk = set(), set()
    for r in records:
        assert r["category"] in MMRC_CATEGORIES
        assert 4 <= len(r["turns"]) <= 22
        images = [rel for turn in r["turns"] for rel in turn["images"]]
        assert images == [f"images/{r['id']}/{n}.jpg" for n in range(1, len(images) + 1)]
        for turn in r["turns"]:
            assert set(turn) == {"user", "images", "assistant"} and turn["user"].strip()
        for rel in images:
            assert (root / rel).is_file()
            on_disk.add(rel)
        questions = r["questions"]
        assert len(questions) >= 6
        assert {q["ability"] for q in questions} == {"IE", "CR", "IU", "IM", "MR", "AR"}
        for q in questions:
            formats.add(q["format"])
            assert q["question"].strip() and isinstance(q["answer"], str) and q["answer"].strip()
            if q["format"] == "choice":
                assert len(q["options"]) >= 2 and q["answer"] in q["options"]
            elif q["format"] == "tf":
                assert q["answer"] in ("true", "false")
            else:
                assert q["format"] == "open"
            if q["ability"] == "IE":
                assert q["items"] and all(isinstance(i, str) and i for i in q["items"])
            if q["ability"] == "IM":
                assert q["images"] and all(1 <= i <= len(images) for i in q["images"])
            if q["ability"] == "AR":
                assert isinstance(q["refuse"], bool)
            if q["ability"] == "IU":
                assert type(q["updates"]) is int and q["updates"] >= 1
    assert formats == {"open", "choice", "tf"}
    assert on_disk == {p.relative_to(root).as_posix() for p in (root / "images").rglob("*.jpg")}
    updates = {q["updates"] for r in records for q in r["questions"] if q["ability"] == "IU"}
    assert len(updates) >= 2  # something for the IU-by-number-of-updates breakdown
