"""Tiny random-weight checkpoints built offline, for backend tests and the GPU check.

Nothing is downloaded: the tokenizer is trained here on a few generated
sentences and the weights are random. The builders:

- :func:`build_text_model`: a Qwen2 causal LM (head_dim 32, the least vLLM's
  CPU attention accepts) with a ChatML chat template and a
  ``generation_config.json`` whose sampling defaults a test can recognise.
- :func:`build_llava_model`: a LLaVA (CLIP vision tower + Llama) with an
  ``<image>`` token, a processor and a chat template that handles image
  parts, for multi-image checks on vLLM and transformers.
- :func:`build_qwen2_vl_model`: a Qwen2-VL (its own vision tower, M-RoPE text
  model) with the real ``Qwen2VLProcessor`` (dynamic resolution: one token per
  28x28 pixels) and Qwen2-VL-Instruct's chat template, for the card's
  ``hf:Qwen/Qwen2-VL-...`` path end to end (needs torchvision).
- :func:`build_llava_onevision_model`: a LLaVA-OneVision (SigLIP tower, Qwen2
  text model, "anyres" tiling) with the real ``LlavaOnevisionProcessor``.

Run as a script to build the text and LLaVA models into a folder (used by scripts/gpu_check.sh):
``python tests/tiny_checkpoints.py OUT_DIR``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: the sampling defaults written to the text model's generation_config.json;
#: a request with do_sample=None must be sent with exactly these.
TEXT_MODEL_SAMPLING_DEFAULTS = {"temperature": 0.7, "top_p": 0.9, "top_k": 7, "repetition_penalty": 1.05}

CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for p in m['content'] %}{% if p['type'] == 'text' %}{{ p['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: ChatML with an ``<image>`` placeholder per image part (LLaVA expands it).
LLAVA_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for p in m['content'] %}"
    "{% if p['type'] == 'image' %}<image>\n{% elif p['type'] == 'text' %}{{ p['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_WORDS = (
    "the a cat dog image screen button left right top bottom red green blue answer question "
    "picture shows window menu click open close first second third which where what one two three "
    "is are was on in at of to and or with from this that there here yes no option choose"
).split()


def _corpus(n: int = 400) -> list[str]:
    """Deterministic pseudo-sentences (no randomness source needed)."""
    out = []
    for i in range(n):
        k = 5 + i % 7
        out.append(" ".join(_WORDS[(i * 7 + j * 13) % len(_WORDS)] for j in range(k)) + ("?" if i % 3 == 0 else "."))
    return out


def build_tokenizer(vocab_size: int = 384, extra_special: tuple[str, ...] = ()):
    """A byte-level BPE tokenizer trained on :func:`_corpus`, wrapped for transformers."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *extra_special]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=list(special[1:]),
    )


