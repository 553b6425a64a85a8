"""``mmtasks check``: the preflight of a run on its own (see :mod:`mmtasks.preflight`).

Reads every selected task and document, renders every template, checks every image header
and target; prints every problem (exit 2) or one line saying what was checked (exit 0).
Nothing is built, sent or written."""

from __future__ import annotations

import argparse

from mmtasks.api import parse_component_args
from mmtasks.config.run_config import RunConfig
from mmtasks.config.task_registry import TaskRegistry
from mmtasks.core.request import Request
from mmtasks.errors import ConfigError, printable
from mmtasks.runner import check


def add_check_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> argparse.ArgumentParser:
    p = sub.add_parser("check", help="check tasks and their data without running a model",
                       description="Check everything a run would read, before any model or judge is built: every "
                                   "document against its schema, every prompt, judge and breakdown template, every "
                                   "image header, every target against its answer space. Every problem is "
                                   "reported (exit 2); nothing is written.")
    p.add_argument("--tasks", required=True, metavar="TASKS", help="comma-separated task and group names")
    p.add_argument("--data-dir", type=str, default=None, metavar="DIR", help="benchmark data root (default: $MMTASKS_DATA_DIR)")
    p.add_argument("--include-path", action="append", default=[], metavar="DIR", help="extra folder of task YAML (repeatable)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N documents of each task")
    p.add_argument("--image-mode", choices=["separate", "combined"], default="separate")
    p.add_argument("--strategy", choices=["none", "notetaking"], default="none")
    p.add_argument("--gen-kwargs", default="", metavar="K=V,...", help="generation overrides, as for a run")
    p.add_argument("--num-fewshot", type=int, default=None, metavar="K", help="few-shot demonstrations per question, as for a run")
    p.add_argument("--system-instruction", default=None, metavar="TEXT", help="the system message, as for a run")
    p.add_argument("--num-frames", type=int, default=None, metavar="N", help="video tasks' frame count, as for a run")
    p.add_argument("--fps", type=float, default=None, metavar="F", help="video tasks' frame rate, as for a run")
    p.add_argument("--max-frames", type=int, default=None, metavar="M", help="the cap of --fps, as for a run")
    p.add_argument("--estimate", action="store_true",
                   help="also print the input tokens of every document's first requests to --model and their cost by "
                        "models/prices.yaml, before any request (docs/users/cost.md)")
    p.add_argument("--model", default=None, metavar="SPEC", help="with --estimate: the model whose tokens are counted "
                   "(openai:, anthropic:, gemini: by their published rules; hf: with its own processor, loaded)")
    p.add_argument("--model-args", default="", metavar="K=V,...", help="with --estimate: the model's backend args")
    return p


def check_command(args: argparse.Namespace) -> int:
    if args.estimate and not args.model:
        raise ConfigError("--estimate counts tokens for a model", field="--model", hint="pass --model SPEC")
    # the same RunConfig validation as a run (the model is not used: nothing is built)
    run = RunConfig.build(tasks=args.tasks, model="random", data_dir=args.data_dir, include_paths=args.include_path,
                          limit=args.limit, image_mode=args.image_mode, strategy=args.strategy,
                          gen_kwargs=parse_component_args(args.gen_kwargs, "--gen-kwargs"), num_fewshot=args.num_fewshot,
                          system_instruction=args.system_instruction, num_frames=args.num_frames, fps=args.fps,
                          max_frames=args.max_frames)
    checked = check(run)
    n = len(checked.tasks)
    print(f"checked {checked.documents} documents of {n} task{'s' if n != 1 else ''} in {checked.seconds:.2f} s: no problems")
    registry = TaskRegistry.discover(args.include_path)
    for name in dict.fromkeys(t.strip() for t in args.tasks.split(",")):
        note = registry.report_note(name)  # a report's rows not in mmtasks yet: left out, named, not an error
        if note is not None:
            print(printable(note))
    for task, scan in checked.scans.items():  # the dataset's own records, treated as the task declares
        parts = [f"{treatment.replace('_', ' ')}: {reason} {count}"
                 for treatment, reasons in scan.treated.items() for reason, count in reasons.items()]
        if parts:
            print(printable(f"  {task} (its record policy): " + "; ".join(parts)))
    if args.estimate:
        print_estimate(run, checked.tasks, args.model, parse_component_args(args.model_args, "--model-args"))
    return 0


def print_estimate(run: RunConfig, tasks: list, model: str, model_args: dict) -> None:
    """``--estimate``'s lines: per task, the first requests' input tokens and cost, then the total."""
    from mmtasks.documents.paths import data_root
    from mmtasks.estimate import API_BACKENDS, Counted, count_request, estimate, openai_encoding_name, openai_text_counter
    from mmtasks.models.base import ModelContext, load_model, parse_model_spec
    from mmtasks.models.prices import load_prices, unpriced_note

    spec = parse_model_spec(model, model_args)
    table = load_prices()
    loaded = None
    if spec.backend in API_BACKENDS:
        tokenizer = openai_text_counter(spec.name) if spec.backend == "openai" else None
        if tokenizer is not None:
            how = f"text by OpenAI's {openai_encoding_name(spec.name)} tokenizer, images by its published formula"
        elif spec.backend == "openai":
            how = ("text ~4 characters a token (the rule of thumb: install mmtasks[tokens] for OpenAI's tokenizer), "
                   "images by its published formula")
        else:
            how = "text ~4 characters a token (the provider's rule of thumb), images by its published formula"

        def counter(request: Request) -> Counted:
            return count_request(spec.backend, request, tokenizer)
    elif spec.backend == "hf":
        how = "the model's own chat template and processor"
        loaded = load_model(spec, ModelContext(max_images_per_request=64, max_videos_per_request=4))

        def counter(request: Request) -> Counted:
            # load_model is typed as any backend's model; the hf backend's counts its prompt tokens
            return Counted(tokens=loaded.count_prompt_tokens(request))  # type: ignore[attr-defined]
    else:
        raise ConfigError(f"--estimate counts tokens for openai:, anthropic:, gemini: and hf: models, not {spec.backend}:",
                          field="--model")
    try:
        found = estimate(tasks, data_root(run.data_dir), run.limit, spec, counter, table)
    finally:
        if loaded is not None:
            loaded.close()
    row = table.find(spec.backend, spec.name)
    print(f"estimate for {spec.display} ({how}); each dialogue's first requests only: later turns and judge "
          "calls depend on the replies")
    currency = table.currency
    for name, est in found.items():
        line = f"  {name}: {est.requests} requests, {est.input_tokens:,} input tokens"
        if est.input_usd is not None:
            line += f", {currency} {est.input_usd:.4f} input; at most {currency} {est.max_usd:.4f} with every reply at max_new_tokens"
        if est.uncounted_images:
            line += f" ({est.uncounted_images} video frames or composite images not counted)"
        print(printable(line))
    total = sum(e.input_tokens for e in found.values())
    line = f"total: {sum(e.requests for e in found.values())} requests, {total:,} input tokens"
    if row is not None:
        line += (f", {currency} {sum(e.input_usd or 0.0 for e in found.values()):.4f} input; at most "
                 f"{currency} {sum(e.max_usd or 0.0 for e in found.values()):.4f} (prices of {row.as_of}, {row.source})")
    else:
        line += f"; cost unknown: {unpriced_note(spec.backend, spec.name)}"
    print(printable(line))
