"""The authors' published per-sample outputs (tests/fixtures/published/, see its README.md), and
the records they stand for rebuilt in the datasets' real layouts with placeholder images, so that
``--model replay:`` sends the published replies through preflight, prompt rendering and scoring.

The published files carry no questions and no images: each record gets a placeholder question and
one small placeholder picture per image the record needs (MMMU: ``<image k>`` of its options, at
least one and at most the dataset's 7 fields; BLINK: the subtask's image count in data/sample).
What the scoring reads - MMMU's options (``index2ans``), question type and gold answer, BLINK's
gold letter and number of choices - is the published data's own.
"""

from __future__ import annotations

import ast
import gzip
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from PIL import Image

REPO = Path(__file__).resolve().parents[1]
PUBLISHED = REPO / "tests" / "fixtures" / "published"
MMMU = PUBLISHED / "mmmu"
BLINK = PUBLISHED / "blink"
MMMU_MODELS = ("llava1.5_13b", "qwen_vl")
#: MMMU's image fields (image_1 .. image_7)
MMMU_MAX_IMAGES = 7
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def read_jsonl_gz(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            yield json.loads(line)


def placeholder_png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), (128, 128, 128)).save(buf, format="PNG")
    return buf.getvalue()


# --- MMMU -------------------------------------------------------------------------------------


def mmmu_subject(doc_id: str) -> str:
    """main_eval_only.py's category of an id (``validation_Art_Theory_3`` -> ``Art_Theory``)."""
    return "_".join(doc_id.split("_")[1:-1])


def mmmu_task(subject: str) -> str:
    return f"mmmu_val_{subject.lower()}"


def mmmu_outputs(model: str) -> list[dict[str, Any]]:
    """``example_outputs/<model>/<Subject>/output.json``, every subject, as published."""
    return list(read_jsonl_gz(MMMU / f"{model}.jsonl.gz"))


def mmmu_record(out: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The dataset record a published output stands for (MMMU/MMMU's fields) and its image count."""
    multiple_choice = out["question_type"] == "multiple-choice"
    options = [out["index2ans"][letter] for letter in out["all_choices"]] if multiple_choice else []
    tags = [int(k) for option in options for k in re.findall(r"<image (\d+)>", option)]
    n_images = min(max([1, *tags]), MMMU_MAX_IMAGES)
    answer = out["answer"] if isinstance(out["answer"], str) else str(out["answer"])  # the dataset's string form
    record = {"id": out["id"], "question": f"<image 1> Question {out['id']} (placeholder: not published).",
              "options": str(options), "explanation": "", "img_type": "[]", "answer": answer,
              "topic_difficulty": "unknown", "question_type": out["question_type"], "subfield": "unknown"}
    for k in range(1, MMMU_MAX_IMAGES + 1):
        record[f"image_{k}"] = f"images/{out['id']}/{k}.png" if k <= n_images else None
    return record, n_images


def write_mmmu_data(outputs: list[dict[str, Any]], data_dir: Path) -> None:
    """``DATA_DIR/mmmu/<Subject>.jsonl`` and the placeholder images, as tasks/mmmu reads them."""
    root = data_dir / "mmmu"
    png = placeholder_png()
    by_subject: dict[str, list[str]] = {}
    for out in outputs:
        record, n_images = mmmu_record(out)
        by_subject.setdefault(mmmu_subject(out["id"]), []).append(json.dumps(record))
        folder = root / "images" / out["id"]
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(1, n_images + 1):
            (folder / f"{k}.png").write_bytes(png)
    for subject, lines in by_subject.items():
        (root / f"{subject}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_mmmu_replies(outputs: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps({"task": mmmu_task(mmmu_subject(o["id"])), "doc_id": o["id"],
                                        "responses": [o["response"]]}) + "\n" for o in outputs), encoding="utf-8")
    return path


def authors_mmmu_eval(model: str) -> dict[str, dict[str, Any]]:
    """What the authors' ``main_eval_only.py`` (bundled verbatim) prints for the model's published
    ``total_val_output.json``: subject and ``Overall-<discipline>`` -> ``{"num", "acc"}``."""
    proc = subprocess.run([sys.executable, "main_eval_only.py", "--output_path", str(MMMU / f"{model}_total_val_output.json"),
                           "--answer_path", str(MMMU / "answer_dict_val.json")],
                          cwd=MMMU / "reference", capture_output=True, text=True, timeout=120, check=True)
    return ast.literal_eval(proc.stdout.strip().splitlines()[-1])


