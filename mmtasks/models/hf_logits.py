"""OpenAI's ``presence_penalty``, ``frequency_penalty`` and ``logit_bias`` for the ``hf`` backend,
as a transformers ``LogitsProcessor`` applied in ``generate``.

transformers has ``repetition_penalty`` (a factor on the logits of every token of the prompt and
the reply), not OpenAI's additive penalties. OpenAI defines them (API reference, "Frequency and
presence penalties"; vLLM's ``apply_penalties`` computes the same on the reply's tokens) as::

    mu[j] -> mu[j] - c[j] * frequency_penalty - float(c[j] > 0) * presence_penalty

where ``c[j]`` is how often token ``j`` was sampled before the current position, in the reply
only (the prompt's tokens are not counted); ``logit_bias[j]`` is added to ``mu[j]`` at every step.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from transformers import LogitsProcessor


class OpenAIPenalties(LogitsProcessor):
    """The penalties and biases of one ``generate`` call whose prompts (left-padded to one
    length) are ``prompt_length`` tokens long: the tokens after them are the replies."""

    def __init__(self, prompt_length: int, presence_penalty: float | None = None,
                 frequency_penalty: float | None = None, logit_bias: Mapping[int, float] | None = None) -> None:
        self.prompt_length = prompt_length
        self.presence = float(presence_penalty or 0.0)
        self.frequency = float(frequency_penalty or 0.0)
        self.bias = dict(logit_bias or {})

    def __call__(self, input_ids: torch.LongTensor, logits: torch.FloatTensor) -> torch.Tensor:
        scores = logits.clone()
        vocab = scores.shape[-1]
        if self.presence or self.frequency:
            reply = input_ids[:, self.prompt_length:]
            if reply.shape[1]:
                counts = torch.zeros((scores.shape[0], vocab), dtype=scores.dtype, device=scores.device)
                counts.scatter_add_(1, reply.clamp(0, vocab - 1), torch.ones_like(reply, dtype=scores.dtype))
                scores -= counts * self.frequency + (counts > 0).to(scores.dtype) * self.presence
        for token, bias in self.bias.items():
            if 0 <= token < vocab:
                scores[:, token] += bias
        return scores
