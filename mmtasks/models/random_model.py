"""``random``: the honest chance baseline - a valid answer drawn at random for each request.

The answer space comes from the task (``answer.space`` in the YAML): a choice
letter, an image number, a set of image numbers, or a span of the document's
own text. Draws are seeded by the run seed, task, document and attempt, so a
run is reproducible and independent of batching.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Sequence
from typing import Any

from mmtasks.models.base import ChatModel
from mmtasks.core.request import OPTIONAL_SETTINGS, Reply, Request


class RandomModel(ChatModel):
    cacheable = False
    #: generates nothing: every setting is accepted and none is sent (results.json records none)
    takes_settings = frozenset(OPTIONAL_SETTINGS)

    def generate(self, requests: Sequence[Request]) -> Iterable[tuple[int, Reply]]:
        for i, req in enumerate(requests):
            yield i, Reply(text=self.answer(req), finish_reason="stop")

    def _rng(self, req: Request) -> random.Random:
        # a request's own seed (a --repeats repeat's) draws apart, as a sampling backend would
        seed = req.generation.seed if req.generation.seed is not None else self.spec.args.get("seed", self.context.seed)
        digest = hashlib.sha256(f"{seed}:{req.task}:{req.doc_id}:{req.position}:{req.attempt}:{req.target}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def answer(self, req: Request) -> str:
        rng = self._rng(req)
        space: dict[str, Any] = req.meta.get("answer_space") or {"kind": "text"}
        kind = space.get("kind", "text")
        n_images = max(1, int(space.get("n_images") or len(req.images) or 1))
        if kind == "choice":
            choices = list(space.get("choices") or ["A", "B", "C", "D"])
            return str(rng.choice(choices))
        if kind == "image_index":
            return str(rng.randint(1, n_images))
        if kind == "image_subset":
            k = rng.randint(1, n_images)
            return ",".join(str(x) for x in sorted(rng.sample(range(1, n_images + 1), k)))
        if kind == "verdict":
            return random_verdict(rng, space, n_images)
        refusal = space.get("refusal")
        if refusal and rng.random() < float(space.get("refusal_rate", 0.5)):
            return str(refusal)
        return _random_span(rng, str(space.get("source_text") or _last_user_text(req)))


def random_verdict(rng: random.Random, space: dict[str, Any], n_images: int) -> str:
    """A judge reply in the task's verdict format with random field values.

    ``fields`` maps a name to ``[low, high]`` (a bound may name an earlier field, e.g.
    ``matched_items: [0, model_items]``; integer bounds draw an integer, others a number),
    ``{choices: [...]}`` (one of them), ``bool`` or ``image_subset``.
    """
    fields: dict[str, Any] = dict(space.get("fields") or {})
    values: dict[str, Any] = {}
    while fields:  # a field whose bound names another is drawn after it
        ready = [n for n, spec in fields.items()
                 if not isinstance(spec, list) or all(not isinstance(b, str) or b in values for b in spec)]
        if not ready:
            raise ValueError(f"verdict fields with circular or unknown bounds: {sorted(fields)}")
        for name in ready:
            spec = fields.pop(name)
            if spec == "bool":
                values[name] = rng.random() < 0.5
            elif spec == "image_subset":
                values[name] = sorted(rng.sample(range(1, n_images + 1), rng.randint(0, n_images)))
            elif isinstance(spec, dict):
                values[name] = rng.choice(list(spec["choices"]))
            else:
                low, high = (values[b] if isinstance(b, str) else b for b in spec)
                if _integral(low) and _integral(high):
                    values[name] = rng.randint(int(low), max(int(low), int(high)))
                else:
                    values[name] = min(max(float(low), round(rng.uniform(float(low), float(high)), 3)), max(float(low), float(high)))
    if space.get("format") == "json":
        body = json.dumps(values)
    else:
        body = "{" + ", ".join(f"{k!r}: {v!r}" for k, v in values.items()) + "}"
    return f"Random verdict (chance-level judge).\n{body}"


def _integral(value: Any) -> bool:
    """A bound that draws integers: an int, or a float with no fraction (``1.0``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"a range bound must be a number, got {value!r}")
    return isinstance(value, int) or value.is_integer()


def _last_user_text(req: Request) -> str:
    for m in reversed(req.messages):
        if m.role == "user":
            return m.plain_text
    return ""


def _random_span(rng: random.Random, text: str) -> str:
    """A random contiguous span of the text (characters for CJK, words otherwise)."""
    text = " ".join(text.split())
    if not text:
        return "-"
    words = text.split(" ")
    if len(words) >= 4:
        n = rng.randint(2, min(12, len(words)))
        start = rng.randint(0, len(words) - n)
        return " ".join(words[start : start + n])
    n = rng.randint(min(4, len(text)), min(30, len(text)))
    start = rng.randint(0, len(text) - n)
    return text[start : start + n]
