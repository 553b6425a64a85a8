"""Tiny random checkpoints of the image-text-to-text families the field reports, built offline.

Each builder makes a real transformers checkpoint folder of one architecture: its own config
class (text and vision towers shrunk to a few layers of width 32-128, random weights with a wide
initialiser so that greedy decoding has clear winners), its own processor and image-processor
classes, a byte-level BPE tokenizer trained here with the family's special tokens (and its BOS
behaviour: a tokenizer that adds ``<bos>`` when asked, as the real ones do), and a chat template
in the family's format. Where a template is taken from transformers' own processor tests (the
Apache-2.0 ``tests/models/<family>/test_processing_<family>.py``), :data:`FAMILIES` cites the file;
where none is published there, the template is ours, in the family's documented turn format, and
the citation says so.

``FAMILIES`` maps a family name to its :class:`Family`: the builder, whether the architecture
takes several images per prompt, and where its template comes from. ``tests/models/test_hf_families.py``
runs every family through ``--model hf:`` and compares with the reference path
(``processor.apply_chat_template(tokenize=True, return_dict=True)`` + ``generate``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.tiny_checkpoints import _corpus

#: every tiny checkpoint's seed (weights) and initialiser range
SEED = 0
INIT = 0.3


def family_tokenizer(specials: tuple[str, ...], *, bos: str | None = None, eos: str = "<eos>", pad: str = "<pad>",
                     extra: dict[str, str] | None = None, vocab_size: int = 400) -> Any:
    """A byte-level BPE tokenizer trained on the test corpus, with ``specials`` as special tokens.

    With ``bos``, tokenizing with ``add_special_tokens=True`` (the default) puts ``bos`` first,
    as the Gemma, Llama, Mistral and Cohere tokenizers do; ``extra`` names attributes such as
    ``image_token`` that the family's processor reads from its tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    names = [pad, eos, *([bos] if bos else []), *specials]
    ordered = list(dict.fromkeys(names))
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=ordered,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_corpus(), trainer=trainer)
    if bos:
        bos_id = tok.token_to_id(bos)
        tok.post_processor = processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
                                                           special_tokens=[(bos, bos_id)])
    kwargs: dict[str, Any] = {"eos_token": eos, "pad_token": pad}
    if bos:
        kwargs["bos_token"] = bos
    rest = [t for t in ordered if t not in (pad, eos, bos)]
    if extra:
        kwargs["extra_special_tokens"] = extra
        rest = [t for t in rest if t not in extra.values()]
    if rest:
        kwargs["additional_special_tokens"] = rest
    return PreTrainedTokenizerFast(tokenizer_object=tok, **kwargs)


def _ids(tokenizer: Any, *tokens: str) -> list[int]:
    return [tokenizer.convert_tokens_to_ids(t) for t in tokens]


def _text(tokenizer: Any, **over: Any) -> dict[str, Any]:
    """A small decoder-only text config (as a dict for the family's own text config class)."""
    base = {"vocab_size": len(tokenizer), "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32, "max_position_embeddings": 4096,
            "initializer_range": INIT, "pad_token_id": tokenizer.pad_token_id,
            "eos_token_id": tokenizer.eos_token_id}
    if tokenizer.bos_token_id is not None:
        base["bos_token_id"] = tokenizer.bos_token_id
    base.update(over)
    return base


def _siglip(**over: Any) -> dict[str, Any]:
    base = {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 2, "image_size": 56, "patch_size": 14}
    base.update(over)
    return base


def _save(out: Path, config: Any, processor: Any, tokenizer: Any, init: float = INIT) -> Path:
    """Build the model from ``config`` (seeded), make it greedy with the tokenizer's EOS and pad,
    and save it with ``processor`` into ``out``."""
    import torch
    from transformers import AutoModelForImageTextToText

    out.mkdir(parents=True, exist_ok=True)
    config.dtype = "float32"
    for cfg in (config, getattr(config, "text_config", None)):
        if cfg is not None and hasattr(cfg, "initializer_range"):
            cfg.initializer_range = init
    torch.manual_seed(SEED)
    model = AutoModelForImageTextToText.from_config(config).to(torch.float32).eval()
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.do_sample = False
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


# -- Gemma 3 ---------------------------------------------------------------------------------

