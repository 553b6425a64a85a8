"""Where open models run, side by side: mmtasks ``hf:`` against lmms-eval, mmtasks ``vllm:``
against raw vLLM, on this machine's CPU, in one run.

**hf against lmms-eval.** Two tiny random checkpoints saved as real transformers checkpoints
(tests/tiny_checkpoints.py): Qwen2-VL (the real ``Qwen2VLProcessor``, dynamic resolution) and
LLaVA-OneVision (the real ``LlavaOnevisionProcessor``, anyres tiles). Both harnesses load the
same folder. The documents are MUIRBench-shaped (``--docs`` multiple-choice questions, 2-6 PNG
images each, of sizes from 112 to 224 px in steps of 28, so that neither harness resizes them),
run through mmtasks' own ``muirbench`` task (16 new tokens, greedy) and through lmms-eval 0.7's
``qwen2_vl`` class and its ``llava_hf`` class (lmms-eval's class for transformers'
LLaVA-OneVision) with the prompt text mmtasks renders for each document. Qwen2-VL runs at
``--batch-size`` on both sides; ``llava_hf`` refuses a batch size above 1, so LLaVA-OneVision
runs at 1 on both. Every run is a fresh process (``benchmarks/hf_peer_driver.py``); the two
harnesses alternate, round after round, so that both see the same machine load. Reported: each
document's greedy output on both sides, documents per second after the model's load, the
process's peak RSS, and for mmtasks the model's idle share and the padded-token share.

**vllm against raw vLLM.** ``benchmarks/vllm_peer_driver.py`` in the vLLM CPU venv: one engine
on a tiny text-only checkpoint, a text-only task (``--vllm-docs`` questions) and
``--dialogues`` x ``--turns`` multi-turn dialogues, mmtasks and raw ``LLM.chat`` alternating.

Usage (from the repository root, the main venv's python)::

    python benchmarks/local_peers.py [--install-peers] [--docs 48] [--batch-size 8] [--ov-docs 24]
        [--repeat 2] [--vllm-docs 256] [--dialogues 32] [--turns 6] [--skip-lmms] [--skip-vllm]

``--install-peers`` makes ``benchmarks/_work/lmms-venv`` (git-ignored): lmms-eval 0.7.3 with the
same torch, torchvision and transformers as the main venv (so the two run the same kernels), and
decord (which lmms-eval's model modules import).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from timing import compile_mmtasks, run_process  # noqa: E402

WORK = REPO / "benchmarks" / "_work"
HERE = WORK / "local_peers"
LMMS_VENV = WORK / "lmms-venv"
LMMS_PY = LMMS_VENV / "bin" / "python"
VLLM_PY = REPO / ".venv-vllm" / "bin" / "python"
if not VLLM_PY.exists():  # a worktree: the main checkout's vLLM venv
    VLLM_PY = Path(os.environ.get("MMTASKS_VLLM_PYTHON", "/work/main/.venv-vllm/bin/python"))
#: lmms-eval with the main venv's torch, torchvision, transformers and accelerate; decord (its model
#: modules import it); rouge-chinese and jieba, the two mmtasks dependencies lmms-eval lacks, so that
#: mmtasks runs on the same interpreter and libraries (see hf_round)
LMMS_PACKAGES = ["lmms-eval==0.7.3", "torch==2.14.1", "torchvision==0.29.1", "transformers==5.24.0",
                 "accelerate==1.15.0", "decord", "rouge-chinese", "jieba"]
#: the tiny Qwen2-VL's pixel bounds (tests/tiny_checkpoints.py), passed to lmms-eval's class too
MIN_PIXELS, MAX_PIXELS = 28 * 28 * 4, 28 * 28 * 64
QUESTIONS = ("Which image shows the most circles?", "Which picture is the brightest?",
             "In which image is the red shape on the left?", "Which image differs from the others?",
             "How many images show a square?", "Which image was taken first?")


def machine() -> str:
    load = os.getloadavg()
    return (f"machine: {platform.machine()}, {os.cpu_count()} CPUs (shared with other processes), Python "
            f"{platform.python_version()}, load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1/5/15 min)")


def install_peers() -> None:
    if not LMMS_PY.exists():
        subprocess.run([sys.executable, "-m", "venv", str(LMMS_VENV)], check=True)
    subprocess.run([str(LMMS_PY), "-m", "pip", "install", "-q", "--disable-pip-version-check", *LMMS_PACKAGES], check=True)


def checkpoints() -> dict[str, Path]:
    from tests.tiny_checkpoints import build_llava_onevision_model, build_qwen2_vl_model, build_text_model

    paths = {"qwen2_vl": HERE / "tiny-qwen2-vl", "llava_onevision": HERE / "tiny-llava-ov", "text": HERE / "tiny-text"}
    builders = {"qwen2_vl": build_qwen2_vl_model, "llava_onevision": build_llava_onevision_model, "text": build_text_model}
    for kind, path in paths.items():
        if not (path / "config.json").exists():
            builders[kind](path)
    return paths


def write_muirbench(root: Path, docs: int, seed: int = 0) -> None:
    """``root/muirbench/muirbench.jsonl`` in MUIRBench's schema, with PNG images of 2-6 per question."""
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    folder = root / "muirbench"
    lines = []
    for i in range(docs):
        images = []
        for k in range(rng.randint(2, 6)):
            size = (28 * rng.randint(4, 8), 28 * rng.randint(4, 8))
            img = Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3)))
            draw = ImageDraw.Draw(img)
            for _ in range(rng.randint(1, 6)):
                x, y = rng.randrange(size[0] - 20), rng.randrange(size[1] - 20)
                box = (x, y, x + rng.randint(10, 60), y + rng.randint(10, 60))
                colour = tuple(rng.randrange(256) for _ in range(3))
                (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=colour)
            rel = f"images/{i}/{k}.png"
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            img.save(folder / rel)
            images.append(rel)
        n_options = rng.randint(3, 5)
        lines.append(json.dumps({
            "idx": f"doc{i}", "task": "Counting", "image_relation": "Independent", "image_type": "Drawings",
            "question": QUESTIONS[i % len(QUESTIONS)], "options": [f"image {j + 1}" for j in range(n_options)],
            "answer": "ABCDE"[rng.randrange(n_options)], "image_list": images}))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "muirbench.jsonl").write_text("\n".join(lines) + "\n")


