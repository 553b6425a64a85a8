"""``mmtasks check --estimate``: the input tokens a run's first requests will use, and what they
will cost, from the rendered prompts, before any request is sent.

Counting, per provider (docs/users/cost.md):

- text, OpenAI: its published tokenizer (o200k_base or cl100k_base by model name, as tiktoken
  maps them), from ``bpe-openai`` (the ``tokens`` extra): tiktoken itself downloads its encodings
  on first use, bpe-openai ships the same files (SHA-256 equal to tiktoken's, checked in a test)
  with GitHub's exact BPE. The chat format adds 3 tokens per message, the role's tokens and 3 to
  prime the reply (OpenAI cookbook, "How to count tokens with tiktoken"). Without the extra, and
  for Anthropic and Gemini (neither publishes its tokenizer: both count on their servers), a text
  part counts as its characters / 4, rounded up: the rule of thumb all three publish ("a token is
  about 4 characters" of English text).
- images, the providers' published formulas (:func:`openai_image_tokens`,
  :func:`anthropic_image_tokens`, :func:`gemini_image_tokens`), on the image as stored.

Only what is known before the first reply is estimated: each dialogue's first requests (a
multi-turn task's later turns and every judge call depend on the replies): the output says so.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mmtasks.core.conversation import Image, Message, Text
from mmtasks.core.request import Request

if TYPE_CHECKING:
    from mmtasks.models.base import ModelSpec
    from mmtasks.models.prices import PriceTable
    from mmtasks.task import Task

#: characters per token of the published rule of thumb
CHARS_PER_TOKEN = 4
#: OpenAI's chat format: tokens per message, and for priming the reply
OPENAI_PER_MESSAGE = 3
OPENAI_REPLY_PRIMING = 3


def text_tokens(text: str) -> int:
    """The rule of thumb: characters / 4, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


#: tiktoken's model-name prefixes of the older encoding (tiktoken/model.py MODEL_PREFIX_TO_ENCODING
#: and MODEL_TO_ENCODING: gpt-4, gpt-4-*, gpt-3.5-turbo*, text-embedding-3-*); every newer chat
#: model (gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3, o4-mini ...) is o200k_base
CL100K_MODELS = ("gpt-4-", "gpt-3.5", "gpt-35-", "text-embedding-3-", "text-embedding-ada-002")


def openai_encoding_name(model: str) -> str:
    """The tokenizer OpenAI's ``model`` counts with, as tiktoken's ``encoding_name_for_model``
    maps it (names it does not know: o200k_base, the encoding of every model since gpt-4o: ours)."""
    name = model.split("/")[-1]
    return "cl100k_base" if name == "gpt-4" or name.startswith(CL100K_MODELS) else "o200k_base"


def openai_text_counter(model: str) -> Callable[[str], int] | None:
    """The token count of a text by OpenAI's tokenizer for ``model`` (special-token strings in it
    counted as ordinary text, as the API reads a message); None without ``bpe-openai``."""
    try:
        import bpe_openai
    except ImportError:
        return None
    encoding = bpe_openai.get_encoding(openai_encoding_name(model))
    return lambda text: len(encoding.encode_ordinary(text))


def openai_image_tokens(width: int, height: int, detail: str | None) -> int:
    """OpenAI's tile formula (platform.openai.com/docs/guides/images-vision, "Calculating costs",
    GPT-4o / GPT-4.1 family): ``low``: 85; otherwise the image is scaled to fit in 2048x2048, then
    so that its shorter side is at most 768, and costs 85 + 170 per 512-pixel tile. ``auto`` (and
    no detail) is estimated as ``high``, the most it can cost."""
    if detail == "low":
        return 85
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(math.floor(w) / 512) * math.ceil(math.floor(h) / 512)
    return 85 + 170 * tiles


#: Anthropic resizes an image whose long edge is over this, or whose tokens are over ~1,600
ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_TOKENS = 1600


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic's ``tokens = (width px * height px) / 750`` (docs.claude.com, "Vision", "Calculate
    image costs"), after its resize: an image whose long edge is over 1568 pixels, or of more than
    about 1,600 tokens, is scaled down keeping its aspect ratio until it is within both."""
    w, h = float(width), float(height)
    if max(w, h) > ANTHROPIC_MAX_EDGE:
        scale = ANTHROPIC_MAX_EDGE / max(w, h)
        w, h = w * scale, h * scale
    if w * h / 750 > ANTHROPIC_MAX_TOKENS:
        scale = math.sqrt(ANTHROPIC_MAX_TOKENS * 750 / (w * h))
        w, h = w * scale, h * scale
    return math.ceil(math.floor(w) * math.floor(h) / 750)


def gemini_image_tokens(width: int, height: int) -> int:
    """Gemini's rule (ai.google.dev/gemini-api/docs/tokens, "Multimodal tokens", Gemini 2.0 and
    later): an image with both sides at most 384 pixels is 258 tokens; a larger one is cut into
    768x768 tiles of 258 tokens each (tiles counted as ceil(w/768) * ceil(h/768): ours, the
    page gives no formula for the tiling)."""
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


def image_size(image: Image) -> tuple[int, int] | None:
    """The image's stored size (None: a video frame or a composite, not counted)."""
    if image.frame is not None or image.parts:
        return None
    from PIL import Image as PILImage

    with PILImage.open(io.BytesIO(image.read_bytes())) as img:
        return img.size


