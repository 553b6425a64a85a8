"""What the vllm backend sends, checked without vLLM: messages, sampling settings, model args."""

from __future__ import annotations

import io

import pytest
from PIL import Image as PILImageModule

from dataclasses import dataclass

from mmtasks.core.conversation import FrameRef, Image, Message, Text, VideoRun
from mmtasks.errors import ConfigError, DataError, ModelError
from mmtasks.models.processor_messages import processor_conversation
from mmtasks.models.vllm_inputs import (chat_messages, image_limit, sampling_kwargs,
                                        split_model_args, video_item)
from mmtasks.core.request import GenerationConfig

ENGINE_ARGS = {"model", "max_model_len", "tensor_parallel_size", "dtype", "mm_processor_kwargs", "limit_mm_per_prompt", "seed"}
MODEL_DEFAULTS = {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "repetition_penalty": 1.05, "min_p": 0.0}


def png(color: str) -> bytes:
    buf = io.BytesIO()
    PILImageModule.new("RGB", (4, 3), color).save(buf, format="PNG")
    return buf.getvalue()


def pil_loader(image: Image) -> PILImageModule.Image:
    """Stands in for Image.load() (decoding is mmtasks.core.pixels)."""
    if image.data is None:
        raise DataError("image file not found", file=image.path, doc_id=image.doc_id, field="images")
    return PILImageModule.open(io.BytesIO(image.data)).convert("RGB")


def test_messages_keep_roles_order_and_interleaved_images() -> None:
    red, blue = Image(data=png("red")), Image(data=png("blue"))
    messages = (
        Message.text("system", "be brief"),
        Message("user", (Text("compare"), red, Text("with"), blue, Text("which is red?"))),
        Message.text("assistant", "the first"),
        Message("user", (Text("sure?"),)),
    )
    out = chat_messages(messages, pil_loader)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[0]["content"] == [{"type": "text", "text": "be brief"}]
    types = [p["type"] for p in out[1]["content"]]
    assert types == ["text", "image_pil", "text", "image_pil", "text"]
    first, second = out[1]["content"][1]["image_pil"], out[1]["content"][3]["image_pil"]
    assert first.getpixel((0, 0)) == (255, 0, 0) and second.getpixel((0, 0)) == (0, 0, 255)
    assert out[3]["content"] == [{"type": "text", "text": "sure?"}]


def test_messages_load_images_only_when_converted() -> None:
    loaded: list[Image] = []
    image = Image(data=png("green"))

    def loader(img: Image) -> PILImageModule.Image:
        loaded.append(img)
        return pil_loader(img)

    chat_messages((Message.text("user", "no image here"),), loader)
    assert loaded == []
    chat_messages((Message("user", (image, Text("?"))),), loader)
    assert loaded == [image]


def test_messages_unreadable_image_raises_data_error() -> None:
    from pathlib import Path

    missing = Image(path=Path("/nonexistent/x.png"), doc_id="d7")
    with pytest.raises(DataError, match="d7"):
        chat_messages((Message("user", (missing,)),), pil_loader)


def test_greedy_when_do_sample_false_whatever_the_temperature() -> None:
    kw = sampling_kwargs(GenerationConfig(max_new_tokens=32, do_sample=False, temperature=0.9, top_p=0.5), MODEL_DEFAULTS)
    assert kw == {"n": 1, "max_tokens": 32, "temperature": 0.0}


def test_do_sample_none_keeps_the_model_defaults() -> None:
    kw = sampling_kwargs(GenerationConfig(max_new_tokens=64, do_sample=None, temperature=None, seed=5), MODEL_DEFAULTS)
    assert kw == {"n": 1, "max_tokens": 64, "seed": 5, **MODEL_DEFAULTS}


def test_do_sample_true_uses_temperature_top_p_seed_and_stop() -> None:
    gen = GenerationConfig(max_new_tokens=8, do_sample=True, temperature=0.7, top_p=0.9, seed=3, stop=("\n\n", "Q:"))
    kw = sampling_kwargs(gen, MODEL_DEFAULTS)
    assert kw == {"n": 1, "max_tokens": 8, "temperature": 0.7, "top_p": 0.9, "seed": 3, "stop": ["\n\n", "Q:"]}


def test_top_k_min_p_and_repetition_penalty_reach_the_sampling_params() -> None:
    """Before: a GenerationConfig had no top_k, min_p or repetition_penalty to pass."""
    gen = GenerationConfig(max_new_tokens=8, do_sample=True, temperature=0.7, top_k=20, min_p=0.05, repetition_penalty=1.1)
    kw = sampling_kwargs(gen, MODEL_DEFAULTS)
    assert kw == {"n": 1, "max_tokens": 8, "temperature": 0.7, "top_p": 1.0, "top_k": 20, "min_p": 0.05,
                  "repetition_penalty": 1.1}
    # greedy: the cut-offs mean nothing, the penalty still applies; model defaults: the settings go over them
    greedy = sampling_kwargs(GenerationConfig(max_new_tokens=4, do_sample=False, top_k=20, repetition_penalty=1.3), MODEL_DEFAULTS)
    assert greedy == {"n": 1, "max_tokens": 4, "temperature": 0.0, "repetition_penalty": 1.3}
    default = sampling_kwargs(GenerationConfig(max_new_tokens=4, temperature=None, top_k=3), MODEL_DEFAULTS)
    assert default == {"n": 1, "max_tokens": 4, **MODEL_DEFAULTS, "top_k": 3}


