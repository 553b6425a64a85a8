"""The multi_turn protocol and the MMDU task end to end: ``python -m mmtasks --tasks mmdu
--model openai:... --judge openai:...`` against the loopback chat server, checking what the
server received."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import threading
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image as PILImage

from mmtasks.core.conversation import Image, Text
from mmtasks.dialogues.multi_turn import read_turns
from mmtasks.documents.dataset import Document
from mmtasks.errors import DataError
from tests.chat_server import ChatServer, last_user_text
from tests.plugins import plugin
from tests.mmdu_data import MARKER, image_colour, image_size, judge_reply, scores, tag, write_mmdu

REPO = Path(__file__).resolve().parents[2]
METRICS = plugin("mmdu")[0].METRICS
META_PROMPT = (REPO / "tasks" / "mmdu" / "judge_prompt.txt").read_bytes().decode("utf-8")
MODEL, JUDGE = "mm-model", "mm-judge"
FAST = "max_retries=2"


# --- turns and images, without a server ------------------------------------------

def _doc(conversations: list, n_images: int) -> Document:
    images = tuple(Image(data=b"img%d" % i, label=f"img{i}") for i in range(n_images))
    return Document(index=0, doc_id="d", record={"conversations": conversations}, images=images, source="bench.json")


def _conv(*questions: str) -> list[dict]:
    out = []
    for q in questions:
        out += [{"from": "user", "value": q}, {"from": "assistant", "value": "ref"}]
    return out


def test_images_are_consumed_in_dialogue_order() -> None:
    doc = _doc(_conv(f"Image1: {MARKER}. Image2: {MARKER}. Compare.", "No image here.", f"{MARKER}\n{MARKER}Last"), 4)
    t1, t2, t3 = read_turns(doc)
    assert t1.parts == (Text("Image1: "), doc.images[0], Text(". Image2: "), doc.images[1], Text(". Compare."))
    assert t2.parts == (Text("No image here."),)
    # a whitespace-only piece between markers is dropped; text is otherwise kept verbatim
    assert t3.parts == (doc.images[2], doc.images[3], Text("Last"))
    assert (t1.n_images, t2.n_images, t3.n_images) == (2, 0, 2)
    assert t1.question == f"Image1: {MARKER}. Image2: {MARKER}. Compare."


@pytest.mark.parametrize(
    ("conversations", "n_images", "message"),
    [
        (_conv(f"{MARKER}", f"{MARKER} {MARKER}"), 2, "turn 2 places 2 image"),
        (_conv("q")[:1], 0, "no reference answer"),
        ([{"from": "assistant", "value": "a"}, {"from": "user", "value": "q"}], 0, "expected {'from': 'user'"),
        ([{"from": "user", "value": 3}, {"from": "assistant", "value": "a"}], 0, "expected {'from': 'user'"),
        ([], 0, "non-empty list"),
    ],
)
def test_malformed_dialogues_are_data_errors(conversations: list, n_images: int, message: str) -> None:
    with pytest.raises(DataError, match=re.escape(message)) as info:
        read_turns(_doc(conversations, n_images))
    assert info.value.doc_id == "d" and info.value.field.startswith("conversations")


def test_combined_image_mode_is_refused_at_load() -> None:
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.errors import ConfigError
    from mmtasks.task import Task

    with pytest.raises(ConfigError, match="protocol 'multi_turn' of task 'mmdu' does not support --image-mode combined") as info:
        Task(*TaskRegistry.discover().load("mmdu"), image_mode="combined")
    assert info.value.field == "--image-mode"


def test_unknown_history_mode_is_a_config_error_at_load() -> None:
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.errors import ConfigError
    from mmtasks.task import Task

    with pytest.raises(ConfigError, match="Input should be 'self' or 'reference'") as info:
        Task(*TaskRegistry.discover().load("mmdu"), protocol_overrides={"history": "oracle"})
    assert info.value.field == "--history"


def test_human_gpt_roles_are_accepted() -> None:
    doc = _doc([{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}], 0)
    assert [(t.question, t.reference) for t in read_turns(doc)] == [("q", "a")]


# --- end to end through the CLI --------------------------------------------------

def server_reply(body: dict) -> str:
    """The model answers with the turn's tag; the judge with fixed scores (overall 8, others 7)."""
    found = re.findall(r"\[d\d+t\d+\]", last_user_text(body))
    if body["model"] == JUDGE:
        return judge_reply(scores(7, 7, 7, 7, 7, 7, 8))
    return f"model answer {found[-1] if found else len(body['messages'])}"


