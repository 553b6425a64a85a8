"""LLaVA-Bench (In-the-Wild) from a copy of its folder: the verdict parser and relative score as the
authors' summarize_gpt_review computes them, scripted judge replies, the random judge, the Hub layout;
its Hub copy holds the local records."""

from __future__ import annotations

import base64
import io
import json
import subprocess
from pathlib import Path

import pytest
from PIL import Image as PILImage

from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text
from tests.folder_copies import (FAST, JUDGE, MODEL, PACKAGE_TASKS, SAMPLE, copy_task_folder, read_jsonl, results_of,
                                 run_mmtasks, samples_of)
from tests.folder_runs import package_unchanged



@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("llava_bench_wild"):
        yield


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




def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    local = read_jsonl(SAMPLE / "llava_bench_wild" / "llava_bench_wild.jsonl")
    hub = datasets.load_dataset(str(SAMPLE / "llava_bench_wild" / "hf"), split="train")
    hub = hub.cast_column("image", datasets.Image(decode=False))
    assert len(hub) == len(local)
    for rec, row in zip(local, hub):
        assert {k: v for k, v in row.items() if k != "image"} == {k: v for k, v in rec.items() if k != "image"}
        paths = rec["image"] if isinstance(rec["image"], list) else [rec["image"]]
        images = row["image"] if isinstance(row["image"], list) else [row["image"]]
        assert [img["bytes"] for img in images] == [(SAMPLE / "llava_bench_wild" / p).read_bytes() for p in paths]
