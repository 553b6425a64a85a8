"""Tiny randomly initialised Hugging Face models, built offline for tests.

``build_tiny_llava(directory)`` saves a complete LLaVA checkpoint (CLIP vision
tower + two-layer Qwen2 text model, a few hundred KB) with a word-level
tokenizer trained here, a ``LlavaProcessor`` and a chat template, so that
``AutoProcessor`` / ``AutoModelForImageTextToText.from_pretrained(directory)``
work exactly as for a hub model. The result is deterministic.

Usage outside pytest (e.g. for an end-to-end CLI check)::

    python -m tests.tiny_models /tmp/tiny-llava
    mmtasks --tasks ... --model hf:/tmp/tiny-llava
"""

from __future__ import annotations

import sys
from pathlib import Path

#: 30px images in 6px patches: 25 image tokens per image
IMAGE_SIZE = 30
PATCH_SIZE = 6
SPECIAL_TOKENS = ["<pad>", "<unk>", "<s>", "</s>", "<image>", "<|system|>", "<|user|>", "<|assistant|>"]

#: Renders image parts as <image>, keeps them interleaved with text, in order.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|> ' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}{{ '<image> ' }}{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ ' </s> ' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|> ' }}{% endif %}"
)

_CORPUS = (
    "the a an of to in is on for with what which how many image picture photo shows show first second third "
    "left right red green blue cat dog car tree house person people answer question describe compare option "
    "A B C D yes no one two three four five six seven eight nine ten and or not this that these those "
    "are was were be been has have had do does did can could will would should may might must shall "
    "color shape size number count where when who why . , ? ! : ;"
).split()


def _train_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=SPECIAL_TOKENS, min_frequency=1)
    tok.train_from_iterator([" ".join(_CORPUS)] * 2, trainer=trainer)
    return tok


def _tokenizer():
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=_train_tokenizer(),
        pad_token="<pad>", unk_token="<unk>", bos_token="<s>", eos_token="</s>",
        extra_special_tokens={"image_token": "<image>"},
    )


def _text_config(tokenizer, ids: dict[str, int]):
    from transformers import Qwen2Config

    return Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
        pad_token_id=ids["<pad>"], bos_token_id=ids["<s>"], eos_token_id=ids["</s>"],
        # a wide init makes the random model's output depend visibly on its input
        initializer_range=0.5,
    )


def _generation_config(ids: dict[str, int]):
    """Special tokens are never generated, so a reply of max_new_tokens=N is exactly N words."""
    from transformers import GenerationConfig

    return GenerationConfig(
        bos_token_id=ids["<s>"], eos_token_id=ids["</s>"], pad_token_id=ids["<pad>"],
        suppress_tokens=list(ids.values()),
    )


def build_tiny_llava(directory: str | Path) -> Path:
    """Build and save a tiny random LLaVA checkpoint into ``directory``; return it."""
    import torch
    from transformers import CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor

    try:  # the torchvision-free class; plain CLIPImageProcessor falls back to it with a warning
        from transformers import CLIPImageProcessorPil as CLIPImageProcessor
    except ImportError:
        from transformers import CLIPImageProcessor

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer()
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
    )
    processor = LlavaProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=PATCH_SIZE,
        vision_feature_select_strategy="default", num_additional_image_tokens=1,
        chat_template=CHAT_TEMPLATE,
    )
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            image_size=IMAGE_SIZE, patch_size=PATCH_SIZE, hidden_size=16, intermediate_size=32,
            num_hidden_layers=2, num_attention_heads=2, projection_dim=16,
        ),
        text_config=_text_config(tokenizer, ids),
        image_token_id=ids["<image>"],
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        pad_token_id=ids["<pad>"],
    )
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config = _generation_config(ids)
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


def build_tiny_text_model(directory: str | Path) -> Path:
    """Build and save a tiny random text-only Qwen2 chat model (same tokenizer and template)."""
    import torch
    from transformers import Qwen2ForCausalLM

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer()
    tokenizer.chat_template = CHAT_TEMPLATE
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(_text_config(tokenizer, ids)).eval()
    model.generation_config = _generation_config(ids)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


if __name__ == "__main__":
    out = build_tiny_llava(sys.argv[1] if len(sys.argv) > 1 else "tiny-llava")
    print(out)