def build_text_model(out: Path, seed: int = 0) -> Path:
    """Save a tiny random Qwen2 chat model (weights, tokenizer, template) to ``out``."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer()
    tokenizer.chat_template = CHATML_TEMPLATE
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        # larger than the usual 0.02 so logits have clear winners and greedy
        # decoding does not hinge on float rounding
        initializer_range=0.3,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
    )
    config.dtype = "float32"
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).to(torch.float32).eval()
    model.generation_config = GenerationConfig(
        do_sample=True, eos_token_id=eos, pad_token_id=tokenizer.pad_token_id, **TEXT_MODEL_SAMPLING_DEFAULTS
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def build_llava_model(out: Path, seed: int = 0, image_size: int = 56, patch_size: int = 14) -> Path:
    """Save a tiny random LLaVA (CLIP tower + Llama, head_dim 64) with its processor to ``out``.

    Each image becomes ``(image_size / patch_size) ** 2`` = 16 tokens.
    """
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(extra_special=("<image>",))
    tokenizer.chat_template = LLAVA_TEMPLATE
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    image_token = tokenizer.convert_tokens_to_ids("<image>")
    text_config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=2048,
        initializer_range=0.3,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
    )
    vision_config = CLIPVisionConfig(
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=image_size,
        patch_size=patch_size,
        projection_dim=128,
    )
    config = LlavaConfig(
        vision_config=vision_config,
        text_config=text_config,
        image_token_index=image_token,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        projector_hidden_act="gelu",
    )
    config.dtype = "float32"
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).to(torch.float32).eval()
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": image_size},
        crop_size={"height": image_size, "width": image_size},
        do_center_crop=True,
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=patch_size,
        vision_feature_select_strategy="default",
        chat_template=LLAVA_TEMPLATE,
        image_token="<image>",
        num_additional_image_tokens=1,
    )
    processor.save_pretrained(out)
    return out


#: The chat template of Qwen/Qwen2-VL-7B-Instruct (its chat_template.json): a default system
#: prompt when the conversation has none, each image as <|vision_start|><|image_pad|><|vision_end|>
#: in place, "Picture n: " labels when add_vision_id is set.
QWEN2_VL_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: ChatML; a message's images first, then its text (as LLaVA-OneVision's template orders them).
#: Ours: the images are written "<image> <image>\n", the way lmms-eval's llava_hf class prefixes a
#: prompt with them, so that mmtasks and lmms-eval send the same prompt in benchmarks/local_peers.py.
LLAVA_ONEVISION_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% set images = m['content'] | selectattr('type', 'equalto', 'image') | list %}"
    "{% if images %}{% for p in images %}<image>{% if not loop.last %} {% endif %}{% endfor %}{{ '\\n' }}{% endif %}"
    "{% for p in m['content'] | selectattr('type', 'equalto', 'text') %}{{ p['text'] }}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

QWEN2_VL_SPECIAL = ("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")


def build_qwen2_vl_model(out: Path, seed: int = 0, min_pixels: int = 28 * 28 * 4, max_pixels: int = 28 * 28 * 64) -> Path:
    """Save a tiny random Qwen2-VL (weights, tokenizer, processor, Qwen2-VL-Instruct's chat
    template) to ``out``. An image of H x W pixels (within the pixel bounds, multiples of 28)
    becomes (H / 28) * (W / 28) tokens, as in the real model."""
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import Qwen2VLImageProcessor
    from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(extra_special=QWEN2_VL_SPECIAL)
    tokenizer.chat_template = QWEN2_VL_TEMPLATE
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in ("<|endoftext|>", "<|im_end|>", *QWEN2_VL_SPECIAL)}
    hidden = 64
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": len(tokenizer), "hidden_size": hidden, "intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 4096,
            "initializer_range": 0.3, "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": tokenizer.pad_token_id,
            # head_dim 32: M-RoPE's sections (time, height, width) cover its 16 frequencies
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [4, 6, 6]},
        },
        vision_config={"depth": 2, "embed_dim": 32, "hidden_size": hidden, "mlp_ratio": 2, "num_heads": 2,
                       "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2, "initializer_range": 0.3},
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=True,
    )
    config.dtype = "float32"
    torch.manual_seed(seed)
    model = Qwen2VLForConditionalGeneration(config).to(torch.float32).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.do_sample = False
    model.save_pretrained(out)
    pixels = {"min_pixels": min_pixels, "max_pixels": max_pixels}
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(**pixels, size={"shortest_edge": min_pixels, "longest_edge": max_pixels}),
        video_processor=Qwen2VLVideoProcessor(),
        tokenizer=tokenizer,
        chat_template=QWEN2_VL_TEMPLATE,
    )
    processor.save_pretrained(out)
    return out


def build_llava_onevision_model(out: Path, seed: int = 0, image_size: int = 56, patch_size: int = 14) -> Path:
    """Save a tiny random LLaVA-OneVision (SigLIP tower + Qwen2, anyres tiling up to 2x2 tiles of
    ``image_size``) with its processor to ``out``."""
    import torch
    from transformers import LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration, LlavaOnevisionProcessor
    from transformers.models.llava_onevision.image_processing_llava_onevision import LlavaOnevisionImageProcessor
    from transformers.models.llava_onevision.video_processing_llava_onevision import LlavaOnevisionVideoProcessor

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(extra_special=("<image>", "<video>"))
    tokenizer.chat_template = LLAVA_ONEVISION_TEMPLATE
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pinpoints = [[image_size * a, image_size * b] for a in (1, 2) for b in (1, 2)]
    config = LlavaOnevisionConfig(
        text_config={
            "model_type": "qwen2", "vocab_size": len(tokenizer), "hidden_size": 64, "intermediate_size": 128,
            "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
            "max_position_embeddings": 8192, "initializer_range": 0.3, "eos_token_id": eos,
            "pad_token_id": tokenizer.pad_token_id, "tie_word_embeddings": True,
        },
        vision_config={"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": image_size,
                       "patch_size": patch_size},
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        video_token_index=tokenizer.convert_tokens_to_ids("<video>"),
        image_grid_pinpoints=pinpoints,
        vision_feature_select_strategy="full",
        vision_aspect_ratio="anyres_max_9",
        tie_word_embeddings=True,
    )
    config.dtype = "float32"
    torch.manual_seed(seed)
    model = LlavaOnevisionForConditionalGeneration(config).to(torch.float32).eval()
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.do_sample = False
    model.save_pretrained(out)
    size = {"height": image_size, "width": image_size}
    processor = LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(size=size, image_grid_pinpoints=pinpoints),
        video_processor=LlavaOnevisionVideoProcessor(size=size),
        tokenizer=tokenizer,
        num_image_tokens=(image_size // patch_size) ** 2,
        vision_feature_select_strategy="full",
        chat_template=LLAVA_ONEVISION_TEMPLATE,
        vision_aspect_ratio="anyres_max_9",
    )
    processor.save_pretrained(out)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/tiny_checkpoints.py OUT_DIR", file=sys.stderr)
        return 2
    root = Path(argv[0])
    paths = {"text": str(build_text_model(root / "tiny-qwen2")), "llava": str(build_llava_model(root / "tiny-llava"))}
    print(json.dumps(paths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