#: transformers tests/models/gemma3/test_processing_gemma3.py, prepare_processor_dict (the
#: google/gemma-3-*-it turn format: {{ bos_token }}, <start_of_turn>user / model, an image as
#: <start_of_image>, the system prompt folded into the first user turn)
GEMMA3_TEMPLATE = (
    "{{ bos_token }}\n{%- if messages[0]['role'] == 'system' -%}\n"
    "    {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}\n"
    "    {%- set loop_messages = messages[1:] -%}\n{%- else -%}\n    {%- set first_user_prefix = \"\" -%}\n"
    "    {%- set loop_messages = messages -%}\n{%- endif -%}\n{%- for message in loop_messages -%}\n"
    "    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n"
    "        {{ raise_exception(\"Conversation roles must alternate user/assistant/user/assistant/...\") }}\n"
    "    {%- endif -%}\n    {%- if (message['role'] == 'assistant') -%}\n        {%- set role = \"model\" -%}\n"
    "    {%- else -%}\n        {%- set role = message['role'] -%}\n    {%- endif -%}\n"
    "    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else \"\") }}\n"
    "    {%- if message['content'] is string -%}\n        {{ message['content'] | trim }}\n"
    "    {%- elif message['content'] is iterable -%}\n        {%- for item in message['content'] -%}\n"
    "            {%- if item['type'] == 'image' -%}\n                {{ '<start_of_image>' }}\n"
    "            {%- elif item['type'] == 'text' -%}\n                {{ item['text'] | trim }}\n"
    "            {%- endif -%}\n        {%- endfor -%}\n    {%- else -%}\n"
    "        {{ raise_exception(\"Invalid content type\") }}\n    {%- endif -%}\n    {{ '<end_of_turn>\\n' }}\n"
    "{%- endfor -%}\n{%- if add_generation_prompt -%}\n    {{'<start_of_turn>model\\n'}}\n{%- endif -%}\n"
)


GEMMA3_INIT = 0.05


def build_gemma3(out: Path) -> Path:
    from transformers import Gemma3Config, Gemma3Processor
    from transformers.models.gemma3.image_processing_gemma3 import Gemma3ImageProcessor

    extra = {"image_token": "<image_soft_token>", "boi_token": "<start_of_image>", "eoi_token": "<end_of_image>"}
    tokenizer = family_tokenizer(("<start_of_turn>", "<end_of_turn>", *extra.values()), bos="<bos>", eos="<eos>",
                                 extra=extra)
    tokens_per_image = 4  # 56 px / 14 px patches = 4 x 4, pooled to 2 x 2
    boi, eoi, soft = _ids(tokenizer, "<start_of_image>", "<end_of_image>", "<image_soft_token>")
    config = Gemma3Config(
        text_config=_text(tokenizer, model_type="gemma3_text", sliding_window=512, query_pre_attn_scalar=32),
        vision_config=_siglip(),
        mm_tokens_per_image=tokens_per_image, boi_token_index=boi, eoi_token_index=eoi, image_token_index=soft,
    )
    processor = Gemma3Processor(image_processor=Gemma3ImageProcessor(size={"height": 56, "width": 56}),
                                tokenizer=tokenizer, chat_template=GEMMA3_TEMPLATE, image_seq_length=tokens_per_image)
    # Gemma scales its embeddings by sqrt(hidden_size): a smaller initialiser keeps the logits varied
    return _save(out, config, processor, tokenizer, init=GEMMA3_INIT)


# -- Idefics3 and SmolVLM --------------------------------------------------------------------

#: HuggingFaceM4/Idefics3-8B-Llama3's turn format: "<|begin_of_text|>User: ...<image>...
#: <end_of_utterance>\nAssistant:" (the rendering transformers tests/models/idefics3/
#: test_processing_idefics3.py::test_apply_chat_template expects); written out here by us.
IDEFICS3_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{ line['text'] }}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)
_IDEFICS_SPECIAL = ("<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>",
                    *(f"<row_{i}_col_{j}>" for i in range(1, 7) for j in range(1, 7)))