def test_image_limit_is_at_least_one() -> None:
    assert image_limit(0) == {"image": 1}
    assert image_limit(12) == {"image": 12}


def test_a_run_with_videos_gets_a_video_limit() -> None:
    assert image_limit(8, 1) == {"image": 8, "video": 1}
    assert image_limit(0, 2) == {"image": 1, "video": 2}
    assert image_limit(3, 0) == {"image": 3}


@dataclass(frozen=True)
class Clip:
    """A video's sampled frames (the FrameSource protocol): 4 of 10 frames at 2 fps, frame k grey level 10k."""

    content_hash: str = "clip"
    timestamps: tuple[float, ...] = (0.0, 1.0, 2.0, 4.0)
    indices: tuple[int, ...] = (0, 2, 4, 8)
    fps: float = 2.0
    total_frames: int = 10
    duration: float = 5.0
    frame_size: tuple[int, int] = (6, 4)

    def pixels(self, position: int) -> PILImageModule.Image:
        level = 10 * self.indices[position]
        return PILImageModule.new("RGB", self.frame_size, (level, level, level))


def frames_of(clip: Clip) -> tuple[Image, ...]:
    return tuple(Image(path=None, data=None, frame=FrameRef(clip, k)) for k in range(len(clip.indices)))


def test_a_video_placed_whole_is_one_video_part_other_images_image_parts() -> None:
    clip = Clip()
    photo = Image(data=png("red"))
    whole = Message("user", (photo, Text("Video: "), *frames_of(clip), Text("Which?")))
    one_frame = Message("user", (Text("At 1.0 s: "), frames_of(clip)[1]))
    assert processor_conversation((Message.text("system", "Be brief."), whole, one_frame)) == [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Video: "}, {"type": "video"},
                                     {"type": "text", "text": "Which?"}]},
        # a frame placed on its own (not every sampled frame in a row) stays an image
        {"role": "user", "content": [{"type": "text", "text": "At 1.0 s: "}, {"type": "image"}]},
    ]


def test_a_video_item_is_its_frames_as_one_array_and_their_metadata() -> None:
    clip = Clip()
    run = VideoRun(clip, frames_of(clip))
    array, meta = video_item([f.frame.clip.pixels(f.frame.position) for f in run.frames], clip)
    assert array.shape == (4, 4, 6, 3) and str(array.dtype) == "uint8"  # frames, height, width, RGB
    assert [int(array[k, 0, 0, 0]) for k in range(4)] == [0, 20, 40, 80]  # in order: frames 0, 2, 4, 8
    assert meta == {"fps": 2.0, "total_num_frames": 10, "duration": 5.0, "frames_indices": [0, 2, 4, 8],
                    "height": 4, "width": 6, "video_backend": "pyav", "do_sample_frames": False}


def test_the_video_model_arg_is_the_backends_own() -> None:
    engine, chat = split_model_args({"max_model_len": 4096, "video": "frames"}, ENGINE_ARGS)
    assert engine == {"max_model_len": 4096} and chat == {"video": "frames"}


def test_model_args_split_and_json_values_parsed() -> None:
    engine, chat = split_model_args(
        {"max_model_len": 8192, "mm_processor_kwargs": '{"max_pixels": 802816}', "chat_template_kwargs": {"enable_thinking": False}},
        ENGINE_ARGS,
    )
    assert engine == {"max_model_len": 8192, "mm_processor_kwargs": {"max_pixels": 802816}}
    assert chat == {"chat_template_kwargs": {"enable_thinking": False}}


def test_unknown_model_arg_names_close_matches() -> None:
    with pytest.raises(ModelError) as err:
        split_model_args({"max_model_length": 4096, "tensor_paralel_size": 2}, ENGINE_ARGS)
    message = str(err.value)
    assert "'max_model_length' (did you mean max_model_len" in message
    assert "'tensor_paralel_size' (did you mean tensor_parallel_size" in message
    assert "--model-args" in message


def test_model_arg_model_is_refused() -> None:
    with pytest.raises(ModelError, match="'model'"):
        split_model_args({"model": "other"}, ENGINE_ARGS)


def test_bad_json_model_arg() -> None:
    with pytest.raises(ModelError, match="mm_processor_kwargs.*not valid JSON"):
        split_model_args({"mm_processor_kwargs": "{max_pixels: 1}"}, ENGINE_ARGS)


def test_without_vllm_installed_the_backend_is_a_clear_model_error() -> None:
    import importlib.util

    from mmtasks.models.base import ModelSpec, load_model

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed in this venv")
    with pytest.raises(ConfigError) as err:  # the backend registry's error: exit 2 like any setup error
        load_model(ModelSpec(backend="vllm", name="/models/any"))
    assert "model backend 'vllm' needs a package that is not installed: vllm" in str(err.value) and "mmtasks[vllm]" in str(err.value)
