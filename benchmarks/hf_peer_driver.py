"""One timed run of a multi-image task through a transformers checkpoint: mmtasks ``hf:`` or an
lmms-eval 0.7 model class. Run by ``benchmarks/local_peers.py``, each run in a fresh process:

    python benchmarks/hf_peer_driver.py mmtasks WORK.json OUT.json     # the main venv
    benchmarks/_work/lmms-venv/bin/python benchmarks/hf_peer_driver.py lmms WORK.json OUT.json

WORK.json (written by local_peers.py) names the checkpoint, its kind (``qwen2_vl`` or
``llava_onevision``), the batch size, the data folder and, for lmms-eval, each document's
prompt text and image files: the text mmtasks renders for the same document, so both send the
same prompt. OUT.json gets the greedy output per document, the model's load time, the run's
time after the load (wall clock and CPU seconds of all the process's threads), and the process's
peak RSS.

- **mmtasks**: ``mmtasks.evaluate(tasks="muirbench", model="hf:DIR", data_dir=...)``, the whole
  run (task loading, the image checks, the model, parsing, scoring, writing the output folder).
  Its "run" time is the run's wall clock minus the model's load (``HFModel.__init__``, timed by
  wrapping it: the only instrumentation).
- **lmms-eval**: the model class lmms-eval's evaluator builds for ``--model qwen2_vl`` (or
  ``llava_hf``: lmms-eval's ``llava_onevision`` class loads the LLaVA-NeXT repository's own
  checkpoint format through its ``llava`` package, not a transformers checkpoint; ``llava_hf``
  is lmms-eval's class for transformers' ``LlavaOnevisionForConditionalGeneration``), fed
  ``Instance`` s as its evaluator feeds them, ``doc_to_visual`` opening the images with Pillow.
  "run" is ``generate_until`` over all documents; task loading, scoring and writing, which its
  evaluator does around that call, are not timed (in mmtasks' favour they would be).
  Two switches undo, one at a time, what makes lmms-eval's ``qwen2_vl`` outputs differ, to show
  each cause: ``--png`` swaps the JPEG (quality 85) data URLs it makes of each image for PNG;
  ``--left-padding`` sets the tokenizer's padding side to left, which the class does not do (the
  Qwen2-VL processor pads on the right by default, as the tiny checkpoint's does; lmms-eval
  issue #830 reports the same for its qwen2_5_vl class), so at a batch size above 1 the shorter
  prompts of a batch are generated after their padding. For ``llava_hf``, ``--multi-image``
  hands the processor a document's images as one sample's list: the class passes them as a
  flat list beside one prompt, which the LLaVA-OneVision processor reads as that many
  single-image samples, each tiled at AnyRes (4 tiles and the base image per picture here), where
  a multi-image sample is seen at its base resolution only (LLaVA-OneVision's multi-image
  setting, and what mmtasks sends).
"""

from __future__ import annotations

import json
import logging
import resource
import sys
import time
from pathlib import Path
from typing import Any