def rendered_docs(data: Path, docs: int) -> list[dict[str, Any]]:
    """Each document's prompt as mmtasks renders it (images first, then one text part) and its images."""
    from mmtasks import registry
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.core.conversation import Image, Text
    from mmtasks.dialogues.protocols import DialogueContext
    from mmtasks.task import Task

    config, path = TaskRegistry.discover().load("muirbench")
    task = Task(config, path)
    protocol = registry.protocols.get(config.protocol).run
    out = []
    for doc in task.documents(data, docs):
        (request,) = next(protocol(task, doc, DialogueContext()))
        (message,) = request.messages
        images = [p for p in message.parts if isinstance(p, Image)]
        texts = [p for p in message.parts if isinstance(p, Text)]
        assert message.parts == (*images, *texts) and len(texts) == 1, "expected the images first, then one text"
        out.append({"id": doc.doc_id, "text": texts[0].text, "images": [str(p.path) for p in images]})
    return out


def hf_round(kind: str, harness: str, work_file: Path, out: Path, fixes: tuple[str, ...] = ()) -> dict[str, Any]:
    """One fresh process. Both harnesses run on the peer venv's interpreter when it exists: the
    same torch, transformers and shared-library files, so that neither time nor peak RSS (whose
    file-backed part depends on which library pages a venv's files have in the page cache)
    differs for any reason but the harness."""
    python = str(LMMS_PY) if LMMS_PY.exists() else sys.executable
    argv = [python, str(REPO / "benchmarks" / "hf_peer_driver.py"), harness, str(work_file), str(out), *fixes]
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "WANDB_MODE": "disabled", "TQDM_DISABLE": "1"}
    wall, rss, _, _ = run_process(argv, env=env)
    result = json.loads(out.read_text())
    result["process_s"] = wall
    label = harness + (" " + " ".join(fixes) if fixes else "")
    print(f"  {kind:15s} {label:28s} run {result['run_s']:7.2f} s "
          f"({result['docs'] / result['run_s']:.2f} docs/s; CPU {result['run_cpu_s']:.2f} s), load {result['load_s']:.2f} s, peak RSS {result['peak_rss_mb']:.0f} MB"
          + (f", idle {result['stats']['idle_share']:.1%}, padding {result['stats']['padded_share']:.1%}" if result.get("stats") else ""),
          flush=True)
    return result