@dataclass
class Counted:
    tokens: int = 0
    #: images the rule could not count (video frames, composites)
    uncounted_images: int = 0


def _api_count(messages: Iterable[Message], image_rule: Callable[[int, int, str | None], int],
               text: Callable[[str], int] = text_tokens, per_message: int = 0, priming: int = 0,
               role: bool = False) -> Counted:
    out = Counted()
    n = 0
    for message in messages:
        n += 1
        out.tokens += per_message + (text(message.role) if role else 0)
        for part in message.parts:
            if isinstance(part, Text):
                out.tokens += text(part.text)
            elif isinstance(part, Image):
                size = image_size(part)
                if size is None:
                    out.uncounted_images += 1
                else:
                    out.tokens += image_rule(size[0], size[1], part.detail)
    out.tokens += priming if n else 0
    return out


def count_request(backend: str, request: Request, text: Callable[[str], int] | None = None) -> Counted:
    """A request's input tokens by ``backend``'s published counting (``text``: the provider's
    tokenizer, :func:`openai_text_counter`; None: characters / 4)."""
    if backend == "openai":
        if text is None:
            return _api_count(request.messages, openai_image_tokens, text_tokens, OPENAI_PER_MESSAGE, OPENAI_REPLY_PRIMING)
        return _api_count(request.messages, openai_image_tokens, text, OPENAI_PER_MESSAGE, OPENAI_REPLY_PRIMING, role=True)
    if backend == "anthropic":
        return _api_count(request.messages, lambda w, h, _d: anthropic_image_tokens(w, h), text or text_tokens)
    if backend == "gemini":
        return _api_count(request.messages, lambda w, h, _d: gemini_image_tokens(w, h), text or text_tokens)
    raise ValueError(f"no published counting for backend {backend!r}")


#: backends whose counting is published rules (the others count with the model's own processor)
API_BACKENDS = ("openai", "anthropic", "gemini")


@dataclass
class TaskEstimate:
    requests: int = 0
    input_tokens: int = 0
    #: the most output tokens the requests may use (their max_new_tokens)
    max_output_tokens: int = 0
    uncounted_images: int = 0
    #: USD of the input tokens; None: no price
    input_usd: float | None = None
    #: USD of the input and of every request's max_new_tokens of output; None: no price
    max_usd: float | None = None
    per_request: list[int] = field(default_factory=list)


def first_requests(task: "Task", root: Path | None, limit: int | None, notetaking: bool = False) -> Iterable[Request]:
    """Every document's first model requests, rendered as a run renders them (no model, no reply)."""
    from mmtasks.dialogues.protocols import DialogueContext
    from mmtasks.documents.dataset import Exclusions
    from mmtasks.documents.video import FrameStore

    ctx = DialogueContext(predict_only=True, notetaking=notetaking)
    for doc in task.documents(root, limit, excluded=Exclusions(), frames=FrameStore()):
        dialogue = task.protocol.run(task.state(doc), ctx)
        try:
            requests = next(dialogue)
        except StopIteration:
            continue
        finally:
            dialogue.close()
        yield from (r for r in requests if r.target == "model")


def estimate(tasks: Sequence["Task"], root: Path | None, limit: int | None, spec: "ModelSpec",
             counter: Callable[[Request], Counted], table: "PriceTable | None" = None) -> dict[str, TaskEstimate]:
    """Per task: its first requests, their input tokens by ``counter`` and, where ``spec`` has a
    price, what they cost (input; and at most, with every request's ``max_new_tokens`` of output)."""
    from mmtasks.models.prices import load_prices

    table = table or load_prices()
    row = table.find(spec.backend, spec.name)
    out: dict[str, TaskEstimate] = {}
    for task in tasks:
        est = out[task.name] = TaskEstimate()
        input_usd = max_usd = 0.0
        for request in first_requests(task, root, limit):
            counted = counter(request)
            est.requests += 1
            est.input_tokens += counted.tokens
            est.per_request.append(counted.tokens)
            est.uncounted_images += counted.uncounted_images
            est.max_output_tokens += request.generation.max_new_tokens
            if row is not None:
                input_usd += table.cost(row, prompt=counted.tokens, completion=0)
                max_usd += table.cost(row, prompt=counted.tokens, completion=request.generation.max_new_tokens)
        if row is not None:
            est.input_usd, est.max_usd = round(input_usd, 6), round(max_usd, 6)
    return out