def authors_mmmu_module() -> Any:
    """The authors' ``utils/eval_utils.py`` (bundled verbatim), imported under its own name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mmmu_authors_eval_utils", MMMU / "reference" / "utils" / "eval_utils.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- BLINK ------------------------------------------------------------------------------------


def blink_outputs() -> list[dict[str, Any]]:
    """``eval/saved_outputs/<model>/<Subtask>.json``'s val records of the 19 models, as published:
    ``model``, ``idx``, ``answer`` (gold, "(B)"), ``full_prediction`` (the reply), ``prediction``
    (the authors' extracted letter, "(B)"; "(Z)" when nothing matched)."""
    return list(read_jsonl_gz(BLINK / "val_outputs.jsonl.gz"))


def blink_subtask(idx: str) -> str:
    """evaluate.py's task of an idx (``val_Multi-view_Reasoning_12`` -> ``Multi-view_Reasoning``)."""
    return "_".join(idx.split("val")[1][1:].split("_")[:-1])


def blink_task(subtask: str) -> str:
    return "blink_" + subtask.lower().replace("-", "_")


def blink_image_counts() -> dict[str, int]:
    """Subtask -> images per question, as the bundled sample's records have them (data/sample/blink)."""
    out = {}
    for path in sorted((REPO / "data" / "sample" / "blink").glob("*.jsonl")):
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        out[path.stem] = sum(1 for k in range(1, 5) if first.get(f"image_{k}"))
    return out


def blink_choice_counts(outputs: list[dict[str, Any]]) -> dict[str, int]:
    """Subtask -> its number of choices: its highest gold letter (the published files hold no choices)."""
    n_choices: dict[str, int] = {}
    for out in outputs:
        subtask = blink_subtask(out["idx"])
        n_choices[subtask] = max(n_choices.get(subtask, 0), LETTERS.index(out["answer"].strip("()")) + 1)
    return n_choices


def write_blink_data(outputs: list[dict[str, Any]], data_dir: Path) -> None:
    """``DATA_DIR/blink/<Subtask>.jsonl`` (BLINK-Benchmark/BLINK's fields) and placeholder images, one
    record per idx; a subtask's questions get as many choices as its highest gold letter."""
    root = data_dir / "blink"
    images = blink_image_counts()
    gold = {out["idx"]: out["answer"] for out in outputs}
    n_choices = blink_choice_counts(outputs)
    png = placeholder_png()
    lines: dict[str, list[str]] = {}
    for idx, answer in gold.items():
        subtask = blink_subtask(idx)
        choices = [f"choice {LETTERS[k]}" for k in range(n_choices[subtask])]
        prompt = f"Question {idx} (placeholder: not published).\nSelect from the following choices.\n" + "\n".join(
            f"({LETTERS[k]}) {c}" for k, c in enumerate(choices))
        record = {"idx": idx, "question": f"Question {idx}", "sub_task": subtask.replace("_", " "), "choices": choices,
                  "answer": answer, "prompt": prompt, "explanation": ""}
        (root / "images" / idx).mkdir(parents=True, exist_ok=True)
        for k in range(1, 5):
            if k <= images[subtask]:
                (root / "images" / idx / f"{k}.png").write_bytes(png)
            record[f"image_{k}"] = f"images/{idx}/{k}.png" if k <= images[subtask] else None
        lines.setdefault(subtask, []).append(json.dumps(record))
    for subtask, rows in lines.items():
        (root / f"{subtask}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")


def write_blink_replies(outputs: list[dict[str, Any]], path: Path, field: str) -> Path:
    """One model's replies for ``--model replay:``: its ``full_prediction`` or its ``prediction``."""
    path.write_text("".join(json.dumps({"task": blink_task(blink_subtask(o["idx"])), "doc_id": o["idx"],
                                        "responses": [o[field]]}) + "\n" for o in outputs), encoding="utf-8")
    return path


def authors_blink_module(answers: dict[str, str], predictions: dict[str, dict[str, str]], workdir: Path) -> Any:
    """The authors' ``eval/evaluate.py`` (bundled verbatim), imported, with what its ``__main__``
    sets (``subtasks``, read from that block; ``output_save_folder``), in ``workdir`` holding the
    files it reads: ``val_answers.json`` and ``outputs/<model>/<Subtask name>.json``."""
    import importlib.util

    source = BLINK / "reference" / "evaluate.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    (main,) = [n for n in tree.body if isinstance(n, ast.If)]
    (subtasks,) = [ast.literal_eval(n.value) for n in main.body
                   if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "subtasks"]
    spec = importlib.util.spec_from_file_location("blink_authors_evaluate", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.subtasks, module.output_save_folder = subtasks, str(workdir / "outputs")
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "val_answers.json").write_text(json.dumps(answers), encoding="utf-8")
    for model, preds in predictions.items():
        folder = workdir / "outputs" / model
        folder.mkdir(parents=True, exist_ok=True)
        for subtask in subtasks:
            rows = [{"idx": idx, "prediction": p} for idx, p in preds.items() if blink_subtask(idx) == subtask]
            (folder / f"{subtask.replace('_', ' ')}.json").write_text(json.dumps({"val": rows}), encoding="utf-8")
    return module