def _idefics_like(out: Path, *, smol: bool) -> Path:
    from transformers import Idefics3Config, Idefics3Processor, SmolVLMConfig, SmolVLMProcessor
    from transformers.models.idefics3.image_processing_idefics3 import Idefics3ImageProcessor
    from transformers.models.smolvlm.image_processing_smolvlm import SmolVLMImageProcessor
    from transformers.models.smolvlm.video_processing_smolvlm import SmolVLMVideoProcessor

    bos = "<|im_start|>" if smol else "<|begin_of_text|>"
    tokenizer = family_tokenizer(_IDEFICS_SPECIAL, bos=bos, eos="<end_of_utterance>",
                                 extra={"image_token": "<image>", "fake_image_token": "<fake_token_around_image>",
                                        "global_image_token": "<global-img>",
                                        "end_of_utterance_token": "<end_of_utterance>"} if smol else None)
    vision = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
              "image_size": 56, "patch_size": 14}
    seq = (56 // 14) ** 2 // 4  # scale_factor 2: 16 patches become 4 tokens
    sizes = {"do_image_splitting": False, "size": {"longest_edge": 56}, "max_image_size": {"longest_edge": 56}}
    config_cls, image_cls = (SmolVLMConfig, SmolVLMImageProcessor) if smol else (Idefics3Config, Idefics3ImageProcessor)
    config = config_cls(text_config=_text(tokenizer, model_type="llama"), vision_config=vision,
                        image_token_id=tokenizer.convert_tokens_to_ids("<image>"), scale_factor=2)
    if smol:
        processor = SmolVLMProcessor(image_processor=image_cls(**sizes), tokenizer=tokenizer,
                                     video_processor=SmolVLMVideoProcessor(), image_seq_len=seq,
                                     chat_template=IDEFICS3_TEMPLATE)
    else:
        processor = Idefics3Processor(image_processor=image_cls(**sizes), tokenizer=tokenizer, image_seq_len=seq,
                                      chat_template=IDEFICS3_TEMPLATE)
    return _save(out, config, processor, tokenizer)


def build_idefics3(out: Path) -> Path:
    return _idefics_like(out, smol=False)


def build_smolvlm(out: Path) -> Path:
    return _idefics_like(out, smol=True)


# -- Mistral 3 (Pixtral vision) ---------------------------------------------------------------

#: Ours, in mistralai/Mistral-Small-3.1-24B-Instruct-2503's format: {{ bos_token }}, user turns in
#: [INST] ... [/INST], an image as [IMG] in place (the processor expands it into rows of [IMG]
#: ending in [IMG_BREAK] and a final [IMG_END]), assistant turns closed by the EOS.
MISTRAL3_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{% if m['role'] == 'system' %}[SYSTEM_PROMPT]{{ m['content'][0]['text'] if m['content'] is not string else m['content'] }}[/SYSTEM_PROMPT]"
    "{% elif m['role'] == 'user' %}[INST]{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}[IMG]{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}[/INST]"
    "{% else %}{% if m['content'] is string %}{{ m['content'] }}{% else %}{{ m['content'][0]['text'] }}{% endif %}{{ eos_token }}"
    "{% endif %}{% endfor %}"
)


def build_mistral3(out: Path) -> Path:
    from transformers import Mistral3Config, PixtralProcessor
    from transformers.models.pixtral.image_processing_pixtral import PixtralImageProcessor

    tokenizer = family_tokenizer(("[INST]", "[/INST]", "[IMG]", "[IMG_BREAK]", "[IMG_END]", "[SYSTEM_PROMPT]",
                                  "[/SYSTEM_PROMPT]"), bos="<s>", eos="</s>")
    config = Mistral3Config(
        text_config=_text(tokenizer, model_type="mistral", sliding_window=None),
        vision_config={"model_type": "pixtral", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                       "num_attention_heads": 2, "head_dim": 16, "image_size": 56, "patch_size": 14},
        image_token_index=tokenizer.convert_tokens_to_ids("[IMG]"), spatial_merge_size=2,
        vision_feature_layer=-1,
    )
    processor = PixtralProcessor(image_processor=PixtralImageProcessor(size={"longest_edge": 56}, patch_size=14),
                                 tokenizer=tokenizer, patch_size=14, spatial_merge_size=2,
                                 chat_template=MISTRAL3_TEMPLATE)
    return _save(out, config, processor, tokenizer)


# -- Aya Vision -------------------------------------------------------------------------------