def compare(a: dict[str, str | None], b: dict[str, str | None]) -> dict[str, Any]:
    """Documents whose outputs are equal, equal once surrounding whitespace is stripped, differ."""
    strip = lambda t: t.strip() if isinstance(t, str) else t  # noqa: E731
    exact = [k for k in a if a[k] == b.get(k)]
    stripped = [k for k in a if strip(a[k]) == strip(b.get(k))]
    return {"identical": len(exact), "identical_stripped": len(stripped), "differ": [k for k in a if k not in stripped]}


def hf_part(args: argparse.Namespace, paths: dict[str, Path]) -> dict[str, Any]:
    data = HERE / "data"
    if not (data / "muirbench" / "muirbench.jsonl").exists() or len((data / "muirbench" / "muirbench.jsonl").read_text().splitlines()) != args.docs:
        write_muirbench(data, args.docs)
    docs = rendered_docs(data, args.docs)
    n_images = [len(d["images"]) for d in docs]
    print(f"documents: {len(docs)} MUIRBench-shaped questions, {sum(n_images)} PNG images ({min(n_images)}-{max(n_images)} each), "
          "16 new tokens, greedy", flush=True)
    configs = {"qwen2_vl": (args.batch_size, docs), "llava_onevision": (1, docs[: args.ov_docs])}
    works = {}
    for kind, (batch, subset) in configs.items():
        work = {"kind": kind, "checkpoint": str(paths[kind]), "batch_size": batch, "task": "muirbench",
                "data_dir": str(data), "docs": subset, "min_pixels": MIN_PIXELS, "max_pixels": MAX_PIXELS}
        works[kind] = HERE / f"work-{kind}.json"
        works[kind].write_text(json.dumps(work))
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {k: {"mmtasks": [], "lmms": []} for k in configs}
    lmms = not args.skip_lmms and LMMS_PY.exists()
    if not lmms:
        print(f"lmms-eval is not installed in {LMMS_VENV.relative_to(REPO)}: run with --install-peers to compare", flush=True)
    for r in range(args.repeat):
        for kind in configs:
            order = ["mmtasks", "lmms"] if r % 2 == 0 else ["lmms", "mmtasks"]
            for harness in order:
                if harness == "lmms" and not lmms:
                    continue
                runs[kind][harness].append(hf_round(kind, harness, works[kind], HERE / f"out-{kind}-{harness}-{r}.json"))
    # each cause of a difference in outputs, undone in lmms-eval's class (hf_peer_driver.py)
    variants = {"qwen2_vl": [("--left-padding",), ("--left-padding", "--png")], "llava_onevision": [("--multi-image",)]}
    fixed: dict[str, list[tuple[tuple[str, ...], dict[str, Any]]]] = {k: [] for k in configs}
    if lmms:
        for kind, options in variants.items():
            for fixes in options:
                name = "-".join(f.strip("-") for f in fixes)
                fixed[kind].append((fixes, hf_round(kind, "lmms", works[kind], HERE / f"out-{kind}-lmms-{name}.json", fixes)))
    summary: dict[str, Any] = {}
    for kind, (batch, subset) in configs.items():
        mine = runs[kind]["mmtasks"]
        entry: dict[str, Any] = {
            "batch_size": batch, "docs": len(subset),
            "mmtasks_docs_per_s": statistics.median(x["docs"] / x["run_s"] for x in mine),
            "mmtasks_peak_rss_mb": statistics.median(x["peak_rss_mb"] for x in mine),
            "mmtasks_docs_per_cpu_s": statistics.median(x["docs"] / x["run_cpu_s"] for x in mine),
            "mmtasks_runs_s": [round(x["run_s"], 2) for x in mine],
            "mmtasks_idle_share": statistics.median(x["stats"]["idle_share"] for x in mine),
            "mmtasks_padded_share": mine[0]["stats"]["padded_share"],
            "mmtasks_waited_for_prepare_s": statistics.median(x["stats"]["waited_for_prepare_s"] for x in mine),
        }
        if runs[kind]["lmms"]:
            theirs = runs[kind]["lmms"]
            entry.update(
                lmms_docs_per_s=statistics.median(x["docs"] / x["run_s"] for x in theirs),
                lmms_peak_rss_mb=statistics.median(x["peak_rss_mb"] for x in theirs),
                lmms_docs_per_cpu_s=statistics.median(x["docs"] / x["run_cpu_s"] for x in theirs),
                lmms_runs_s=[round(x["run_s"], 2) for x in theirs],
            )
            entry["cpu_ratio"] = entry["mmtasks_docs_per_cpu_s"] / entry["lmms_docs_per_cpu_s"]
            entry["speedup"] = entry["mmtasks_docs_per_s"] / entry["lmms_docs_per_s"]
            entry["memory_ratio"] = entry["mmtasks_peak_rss_mb"] / entry["lmms_peak_rss_mb"]
            entry["outputs"] = {"as shipped": compare(mine[0]["outputs"], theirs[0]["outputs"])}
            for fixes, result in fixed[kind]:
                entry["outputs"][" ".join(fixes)] = compare(mine[0]["outputs"], result["outputs"])
                entry[f"lmms_docs_per_s {' '.join(fixes)}"] = result["docs"] / result["run_s"]
            entry["example"] = {k: (mine[0]["outputs"][k], theirs[0]["outputs"].get(k)) for k in list(mine[0]["outputs"])[:2]}
        summary[kind] = entry
    return summary


