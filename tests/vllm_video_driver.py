"""Drive the ``vllm`` backend with videos on a real vLLM engine; run by tests/models/test_vllm_video.py.

Runs in the vLLM venv (.venv-vllm) with the repo and ``tests/vllm_cpu_vision`` on PYTHONPATH:

    .venv-vllm/bin/python tests/vllm_video_driver.py engine MODEL_DIR ROOT OUT.json --model-args JSON
    .venv-vllm/bin/python tests/vllm_video_driver.py payloads BODIES.json OUT.json

``MODEL_DIR`` is a tiny random Qwen2-VL (tests/tiny_checkpoints.py); ``ROOT`` holds ``tasks/``
and ``data/`` as tests/documents/test_video_input.py's ``make_task`` writes them (an MP4 and an animated GIF
whose frame k is a known colour). The model is built with :func:`mmtasks.models.base.load_model`,
as the CLI builds it, and the tasks' documents go through the harness's own dialogues and
Scheduler. Every ``LLM.generate`` / ``LLM.chat`` call vLLM receives is recorded (the colours of
the frames in each video array and image, the video metadata, the prompt text), and the same
videos are also sent by hand, the way vLLM's documentation shows (frames decoded here with PyAV,
the Qwen2-VL prompt written out), to compare the replies. Everything goes to OUT.json.

``payloads`` reads request bodies the ``openai`` backend sent (``video=video_url``) with vLLM's
own media connector, as ``vllm serve`` reads them: each video's frames and metadata.

vLLM starts worker processes, hence the ``__main__`` guard.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mmtasks.models.base import ModelContext, ModelSpec, load_model

#: frame k of every test video (tests/documents/test_video_input.py's COLOURS)
COLOURS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (255, 0, 255),
           (0, 255, 255), (128, 128, 128), (255, 128, 0), (0, 128, 255), (128, 0, 255)]


def colour_of(pixels: Any) -> int:
    """Which frame an RGB array (height, width, 3) shows: the nearest colour to its centre pixel."""
    px = [int(v) for v in pixels[pixels.shape[0] // 2, pixels.shape[1] // 2]]
    return min(range(len(COLOURS)), key=lambda k: sum((a - b) ** 2 for a, b in zip(px, COLOURS[k])))


def record_engine_calls(llm: Any, calls: list[dict[str, Any]]) -> None:
    """Wrap ``llm.generate`` and ``llm.chat`` to record what each call carries."""
    import numpy as np

    generate, chat = llm.generate, llm.chat

    def recorded_generate(prompts: Any, *args: Any, **kwargs: Any) -> Any:
        for prompt in prompts:
            data = prompt.get("multi_modal_data") or {}
            calls.append({
                "call": "generate",
                "prompt": prompt.get("prompt"),
                "videos": [{"colours": [colour_of(f) for f in array], "shape": list(array.shape), "metadata": meta}
                           for array, meta in data.get("video", [])],
                "images": [colour_of(np.asarray(img.convert("RGB"))) for img in data.get("image", [])],
                "uuids": prompt.get("multi_modal_uuids"),
                "tokenization_kwargs": kwargs.get("tokenization_kwargs"),
            })
        return generate(prompts, *args, **kwargs)

    def recorded_chat(conversations: Any, *args: Any, **kwargs: Any) -> Any:
        for conversation in conversations:
            parts = [p for m in conversation for p in (m["content"] if isinstance(m["content"], list) else [])]
            calls.append({"call": "chat", "parts": [
                ("text", p["text"]) if p["type"] == "text" else ("image", colour_of(np.asarray(p["image_pil"].convert("RGB"))))
                for p in parts]})
        return chat(conversations, *args, **kwargs)

    llm.generate, llm.chat = recorded_generate, recorded_chat


def through_the_scheduler(model: Any, root: Path, task_name: str) -> dict[str, Any]:
    """The task's documents -> its dialogues -> the harness's Scheduler -> this model."""
    from mmtasks import registry
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.dialogues.protocols import DialogueContext
    from mmtasks.scheduling.scheduler import Scheduler
    from mmtasks.task import Task

    config, path = TaskRegistry.discover([str(root / "tasks")]).load(task_name)
    task = Task(config, path)
    protocol = registry.protocols.get(config.protocol).run
    scheduler = Scheduler(models={"model": model})
    samples = list(scheduler.run(protocol(task.state(doc), DialogueContext()) for doc in task.documents(root / "data", None)))
    return {"samples": [{"doc_id": s.doc_id, "responses": s.responses, "failures": s.failures} for s in samples],
            "sent_requests": [asdict(r) for r in model.last_wave]}


def by_hand(model: Any, root: Path, indices: list[int], size: int) -> dict[str, str]:
    """Each video sent the way vLLM's documentation shows (examples/offline_inference/
    vision_language.py, Qwen2-VL): the prompt written out, the frames decoded here with PyAV,
    resized to the task's bound, with their metadata; the greedy reply."""
    import av
    import numpy as np
    from PIL import Image
    from vllm import SamplingParams

    prompt = ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
              "<|vision_start|><|video_pad|><|vision_end|>Which colour?<|im_end|>\n<|im_start|>assistant\n")
    out = {}
    for name in ("clip.mp4", "clip.gif"):
        with av.open(str(root / "data" / "vids" / name)) as container:
            frames = [f.to_image().convert("RGB") for f in container.decode(video=0)]
        fps = 2.0  # both test videos: 2 frames per second (the GIF's frames last 500 ms)
        chosen = np.stack([np.asarray(frames[i].resize((size, size), Image.Resampling.BICUBIC)) for i in indices])
        meta = {"fps": fps, "total_num_frames": len(frames), "duration": len(frames) / fps, "frames_indices": indices,
                "height": size, "width": size, "video_backend": "pyav", "do_sample_frames": False}
        (result,) = model._llm.generate([{"prompt": prompt, "multi_modal_data": {"video": [(chosen, meta)]}}],
                                        [SamplingParams(max_tokens=8, temperature=0.0)], use_tqdm=False)
        out[name] = result.outputs[0].text
    return out