#: Ours, in CohereForAI/aya-vision-8b's format: <BOS_TOKEN>, <|START_OF_TURN_TOKEN|><|USER_TOKEN|>
#: ... <|END_OF_TURN_TOKEN|>, the reply after <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>; an image
#: as <image> (the processor expands it into <|START_OF_IMG|> patches <|END_OF_IMG|>).
AYA_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|START_OF_TURN_TOKEN|>"
    "{% if m['role'] == 'user' %}<|USER_TOKEN|>{% elif m['role'] == 'system' %}<|SYSTEM_TOKEN|>{% else %}<|CHATBOT_TOKEN|>{% endif %}"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|END_OF_TURN_TOKEN|>{% endfor %}"
    "{% if add_generation_prompt %}<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>{% endif %}"
)


def build_aya_vision(out: Path) -> Path:
    from transformers import AyaVisionConfig, AyaVisionProcessor
    from transformers.models.got_ocr2.image_processing_got_ocr2 import GotOcr2ImageProcessor

    tokenizer = family_tokenizer(("<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|USER_TOKEN|>",
                                  "<|CHATBOT_TOKEN|>", "<|SYSTEM_TOKEN|>", "<image>", "<|START_OF_IMG|>",
                                  "<|END_OF_IMG|>", "<|IMG_PATCH|>", "<|IMG_LINE_BREAK|>", "TILE", "TILE_GLOBAL"),
                                 bos="<BOS_TOKEN>", eos="<|END_OF_TURN_TOKEN|>")
    config = AyaVisionConfig(
        text_config=_text(tokenizer, model_type="cohere2", sliding_window=512),
        vision_config=_siglip(),
        downsample_factor=2, image_token_index=tokenizer.convert_tokens_to_ids("<|IMG_PATCH|>"),
    )
    processor = AyaVisionProcessor(
        image_processor=GotOcr2ImageProcessor(size={"height": 56, "width": 56}, crop_to_patches=False),
        tokenizer=tokenizer, patch_size=14, img_size=56, downsample_factor=2, chat_template=AYA_TEMPLATE)
    return _save(out, config, processor, tokenizer)


# -- InternVL (native) ------------------------------------------------------------------------

#: Ours, in OpenGVLab/InternVL3-1B-hf's format: ChatML, each image as <IMG_CONTEXT> followed by a
#: newline (the processor expands it into <img> <IMG_CONTEXT>... </img>).
INTERNVL_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<IMG_CONTEXT>\n{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_internvl(out: Path) -> Path:
    from transformers import InternVLConfig, InternVLProcessor
    from transformers.models.got_ocr2.image_processing_got_ocr2 import GotOcr2ImageProcessor
    from transformers.models.internvl.video_processing_internvl import InternVLVideoProcessor

    extra = {"start_image_token": "<img>", "end_image_token": "</img>", "context_image_token": "<IMG_CONTEXT>",
             "video_token": "<video>"}
    tokenizer = family_tokenizer(("<|im_start|>", *extra.values()), eos="<|im_end|>", pad="<|endoftext|>", extra=extra)
    seq = (56 // 14) ** 2 // 4  # downsample_ratio 0.5: 16 patches become 4 tokens
    config = InternVLConfig(
        text_config=_text(tokenizer, model_type="qwen2"),
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": [56, 56], "patch_size": [14, 14]},
        image_token_id=tokenizer.convert_tokens_to_ids("<IMG_CONTEXT>"), image_seq_length=seq,
    )
    processor = InternVLProcessor(
        image_processor=GotOcr2ImageProcessor(size={"height": 56, "width": 56}, crop_to_patches=False),
        tokenizer=tokenizer, video_processor=InternVLVideoProcessor(), image_seq_length=seq,
        chat_template=INTERNVL_TEMPLATE)
    return _save(out, config, processor, tokenizer)


# -- Qwen2.5-VL and Qwen3-VL ------------------------------------------------------------------

#: Qwen/Qwen3-VL-*-Instruct's turn format, written by us: ChatML with no default system prompt,
#: each image as <|vision_start|><|image_pad|><|vision_end|> in place.
QWEN3_VL_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_QWEN_SPECIAL = ("<|im_start|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")


def _qwen_vl(out: Path, *, version: str) -> Path:
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLProcessor, Qwen3VLConfig, Qwen3VLProcessor
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import Qwen2VLImageProcessor
    from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    from tests.tiny_checkpoints import QWEN2_VL_TEMPLATE

    tokenizer = family_tokenizer(_QWEN_SPECIAL, eos="<|im_end|>", pad="<|endoftext|>")
    ids = dict(zip(("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id"),
                   _ids(tokenizer, "<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>")))
    rope = {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [4, 6, 6]}
    if version == "2.5":
        patch, template = 14, QWEN2_VL_TEMPLATE  # Qwen2.5-VL-Instruct ships Qwen2-VL's template
        config = Qwen2_5_VLConfig(
            text_config=_text(tokenizer, model_type="qwen2_5_vl_text", rope_parameters=rope),
            vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                           "out_hidden_size": 64, "patch_size": patch, "spatial_merge_size": 2,
                           "temporal_patch_size": 2, "window_size": 56, "fullatt_block_indexes": [1]},
            **ids)
        processor_cls, video = Qwen2_5_VLProcessor, Qwen2VLVideoProcessor()
    else:
        patch, template = 16, QWEN3_VL_TEMPLATE
        rope = {**rope, "mrope_interleaved": True}
        config = Qwen3VLConfig(
            text_config=_text(tokenizer, model_type="qwen3_vl_text", rope_parameters=rope),
            vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                           "out_hidden_size": 64, "patch_size": patch, "spatial_merge_size": 2,
                           "temporal_patch_size": 2, "num_position_embeddings": 64, "deepstack_visual_indexes": [0]},
            **ids)
        processor_cls, video = Qwen3VLProcessor, Qwen3VLVideoProcessor()
    cell = patch * 2
    pixels = {"min_pixels": cell * cell * 4, "max_pixels": cell * cell * 16}
    image_processor = Qwen2VLImageProcessor(patch_size=patch, **pixels,
                                            size={"shortest_edge": pixels["min_pixels"], "longest_edge": pixels["max_pixels"]})
    processor = processor_cls(image_processor=image_processor, video_processor=video, tokenizer=tokenizer,
                              chat_template=template)
    return _save(out, config, processor, tokenizer)