def vllm_part(args: argparse.Namespace, paths: dict[str, Path]) -> dict[str, Any] | None:
    if args.skip_vllm:
        return None
    if not VLLM_PY.exists():
        print(f"vLLM venv not found ({VLLM_PY}): make vllm-venv", flush=True)
        return None
    out = HERE / "vllm.json"
    argv = [str(VLLM_PY), str(REPO / "benchmarks" / "vllm_peer_driver.py"), str(paths["text"]), str(out),
            "--docs", str(args.vllm_docs), "--dialogues", str(args.dialogues), "--turns", str(args.turns),
            "--repeat", str(max(args.repeat, 5))]
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "VLLM_LOGGING_LEVEL": "ERROR",
           "TOKENIZERS_PARALLELISM": "false"}
    run_process(argv, env=env)
    result = json.loads(out.read_text())
    for row in result["rounds"]:
        print("  vllm round: " + ", ".join(f"{k} {v:.2f} s" for k, v in row.items()), flush=True)
    result["bench_text/aggregation_median"] = statistics.median(r["bench_text/aggregation"] for r in result["rounds"])
    for name in ("bench_text", "bench_dialogues"):
        mm = statistics.median(r[f"{name}/mmtasks"] for r in result["rounds"])
        raw = statistics.median(r[f"{name}/raw"] for r in result["rounds"])
        result[f"{name}/ratio"] = raw / mm  # throughput of mmtasks over raw's
        result[f"{name}/median"] = {"mmtasks": mm, "raw": raw}
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--install-peers", action="store_true", help=f"install lmms-eval into {LMMS_VENV.relative_to(REPO)}")
    ap.add_argument("--docs", type=int, default=48)
    ap.add_argument("--ov-docs", type=int, default=24, help="documents for LLaVA-OneVision (batch size 1 on both sides)")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--vllm-docs", type=int, default=256)
    ap.add_argument("--dialogues", type=int, default=32)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--skip-lmms", action="store_true")
    ap.add_argument("--skip-vllm", action="store_true")
    args = ap.parse_args()
    print(machine())
    print("command: python benchmarks/local_peers.py " + " ".join(sys.argv[1:]), flush=True)
    compile_mmtasks()
    if args.install_peers:
        install_peers()
    HERE.mkdir(parents=True, exist_ok=True)
    paths = checkpoints()
    hf = hf_part(args, paths) if not (args.skip_lmms and args.docs == 0) else {}
    vllm = vllm_part(args, paths)
    print(machine())
    print("\nside by side (medians; ratio > 1: mmtasks faster)")
    print(f"{'comparison':44s} {'mmtasks':>12s} {'peer':>12s} {'ratio':>7s}  outputs / memory")
    for kind, e in hf.items():
        label = f"hf {kind} vs lmms-eval, batch {e['batch_size']} ({e['docs']} docs)"
        if "speedup" in e:
            outputs = "; ".join(f"{v['identical']}/{e['docs']} identical ({v['identical_stripped']} stripped) vs lmms-eval {k}"
                                for k, v in e["outputs"].items())
            print(f"{label:44s} {e['mmtasks_docs_per_s']:8.2f} d/s {e['lmms_docs_per_s']:8.2f} d/s {e['speedup']:6.2f}x  "
                  f"peak RSS {e['mmtasks_peak_rss_mb']:.0f} / {e['lmms_peak_rss_mb']:.0f} MB ({e['memory_ratio']:.2f}x)")
            print(f"{'':44s} per CPU second (all threads): {e['mmtasks_docs_per_cpu_s']:.2f} / {e['lmms_docs_per_cpu_s']:.2f} "
                  f"docs = {e['cpu_ratio']:.2f}x; runs (s): mmtasks {e['mmtasks_runs_s']}, lmms-eval {e['lmms_runs_s']}")
            print(f"{'':44s} outputs: {outputs}")
        else:
            print(f"{label:44s} {e['mmtasks_docs_per_s']:8.2f} d/s {'-':>12s}")
        print(f"{'':44s} mmtasks model idle {e['mmtasks_idle_share']:.1%} of its span, padded tokens {e['mmtasks_padded_share']:.1%}, "
              f"waited for a prepared batch {e['mmtasks_waited_for_prepare_s']:.2f} s")
    if vllm is not None:
        for name, label in (("bench_text", f"vllm text-only, {vllm['docs']} docs vs raw LLM.chat"),
                            ("bench_dialogues", f"vllm {vllm['dialogues']} x {vllm['turns']} turns vs raw, turn by turn")):
            m = vllm[f"{name}/median"]
            print(f"{label:44s} {m['mmtasks']:10.2f} s {m['raw']:10.2f} s {vllm[name + '/ratio']:6.2f}x  "
                  f"outputs identical: {vllm[name + '/identical']}; mmtasks at {m['mmtasks'] / m['raw']:.2f}x raw's time")
        print(f"{'':44s} text-only task's aggregation (bootstrap stderr, not in the ratio): "
              f"{vllm['bench_text/aggregation_median']:.2f} s")
    summary = {"machine": machine(), "hf": hf, "vllm": vllm}
    (HERE / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    print(f"figures: {(HERE / 'summary.json').relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