def read_payloads(bodies: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each body's ``video_url`` parts as vLLM's server reads them: its ``MediaConnector`` with the
    request's ``media_io_kwargs`` (the chat request's field), the frames' colours and metadata."""
    from vllm.multimodal.media.connector import MediaConnector

    out = []
    for body in bodies:
        connector = MediaConnector(media_io_kwargs=body.get("media_io_kwargs"))
        videos = []
        for message in body["messages"]:
            for part in message["content"] if isinstance(message["content"], list) else []:
                if part["type"] == "video_url":
                    frames, metadata = connector.fetch_video(part["video_url"]["url"]).media
                    videos.append({"colours": [colour_of(f) for f in frames], "shape": list(frames.shape),
                                   "metadata": metadata})
        out.append(videos)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    modes = parser.add_subparsers(dest="mode", required=True)
    payloads = modes.add_parser("payloads")
    payloads.add_argument("bodies", type=Path)
    payloads.add_argument("out", type=Path)
    engine = modes.add_parser("engine")
    engine.add_argument("model_dir")
    engine.add_argument("root", type=Path)
    engine.add_argument("out", type=Path)
    engine.add_argument("--model-args", default="{}", help="JSON: extra vLLM engine args (CPU memory settings)")
    args = parser.parse_args()
    if args.mode == "payloads":
        bodies = json.loads(args.bodies.read_text(encoding="utf-8"))
        args.out.write_text(json.dumps(read_payloads(bodies), default=str), encoding="utf-8")
        return
    engine_args = json.loads(args.model_args)
    # the run's counts as the preflight gives them for these tasks: 4 sampled frames, 1 video
    context = ModelContext(seed=0, max_images_per_request=4, max_videos_per_request=1)
    model = load_model(ModelSpec(backend="vllm", name=args.model_dir, args=engine_args), context)
    calls: list[dict[str, Any]] = []
    record_engine_calls(model._llm, calls)
    result: dict[str, Any] = {"native_video": model.native_video, "multimodal": model.multimodal}
    result["native"] = through_the_scheduler(model, args.root, "vidvllm")
    result["native_calls"] = calls[:]
    calls.clear()
    result["placed_frames"] = through_the_scheduler(model, args.root, "vidvllm_frames")
    result["placed_frames_calls"] = calls[:]
    calls.clear()
    result["by_hand"] = by_hand(model, args.root, [0, 2, 4, 8], 28)
    model.close()
    args.out.write_text(json.dumps(result, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
