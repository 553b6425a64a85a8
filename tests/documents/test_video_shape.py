"""Issue 27's shape "frames of a video as images" (``tests/shapes/video_frames``, YAML only):
replayed to its hand-computed score, run with the random model and judge to the end, and the
frames an API model receives are the ones the rule names (by their colours)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("av")

from mmtasks.cli import main  # noqa: E402
from tests.chat_server import ChatServer  # noqa: E402
from tests.documents.test_video_input import decode_url  # noqa: E402

SHAPE = (Path(__file__).resolve().parents[2] / "tests") / "shapes" / "video_frames"
ARGS = ["--tasks", "video_frames", "--include-path", str(SHAPE / "tasks"), "--data-dir", str(SHAPE / "data"), "--no-progress"]
#: the sample's colours (scripts/sample_data/videos.py RGB)
NAMES = {(220, 30, 30): "red", (30, 170, 60): "green", (30, 60, 220): "blue", (235, 210, 40): "yellow",
         (10, 10, 10): "black", (245, 245, 245): "white", (140, 50, 180): "purple", (240, 130, 20): "orange",
         (30, 200, 210): "cyan", (128, 128, 128): "grey"}


def colour(url: str) -> str:
    px = decode_url(url).convert("RGB").getpixel((8, 8))
    return NAMES[min(NAMES, key=lambda c: sum((a - b) ** 2 for a, b in zip(c, px)))]


def samples(out: Path) -> dict[str, dict]:
    return {s["doc_id"]: s for s in map(json.loads, (out / "samples" / "video_frames.jsonl").read_text().splitlines())}


def test_video_frames_shape_replayed_scores_as_computed_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert main([*ARGS, "--model", f"replay:{SHAPE / 'replies.jsonl'}", "--output-path", str(out), "--allow-failures"]) == 0
    results = json.loads((out / "results.json").read_text())
    # right: four-count 4, four-change "It changes at 1 s." 1, two-count "The answer is 2." 2, three-change 1,
    # one-count 1, one-change 0; wrong: two-change "At 1 second" (gold 2); unparsed: three-count "three".
    # 6 / 8 = 75.0
    assert results["results"]["video_frames"]["acc"] == 75.0
    assert results["problems"]["video_frames"]["unparsed"] == 1
    got = samples(out)
    # fps 1, at most 8: one frame a second, each after its time
    assert {d: [p.get("timestamp") for p in s["prompt"][-1]["content"] if p["type"] == "image"] for d, s in got.items()
            if d.endswith("-count")} == {"four-count": [0.0, 1.0, 2.0, 3.0], "two-count": [0.0, 1.0, 2.0, 3.0],
                                         "three-count": [0.0, 1.0, 2.0], "one-count": [0.0]}


def test_video_frames_shape_runs_with_the_random_model_and_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert main([*ARGS, "--model", "random", "--judge", "random", "--output-path", str(out)]) == 0
    got = samples(out)
    assert len(got) == 8 and all(s["parsed"] in range(5) for s in got.values())
    hits = sum(s["parsed"] == s["target"] for s in got.values())
    assert json.loads((out / "results.json").read_text())["results"]["video_frames"]["acc"] == 100.0 * hits / 8


def test_video_frames_shape_sends_the_frames_the_rule_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    with ChatServer(reply=lambda body: "1") as server:
        assert main([*ARGS, "--model", "openai:test-model", "--model-args", f"base_url={server.base_url},max_retries=0",
                     "--output-path", str(tmp_path / "out"), "--allow-failures", "--no-cache"]) == 0
        seen = {}
        for body in server.bodies:
            parts = body["messages"][-1]["content"]
            question = parts[-1]["text"].rsplit("\n", 1)[-1]
            texts = [p["text"] for p in parts if p["type"] == "text"]
            seen.setdefault(len(texts), []).append(([colour(p["image_url"]["url"]) for p in parts if p["type"] == "image_url"],
                                                    texts[0], question))
    frames = sorted(f for group in seen.values() for f, _, _ in group)
    assert frames == sorted([["red", "green", "blue", "yellow"]] * 2 + [["black", "black", "white", "white"]] * 2
                            + [["purple", "orange", "cyan"]] * 2 + [["grey"]] * 2)
    assert all(first == "Frame at 0.0 s: " for group in seen.values() for _, first, _ in group)