def build_qwen2_5_vl(out: Path) -> Path:
    return _qwen_vl(out, version="2.5")


def build_qwen3_vl(out: Path) -> Path:
    return _qwen_vl(out, version="3")


# -- the families tests/tiny_checkpoints.py already builds ------------------------------------

def build_qwen2_vl(out: Path) -> Path:
    from tests.tiny_checkpoints import build_qwen2_vl_model

    return build_qwen2_vl_model(out)


def build_llava_onevision(out: Path) -> Path:
    from tests.tiny_checkpoints import build_llava_onevision_model

    return build_llava_onevision_model(out)


def build_llava(out: Path) -> Path:
    from tests.tiny_checkpoints import build_llava_model

    return build_llava_model(out)


# -- Llama 3.2 Vision (mllama) and Llama 4 ------------------------------------------------------

#: Ours, in meta-llama/Llama-3.2-11B-Vision-Instruct's format: {{ bos_token }}, each turn
#: <|start_header_id|>role<|end_header_id|>\n\n ... <|eot_id|>, an image as <|image|> in place.
LLAMA3_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|image|>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|eot_id|>{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)
#: Ours, in meta-llama/Llama-4-Scout-17B-16E-Instruct's format: <|header_start|>role<|header_end|>,
#: turns closed by <|eot|>, an image as <|image|> (expanded by the processor into tiles of patches).
LLAMA4_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|header_start|>{{ m['role'] }}<|header_end|>\n\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|image|>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|eot|>{% endfor %}{% if add_generation_prompt %}<|header_start|>assistant<|header_end|>\n\n{% endif %}"
)


def build_mllama(out: Path) -> Path:
    from transformers import MllamaConfig, MllamaProcessor
    from transformers.models.mllama.image_processing_mllama import MllamaImageProcessor

    tokenizer = family_tokenizer(("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|image|>",
                                  "<|python_tag|>"), bos="<|begin_of_text|>", eos="<|eot_id|>",
                                 pad="<|finetune_right_pad_id|>")
    config = MllamaConfig(
        text_config=_text(tokenizer, model_type="mllama_text_model", num_hidden_layers=2, cross_attention_layers=[1],
                          rope_parameters={"rope_type": "default", "rope_theta": 500000.0}),
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_global_layers": 1,
                       "attention_heads": 2, "image_size": 28, "patch_size": 14, "max_num_tiles": 4,
                       "vision_output_dim": 64, "intermediate_layers_indices": [0]},
        image_token_index=tokenizer.convert_tokens_to_ids("<|image|>"),
    )
    processor = MllamaProcessor(image_processor=MllamaImageProcessor(size={"height": 28, "width": 28}, max_image_tiles=4),
                                tokenizer=tokenizer, chat_template=LLAMA3_TEMPLATE)
    return _save(out, config, processor, tokenizer)


