"""GPU checks of the ``vllm`` and ``hf`` backends on tiny random models (run by scripts/gpu_check.sh).

Each check runs in its own process (``python scripts/gpu_check.py CHECK WORK_DIR``),
prints ``PASS name: ...`` or ``FAIL name: ...`` lines and exits non-zero on a
failure. The models are built offline by tests/tiny_checkpoints.py into
WORK_DIR; replies are saved there as JSON so ``compare`` can set the two
backends side by side.

Checks: ``env``, ``build``, ``vllm-text``, ``vllm-images``, ``hf-images``,
``compare``, ``throughput`` (mmtasks + vLLM against raw vLLM on the same 1,024
image prompts; goal at least 0.9x raw throughput; figures in WORK_DIR/throughput.json); ``dry-run`` needs no GPU and no vLLM: it builds the models and
the image requests and runs the tiny LLaVA once with transformers on the CPU.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from tiny_checkpoints import build_llava_model, build_text_model  # noqa: E402

#: image tokens per image in the tiny LLaVA: (56 / 14) ** 2
TOKENS_PER_IMAGE = 16
IMAGE_COLORS = ("red", "green", "blue", "yellow")

failures: list[str] = []


def report(name: str, ok: bool, detail: str = "") -> None:
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
    if not ok:
        failures.append(name)


# -- inputs -------------------------------------------------------------------


def write_images(work: Path) -> list[Path]:
    """Four small PNGs of different sizes and colours (decoded lazily by the backends)."""
    from PIL import Image as PILImageModule

    paths = []
    for k, color in enumerate(IMAGE_COLORS):
        path = work / "images" / f"{color}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        PILImageModule.new("RGB", (40 + 16 * k, 30 + 10 * k), color).save(path)
        paths.append(path)
    return paths


def image_requests(work: Path) -> dict[str, Any]:
    """Named requests with 0-3 images, interleaved and across turns; plus one over the limit."""
    from mmtasks.core.conversation import Image, Message, Text
    from mmtasks.core.request import GenerationConfig, Request

    red, green, blue, yellow = (Image(path=p, doc_id=p.stem) for p in write_images(work))
    greedy = GenerationConfig(max_new_tokens=8, do_sample=False)
    return {
        "text_only": Request((Message.text("user", "which colour?"),), greedy),
        "one_image": Request((Message("user", (red, Text("which colour?"))),), greedy),
        "two_images": Request((Message("user", (red, Text("or"), green, Text("which colour?"))),), greedy),
        "three_images": Request((Message("user", (Text("compare"), red, green, blue, Text("which colour?"))),), greedy),
        "three_images_again": Request((Message("user", (Text("compare"), red, green, blue, Text("which colour?"))),), greedy),
        "multi_turn": Request(
            (
                Message("user", (red, Text("what is this?"))),
                Message.text("assistant", "a red picture."),
                Message("user", (green, Text("and this one?"))),
            ),
            greedy,
        ),
        "over_limit": Request((Message("user", (red, green, blue, yellow, Text("four?"))),), greedy),
    }


def run_backend(model: Any, named: dict[str, Any]) -> dict[str, Any]:
    names = list(named)
    start = time.monotonic()
    replies = dict(model.generate([named[n] for n in names]))
    seconds = time.monotonic() - start
    sent = {r.index: r for r in getattr(model, "last_wave", [])}
    out = {}
    for i, name in enumerate(names):
        record = sent.get(i)
        out[name] = {
            "text": replies[i].text,
            "error": replies[i].error,
            "prompt_tokens": record.prompt_tokens if record else None,
        }
    print(f"     {len(names)} requests in {seconds:.2f} s", flush=True)
    return out


def load(backend: str, model_dir: Path, args: dict[str, Any], max_images: int) -> Any:
    from mmtasks.models.base import ModelContext, ModelSpec, load_model

    start = time.monotonic()
    model = load_model(ModelSpec(backend=backend, name=str(model_dir), args=args), ModelContext(seed=0, max_images_per_request=max_images))
    print(f"     {backend}:{model_dir.name} loaded in {time.monotonic() - start:.1f} s", flush=True)
    return model


VLLM_ARGS = {"gpu_memory_utilization": 0.3, "enforce_eager": True, "max_model_len": 1024, "dtype": "float32"}


# -- checks -------------------------------------------------------------------


def check_env(work: Path) -> None:
    import torch

    report("env torch.cuda", torch.cuda.is_available(), f"torch {torch.__version__}, {torch.cuda.device_count()} GPU(s)")
    for package in ("vllm", "transformers", "pydantic", "yaml", "jinja2", "PIL"):
        try:
            module = __import__(package)
            report(f"env import {package}", True, getattr(module, "__version__", ""))
        except ImportError as exc:
            report(f"env import {package}", False, str(exc))


def check_build(work: Path) -> None:
    text = build_text_model(work / "tiny-qwen2")
    llava = build_llava_model(work / "tiny-llava")
    report("build tiny models", (text / "config.json").exists() and (llava / "config.json").exists(), f"{text}, {llava}")


def check_vllm_text(work: Path) -> None:
    from mmtasks.core.conversation import Message
    from mmtasks.core.request import GenerationConfig, Request

    model = load("vllm", work / "tiny-qwen2", VLLM_ARGS, 1)
    try:
        greedy = GenerationConfig(max_new_tokens=12, do_sample=False)
        named = {f"r{k}": Request((Message.text("user", "which button?"),), greedy) for k in range(3)}
        named["short"] = Request((Message.text("user", "which button?"),), GenerationConfig(max_new_tokens=3, do_sample=False))
        out = run_backend(model, named)
    finally:
        model.close()
    texts = [out[f"r{k}"]["text"] for k in range(3)]
    report("vllm-text replies", all(isinstance(t, str) and t for t in texts), repr(texts[0]))
    report("vllm-text greedy deterministic", len(set(texts)) == 1)
    counts = [r.output_tokens for r in model.last_wave]
    report("vllm-text max_tokens respected", counts[:3] == [12, 12, 12] and counts[3] <= 3, str(counts))


def check_images(backend: str, work: Path) -> None:
    args = VLLM_ARGS if backend == "vllm" else {}
    model = load(backend, work / "tiny-llava", args, 3)
    try:
        out = run_backend(model, image_requests(work))
    finally:
        model.close()
    (work / f"{backend}-images.json").write_text(json.dumps(out, indent=1, ensure_ascii=False))
    answered = {k: v for k, v in out.items() if k != "over_limit"}
    bad = {k: v["error"] for k, v in answered.items() if not (isinstance(v["text"], str) and v["text"])}
    report(f"{backend}-images every request answered", not bad, json.dumps(bad) if bad else repr(out["three_images"]["text"]))
    report(
        f"{backend}-images greedy deterministic",
        out["three_images"]["text"] == out["three_images_again"]["text"],
    )
    if backend == "vllm":
        tokens = [out[k]["prompt_tokens"] for k in ("one_image", "two_images", "three_images")]
        steps_ok = all(t is not None for t in tokens) and tokens[1] - tokens[0] >= TOKENS_PER_IMAGE and tokens[2] - tokens[1] >= TOKENS_PER_IMAGE - 2
        report("vllm-images each image adds its tokens to the prompt", steps_ok, f"prompt tokens for 1/2/3 images: {tokens}")
        over = out["over_limit"]
        report("vllm-images 4 images over a limit of 3 fail alone", over["text"] is None and "limit_mm_per_prompt" in (over["error"] or ""), str(over["error"]))


def check_compare(work: Path) -> None:
    paths = [work / "vllm-images.json", work / "hf-images.json"]
    if not all(p.exists() for p in paths):
        report("compare vllm/hf", False, "run vllm-images and hf-images first")
        return
    vllm_out, hf_out = (json.loads(p.read_text()) for p in paths)
    names = [k for k in vllm_out if k != "over_limit" and vllm_out[k]["text"] and (hf_out.get(k) or {}).get("text")]
    same = [k for k in names if vllm_out[k]["text"] == hf_out[k]["text"]]
    # random weights: float rounding can flip a near-tie, so a prefix match also counts
    close = [k for k in names if vllm_out[k]["text"][:3] == hf_out[k]["text"][:3]]
    report(
        "compare vllm/hf greedy replies agree (at least their start)",
        bool(names) and len(close) == len(names),
        f"{len(same)}/{len(names)} identical, {len(close)}/{len(names)} same first characters",
    )


def check_dry_run(work: Path) -> None:
    """CPU only: build the models and requests, run the tiny LLaVA once with transformers."""
    import torch
    from transformers import AutoProcessor, LlavaForConditionalGeneration

    check_build(work)
    named = image_requests(work)
    report("dry-run requests built", len(named) == 7 and len(named["three_images"].images) == 3)
    llava_dir = work / "tiny-llava"
    processor = AutoProcessor.from_pretrained(llava_dir)
    model = LlavaForConditionalGeneration.from_pretrained(llava_dir).eval()
    from PIL import Image as PILImageModule

    images = [PILImageModule.open(p).convert("RGB") for p in write_images(work)[:2]]
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "or"}, {"type": "image"}, {"type": "text", "text": "which?"}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True)
    inputs = processor(text=prompt, images=images, return_tensors="pt")
    n_image_tokens = int((inputs["input_ids"] == model.config.image_token_id).sum())
    report("dry-run processor expands 2 images", n_image_tokens == 2 * TOKENS_PER_IMAGE, f"{n_image_tokens} image tokens")
    with torch.no_grad():
        generated = model.generate(**inputs, max_new_tokens=6, do_sample=False)
    new = generated[0, inputs["input_ids"].shape[1] :]
    report("dry-run transformers generates", len(new) > 0, repr(processor.decode(new, skip_special_tokens=True)))


def throughput_inputs(work: Path, n: int) -> list[Any]:
    """``n`` single-image requests, each image a distinct PNG file (greedy, 32 new tokens)."""
    from PIL import Image as PILImageModule

    from mmtasks.core.conversation import Image, Message, Text
    from mmtasks.core.request import GenerationConfig, Request

    folder = work / "throughput-images"
    folder.mkdir(parents=True, exist_ok=True)
    greedy = GenerationConfig(max_new_tokens=32, temperature=0.0)
    requests = []
    for k in range(n):
        path = folder / f"{k}.png"
        if not path.exists():
            PILImageModule.new("RGB", (56, 56), ((37 * k) % 256, (91 * k) % 256, (53 * k + 80) % 256)).save(path)
        text = f"Question {k}: what colour is this image, and what does it remind you of?"
        requests.append(Request((Message("user", (Image(path=path), Text(text))),), greedy, doc_id=str(k)))
    return requests


def check_throughput(work: Path, n: int = 1024, rounds: int = 2) -> None:
    """mmtasks + vLLM against raw vLLM on the same prompts (goal: at least 0.9x raw throughput).

    One engine (tiny LLaVA, prefix caching off so that no run reuses another's KV), both
    ways alternated ``rounds`` times, best of each: **raw** is ``LLM.chat`` on the whole
    list of ready-made conversations (pixels decoded beforehand) with the same
    ``SamplingParams``; **mmtasks** is the harness's ``Scheduler`` driving one single-turn
    dialogue per request through the ``vllm`` backend (image files read and decoded,
    conversations built, replies and samples made). Throughput: requests per second;
    generated tokens are counted for both to show the work was the same."""
    from vllm import SamplingParams

    from mmtasks.core.sample import Sample
    from mmtasks.models.vllm_inputs import chat_messages
    from mmtasks.scheduling.scheduler import Scheduler

    model = load("vllm", work / "tiny-llava", {**VLLM_ARGS, "enable_prefix_caching": False}, 1)
    requests = throughput_inputs(work, n)
    decoded = {id(img): img.load() for r in requests for img in r.images}
    conversations = [chat_messages(r.messages, lambda img: decoded[id(img)]) for r in requests]
    params = SamplingParams(temperature=0.0, max_tokens=32, seed=0)

    def raw() -> tuple[float, int]:
        start = time.monotonic()
        outs = model._llm.chat(conversations, [params] * n, use_tqdm=False)
        return time.monotonic() - start, sum(len(o.outputs[0].token_ids) for o in outs)

    def harness() -> tuple[float, int]:
        def dialogue(req: Any) -> Any:
            (reply,) = yield [req]
            return Sample(task="throughput", doc_id=req.doc_id, doc_index=int(req.doc_id), responses=[reply.text])

        start = time.monotonic()
        samples = list(Scheduler(models={"model": model}).run(dialogue(r) for r in requests))
        seconds = time.monotonic() - start
        assert len(samples) == n and all(s.responses[0] is not None for s in samples), "a request failed"
        return seconds, sum(rec.output_tokens or 0 for rec in model.last_wave)

    raw(), harness()  # warm-up: CUDA graphs, the processor's caches
    raw_runs, mm_runs = [], []
    for _ in range(rounds):
        raw_runs.append(raw())
        mm_runs.append(harness())
    (t_raw, tok_raw), (t_mm, tok_mm) = min(raw_runs), min(mm_runs)
    ratio = t_raw / t_mm
    summary = {"requests": n, "raw_s": round(t_raw, 3), "mmtasks_s": round(t_mm, 3), "raw_tokens": tok_raw, "mmtasks_tokens": tok_mm,
               "raw_req_per_s": round(n / t_raw, 1), "mmtasks_req_per_s": round(n / t_mm, 1), "ratio": round(ratio, 3)}
    (work / "throughput.json").write_text(json.dumps(summary, indent=1))
    report("throughput mmtasks+vLLM vs raw vLLM", ratio >= 0.9,
           f"{n} requests: raw {t_raw:.2f} s ({n / t_raw:.0f} req/s, {tok_raw} tokens), mmtasks {t_mm:.2f} s "
           f"({n / t_mm:.0f} req/s, {tok_mm} tokens): {ratio:.2f}x raw (goal >= 0.9x)")
    model.close()


CHECKS: dict[str, Callable[[Path], None]] = {
    "env": check_env,
    "build": check_build,
    "vllm-text": check_vllm_text,
    "vllm-images": lambda work: check_images("vllm", work),
    "hf-images": lambda work: check_images("hf", work),
    "compare": check_compare,
    "throughput": check_throughput,
    "dry-run": check_dry_run,
}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in CHECKS:
        print(f"usage: python scripts/gpu_check.py {{{','.join(CHECKS)}}} WORK_DIR", file=sys.stderr)
        return 2
    name, work = argv[0], Path(argv[1])
    work.mkdir(parents=True, exist_ok=True)
    try:
        CHECKS[name](work)
    except Exception as exc:  # a crashed check is reported as a FAIL line, with its traceback
        traceback.print_exc()
        report(name, False, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
