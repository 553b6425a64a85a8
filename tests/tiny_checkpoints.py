"""Tiny random-weight checkpoints built offline, for backend tests and the GPU check.

Nothing is downloaded: the tokenizer is trained here on a few generated
sentences and the weights are random. Two builders:

- :func:`build_text_model`: a Qwen2 causal LM (head_dim 32, the least vLLM's
  CPU attention accepts) with a ChatML chat template and a
  ``generation_config.json`` whose sampling defaults a test can recognise.
- :func:`build_llava_model`: a LLaVA (CLIP vision tower + Llama) with an
  ``<image>`` token, a processor and a chat template that handles image
  parts, for multi-image checks on vLLM and transformers.

Run as a script to build both into a folder (used by scripts/gpu_check.sh):
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