def build_llama4(out: Path) -> Path:
    from transformers import Llama4Config, Llama4Processor
    from transformers.models.llama4.image_processing_llama4 import Llama4ImageProcessor

    specials = ("<|header_start|>", "<|header_end|>", "<|eot|>", "<|image|>", "<|image_start|>", "<|image_end|>",
                "<|patch|>", "<|tile_x_separator|>", "<|tile_y_separator|>")
    tokenizer = family_tokenizer(specials, bos="<|begin_of_text|>", eos="<|eot|>", pad="<|finetune_right_pad|>")
    config = Llama4Config(
        text_config=_text(tokenizer, model_type="llama4_text", intermediate_size_mlp=128, num_local_experts=2,
                          attention_chunk_size=1024, no_rope_layer_interval=2),
        vision_config={"hidden_size": 32, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 28, "patch_size": 14, "vision_output_dim": 64, "projector_input_dim": 64,
                       "projector_output_dim": 64, "pixel_shuffle_ratio": 0.5},
        boi_token_index=tokenizer.convert_tokens_to_ids("<|image_start|>"),
        eoi_token_index=tokenizer.convert_tokens_to_ids("<|image_end|>"),
        image_token_index=tokenizer.convert_tokens_to_ids("<|patch|>"),
    )
    processor = Llama4Processor(image_processor=Llama4ImageProcessor(size={"height": 28, "width": 28}, max_patches=4),
                                tokenizer=tokenizer, patch_size=14, pixel_shuffle_ratio=0.5,
                                chat_template=LLAMA4_TEMPLATE)
    return _save(out, config, processor, tokenizer)


# -- GLM-4V and DeepSeek-VL -------------------------------------------------------------------

#: Ours, in THUDM/GLM-4.1V-9B-Thinking's format: [gMASK]<sop>, <|user|>\n ... <|assistant|>\n,
#: an image as <|begin_of_image|><|image|><|end_of_image|>.
GLM4V_TEMPLATE = (
    "[gMASK]<sop>{% for m in messages %}<|{{ m['role'] }}|>\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|begin_of_image|><|image|><|end_of_image|>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
#: Ours, in deepseek-community/deepseek-vl-1.3b-chat's format: "User: ...\n\nAssistant:", an image
#: as <image_placeholder>, preceded by the BOS.
DEEPSEEK_VL_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}User: {% elif m['role'] == 'assistant' %}Assistant: {% endif %}"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image_placeholder>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "\n\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)


def build_glm4v(out: Path) -> Path:
    from transformers import Glm4vConfig, Glm4vProcessor
    from transformers.models.glm4v.image_processing_glm4v import Glm4vImageProcessor
    from transformers.models.glm4v.video_processing_glm4v import Glm4vVideoProcessor

    specials = ("[gMASK]", "<sop>", "<|user|>", "<|assistant|>", "<|system|>", "<|begin_of_image|>", "<|image|>",
                "<|end_of_image|>", "<|begin_of_video|>", "<|video|>", "<|end_of_video|>")
    tokenizer = family_tokenizer(specials, eos="<|user|>", pad="<|endoftext|>")
    ids = _ids(tokenizer, "<|image|>", "<|video|>", "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>",
               "<|end_of_video|>")
    config = Glm4vConfig(
        text_config=_text(tokenizer, model_type="glm4v_text",
                          rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
                                           "partial_rotary_factor": 0.5}),
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 64,
                       "image_size": 56, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2},
        image_token_id=ids[0], video_token_id=ids[1], image_start_token_id=ids[2], image_end_token_id=ids[3],
        video_start_token_id=ids[4], video_end_token_id=ids[5],
    )
    pixels = {"shortest_edge": 28 * 28 * 4, "longest_edge": 28 * 28 * 16}
    processor = Glm4vProcessor(image_processor=Glm4vImageProcessor(size=pixels, patch_size=14),
                               video_processor=Glm4vVideoProcessor(), tokenizer=tokenizer, chat_template=GLM4V_TEMPLATE)
    return _save(out, config, processor, tokenizer)


