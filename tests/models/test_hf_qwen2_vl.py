"""The design card's headline, ``--model hf:Qwen/Qwen2-VL-...``, end to end on a tiny checkpoint.

The checkpoint is a real transformers Qwen2-VL folder built here (random weights, a tokenizer
trained in the test, the real ``Qwen2VLProcessor`` and Qwen2-VL-Instruct's chat template; see
tests/tiny_checkpoints.py), so the run goes through the real processor: dynamic resolution
(one token per 28 x 28 pixels), M-RoPE positions, the chat template's default system prompt.
The processor needs torchvision (the test environment installs it, see the Makefile).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
pytest.importorskip("transformers")

from mmtasks.cli import main  # noqa: E402
from mmtasks.core.conversation import Image, Message, Text  # noqa: E402
from mmtasks.core.request import GenerationConfig, Request  # noqa: E402
from mmtasks.models.base import ModelContext, ModelSpec, load_model  # noqa: E402
from mmtasks.models.hf import _Row  # noqa: E402
from tests.tiny_checkpoints import build_qwen2_vl_model  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.fixture(scope="module")
def qwen2_vl_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_qwen2_vl_model(tmp_path_factory.mktemp("tiny-qwen2-vl") / "ckpt")


def test_real_processor_and_chat_template(qwen2_vl_dir: Path, tmp_path: Path) -> None:
    from PIL import Image as PILImage

    picture = tmp_path / "wide.png"
    PILImage.new("RGB", (84, 56), (200, 30, 30)).save(picture)  # 3 x 2 cells of 28 px: 6 tokens
    model = load_model(ModelSpec(backend="hf", name=str(qwen2_vl_dir)), ModelContext(seed=0))
    try:
        assert type(model.processor).__name__ == "Qwen2VLProcessor" and model.multimodal
        image = Image(path=picture, doc_id="d1")
        request = Request((Message("user", (image, Text("which colour?"))),),
                          GenerationConfig(max_new_tokens=5, do_sample=False), doc_id="d1")
        # the template's own default system prompt, the image in place
        assert model._render(request.messages) == (
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>which colour?<|im_end|>\n"
            "<|im_start|>assistant\n")
        # the batch planner's estimate from the file header matches what the processor makes
        assert model._image_tokens(image) == 6
        row = _Row(0, model._render(request.messages), request)
        inputs, lengths = model._encode([(row, [model.images.load(image)], [])])
        assert lengths == [int(inputs["attention_mask"].sum())]
        pad = model.tokenizer.convert_tokens_to_ids("<|image_pad|>")
        assert int((inputs["input_ids"] == pad).sum()) == 6
        assert inputs["image_grid_thw"].tolist() == [[1, 4, 6]]  # 14 px patches: 4 x 6, merged 2 x 2
        (reply,) = model.generate_all([request])
        assert reply.ok and len(reply.text or "") > 0
    finally:
        model.close()


def test_realbench_ranking_hard_end_to_end(qwen2_vl_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mmtasks.models.hf")
    out = tmp_path / "run"
    code = main(["--tasks", "realbench_ranking_hard", "--model", f"hf:{qwen2_vl_dir}", "--data-dir", str(SAMPLE),
                 "--output-path", str(out), "--limit", "2", "--batch-size", "4", "--no-cache", "--no-progress",
                 "--allow-failures"])
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert results["n-samples"]["realbench_ranking_hard"]["effective"] == 2
    rows = [json.loads(line) for line in (out / "samples" / "realbench_ranking_hard.jsonl").read_text().splitlines()]
    records = [json.loads(line) for line in (SAMPLE / "realbench" / "ranking_hard.jsonl").read_text().splitlines()][:2]
    for row, record in zip(rows, records):
        assert row["responses"] and all(isinstance(r, str) and r for r in row["responses"]), row
        assert not row["failures"]
        shown = [p for m in row["prompt"] for p in m["content"] if p["type"] == "image"]
        assert len(shown) == len(record["images"])
    # every request the scheduler sent was generated for, in batches of at most 4
    (stats,) = [r.hf_batch_stats for r in caplog.records if hasattr(r, "hf_batch_stats")]
    assert stats["rows"] == results["run_stats"]["sent"]["model"] > 0
    assert stats["batches"] >= stats["rows"] / 4
    assert stats["prompt_tokens"] <= stats["padded_slots"]


def test_a_video_goes_natively_with_the_sampled_frames_and_their_times(qwen2_vl_dir: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``{{ video(0) }}`` reaches the Qwen2-VL processor as one video (``videos=``, a
    ``<|video_pad|>`` in the prompt): the frames the rule names, in order, and their indices and
    frame rate as the video's metadata, so the processor samples none of its own."""
    pytest.importorskip("av")
    import mmtasks
    from transformers import Qwen2VLProcessor

    from tests.documents.test_video_input import colour_index, make_task

    seen: list[dict] = []
    original = Qwen2VLProcessor.__call__

    def spy(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("videos"):
            seen.append({"videos": [[colour_index(f) for f in video] for video in kwargs["videos"]],
                         "metadata": [(m.total_num_frames, m.fps, list(m.frames_indices)) for m in kwargs["video_metadata"]],
                         "text": kwargs["text"], "sample": kwargs["do_sample_frames"]})
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Qwen2VLProcessor, "__call__", spy)
    make_task(tmp_path, "vidhf", "{field: video, fps: 1, max_frames: 4, max_side: 28}", user="{{ video(0) }}Which colour?")
    mmtasks.evaluate(tasks="vidhf", model=f"hf:{qwen2_vl_dir}", include_path=str(tmp_path / "tasks"), data_dir=tmp_path / "data",
                     output_path=tmp_path / "run", use_cache=False, gen_kwargs={"max_new_tokens": 2})
    videos = [v for call in seen for v in call["videos"]]
    assert videos == [[0, 2, 4, 8], [0, 2, 4, 8]]  # the MP4 and the GIF
    assert sorted(m for call in seen for m in call["metadata"]) == [(10, 2.0, [0, 2, 4, 8])] * 2
    assert all("<|video_pad|>" in t and "<|image_pad|>" not in t for call in seen for t in call["text"])
    assert all(call["sample"] is False for call in seen)
    # the batch planner counts a frame's tokens from the video's header and the task's bound, as
    # for an image of that size (28 x 28 px: one token), not 0
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.models.hf import _image_token_count
    from mmtasks.task import Task
    from transformers import AutoProcessor

    config, file = TaskRegistry.discover([tmp_path / "tasks"]).load("vidhf")
    [doc, _] = list(Task(config, file).documents(tmp_path / "data"))
    frame = doc.videos[0].frame_images()[0]
    assert doc.videos[0].frame_size == (28, 28)
    processor = AutoProcessor.from_pretrained(qwen2_vl_dir)
    assert _image_token_count(processor, frame) == processor._get_num_multimodal_tokens(image_sizes=[(28, 28)]).num_image_tokens[0] > 0
