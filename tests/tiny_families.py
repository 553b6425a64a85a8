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
takes several images per prompt, and where its template comes from. ``tests/test_hf_families.py``
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


def _save(out: Path, config: Any, processor: Any, tokenizer: Any) -> Path:
    """Build the model from ``config`` (seeded), make it greedy with the tokenizer's EOS and pad,
    and save it with ``processor`` into ``out``."""
    import torch
    from transformers import AutoModelForImageTextToText

    out.mkdir(parents=True, exist_ok=True)
    config.dtype = "float32"
    if hasattr(config, "initializer_range"):
        config.initializer_range = INIT
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
    #: extra notes for docs/models.md
    notes: str = ""
    extras: tuple[str, ...] = field(default_factory=tuple)


FAMILIES: dict[str, Family] = {
    f.model_type: f
    for f in (
        Family("gemma3", "Gemma 3", build_gemma3,
               "transformers tests/models/gemma3/test_processing_gemma3.py (google/gemma-3-*-it turn format)",
               notes="the template writes <bos>: tokenized without special tokens (no second BOS)"),
    )
}