def build_deepseek_vl(out: Path) -> Path:
    from transformers import DeepseekVLConfig, DeepseekVLProcessor
    from transformers.models.deepseek_vl.image_processing_deepseek_vl import DeepseekVLImageProcessor

    tokenizer = family_tokenizer(("<image_placeholder>",), bos="<｜begin▁of▁sentence｜>",
                                 eos="<｜end▁of▁sentence｜>", extra={"image_token": "<image_placeholder>"})
    config = DeepseekVLConfig(
        text_config=_text(tokenizer, model_type="llama"),
        vision_config=_siglip(image_size=56),
        image_token_id=tokenizer.convert_tokens_to_ids("<image_placeholder>"),
    )
    processor = DeepseekVLProcessor(image_processor=DeepseekVLImageProcessor(size={"height": 56, "width": 56}),
                                    tokenizer=tokenizer, num_image_tokens=(56 // 14) ** 2,
                                    chat_template=DEEPSEEK_VL_TEMPLATE)
    return _save(out, config, processor, tokenizer)


# -- Idefics2 and LLaVA-NeXT -------------------------------------------------------------------

def build_idefics2(out: Path) -> Path:
    from transformers import Idefics2Config, Idefics2Processor
    from transformers.models.idefics2.image_processing_idefics2 import Idefics2ImageProcessor

    tokenizer = family_tokenizer(("<fake_token_around_image>", "<image>", "<end_of_utterance>"), bos="<s>", eos="</s>",
                                 extra={"image_token": "<image>", "image_boundary_token": "<fake_token_around_image>",
                                        "end_of_utterance_token": "<end_of_utterance>"})
    latents = 4
    config = Idefics2Config(
        text_config=_text(tokenizer, model_type="mistral", sliding_window=None),
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 56, "patch_size": 14},
        perceiver_config={"hidden_size": 64, "resampler_n_latents": latents, "resampler_depth": 1, "resampler_n_heads": 2,
                          "resampler_head_dim": 16, "num_key_value_heads": 1},
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
    )
    image_processor = Idefics2ImageProcessor(do_image_splitting=False, size={"shortest_edge": 56, "longest_edge": 56})
    processor = Idefics2Processor(image_processor=image_processor, tokenizer=tokenizer, image_seq_len=latents,
                                  chat_template=IDEFICS3_TEMPLATE)
    return _save(out, config, processor, tokenizer)


#: Ours: Vicuna-style "USER: ... ASSISTANT:" with <image> in place (llava-hf/llava-v1.6-vicuna-7b-hf's format).
LLAVA_NEXT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'][0]['text'] }} "
    "{% elif m['role'] == 'user' %}USER: {% for c in m['content'] %}{% if c['type'] == 'image' %}<image>\n"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %} "
    "{% else %}ASSISTANT: {{ m['content'][0]['text'] }}{{ eos_token }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


def build_llava_next(out: Path) -> Path:
    from transformers import CLIPVisionConfig, LlavaNextConfig, LlavaNextProcessor
    from transformers.models.llava_next.image_processing_llava_next import LlavaNextImageProcessor

    tokenizer = family_tokenizer(("<image>",), bos="<s>", eos="</s>")
    pinpoints = [[56, 56], [56, 112], [112, 56], [112, 112]]
    config = LlavaNextConfig(
        text_config=_text(tokenizer, model_type="llama"),
        vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                                       image_size=56, patch_size=14, projection_dim=32),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"), image_grid_pinpoints=pinpoints,
        vision_feature_select_strategy="default", vision_feature_layer=-1,
    )
    image_processor = LlavaNextImageProcessor(size={"shortest_edge": 56}, crop_size={"height": 56, "width": 56},
                                              image_grid_pinpoints=pinpoints)
    processor = LlavaNextProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=14,
                                   vision_feature_select_strategy="default", chat_template=LLAVA_NEXT_TEMPLATE,
                                   num_additional_image_tokens=1)
    return _save(out, config, processor, tokenizer)


# -- PaliGemma (single image: refused for multi-image runs) -----------------------------------

