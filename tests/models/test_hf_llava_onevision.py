"""The ``hf`` backend on a tiny LLaVA-OneVision checkpoint (tests/tiny_checkpoints.py): the real
``LlavaOnevisionProcessor``; a request's images reach it as one multi-image sample."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
pytest.importorskip("transformers")

from mmtasks.core.conversation import Image, Message, Text  # noqa: E402
from mmtasks.core.request import GenerationConfig, Request  # noqa: E402
from mmtasks.models.base import ModelContext, ModelSpec, load_model  # noqa: E402
from mmtasks.models.hf import _Row  # noqa: E402
from tests.tiny_checkpoints import build_llava_onevision_model  # noqa: E402


def test_multi_image_requests_are_one_sample_each(tmp_path: Path) -> None:
    from PIL import Image as PILImage

    paths = []
    for k, size in enumerate([(56, 84), (112, 56), (70, 70)]):
        paths.append(tmp_path / f"{k}.png")
        PILImage.new("RGB", size, (40 * k, 200, 90)).save(paths[-1])
    model = load_model(ModelSpec(backend="hf", name=str(build_llava_onevision_model(tmp_path / "ov"))), ModelContext(seed=0))
    try:
        greedy = GenerationConfig(max_new_tokens=4, do_sample=False)
        two = Request((Message("user", (Image(path=paths[0]), Image(path=paths[1]), Text("which?"))),), greedy)
        one = Request((Message("user", (Image(path=paths[2]), Text("and this?"))),), greedy)
        assert model._render(two.messages) == "<|im_start|>user\n<image> <image>\nwhich?<|im_end|>\n<|im_start|>assistant\n"
        rows = [_Row(0, model._render(two.messages), two), _Row(1, model._render(one.messages), one)]
        inputs, lengths = model._encode([(row, [model.images.load(img) for img in row.request.images], []) for row in rows])
        # two samples (of 2 and 1 images), not three single-image samples
        assert inputs["batch_num_images"].tolist() == [2, 1]
        assert lengths == inputs["attention_mask"].sum(dim=1).tolist()
        together = model.generate_all([two, one])
        alone = [model.generate_all([r])[0] for r in (two, one)]
        assert all(r.ok for r in together) and [r.text for r in together] == [r.text for r in alone]
    finally:
        model.close()
