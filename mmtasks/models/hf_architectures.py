"""Architectures the generic ``hf`` backend refuses, and why.

The backend drives every image-text-to-text checkpoint the same way: ``AutoProcessor``,
``AutoModelForImageTextToText`` and the checkpoint's own chat template (docs/models.md lists the
families tested against the reference path). A few cannot be driven that way, and are refused
when the model loads (its config is read first, so no weights are loaded), with one line that
says why and what to use instead:

- single-image architectures, when the run's documents carry more than one image per request
  (their processors take one image per prompt; several would be dropped or mis-placed without a
  word);
- architectures whose generation is broken in the installed transformers itself (the reference
  path ``apply_chat_template(tokenize=True)`` + ``generate`` fails the same way).
"""

from __future__ import annotations

from dataclasses import dataclass

from mmtasks.errors import ModelError


@dataclass(frozen=True)
class Refusal:
    """Why an architecture (a config ``model_type``) is refused, and what to use."""

    label: str
    why: str
    instead: str
    #: refused only when a request may carry more than one image
    multi_image_only: bool = False


#: model_type -> refusal. Single-image models: PaliGemma's processor places one image before the
#: prompt; BLIP-2 and InstructBLIP take one image per prompt; Fuyu's processor one image per text.
REFUSED: dict[str, Refusal] = {
    **{
        model_type: Refusal(label, "takes one image per prompt", "--image-mode combined (the images tiled into one), "
                            "or a multi-image model", multi_image_only=True)
        for model_type, label in (("paligemma", "PaliGemma"), ("blip-2", "BLIP-2"), ("instructblip", "InstructBLIP"),
                                  ("fuyu", "Fuyu"))
    },
    # transformers 5.24: Llama4ForConditionalGeneration.forward reads `image_outputs` from its text
    # model's output, which has none (AttributeError on every forward; tests/models/test_hf_families.py
    # checks that the reference path fails the same way, so this entry goes when transformers is fixed).
    "llama4": Refusal("Llama 4", "cannot generate with the installed transformers (its forward pass fails on every "
                      "prompt, transformers' own apply_chat_template + generate path included)",
                      "the vllm backend (--model vllm:...) or an OpenAI-compatible server (--model openai:...)"),
}


def check_architecture(name: str, model_type: str | None, max_images_per_request: int) -> None:
    """Refuse ``name`` (of config ``model_type``) when the generic backend cannot drive it for
    requests of up to ``max_images_per_request`` images."""
    refusal = REFUSED.get(model_type or "")
    if refusal is None or (refusal.multi_image_only and max_images_per_request <= 1):
        return
    needs = f"; this run's documents have up to {max_images_per_request} images" if refusal.multi_image_only else ""
    raise ModelError(f"hf model {name!r} is a {refusal.label} ({model_type}), which {refusal.why}{needs}",
                     field="--model", hint=f"use {refusal.instead}")