def build_paligemma(out: Path) -> Path:
    from transformers import PaliGemmaConfig, PaliGemmaProcessor
    from transformers.models.siglip.image_processing_siglip import SiglipImageProcessor

    tokenizer = family_tokenizer(("<image>",), bos="<bos>", eos="<eos>")
    seq = (56 // 14) ** 2
    image_processor = SiglipImageProcessor(size={"height": 56, "width": 56})
    image_processor.image_seq_length = seq
    config = PaliGemmaConfig(text_config=_text(tokenizer, model_type="gemma"), vision_config=_siglip(),
                             image_token_index=tokenizer.convert_tokens_to_ids("<image>"), projection_dim=64)
    # PaliGemma checkpoints ship no chat template; ours puts the text of the one user turn after
    # the image, as its processor expects ("<image>" * n + bos + prompt + "\n")
    template = "{% for m in messages %}{% for c in m['content'] %}{% if c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endfor %}"
    processor = PaliGemmaProcessor(image_processor=image_processor, tokenizer=tokenizer, chat_template=template)
    return _save(out, config, processor, tokenizer)


@dataclass(frozen=True)
class Family:
    """One architecture the hf backend is tested on."""

    #: transformers' model_type
    model_type: str
    #: the families' names as reports call them
    label: str
    build: Callable[[Path], Path]
    #: where the chat template comes from
    template_source: str
    #: whether the architecture takes several images in one prompt
    multi_image: bool = True
    #: how the hf backend treats it: "tested" (equal to the reference path), or "refused" (with
    #: one line, mmtasks.models.hf_architectures)
    status: str = "tested"
    #: extra notes for docs/models.md
    notes: str = ""
    extras: tuple[str, ...] = field(default_factory=tuple)


FAMILIES: dict[str, Family] = {
    f.model_type: f
    for f in (
        Family("gemma3", "Gemma 3", build_gemma3,
               "transformers tests/models/gemma3/test_processing_gemma3.py (google/gemma-3-*-it turn format)",
               notes="the template writes <bos>: tokenized without special tokens (no second BOS)"),
        Family("idefics3", "Idefics3", build_idefics3,
               "ours, rendering as transformers tests/models/idefics3/test_processing_idefics3.py expects"),
        Family("smolvlm", "SmolVLM", build_smolvlm,
               "ours, Idefics3's turn format with SmolVLM's <|im_start|> BOS", extras=("num2words",)),
        Family("mistral3", "Mistral 3 (Pixtral)", build_mistral3,
               "ours, in Mistral-Small-3.1-Instruct's [INST]/[IMG] format"),
        Family("aya_vision", "Aya Vision", build_aya_vision, "ours, in aya-vision's Cohere turn format"),
        Family("internvl", "InternVL (native)", build_internvl, "ours, in InternVL3-hf's ChatML + <IMG_CONTEXT> format"),
        Family("qwen2_vl", "Qwen2-VL", build_qwen2_vl, "Qwen/Qwen2-VL-7B-Instruct chat_template.json"),
        Family("qwen2_5_vl", "Qwen2.5-VL", build_qwen2_5_vl, "Qwen/Qwen2.5-VL-7B-Instruct ships Qwen2-VL's template"),
        Family("qwen3_vl", "Qwen3-VL", build_qwen3_vl, "ours, in Qwen3-VL-Instruct's ChatML + vision tokens format"),
        Family("llava", "LLaVA", build_llava, "ours, ChatML with <image> per image part"),
        Family("llava_onevision", "LLaVA-OneVision", build_llava_onevision,
               "ours, ChatML with a message's images first (lmms-eval's prompt order)"),
        Family("mllama", "Llama 3.2 Vision (mllama)", build_mllama, "ours, in Llama-3.2-Vision-Instruct's header format"),
        Family("glm4v", "GLM-4V", build_glm4v, "ours, in GLM-4.1V's [gMASK]<sop><|user|> format"),
        Family("idefics2", "Idefics2", build_idefics2, "ours, Idefics3's User:/Assistant: turn format"),
        Family("llava_next", "LLaVA-NeXT", build_llava_next, "ours, in llava-v1.6-vicuna's USER:/ASSISTANT: format"),
        Family("paligemma", "PaliGemma", build_paligemma, "ours (the checkpoints ship none)", multi_image=False,
               status="refused", notes="single image: refused when a request may carry several; runs with one"),
        Family("llama4", "Llama 4", build_llama4, "ours, in Llama-4-Scout-Instruct's header format", status="refused",
               notes="transformers 5.24's Llama4ForConditionalGeneration fails every forward (reference path too)"),
        Family("deepseek_vl", "DeepSeek-VL", build_deepseek_vl, "ours, in deepseek-vl-chat's User:/Assistant: format"),
    )
}