@pytest.fixture
def server(chat_server: ChatServer) -> ChatServer:
    chat_server.models = (MODEL, JUDGE)
    chat_server.reply = server_reply
    return chat_server


def run_cli(server: ChatServer, tmp_path: Path, *args: str, judge: bool = True, tasks: str = "mmdu") -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key-000",
           "MMTASKS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "mmtasks", "--tasks", tasks, "--data-dir", str(tmp_path), "--no-progress",
           "--model", f"openai:{MODEL}", "--model-args", FAST]
    if judge:
        cmd += ["--judge", f"openai:{JUDGE}", "--judge-args", FAST]
    return subprocess.run([*cmd, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=180)


def model_bodies(server: ChatServer) -> list[dict]:
    return [b for b in server.bodies if b["model"] == MODEL]


def judge_bodies(server: ChatServer) -> list[dict]:
    return [b for b in server.bodies if b["model"] == JUDGE]


def body_for(bodies: list[dict], d: int, t: int) -> dict:
    (body,) = [b for b in bodies if tag(d, t) in last_user_text(b)]
    return body


def decode(part: dict) -> tuple[tuple[int, int], tuple[int, int, int]]:
    url = part["image_url"]["url"]
    assert url.startswith("data:image/")
    img = PILImage.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")
    return img.size, img.getpixel((img.width // 2, img.height // 2))


def assert_images(parts: list[dict], d: int, indices: list[int]) -> None:
    images = [p for p in parts if p["type"] == "image_url"]
    assert len(images) == len(indices)
    for part, i in zip(images, indices):
        size, colour = decode(part)
        assert size == image_size(d, i)
        assert all(abs(a - b) <= 3 for a, b in zip(colour, image_colour(d, i)))


def read_results(path: Path) -> dict[str, Any]:
    return json.loads((path / "results.json").read_text(encoding="utf-8"))


def read_samples(path: Path) -> list[dict]:
    return [json.loads(line) for line in (path / "samples" / "mmdu.jsonl").read_text(encoding="utf-8").splitlines()]


LAYOUT = [[2, 0, 1], [1, 1]]  # images introduced per turn


def test_history_self_end_to_end(server: ChatServer, tmp_path: Path) -> None:
    write_mmdu(tmp_path, LAYOUT)
    out = tmp_path / "run"
    proc = run_cli(server, tmp_path, "--output-path", str(out))
    assert proc.returncode == 0, proc.stderr

    models = model_bodies(server)
    assert len(models) == 5 and len(judge_bodies(server)) == 5
    for d, turns in enumerate(LAYOUT):
        for t in range(1, len(turns) + 1):
            msgs = body_for(models, d, t)["messages"]
            assert [m["role"] for m in msgs] == ["system"] + ["user", "assistant"] * (t - 1) + ["user"]
            assert msgs[0]["content"] == "You are a helpful assistant."
            # history: the model's own earlier replies
            assert [m["content"] for m in msgs if m["role"] == "assistant"] == [f"model answer {tag(d, k)}" for k in range(1, t)]
            # every user message again carries the images its markers place, in dialogue order
            seen = 0
            for k, m in enumerate((m for m in msgs if m["role"] == "user"), start=1):
                if turns[k - 1]:
                    assert_images(m["content"], d, list(range(seen, seen + turns[k - 1])))
                else:
                    assert isinstance(m["content"], str) and tag(d, k) in m["content"]
                seen += turns[k - 1]
    # the interleaving of turn 1 of dialogue 0: text, image, text, image, text
    parts = body_for(models, 0, 1)["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]
    assert parts[0]["text"] == "Image1: " and parts[2]["text"] == ". Image2: " and parts[4]["text"].startswith(". [d0t1]")
    assert body_for(models, 0, 1)["max_tokens"] == 2048 and body_for(models, 0, 1)["temperature"] == 0

    # judge calls: no history, the official prompt, all images of the dialogue, 4096 tokens
    for d, turns in enumerate(LAYOUT):
        for t in range(1, len(turns) + 1):
            body = body_for(judge_bodies(server), d, t)
            assert [m["role"] for m in body["messages"]] == ["system", "user"]
            assert body["messages"][0]["content"] == "You are a helpful assistant."
            content = body["messages"][1]["content"]
            assert content[0]["type"] == "text" and content[0]["text"].startswith(META_PROMPT)
            assert content[0]["text"].endswith(f"[The Start of Assistant\u2019s Answer]\nmodel answer {tag(d, t)}\n[The End of Assistant\u2019s Answer]")
            assert f"[The Start of Reference Answer]\nreference answer {tag(d, t)}\n" in content[0]["text"]
            assert_images(content[1:], d, list(range(sum(turns))))
            assert body["max_tokens"] == 4096 and body["temperature"] == 0

    results = read_results(out)
    r = results["results"]["mmdu"]
    assert r["overall"] == pytest.approx(80.0) and r["creativity"] == pytest.approx(70.0)
    assert r["overall_macro"] == pytest.approx(80.0) and "judge_failures" not in r
    assert results["problems"]["mmdu"] == {"request_failures": 0, "unparsed": 0, "judge_failures": 0}
    assert results["breakdowns"]["mmdu"]["turn"]["3"] == {**dict.fromkeys(METRICS, 70.0), "overall": 80.0, "n": 1}
    assert results["run_stats"]["waves"] == 3 + 1
    samples = read_samples(out)
    assert samples[0]["responses"] == [f"model answer {tag(0, t)}" for t in (1, 2, 3)]
    assert [t["status"] for t in samples[0]["extra"]["turns"]] == ["judged"] * 3
    assert samples[1]["extra"]["turns"][1]["scores"]["overall"] == 8


def test_history_reference_and_dict_schema(server: ChatServer, tmp_path: Path) -> None:
    write_mmdu(tmp_path, LAYOUT, as_dict=True)
    out = tmp_path / "run"
    proc = run_cli(server, tmp_path, "--history", "reference", "--output-path", str(out))
    assert proc.returncode == 0, proc.stderr
    msgs = body_for(model_bodies(server), 0, 3)["messages"]
    assert [m["content"] for m in msgs if m["role"] == "assistant"] == [f"reference answer {tag(0, k)}" for k in (1, 2)]
    # the judge still judges the model's answers
    assert "model answer [d0t3]" in body_for(judge_bodies(server), 0, 3)["messages"][1]["content"][0]["text"]
    samples = read_samples(out)
    assert [s["doc_id"] for s in samples] == ["mmdu-0", "mmdu-1"] and samples[0]["extra"]["history"] == "reference"
    assert read_results(out)["config"]["history"] == "reference"


def test_judge_text_only(server: ChatServer, tmp_path: Path) -> None:
    write_mmdu(tmp_path, [[1, 1]])
    include = tmp_path / "tasks"
    include.mkdir()
    (include / "mmdu_text.yaml").write_text(
        f"include: {REPO / 'tasks' / 'mmdu' / 'mmdu.yaml'}\ntask: mmdu_text_judge\ngroup: []\n"
        f"judge: {{images: none, prompt_file: {REPO / 'tasks' / 'mmdu' / 'judge_prompt.txt'}}}\n")
    proc = run_cli(server, tmp_path, "--include-path", str(include), tasks="mmdu_text_judge")
    assert proc.returncode == 0, proc.stderr
    for body in judge_bodies(server):
        content = body["messages"][1]["content"]
        assert isinstance(content, str) and content.startswith(META_PROMPT)


def test_retries_and_a_failed_turn(server: ChatServer, tmp_path: Path) -> None:
    write_mmdu(tmp_path, LAYOUT)
    server.inject(429, times=1, match=tag(0, 2), retry_after=0.01)
    server.inject(500, times=1, match=tag(0, 3))
    server.inject(500, times=2, match=tag(1, 1))
    out = tmp_path / "run"
    proc = run_cli(server, tmp_path, "--output-path", str(out), "--model-args", "max_retries=1")
    assert proc.returncode == 1  # a failed request is reported, not hidden
    assert "request_failures=1" in proc.stderr

    def statuses(t: str) -> list[int | None]:
        return [c.status for c in server.calls_for(t) if c.body["model"] == MODEL]

    # a 429 and a 500 are retried by the backend and the turns succeed
    assert statuses(tag(0, 2)) == [429, 200] and statuses(tag(0, 3)) == [500, 200]
    # d1t1 fails twice (1 try + 1 retry): a request failure; turn 2 is still asked, with an empty assistant turn
    assert statuses(tag(1, 1)) == [500, 500]
    msgs = body_for(model_bodies(server), 1, 2)["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"] and msgs[2]["content"] == ""
    # the failed turn is never judged
    assert not any(tag(1, 1) in last_user_text(b) for b in judge_bodies(server))
    r = read_results(out)
    assert r["problems"]["mmdu"]["request_failures"] == 1
    (d1,) = [s for s in read_samples(out) if s["doc_id"] == "mmdu-1"]
    assert d1["responses"][0] is None and d1["extra"]["turns"][0]["status"] == "request_failure"
    assert d1["extra"]["turns"][1]["after_failure"] is True and d1["extra"]["turns"][1]["status"] == "judged"


def test_unparseable_judge_replies_are_reasked_then_counted(server: ChatServer, tmp_path: Path) -> None:
    write_mmdu(tmp_path, [[1, 0]])

    def reply(body: dict) -> str:
        if body["model"] == JUDGE and tag(0, 2) in last_user_text(body):
            return "The answer is good. Overall: 8/10"  # no dictionary
        return server_reply(body)

    server.reply = reply
    out = tmp_path / "run"
    proc = run_cli(server, tmp_path, "--output-path", str(out))
    assert proc.returncode == 1 and "judge_failures=1" in proc.stderr
    assert len([b for b in judge_bodies(server) if tag(0, 2) in last_user_text(b)]) == 4  # 1 + judge.retries (3)
    res = read_results(out)
    r = res["results"]["mmdu"]
    assert res["problems"]["mmdu"]["judge_failures"] == 1 and r["overall"] == pytest.approx(80.0) and r["overall_all"] == pytest.approx(40.0)
    turn = read_samples(out)[0]["extra"]["turns"][1]
    assert turn["status"] == "judge_failure" and turn["scores"] is None


def test_turn_k_of_every_dialogue_is_one_wave(server: ChatServer, tmp_path: Path) -> None:
    n_dialogues, n_turns = 8, 4
    write_mmdu(tmp_path, [[1] + [0] * (n_turns - 1)] * n_dialogues)
    # each model call is held until the turn's 8 calls are all in flight (a hang guard of 60 s)
    barrier = threading.Barrier(n_dialogues, timeout=60)
    server.latency = lambda body: barrier.wait() * 0.0 if body["model"] == MODEL else 0.0
    out = tmp_path / "run"
    proc = run_cli(server, tmp_path, "--output-path", str(out), "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert read_results(out)["run_stats"]["waves"] == n_turns + 1  # 4 model waves + 1 judge wave
    assert server.max_in_flight >= n_dialogues
    # turn-synchronous: every turn-t call starts before any turn-(t+1) call
    calls = [c for c in server.log if c.path.endswith("/chat/completions") and c.body["model"] == MODEL]
    turn_of = {id(c): int(re.findall(r"t(\d+)\]", c.prompt)[-1]) for c in calls}
    for t in range(1, n_turns):
        assert max(c.started for c in calls if turn_of[id(c)] == t) < min(c.started for c in calls if turn_of[id(c)] == t + 1)
    # and concurrent: each turn's 8 calls were in flight together (the barrier let none through alone)


def test_predict_only_then_replay(server: ChatServer, tmp_path: Path) -> None:
    write_mmdu(tmp_path, LAYOUT)
    first = tmp_path / "predict"
    proc = run_cli(server, tmp_path, "--predict-only", "--output-path", str(first), judge=False)
    assert proc.returncode == 0, proc.stderr
    assert len(model_bodies(server)) == 5 and judge_bodies(server) == []
    assert read_results(first)["results"]["mmdu"]["overall"] is None
    assert [len(s["responses"]) for s in read_samples(first)] == [3, 2]

    server.reset()
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key-000",
           "MMTASKS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    second = tmp_path / "rescored"
    proc = subprocess.run([sys.executable, "-m", "mmtasks", "--tasks", "mmdu", "--data-dir", str(tmp_path), "--no-progress",
                           "--model", f"replay:{first}", "--judge", f"openai:{JUDGE}", "--judge-args", FAST,
                           "--output-path", str(second)], cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert model_bodies(server) == [] and len(judge_bodies(server)) == 5
    assert "model answer [d1t2]" in body_for(judge_bodies(server), 1, 2)["messages"][1]["content"][0]["text"]
    assert read_results(second)["results"]["mmdu"]["overall"] == pytest.approx(80.0)
    assert read_samples(second)[0]["responses"] == read_samples(first)[0]["responses"]


def test_unreachable_judge_fails_before_any_model_call(server: ChatServer, tmp_path: Path) -> None:
    write_mmdu(tmp_path, LAYOUT)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    proc = run_cli(server, tmp_path, "--judge-args", f"base_url=http://127.0.0.1:{closed_port}/v1,{FAST}")
    assert proc.returncode == 2
    assert f"openai:{JUDGE}" in proc.stderr and "not usable" in proc.stderr
    assert server.log == []  # the model server was never contacted


def test_bundled_sample_data(server: ChatServer, tmp_path: Path) -> None:
    sample = REPO / "data" / "sample"
    records = json.loads((sample / "mmdu" / "benchmark.json").read_text(encoding="utf-8"))
    n_turns = sum(len(r["conversations"]) // 2 for r in records)
    out = tmp_path / "run"
    proc = run_cli(server, tmp_path, "--data-dir", str(sample), "--output-path", str(out))
    assert proc.returncode == 0, proc.stderr
    assert len(model_bodies(server)) == n_turns and len(judge_bodies(server)) == n_turns
    res = read_results(out)
    r = res["results"]["mmdu"]
    assert res["n-samples"]["mmdu"]["judged_turns"] == n_turns and r["overall"] == pytest.approx(80.0)
    # every judge call carries all of its dialogue's images (the dialogue found by its question and reference)
    for body in judge_bodies(server):
        text = body["messages"][1]["content"][0]["text"][len(META_PROMPT):]
        question = text.split("[Question]\n", 1)[1].split("\n\n[The Start of Reference Answer]\n", 1)[0]
        reference = text.split("[The Start of Reference Answer]\n", 1)[1].split("\n[The End of Reference Answer]", 1)[0]
        (record,) = [rec for rec in records
                     if any(u["value"] == question and a["value"] == reference
                            for u, a in zip(rec["conversations"][::2], rec["conversations"][1::2]))]
        images = [p for p in body["messages"][1]["content"] if p["type"] == "image_url"]
        assert len(images) == len(record["image"])
