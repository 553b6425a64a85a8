"""The ``hf`` backend on tiny random checkpoints built offline (tests/tiny_models.py)."""

from __future__ import annotations

import io
import sys
import threading
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from mmtasks.core.conversation import Image, Message, Text  # noqa: E402
from mmtasks.errors import ModelError  # noqa: E402
from mmtasks.models.base import ModelContext, ModelSpec, load_model  # noqa: E402
from mmtasks.models.hf import HFModel  # noqa: E402
from mmtasks.core.request import GenerationConfig, Request  # noqa: E402

GREEDY = GenerationConfig(max_new_tokens=6, do_sample=False)


def _pil_decode(image: Image):
    from PIL import Image as PILImage

    return PILImage.open(io.BytesIO(image.read_bytes())).convert("RGB")


@pytest.fixture(autouse=True)
def _image_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use the project's decoder when it exists, else a PIL stand-in with the same contract."""
    try:
        import mmtasks.core.pixels  # noqa: F401
    except ImportError:
        module = types.ModuleType("mmtasks.core.pixels")
        module.decode_image = _pil_decode  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "mmtasks.core.pixels", module)


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from PIL import Image as PILImage

    root = tmp_path_factory.mktemp("images")
    out = {}
    for name, color, size in [("red", (255, 0, 0), (40, 32)), ("green", (0, 200, 0), (64, 64)),
                              ("blue", (0, 0, 255), (30, 90)), ("noise", None, (50, 50))]:
        if color is None:
            img = PILImage.frombytes("RGB", size, bytes((i * 37) % 256 for i in range(size[0] * size[1] * 3)))
        else:
            img = PILImage.new("RGB", size, color)
        out[name] = root / f"{name}.png"
        img.save(out[name])
    return out


def _model(path: Path, **args) -> HFModel:
    model = load_model(ModelSpec(backend="hf", name=str(path), args=args), ModelContext(seed=0))
    assert isinstance(model, HFModel)
    return model


def _requests(images: dict[str, Path], generation: GenerationConfig = GREEDY) -> list[Request]:
    img = lambda name: Image(path=images[name], doc_id=name)  # noqa: E731
    return [
        Request((Message.text("system", "answer yes or no"),
                 Message("user", (img("red"), Text("first image"), img("green"), Text("compare the third"), img("blue")))),
                generation, doc_id="three-images"),
        Request((Message.text("user", "how many dog"),), generation, doc_id="text-only"),
        Request((Message("user", (img("noise"), Text("what is the color and shape of this picture ?"))),),
                generation, doc_id="one-image"),
        Request((Message.text("user", "describe the first picture"),
                 Message.text("assistant", "a red car"),
                 Message("user", (Text("and these two ?"), img("blue"), img("red")))),
                generation, doc_id="multi-turn"),
    ]


def _texts(model: HFModel, requests: list[Request]) -> list[str]:
    replies = model.generate_all(requests)
    assert all(r.ok for r in replies), [r.error for r in replies]
    return [r.text for r in replies]  # type: ignore[misc]


def test_batched_replies_match_one_at_a_time(tiny_llava_dir: Path, images: dict[str, Path]) -> None:
    requests = _requests(images)
    batched = _model(tiny_llava_dir, batch_size=4)
    order = [i for i, _ in batched.generate(requests)]
    together = _texts(batched, requests)
    single = _model(tiny_llava_dir, batch_size=1)
    alone = [_texts(single, [r])[0] for r in requests]
    assert together == alone
    # replies differ from one request to another, so a mix-up of indices would show
    assert len(set(together)) == len(together)
    # one batch, longest prompt (most images) first: not the input order
    assert order[0] == 0 and sorted(order) == [0, 1, 2, 3] and order != [0, 1, 2, 3]