GEN_KWARGS = {"max_new_tokens": 16, "temperature": 0, "top_p": None, "num_beams": 1}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_mmtasks(work: dict[str, Any]) -> dict[str, Any]:
    import tempfile

    import mmtasks
    from mmtasks.models import hf

    loads: list[tuple[float, float]] = []
    init = hf.HFModel.__init__

    def timed_init(self: Any, *args: Any, **kwargs: Any) -> None:
        start, cpu = time.perf_counter(), time.process_time()
        init(self, *args, **kwargs)
        loads.append((time.perf_counter() - start, time.process_time() - cpu))

    hf.HFModel.__init__ = timed_init  # type: ignore[method-assign]
    stats: list[dict[str, Any]] = []

    class Stats(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if hasattr(record, "hf_batch_stats"):
                stats.append(record.hf_batch_stats)

    logging.getLogger("mmtasks.models.hf").addHandler(Stats())
    logging.getLogger("mmtasks.models.hf").setLevel(logging.INFO)
    with tempfile.TemporaryDirectory() as out:
        start, cpu = time.perf_counter(), time.process_time()
        result = mmtasks.evaluate(tasks=work["task"], model=f"hf:{work['checkpoint']}", data_dir=work["data_dir"],
                                  output_path=out, batch_size=work["batch_size"], use_cache=False, allow_failures=True,
                                  limit=len(work["docs"]),
                                  model_args={"dtype": "float32"})
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        samples = result.samples[work["task"]]
        outputs = {}
        for line in (Path(out) / "samples" / f"{work['task']}.jsonl").read_text().splitlines():
            row = json.loads(line)
            outputs[row["doc_id"]] = row["responses"][0] if row["responses"] else None
    assert len(samples) == len(work["docs"]), (len(samples), len(work["docs"]))
    return {"outputs": outputs, "load_s": loads[0][0], "run_s": wall - loads[0][0], "run_cpu_s": cpu - loads[0][1],
            "stats": stats[0] if stats else None}


class _OneSample:
    """The processor, handed one prompt's images as one sample (``images=[images]``)."""

    def __init__(self, processor: Any) -> None:
        self._processor = processor

    def __call__(self, *args: Any, images: Any = None, text: Any = None, **kwargs: Any) -> Any:
        if isinstance(text, str) and isinstance(images, list):
            images = [images]
        return self._processor(*args, images=images, text=text, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._processor, name)


def run_lmms(work: dict[str, Any], png: bool, left_padding: bool, multi_image: bool) -> dict[str, Any]:
    from PIL import Image

    from lmms_eval.api.instance import Instance

    kind, path, batch = work["kind"], work["checkpoint"], work["batch_size"]
    start = time.perf_counter()
    if kind == "qwen2_vl":
        from lmms_eval.models.simple.qwen2_vl import Qwen2_VL

        if png:
            from lmms_eval.models.model_utils.media_encoder import encode_image_to_data_url

            Qwen2_VL._encode_image_data_url = lambda self, image: encode_image_to_data_url(  # type: ignore[method-assign]
                image, image_format="PNG", mime_type="image/png", convert_rgb=True)
        model: Any = Qwen2_VL(pretrained=path, device="cpu", device_map="cpu", batch_size=batch,
                              max_pixels=work["max_pixels"], min_pixels=work["min_pixels"])
        if left_padding:
            model.processor.tokenizer.padding_side = "left"
    else:
        from lmms_eval.models.simple.llava_hf import LlavaHf

        # device_map "" (the class's default) is refused by transformers 5 ("needs to be a device name")
        model = LlavaHf(pretrained=path, device="cpu", device_map="cpu", dtype="float32", batch_size=batch)
        if multi_image:
            model._image_processor = _OneSample(model._image_processor)
    load = time.perf_counter() - start
    docs = work["docs"]
    model.task_dict = {"bench": {"test": {i: doc for i, doc in enumerate(docs)}}}

    def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
        return [Image.open(p).convert("RGB") for p in doc["images"]]

    requests = [
        Instance(request_type="generate_until", idx=0, metadata={"task": "bench", "doc_id": i, "repeats": 1},
                 arguments=(doc["text"], dict(GEN_KWARGS), doc_to_visual, i, "bench", "test"))
        for i, doc in enumerate(docs)
    ]
    start, cpu = time.perf_counter(), time.process_time()
    texts = model.generate_until(requests)
    run, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"outputs": {doc["id"]: text for doc, text in zip(docs, texts)}, "load_s": load, "run_s": run,
            "run_cpu_s": cpu, "stats": None}


def main() -> int:
    harness, work_file, out_file = sys.argv[1:4]
    work = json.loads(Path(work_file).read_text())
    result = run_mmtasks(work) if harness == "mmtasks" else run_lmms(work, "--png" in sys.argv, "--left-padding" in sys.argv,
                                                                                "--multi-image" in sys.argv)
    result.update(peak_rss_mb=round(peak_rss_mb(), 1), docs=len(work["docs"]))
    Path(out_file).write_text(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
