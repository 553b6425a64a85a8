"""MUIRBench and LLaVA-Bench (In-the-Wild), added as task folders only.

Each runs from a copy of its folder on an include path (the copy's task renamed, so
it cannot be confused with the built-in one), in a subprocess with the package
unchanged; scores are checked against values computed by hand from the sample data
(data/sample/{muirbench,llava_bench_wild}) and scripted replies.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image as PILImage

from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text
from tests.builders import assert_regenerates, folder_digest, sample_generators

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
PACKAGE_TASKS = REPO / "tasks"
MODEL, JUDGE = "mm-model", "mm-judge"
FAST = "max_retries=1"  # no HTTP errors are scripted here: judge re-asks are protocol-level


def copy_task_folder(bench: str, dest_root: Path, *, replace: dict[str, str] | None = None) -> str:
    """Copy ``tasks/<bench>`` to ``dest_root/<bench>_copy``; every task of the copy is renamed
    ``<name>_copy`` (``<bench>_copy`` for the folder's main task; a group ``g`` named by one line
    becomes ``g_copy``: a group belongs to the built-in folder) and ``replace`` is applied to
    ``<bench>.yaml``. Returns the copy's main task name."""
    dest = dest_root / f"{bench}_copy"
    shutil.copytree(PACKAGE_TASKS / bench, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for other in dest.glob("*.yaml"):
        text = other.read_text(encoding="utf-8")
        name = re.search(r"^task: (\S+)$", text, re.MULTILINE)
        if name is not None:
            text = text.replace(f"task: {name.group(1)}\n", f"task: {name.group(1)}_copy\n", 1)
            # a group belongs to its folder: the copy's tasks make a group of their own
            text = re.sub(r"^group: (\w+)$", r"group: \1_copy", text, flags=re.MULTILINE)
            other.write_text(text, encoding="utf-8")
    yaml_file = dest / f"{bench}.yaml"
    text = yaml_file.read_text(encoding="utf-8")
    assert f"\ntask: {bench}_copy\n" in f"\n{text}"
    for old, new in (replace or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    yaml_file.write_text(text, encoding="utf-8")
    return f"{bench}_copy"


def run_mmtasks(args: list[str], tmp_path: Path, *, base_url: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache"),
                "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")})
    if base_url:
        env.update({"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key-000"})
    return subprocess.run([sys.executable, "-m", "mmtasks", *args, "--no-progress"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=240)


def results_of(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def samples_of(out: Path, task: str) -> list[dict]:
    return [json.loads(line) for line in (out / "samples" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(autouse=True)
def package_unchanged():
    """Nothing a test does may touch the package's own task folders."""
    before = {b: folder_digest(PACKAGE_TASKS / b) for b in ("muirbench", "llava_bench_wild")}
    yield
    assert {b: folder_digest(PACKAGE_TASKS / b) for b in before} == before


# --- MUIRBench ------------------------------------------------------------------------

#: doc -> (reply, parsed letter or None by the strict first-letter rule); the gold letters are the sample's answers
MUIR_REPLIES = {
    "muir_sample_1": ("B", "B"),                                  # gold B: right
    "muir_sample_2": ("(D) None of the choices provided", "D"),   # gold D: right
    "muir_sample_3": ("A", "A"),                                  # gold C
    "muir_sample_4": ("The answer is D.", "D"),                   # gold D: right
    "muir_sample_5": ("C", "C"),                                  # gold B
    "muir_sample_6": ("I am not sure.", None),                    # only A-C exist: unparsed
    "muir_sample_7": ("F", "F"),                                  # 6 options, F is valid; gold C
    "muir_sample_8": ("C", "C"),                                  # gold C: right
    "muir_sample_9": ("E", None),                                 # only A-D exist: unparsed
}
#: the authors' rule (muirbench's default) finds the same letters; where it finds none it guesses
#: random.Random("42:<idx>").choice(letters): muir_sample_6 (A-C) -> "C" (gold A), muir_sample_9
#: (A-D) -> "A" (gold B), both wrong
MUIR_GUESSES = {"muir_sample_6": "C", "muir_sample_9": "A"}


def muir_predictions(path: Path, task: str) -> Path:
    path.write_text("".join(json.dumps({"task": task, "doc_id": d, "responses": [r]}) + "\n"
                            for d, (r, _) in MUIR_REPLIES.items()), encoding="utf-8")
    return path


def check_muir_results(out: Path, task: str, *, strict: bool = False) -> None:
    results = results_of(out)
    res = results["results"][task]
    # right: 1, 2, 4, 8 of 9 (the two guesses of the authors' rule are wrong)
    assert res["acc"] == pytest.approx(100 * 4 / 9)
    if strict:
        assert results["problems"][task] == {"request_failures": 0, "unparsed": 2, "judge_failures": 0}
        assert results["coverage"][task]["scored"] == 9 and "guessed" not in results["coverage"][task]  # unparsed: scored 0
    else:
        assert results["problems"][task] == {"request_failures": 0, "unparsed": 0, "judge_failures": 0, "guessed": 2}
        assert results["coverage"][task]["scored"] == 9 and results["coverage"][task]["guessed"] == 2
    breakdowns = results["breakdowns"][task]
    by_task = {label: row["acc"] for label, row in breakdowns["task"].items()}
    assert by_task == pytest.approx({"Counting": 100.0, "Visual Retrieval": 0.0, "Ordering": 100.0,
                                     "Difference Spotting": 0.0, "Image-Text Matching": 0.0,
                                     "Attribute Similarity": 0.0, "Scene Understanding": 100.0,
                                     "Cartoon Understanding": 0.0})
    by_relation = {label: (row["acc"], row["n"]) for label, row in breakdowns["image_relation"].items()}
    assert by_relation == {"Independent": (pytest.approx(200 / 3), 3), "Partial-Similarity": (0.0, 2),
                           "Temporal": (100.0, 1), "Complementary": (0.0, 1), "Multiview": (100.0, 1),
                           "Narrative": (0.0, 1)}
    assert {label: row["n"] for label, row in breakdowns["n_options"].items()} == {"3": 1, "4": 4, "5": 3, "6": 1}
    samples = {s["doc_id"]: s for s in samples_of(out, task)}
    expected = {d: p for d, (_, p) in MUIR_REPLIES.items()}
    assert {d: s["parsed"] for d, s in samples.items()} == (expected if strict else {**expected, **MUIR_GUESSES})
    assert {d for d, s in samples.items() if s["guessed"]} == (set() if strict else set(MUIR_GUESSES))


def test_muirbench_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    task = copy_task_folder("muirbench", tasks)
    out = tmp_path / "out"
    strict = f"{task.removesuffix('_copy')}_strict_copy"
    predictions = muir_predictions(tmp_path / 'pred.jsonl', task)
    predictions.write_text(predictions.read_text(encoding="utf-8") + predictions.read_text(encoding="utf-8").replace(
        f'"task": "{task}"', f'"task": "{strict}"'), encoding="utf-8")
    proc = run_mmtasks(["--tasks", f"{task},{strict}", "--include-path", str(tasks), "--data-dir", str(SAMPLE),
                        "--model", f"replay:{predictions}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr  # 2 guessed (muirbench), 2 unparsed (muirbench_strict): problems
    assert "guessed=2" in proc.stderr and "unparsed=2" in proc.stderr
    check_muir_results(out, task)
    check_muir_results(out, strict, strict=True)
    # the official prompt, the images where the record's <image> markers are
    samples = {s["doc_id"]: s for s in samples_of(out, task)}
    parts = samples["muir_sample_3"]["prompt"][-1]["content"]
    kinds = ["img" if p["type"] == "image" else p["text"] for p in parts]
    assert kinds == ["Question: Which image shows the same shape in the same colour as ", "img",
                     "?\nChoices:\n(A) ", "img", "\n(B) ", "img", "\n(C) ", "img",
                     "\n(D) None of the choices provided\n"
                     "Hint: Please provide the correct option letter, such as A, B, C, D, directly.\nAnswer:"]
    first = samples["muir_sample_5"]["prompt"][-1]["content"]  # no marker: the images come first
    assert [p["type"] for p in first] == ["image"] * 4 + ["text"]
    assert first[-1]["text"].startswith("Question: Which image is different from the other three?\nChoices:\n(A) ")
    assert "(E) None of the choices provided\n" in first[-1]["text"]


def test_muirbench_from_the_hub_layout(tmp_path: Path) -> None:
    """The same YAML reads the Hugging Face dataset; here its ``path`` names the Hub-style
    sample folder (parquet, embedded images) instead of MUIRBENCH/MUIRBENCH."""
    tasks = tmp_path / "tasks"
    hub = json.dumps(str(SAMPLE / "muirbench" / "hf"))
    task = copy_task_folder("muirbench", tasks, replace={"path: MUIRBENCH/MUIRBENCH": f"path: {hub}"})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", task, "--include-path", str(tasks),  # no --data-dir: the hf source
                        "--model", f"replay:{muir_predictions(tmp_path / 'pred.jsonl', task)}",
                        "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr
    check_muir_results(out, task)
    samples = {s["doc_id"]: s for s in samples_of(out, task)}
    assert sum(p["type"] == "image" for p in samples["muir_sample_3"]["prompt"][-1]["content"]) == 4


def test_muirbench_random_baseline_answers_with_the_documents_letters(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "muirbench", "--data-dir", str(SAMPLE), "--model", "random",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    records = {r["idx"]: r for r in read_jsonl(SAMPLE / "muirbench" / "muirbench.jsonl")}
    for s in samples_of(out, "muirbench"):
        letters = [chr(ord("A") + i) for i in range(len(records[s["doc_id"]]["options"]))]
        assert s["parsed"] in letters


# --- LLaVA-Bench (In-the-Wild) -------------------------------------------------------

PLUGIN = PACKAGE_TASKS / "llava_bench_wild" / "llava_scoring.py"


@pytest.fixture(scope="module")
def llava_plugin():
    """The plugin file as the task loads it (its names are visible to callers that name it)."""
    from mmtasks import registry

    path = registry.load_plugin_file(PLUGIN, roots=[PLUGIN.parent])
    return registry, path


@pytest.mark.parametrize(("reply", "expected"), [
    ("8 6\nAssistant 1 is more detailed.", (8.0, 6.0)),
    ("7.5 9", (7.5, 9.0)),
    ("8, 9\nboth good", (8.0, 9.0)),       # LLaVA's split(' ') rejects this; we do not
    ("  10 1  ", (10.0, 1.0)),
    ("0 0", (0.0, 0.0)),
    ("Scores: 8 6", None),                 # the first line must be the two numbers only
    ("8\n6", None),
    ("8 6 7", None),
    ("11 5", None),                        # outside 0-10
    ("nan 5", None),
    ("", None),
    ("The first answer is better.\n8 6", None),
])
def test_llava_verdict_parser(llava_plugin, reply: str, expected: tuple[float, float] | None) -> None:
    registry, path = llava_plugin
    spec = registry.verdict_parsers.get("llava_score_pair", plugins=[path])
    parse = getattr(spec, "fn", spec)
    fields = parse(reply, {})
    assert (None if fields is None else (fields["reference_score"], fields["model_score"])) == expected


def test_llava_relative_score_rounds_like_summarize_gpt_review(llava_plugin) -> None:
    registry, path = llava_plugin
    relative = registry.aggregators.get("llava_relative", plugins=[path]).fn.__globals__["relative"]
    # means 6.6666.. -> 6.667 and 7.5 -> 7.5 first, then 6.667 / 7.5 * 100 = 88.8933 -> 88.9
    assert relative([6, 7, 7], [8, 7, 7.5]) == 88.9
    assert relative([], []) is None
    assert relative([5], [0]) is None

#: question_id -> the judge's first line (Assistant 1 = reference, Assistant 2 = model)
JUDGE_LINES = {1: "8 6", 2: "9 9", 3: "10 5", 4: "7 7", 5: "8, 4", 6: "6 3"}
RULE = ("We would like to request your feedback on the performance of two AI assistants in response to the "
        "user question displayed above. The user asks the question on observing an image. For your reference, "
        "the visual content in the image is represented with a few sentences describing the image. \nPlease "
        "rate the helpfulness, relevance, accuracy, level of details of their responses. Each assistant "
        "receives an overall score on a scale of 1 to 10, where a higher score indicates better overall "
        "performance.\nPlease first output a single line containing only two values indicating the scores for "
        "Assistant 1 and 2, respectively. The two scores are separated by a space.\nIn the subsequent line, "
        "please provide a comprehensive explanation of your evaluation, avoiding any potential bias and "
        "ensuring that the order in which the responses were presented does not affect your judgment.")


def llava_records() -> dict[int, dict]:
    return {r["question_id"]: r for r in read_jsonl(SAMPLE / "llava_bench_wild" / "llava_bench_wild.jsonl")}


def question_id_of(judge_prompt: str) -> int:
    records = llava_records()
    (qid,) = [q for q, r in records.items() if f"[Question]\n{r['question']}\n\n" in judge_prompt
              and f"model answer {q}." in judge_prompt]
    return qid


def image_size_of(body: dict) -> tuple[int, int]:
    (url,) = [p["image_url"]["url"] for m in body["messages"] if isinstance(m["content"], list)
              for p in m["content"] if p.get("type") == "image_url"]
    return PILImage.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size


def llava_server(chat_server: ChatServer, judge_reply) -> ChatServer:
    """The model answers "model answer <question_id>." (a question is known by its text and its
    image, told apart by size: two questions share the text "Describe this image in detail.")."""
    records = llava_records()
    sizes = {}
    for r in records.values():
        with PILImage.open(SAMPLE / "llava_bench_wild" / r["image"]) as img:
            sizes[r["question_id"]] = img.size

    def reply(body: dict) -> str:
        text = last_user_text(body)
        if body["model"] == JUDGE:
            return judge_reply(text)
        size = image_size_of(body)
        (qid,) = [q for q, r in records.items() if text.endswith(r["question"]) and sizes[q] == size]
        return f"model answer {qid}."

    chat_server.models = (MODEL, JUDGE)
    chat_server.reply = reply
    return chat_server


def run_llava(server: ChatServer, tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess, Path, str]:
    tasks = tmp_path / "tasks"
    task = copy_task_folder("llava_bench_wild", tasks)
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", task, "--include-path", str(tasks), "--data-dir", str(SAMPLE),
                        "--model", f"openai:{MODEL}", "--model-args", FAST,
                        "--judge", f"openai:{JUDGE}", "--judge-args", FAST, "--output-path", str(out), *extra],
                       tmp_path, base_url=server.base_url)
    return proc, out, task


def test_llava_relative_scores_from_scripted_judge_replies(chat_server: ChatServer, tmp_path: Path) -> None:
    asked: dict[int, int] = {}

    def judge_reply(prompt: str) -> str:
        qid = question_id_of(prompt)
        asked[qid] = asked.get(qid, 0) + 1
        if qid == 6 and asked[qid] == 1:
            return "Both answers are fine."  # not a verdict: re-asked
        return f"{JUDGE_LINES[qid]}\nAssistant 2 is shorter."

    server = llava_server(chat_server, judge_reply)
    proc, out, task = run_llava(server, tmp_path)
    assert proc.returncode == 0, proc.stderr
    res = results_of(out)["results"][task]
    # conv (1, 4): model (6 + 7) / 2 = 6.5, reference (8 + 7) / 2 = 7.5 -> 86.666.. -> 86.7
    # detail (2, 6): model (9 + 3) / 2 = 6.0, reference (9 + 6) / 2 = 7.5 -> 80.0
    # complex (3, 5): model (5 + 4) / 2 = 4.5, reference (10 + 8) / 2 = 9.0 -> 50.0
    # all: model 34 / 6 = 5.667 (rounded to 3 decimals first, as LLaVA), reference 48 / 6 = 8.0 -> 70.8
    assert res["relative_score"] == 70.8
    assert (res["relative_score_conv"], res["relative_score_detail"], res["relative_score_complex"]) == (86.7, 80.0, 50.0)
    assert res["model_score_mean"] == 5.667 and res["reference_score_mean"] == 8.0
    assert asked == {1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 2}
    assert results_of(out)["problems"][task].get("judge_failures", 0) == 0

    # what the judge saw for question 1: caption, question, reference as Assistant 1, the model's
    # answer as Assistant 2, the rule, and the system message of eval_gpt_review_bench.py
    rec = llava_records()[1]
    (body,) = [b for b in server.bodies if b["model"] == JUDGE and question_id_of(last_user_text(b)) == 1]
    assert body["messages"][0] == {"role": "system",
                                   "content": "You are a helpful and precise assistant for checking the quality of the answer."}
    assert last_user_text(body) == (
        f"[Context]\n{rec['caption']}\n\n[Question]\n{rec['question']}\n\n"
        f"[Assistant 1]\n{rec['gpt_answer']}\n\n[End of Assistant 1]\n\n"
        f"[Assistant 2]\nmodel answer 1.\n\n[End of Assistant 2]\n\n[System]\n{RULE}\n\n")
    assert not any(p.get("type") == "image_url" for m in body["messages"] if isinstance(m["content"], list)
                   for p in m["content"])
    assert body["temperature"] == pytest.approx(0.2)
    # the model saw the image, a newline and the question (model_vqa.py: DEFAULT_IMAGE_TOKEN + '\n' + qs),
    # never the caption or the reference
    (model_body,) = [b for b in server.bodies if b["model"] == MODEL and last_user_text(b).endswith(rec["question"])
                     and image_size_of(b) == (158, 154)]
    content = model_body["messages"][-1]["content"]
    assert [p["type"] for p in content] == ["image_url", "text"] and content[1]["text"] == "\n" + rec["question"]


def test_llava_judge_that_only_returns_garbage_exits_1(chat_server: ChatServer, tmp_path: Path) -> None:
    server = llava_server(chat_server, lambda prompt: "I would rather not grade these answers.")
    proc, out, task = run_llava(server, tmp_path)
    assert proc.returncode == 1, proc.stderr
    results = results_of(out)
    assert results["problems"][task]["judge_failures"] == 6
    assert results["results"][task]["relative_score"] is None
    assert "judge" in proc.stderr.lower()
    # every question was asked 1 + 3 retries times
    assert len([b for b in server.bodies if b["model"] == JUDGE]) == 6 * 4


def test_llava_random_model_and_random_judge(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "llava_bench_wild", "--data-dir", str(SAMPLE), "--model", "random",
                        "--judge", "random", "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    res = results_of(out)["results"]["llava_bench_wild"]
    samples = samples_of(out, "llava_bench_wild")
    model = [s["metrics"]["model_score"] for s in samples]
    reference = [s["metrics"]["reference_score"] for s in samples]
    assert all(1 <= v <= 10 for v in model + reference)
    assert res["relative_score"] == round(round(sum(model) / 6, 3) / round(sum(reference) / 6, 3) * 100, 1)


def test_llava_from_the_hub_layout(tmp_path: Path) -> None:
    """The Hub schema holds ``image`` as one embedded image; the same YAML reads it (path
    pointed at the Hub-style sample folder instead of lmms-lab/llava-bench-in-the-wild)."""
    tasks = tmp_path / "tasks"
    hub = json.dumps(str(SAMPLE / "llava_bench_wild" / "hf"))
    task = copy_task_folder("llava_bench_wild", tasks, replace={"path: lmms-lab/llava-bench-in-the-wild": f"path: {hub}"})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", task, "--include-path", str(tasks), "--model", "random", "--judge", "random",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    samples = samples_of(out, task)
    assert sorted(int(s["doc_id"]) for s in samples) == [1, 2, 3, 4, 5, 6]
    for s in samples:
        assert [p["type"] for p in s["prompt"][-1]["content"]] == ["image", "text"]
    assert results_of(out)["results"][task]["relative_score"] is not None


# --- the sample data ----------------------------------------------------------------

def test_hub_copies_hold_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    undecoded = {"image_list": [datasets.Image(decode=False)], "image": datasets.Image(decode=False)}
    for bench, split, image_field in (("muirbench", "test", "image_list"), ("llava_bench_wild", "train", "image")):
        local = read_jsonl(SAMPLE / bench / f"{bench}.jsonl")
        hub = datasets.load_dataset(str(SAMPLE / bench / "hf"), split=split)
        hub = hub.cast_column(image_field, undecoded[image_field])
        assert len(hub) == len(local)
        for rec, row in zip(local, hub):
            assert {k: v for k, v in row.items() if k != image_field} == {k: v for k, v in rec.items() if k != image_field}
            paths = rec[image_field] if isinstance(rec[image_field], list) else [rec[image_field]]
            images = row[image_field] if isinstance(row[image_field], list) else [row[image_field]]
            assert [img["bytes"] for img in images] == [(SAMPLE / bench / p).read_bytes() for p in paths]


def test_sample_data_regenerates_identically(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    llava_bench_wild, muirbench = sample_generators("llava_bench_wild", "muirbench")
    for bench, generate in (("muirbench", muirbench.generate), ("llava_bench_wild", llava_bench_wild.generate)):
        assert_regenerates(generate, tmp_path / bench, SAMPLE / bench)
    assert re.search(r"## muirbench/", (SAMPLE / "README.md").read_text(encoding="utf-8"))