def test_left_padding_in_batches(tiny_llava_dir: Path, images: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    model = _model(tiny_llava_dir, batch_size=4)
    assert model.tokenizer.padding_side == "left"
    seen = []
    original = model.model.generate

    def spy(**kwargs):
        seen.append(kwargs["attention_mask"].clone())
        return original(**kwargs)

    monkeypatch.setattr(model.model, "generate", spy)
    _texts(model, _requests(images))
    (mask,) = seen
    assert mask.shape[0] == 4
    assert bool(mask[:, -1].all())  # every prompt ends at the right edge
    assert not bool(mask[:, 0].all())  # shorter prompts are padded on the left


def test_max_new_tokens_respected(tiny_llava_dir: Path, images: dict[str, Path]) -> None:
    # the tiny model never generates a special token, so a reply is exactly max_new_tokens words
    model = _model(tiny_llava_dir)
    for n in (1, 3, 9):
        texts = _texts(model, _requests(images, GenerationConfig(max_new_tokens=n, do_sample=False)))
        assert [len(t.split()) for t in texts] == [n] * 4
    # every reply hit the limit, and says so; a stop string ends one by itself
    replies = model.generate_all(_requests(images, GenerationConfig(max_new_tokens=3, do_sample=False)))
    assert [(r.finish_reason, r.completion_tokens) for r in replies] == [("length", 3)] * 4
    stop = replies[1].text.split()[1]
    (stopped,) = model.generate_all([Request(_requests(images)[1].messages, GenerationConfig(max_new_tokens=3, stop=(stop,)))])
    assert stopped.finish_reason == "stop"


def test_sampling_is_seeded_and_default_follows_generation_config(tiny_llava_dir: Path, images: dict[str, Path]) -> None:
    model = _model(tiny_llava_dir)
    requests = _requests(images)[:2]
    sample = lambda seed: _texts(model, [Request(r.messages, GenerationConfig(  # noqa: E731
        max_new_tokens=12, do_sample=True, temperature=1.5, seed=seed)) for r in requests])
    assert sample(1) == sample(1)
    assert sample(1) != sample(2)
    # do_sample=None: the checkpoint's generation_config, which for this model is greedy
    default = [Request(r.messages, GenerationConfig(max_new_tokens=6)) for r in requests]
    assert _texts(model, default) == _texts(model, requests)


def test_stop_strings_cut_the_reply(tiny_llava_dir: Path, images: dict[str, Path]) -> None:
    model = _model(tiny_llava_dir)
    request = _requests(images)[1]
    full = _texts(model, [request])[0]
    stop_word = full.split()[2]
    stopped = _texts(model, [Request(request.messages, GenerationConfig(max_new_tokens=6, do_sample=False, stop=(stop_word,)))])[0]
    assert stopped == full[: full.index(stop_word)].strip()


def test_images_are_loaded_per_batch_only(tiny_llava_dir: Path, images: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Pixels are decoded for the batch being generated and the next two (the one being prepared,
    and the one after it, whose decoding, a video's frames, then has a whole generation to run in),
    never the whole wave, in worker threads, and each distinct image once."""
    loaded: list[tuple[str | None, str]] = []
    original = Image.load
    monkeypatch.setattr(Image, "load", lambda self: (loaded.append((self.doc_id, threading.current_thread().name)), original(self))[1])
    model = _model(tiny_llava_dir, batch_size=1)
    names = ("red", "green", "blue", "red", "green")
    requests = [Request((Message("user", (Image(path=images[n], doc_id=n), Text(f"what color {k}"))),), GREEDY) for k, n in enumerate(names)]
    stream = iter(model.generate(requests))
    assert loaded == []
    next(stream)
    assert 1 <= len(loaded) <= 3  # the first batch's image, perhaps already the next two's
    rest = list(stream)
    assert len(rest) == 4
    assert sorted(doc for doc, _ in loaded) == ["blue", "green", "red"]  # a repeated image is decoded once
    assert all(thread.startswith("mmtasks-decode") for _, thread in loaded)
    assert model.images.decoded == 3


def test_missing_image_fails_only_its_request(tiny_llava_dir: Path, images: dict[str, Path], tmp_path: Path) -> None:
    missing = tmp_path / "gone.png"
    requests = _requests(images)[:2] + [
        Request((Message("user", (Image(path=missing, doc_id="d7"), Text("what color"))),), GREEDY)
    ]
    replies = _model(tiny_llava_dir, batch_size=8).generate_all(requests)
    assert replies[0].ok and replies[1].ok
    assert not replies[2].ok and "gone.png" in (replies[2].error or "")



def _tight_memory(model, monkeypatch: pytest.MonkeyPatch, fits: int = 2) -> list[int]:
    """Make ``generate`` run out of memory on batches of more than ``fits``; returns the batch sizes it was called with."""
    original = model.model.generate
    sizes: list[int] = []

    def tight_memory(**kwargs):
        sizes.append(kwargs["input_ids"].shape[0])
        if kwargs["input_ids"].shape[0] > fits:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return original(**kwargs)

    monkeypatch.setattr(model.model, "generate", tight_memory)
    return sizes


def test_out_of_memory_halves_the_batch(tiny_llava_dir: Path, images: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    requests = _requests(images)
    expected = _texts(_model(tiny_llava_dir, batch_size=1), requests)
    model = _model(tiny_llava_dir, batch_size=4)
    sizes = _tight_memory(model, monkeypatch)
    assert _texts(model, requests) == expected
    assert sizes == [4, 2, 2] and model.batch_size == 2


def test_a_failing_request_does_not_fail_its_batch(tiny_llava_dir: Path, images: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    model = _model(tiny_llava_dir, batch_size=4)
    original = model.model.generate
    dog = model.tokenizer.convert_tokens_to_ids("dog")

    def fragile(**kwargs):
        if bool((kwargs["input_ids"] == dog).any()):
            raise RuntimeError("boom")
        return original(**kwargs)

    monkeypatch.setattr(model.model, "generate", fragile)
    replies = model.generate_all(_requests(images))
    assert [r.ok for r in replies] == [True, False, True, True]
    assert "RuntimeError: boom" in (replies[1].error or "")


def test_missing_local_directory_is_a_model_error(tmp_path: Path) -> None:
    name = str(tmp_path / "no-such-model")
    with pytest.raises(ModelError) as info:
        _model(Path(name))
    message = str(info.value)
    assert name in message and "could not be found locally nor downloaded" in message
    assert "\n" not in message and info.value.__cause__ is None and info.value.__suppress_context__


def test_hub_id_offline_is_a_model_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(ModelError) as info:
        load_model(ModelSpec(backend="hf", name="mmtasks-test-org/no-such-model"))
    message = str(info.value)
    assert "'mmtasks-test-org/no-such-model' could not be found locally nor downloaded" in message
    assert "HF_HUB_OFFLINE" in message and "hf download mmtasks-test-org/no-such-model" in message and "HF_HOME" in message
    assert "\n" not in message


def test_bad_model_args_are_model_errors(tiny_llava_dir: Path) -> None:
    with pytest.raises(ModelError, match=r"unknown model argument 'temprature'.*accepted: dtype, device_map"):
        _model(tiny_llava_dir, temprature=0.5)
    with pytest.raises(ModelError, match="'dtype'"):
        _model(tiny_llava_dir, dtype="int3")
    # CLIP's image processor has no pixel budget: refusing beats silently ignoring it
    with pytest.raises(ModelError, match="'max_pixels' is not accepted .*CLIPImageProcessor"):
        _model(tiny_llava_dir, max_pixels=50000)


def test_pixel_args_reach_processors_that_take_them(tmp_path: Path) -> None:
    qwen = pytest.importorskip("transformers.models.qwen2_vl.image_processing_pil_qwen2_vl")
    from mmtasks.models.hf import _check_pixel_args

    processor = types.SimpleNamespace(image_processor=qwen.Qwen2VLImageProcessorPil(max_pixels=200704))
    _check_pixel_args("qwen", processor, {"max_pixels": 200704, "min_pixels": 3136})


def test_max_images_and_batch_size_args(tiny_llava_dir: Path, images: dict[str, Path]) -> None:
    model = load_model(ModelSpec(backend="hf", name=str(tiny_llava_dir), args={"max_images": 2, "dtype": "float32"}),
                       ModelContext(batch_size=3))
    assert model.batch_size == 3 and model.model.dtype == torch.float32
    with pytest.raises(ModelError, match="has 3 images .*max_images=2"):
        list(model.generate(_requests(images)))
    assert _model(tiny_llava_dir, batch_size=5).batch_size == 5
    assert _model(tiny_llava_dir).batch_size == 8


def test_text_only_checkpoint_falls_back_to_causal_lm(tmp_path: Path, images: dict[str, Path]) -> None:
    from tests.tiny_models import build_tiny_text_model

    model = _model(build_tiny_text_model(tmp_path / "text"))
    assert not model.multimodal
    (reply,) = model.generate_all([Request((Message.text("system", "be brief"), Message.text("user", "how many dog")), GREEDY)])
    assert reply.ok and reply.text
    with pytest.raises(ModelError, match="text-only"):
        model.generate_all(_requests(images)[:1])


def test_close_frees_the_model(tiny_llava_dir: Path) -> None:
    model = _model(tiny_llava_dir)
    model.close()
    assert model.model is None and model.processor is None


def test_cache_identity_pins_the_checkpoint_config_and_chat_template(tiny_llava_dir: Path, tmp_path: Path) -> None:
    """Two loads of the same folder share cached replies; the same folder with another chat
    template (or config) does not, though its path and args are the same."""
    import json
    import shutil

    first, again = _model(tiny_llava_dir), _model(tiny_llava_dir)
    assert first.identity == again.identity
    copy = tmp_path / "copy"
    shutil.copytree(tiny_llava_dir, copy)
    before = _model(copy).identity
    for name in ("chat_template.jinja", "chat_template.json"):
        path = copy / name
        if path.exists():
            if name.endswith(".json"):
                data = json.loads(path.read_text())
                data["chat_template"] = "SYSTEM PREFIX " + data["chat_template"]
                path.write_text(json.dumps(data))
            else:
                path.write_text("SYSTEM PREFIX " + path.read_text())
            break
    else:
        pytest.fail(f"no chat template file in {sorted(p.name for p in copy.iterdir())}")
    assert _model(copy).identity != before
    assert json.loads(before)["spec"] == json.loads(_model(copy).identity)["spec"]


def test_a_prompt_longer_than_the_context_fails_before_generate(tiny_llava_dir: Path, images: dict[str, Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """fidelity: a request whose prompt + max_new_tokens exceeds max_position_embeddings is a
    context_overflow failure, and generate never sees it; the rest of its batch is answered."""
    model = _model(tiny_llava_dir, batch_size=4)
    limit = model.model.config.text_config.max_position_embeddings
    assert model.context_limit == limit
    calls: list[int] = []
    original = model.model.generate

    def counting(**kwargs):
        calls.append(kwargs["input_ids"].shape[0])
        return original(**kwargs)

    monkeypatch.setattr(model.model, "generate", counting)
    long = Request((Message.text("user", "dog " * limit),), GREEDY, doc_id="too-long")
    replies = model.generate_all([*_requests(images)[:2], long])
    assert [r.ok for r in replies] == [True, True, False]
    assert (replies[2].error or "").startswith("context_overflow: ")
    assert calls == [2]  # one generate call, for the two prompts that fit


def test_next_batch_is_prepared_while_the_model_generates(tiny_llava_dir: Path, images: dict[str, Path],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Preparation of batch k+1 (images, processor, padding) starts before generation of batch k
    ends. The fake model is slow in a way a sequential harness cannot satisfy: each generate
    waits for the next batch's preparation to begin (an event, bounded by a timeout)."""
    model = _model(tiny_llava_dir, batch_size=1)
    requests = _requests(images)
    events: list[str] = []
    started = [threading.Event() for _ in requests]
    encode, generate = model._encode, model.model.generate
    count = {"prepare": 0, "generate": 0}

    def preparing(ready):
        k = count["prepare"]
        count["prepare"] += 1
        events.append(f"prepare {k} starts in {threading.current_thread().name.split('_')[0]}")
        started[k].set()
        return encode(ready)

    def slow_generate(**kwargs):
        k = count["generate"]
        count["generate"] += 1
        events.append(f"generate {k} starts")
        if k + 1 < len(requests):
            seen = started[k + 1].wait(timeout=120)  # a hang guard: preparation starts at once unless the overlap is gone
            events.append(f"generate {k} saw prepare {k + 1}: {seen}")
        out = generate(**kwargs)
        events.append(f"generate {k} ends")
        return out

    monkeypatch.setattr(model, "_encode", preparing)
    monkeypatch.setattr(model.model, "generate", slow_generate)
    replies = model.generate_all(requests)
    assert all(r.ok for r in replies)
    for k in range(len(requests) - 1):
        assert f"generate {k} saw prepare {k + 1}: True" in events
        assert events.index(f"prepare {k + 1} starts in mmtasks-prepare") < events.index(f"generate {k} ends")
    assert all(e.endswith("mmtasks-prepare") for e in events if e.startswith("prepare"))
    stats = model.stats
    assert stats.batches == len(requests) and stats.rows == len(requests)
    assert stats.padded_share == 0.0  # one request per batch: nothing to pad


def test_out_of_memory_halves_batches_already_prepared(tiny_llava_dir: Path, images: dict[str, Path],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch prepared ahead at the old size is split to the halved size, not run whole."""
    requests = _requests(images) * 2
    model = _model(tiny_llava_dir, batch_size=4)
    sizes = _tight_memory(model, monkeypatch)
    texts = _texts(model, requests)
    assert texts[:4] == texts[4:] and len(set(texts)) == 4
    assert sizes == [4, 2, 2, 2, 2] and model.batch_size == 2


def test_batch_stats_padding_and_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    from mmtasks.models import hf_batches

    stats = hf_batches.BatchStats()
    stats.count_batch([10, 8, 6])  # 30 slots, 24 tokens
    stats.count_batch([5, 5])  # 10 slots, 10 tokens
    assert (stats.prompt_tokens, stats.padded_slots) == (34, 40)
    assert stats.padded_share == pytest.approx(6 / 40)
    clock = iter([100.0, 104.0, 105.0, 109.0])  # generate 4 s, idle 1 s, generate 4 s
    monkeypatch.setattr(hf_batches.time, "perf_counter", lambda: next(clock))
    for _ in range(2):
        with stats.generating():
            pass
    assert (stats.generate_s, stats.idle_s) == (8.0, 1.0)
    assert stats.idle_share == pytest.approx(1 / 9)


def test_a_template_that_opens_the_reasoning_block(tiny_llava_dir: Path, images: dict[str, Path], tmp_path: Path) -> None:
    """A chat template that ends its generation prompt with ``<think>`` (Qwen3 / DeepSeek-R1
    thinking templates): the reply starts inside the block, so a reply that never writes
    ``</think>`` is reasoning that never closed (truncated), never an answer."""
    import shutil

    thinking = tmp_path / "thinking"
    shutil.copytree(tiny_llava_dir, thinking)
    written = 0
    for path in thinking.iterdir():
        if path.suffix in (".json", ".jinja") and "<|assistant|> " in path.read_text(encoding="utf-8"):
            path.write_text(path.read_text(encoding="utf-8").replace("<|assistant|> ", "<|assistant|> <think> "), encoding="utf-8")
            written += 1
    assert written
    requests = _requests(images, GenerationConfig(max_new_tokens=3, do_sample=False))[:2]
    replies = _model(thinking).generate_all(requests)
    assert [r.error for r in replies] == ["truncated: the reasoning never closed (no </think>); the reply hit the token "
                                          "limit (max_new_tokens=3)"] * 2
    assert all(r.reasoning and len(r.reasoning.split()) == 3 for r in replies)  # the three words, kept as reasoning
    # the same model with its reasoning tags switched off: the words are the answer
    plain = _model(thinking, reasoning_tags="none").generate_all(requests)
    assert [r.text for r in plain] == [r.reasoning for r in replies]
