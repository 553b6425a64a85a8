"""Drive the ``vllm`` backend through mmtasks' own code path; run by tests/models/test_vllm_backend.py.

Runs in the vLLM venv (.venv-vllm, see scripts/setup_vllm_venv.sh) with the
repo on PYTHONPATH:

    .venv-vllm/bin/python tests/vllm_driver.py MODEL_DIR OUT.json [--model-args JSON]

The model is built with :func:`mmtasks.models.base.load_model` from a
``vllm:MODEL_DIR`` spec, exactly as the CLI builds it, and asked waves of
:class:`Request` s the way the scheduler asks them (one ``generate`` call per
wave). Everything the test checks is written to OUT.json: the replies, the
sampling settings each request was sent with (``VLLMModel.last_wave``), and
the one-line errors for bad model args and missing weights. The test makes
its assertions on that file, so switching this driver to the CLI (a run
writing samples/*.jsonl) only changes how OUT.json is produced.

vLLM starts worker processes, hence the ``__main__`` guard.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mmtasks.core.conversation import Image, Message, Text
from mmtasks.errors import ModelError
from mmtasks.models.base import ModelContext, ModelSpec, load_model
from mmtasks.core.request import GenerationConfig, Reply, Request

PROMPT = "which button is on the left of the screen?"


def user(text: str) -> tuple[Message, ...]:
    return (Message.text("user", text),)


def greedy(max_new_tokens: int, **kw: Any) -> GenerationConfig:
    return GenerationConfig(max_new_tokens=max_new_tokens, do_sample=False, **kw)


def first_wave() -> dict[str, Request]:
    """Several requests with different generation settings, sent as one wave."""
    multi_turn = (
        Message.text("system", "answer in one word."),
        Message.text("user", "what is in the picture?"),
        Message.text("assistant", "a cat."),
        Message.text("user", "and on the right?"),
    )
    sampled = GenerationConfig(max_new_tokens=10, do_sample=True, temperature=1.0, top_p=0.8, seed=123)
    return {
        "greedy": Request(user(PROMPT), greedy(12)),
        "greedy_again": Request(user(PROMPT), greedy(12)),
        "greedy_short": Request(user(PROMPT), greedy(5)),
        "model_default": Request(user(PROMPT), GenerationConfig(max_new_tokens=8, do_sample=None, temperature=None)),
        "seeded": Request(user(PROMPT), sampled),
        "seeded_again": Request(user(PROMPT), sampled),
        "multi_turn": Request(multi_turn, greedy(6)),
    }


def second_wave(stop: str) -> dict[str, Request]:
    """The next wave: a repeat, a stop string, and two requests vLLM must refuse alone."""
    image = Image(data=b"not decoded: the model is text-only", doc_id="doc-img")
    return {
        "greedy_wave2": Request(user(PROMPT), greedy(12)),
        "stopped": Request(user(PROMPT), greedy(12, stop=(stop,))),
        "with_image": Request((Message("user", (image, Text(PROMPT))),), greedy(4), doc_id="doc-img"),
        "too_long": Request(user("the cat is on the left " * 200), greedy(4)),
    }


def settings_wave() -> dict[str, Request]:
    """Every optional setting vLLM takes, sampled and greedy; the chat template's variables
    (the test's template writes a marker for ``enable_thinking: false``)."""
    every = GenerationConfig(max_new_tokens=6, do_sample=True, temperature=0.8, top_p=0.9, top_k=5, min_p=0.05,
                             repetition_penalty=1.2, seed=9, chat_template_kwargs={"enable_thinking": False})
    return {
        "every_setting": Request(user(PROMPT), every),
        "greedy_penalised": Request(user(PROMPT), greedy(6, repetition_penalty=1.3)),
        # a model card's penalties (Qwen3-VL instruct: presence_penalty 1.5) and a logit bias, in vLLM's own SamplingParams
        "openai_penalties": Request(user(PROMPT), GenerationConfig(max_new_tokens=6, do_sample=True, temperature=0.7, top_p=0.8,
                                                                   presence_penalty=1.5, frequency_penalty=0.2,
                                                                   logit_bias={42: -100.0}, seed=5)),
        "no_thinking": Request(user(PROMPT), greedy(6, chat_template_kwargs={"enable_thinking": False})),
        "thinking": Request(user(PROMPT), greedy(6)),
    }


def ask(model: Any, named: dict[str, Request]) -> dict[str, Any]:
    names = list(named)
    replies: dict[int, Reply] = dict(model.generate([named[n] for n in names]))
    sent = {r.index: r for r in model.last_wave}
    out = {}
    for i, name in enumerate(names):
        reply = replies[i]
        record = sent.get(i)
        out[name] = {
            "text": reply.text,
            "error": reply.error,
            "finish_reason": reply.finish_reason,
            "completion_tokens": reply.completion_tokens,
            "max_new_tokens": named[name].generation.max_new_tokens,
            "sent": asdict(record) if record else None,
            # what results.json records for these settings, and the backend's own record of the request
            "sent_settings": model.sent_settings(named[name].generation),
            "record_settings": record.settings if record else None,
        }
    return out


TEXT_TASK = """\
task: vllm_text_task
dataset:
  local: {dir: realbench, file: extraction_easy.jsonl}
  images_field: null
prompt:
  system: Answer briefly.
  user: "Question: {{ doc.text }}"
generation: {max_new_tokens: 6, temperature: 0.0}
target: "field:answer"
answer: {parser: text}
metrics:
  - {name: rouge_l, function: rouge_l_zh}
"""


def through_the_scheduler(model: Any, data_root: Path, n_docs: int) -> dict[str, Any]:
    """A real task's documents -> single-turn dialogues -> the harness's Scheduler -> this model."""
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.dialogues.protocols import DialogueContext
    from mmtasks.scheduling.scheduler import Scheduler
    from mmtasks import registry
    from mmtasks.runner import sent_generation
    from mmtasks.task import Task

    with tempfile.TemporaryDirectory() as tasks_dir:
        (Path(tasks_dir) / "vllm_text_task.yaml").write_text(TEXT_TASK)
        config, path = TaskRegistry.discover([tasks_dir]).load("vllm_text_task")
        task = Task(config, path)
        protocol = registry.protocols.get(config.protocol).run
        scheduler = Scheduler(models={"model": model})
        samples = list(scheduler.run(protocol(task.state(doc), DialogueContext()) for doc in task.documents(data_root, n_docs)))
    result = task.aggregator.fn(task.scoring, samples, 0)
    return {
        "waves": scheduler.stats.waves,
        "sent": scheduler.stats.sent,
        "samples": [{"doc_id": s.doc_id, "responses": s.responses, "metrics": s.metrics, "failures": s.failures} for s in samples],
        "results": result.metrics,
        "sent_requests": [asdict(r) for r in model.last_wave],
        "record_settings": [r.settings for r in model.last_wave],
        # results.json's generation record, by the runner's own function
        "recorded": sent_generation([task], {"model": model}),
    }


def token_path_against_chat(model: Any, named: dict[str, Request]) -> dict[str, Any]:
    """The token ids the backend sends for each text-only request, against the prompt tokens
    ``LLM.chat`` makes of the same conversation (the path the backend skips), and the greedy
    replies both ways."""
    from vllm import SamplingParams

    from mmtasks.models.vllm_inputs import chat_messages

    out = {}
    for name, request in named.items():
        ids = model._prompt_ids(request)
        params = SamplingParams(max_tokens=6, temperature=0.0)
        (chat,) = model._llm.chat([chat_messages(request.messages, model.images.load)], [params], use_tqdm=False)
        (tokens,) = model._llm.generate([{"prompt_token_ids": ids}], [params], use_tqdm=False)
        out[name] = {"same_prompt": list(chat.prompt_token_ids) == ids, "chat": chat.outputs[0].text,
                     "tokens": tokens.outputs[0].text}
    return out


def expect_model_error(spec: ModelSpec) -> str:
    try:
        load_model(spec, ModelContext())
    except ModelError as exc:
        return str(exc)
    raise AssertionError(f"{spec.display} with args {spec.args} loaded but should have failed")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("out")
    parser.add_argument("--model-args", default="{}", help="JSON: extra vLLM engine args (CPU memory settings)")
    args = parser.parse_args()
    engine_args = json.loads(args.model_args)
    result: dict[str, Any] = {}

    # errors that must come before any engine starts
    result["unknown_arg_error"] = expect_model_error(ModelSpec(backend="vllm", name=args.model_dir, args={"max_model_length": 256}))
    with tempfile.TemporaryDirectory() as empty:
        (Path(empty) / "config.json").write_text("{}")
        result["no_weights_error"] = expect_model_error(ModelSpec(backend="vllm", name=empty, args=engine_args))
    result["missing_dir_error"] = expect_model_error(ModelSpec(backend="vllm", name=args.model_dir + "-missing", args=engine_args))

    start = time.monotonic()
    spec = ModelSpec(backend="vllm", name=args.model_dir, args=engine_args)
    model = load_model(spec, ModelContext(seed=0, max_images_per_request=3))
    result["load_seconds"] = round(time.monotonic() - start, 1)
    result["multimodal"] = model.multimodal
    try:
        start = time.monotonic()
        wave1 = ask(model, first_wave())
        greedy_text = wave1["greedy"]["text"] or ""
        # a stop string taken from the middle of the greedy reply
        mid = len(greedy_text) // 2
        stop = greedy_text[mid : mid + 2]
        wave2 = ask(model, second_wave(stop))
        wave3 = ask(model, settings_wave())
        result["generate_seconds"] = round(time.monotonic() - start, 1)
        result.update(waves=[wave1, wave2, wave3], stop=stop)
        result["token_path"] = token_path_against_chat(model, first_wave())
        result["scheduler"] = through_the_scheduler(model, Path(__file__).resolve().parents[1] / "data" / "sample", 4)
    finally:
        model.close()
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
