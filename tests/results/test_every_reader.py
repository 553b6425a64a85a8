"""Every reader reads every run: one run of every built-in task whose results hold every problem
kind, then every command and API that reads a run.

Run A is every task of ``mmtasks tasks`` on the bundled sample (``data/sample``, ``--limit 2``),
made through the Python API against the loopback chat server (``tests/chat_server.py``) as both
model and judge. The server's replies are chosen so that the run holds every kind results.json
can count (:data:`~mmtasks.results.schema.PROBLEM_KINDS`, and every ``coverage.unscored`` kind):

- a first-turn model request whose text falls in bucket 0 of :func:`bucket` gets HTTP 500
  (a request failure, not retried: ``max_retries=0``), bucket 1 gets HTTP 400
  ``context_length_exceeded`` (a context overflow), bucket 3 a reply that is all reasoning, cut at
  the token limit (``finish_reason: length``, no content: truncated), bucket 2 the reply ``I cannot tell.`` (no
  letter: unparsed, or a random guess where the task's parser guesses, as MMMU's and MUIRBench's
  do); every other reply is ``(A) The first one.``;
- the judge answers in each judged task's own format (MMDU's score dict, MM-MT-Bench's
  ``Rating: [[7]]``, LLaVA-Bench's score pair, MM-Vet's score, CharXiv's JSON grades, MMRC's
  JSON verdict; HallusionBench and MathVista read any text), except for prompts in
  bucket 0 of :func:`judge_bucket`, which get no verdict however often they are asked (judge
  failures).

The data is a copy of the bundled sample with three irregular records put first, of the kinds
the tasks' record policies (``dataset.record_policy``) declare as their authors treat them: an
MMIU record whose ``output`` is null (excluded), an MMIU record whose gold letter is beyond its
options (scored wrong), an MMMU record whose option names an image it does not have (the tag kept
as text).

Run B replays run A's answers (``--model replay:run-a``) through the command line with the
``random`` judge: a second run on the same samples, for the two-run view and the judge agreement.

Then each reader must exit 0 and show the counts results.json holds: ``leaderboard build`` (its
entries' ``problems`` and ``coverage``), ``leaderboard plot``, ``leaderboard publish --dry-run`` (to the loopback Hub),
``view`` of one run and of two (the index's per-task counts, the rows' failure kinds),
``judge agreement`` (the items only one run has a verdict for) and the API's ``.samples``.
A results.json field that a reader does not know fails here. The buckets are a CRC-32 of the
request's text: the same data gives the same replies on every run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import mmtasks
from mmtasks.results.schema import PROBLEM_KINDS, RECORD_TREATMENTS, UNSCORED_KINDS
from tests.chat_server import ChatServer

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample"
MODEL, JUDGE = "mm-model", "mm-judge"
LIMIT = 2
OVERFLOW = "This model's maximum context length is 128 tokens. However, you requested 4096 tokens."
#: view.records.FAILURE_KINDS (the bits of a row's kinds) -> the problems key that counts it
VIEW_KIND_PROBLEM = {"request_failure": "request_failures", "context_overflow": "context_overflow",
                     "truncated": "truncated", "unparsed": "unparsed", "judge_failure": "judge_failures",
                     "guessed": "guessed",
                     "kept_as_text": "kept_as_text", "scored_wrong": "scored_wrong"}


MMDU_VERDICT = "Fine.\n" + repr({"Creativity": 7, "Richness": 7, "Visual Perception": 7, "Logical Coherence": 7,
                                 "Answer Accuracy": 7, "Image Relationship Understanding": 7, "Overall Score": 8})
MMRC_VERDICT = '{"score": 4, "matched_items": 1, "model_items": 2, "named_images": [2], "refused": true}'


def all_text(body: dict) -> str:
    """Every text part of every message of a chat request."""
    out: list[str] = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out += [part.get("text", "") for part in content if part.get("type") == "text"]
    return "\n".join(out)


def bucket(body: dict) -> int:
    """0-8 for a first-turn request (system + user at most), 9 (never a fault) for later turns:
    a failed turn of an MMRC conversation fails all its questions, so faults hit first turns only."""
    if len(body["messages"]) > 2:
        return 9
    return zlib.crc32(all_text(body).encode("utf-8")) % 9


def judge_bucket(text: str) -> int:
    return zlib.crc32(text.encode("utf-8")) % 5


def reply(body: dict) -> str | dict:
    text = all_text(body)
    if body["model"] == JUDGE:
        if judge_bucket(text) == 0:
            return "I would rather not say."
        if "Image Relationship Understanding" in text:
            return MMDU_VERDICT
        if "Rating: [[" in text:
            return "Good.\nRating: [[7]]"
        if "Assistant 1" in text:
            return "8 6\nAssistant 2 is shorter."
        if "Compare the ground truth and prediction" in text:  # MM-Vet's grader: a score in [0, 1]
            return "0.8"
        if "extract_answer_T1" in text:  # CharXiv's descriptive grader: JSON
            return '{"extract_answer_T1": "3", "score_T1": 1}'
        if "extracted_answer" in text:  # CharXiv's reasoning grader: JSON
            return '{"extracted_answer": "A", "score": 1}'
        return MMRC_VERDICT
    if bucket(body) == 3:  # all reasoning, cut at the token limit: truncated
        return {"content": None, "reasoning_content": "Let me think about the first image", "finish_reason": "length"}
    return "I cannot tell." if bucket(body) == 2 else "(A) The first one."


def builtin_tasks() -> list[str]:
    from mmtasks.config.task_registry import TaskRegistry

    return TaskRegistry.discover().task_names  # what `mmtasks tasks` lists


def irregular_sample(dest: Path) -> Path:
    """A copy of data/sample whose MMIU and MMMU Accounting files start with irregular records."""
    shutil.copytree(SAMPLE, dest)
    mmiu = dest / "mmiu" / "mmiu.jsonl"
    lines = mmiu.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    extra = [{**first, "output": None}, {**first, "output": "G"}]  # options A-B: G is none of them
    mmiu.write_text("\n".join([*map(json.dumps, extra), *lines]) + "\n", encoding="utf-8")
    accounting = dest / "mmmu" / "Accounting.jsonl"
    lines = accounting.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record.update(id="validation_Accounting_0", options=str(["<image 2>", "<image 3>"]), answer="A")  # one image
    accounting.write_text("\n".join([json.dumps(record), *lines]) + "\n", encoding="utf-8")
    return dest


def cli(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp / "cache"), "HF_HUB_OFFLINE": "1",
                "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp / "hf-home")})
    return subprocess.run([sys.executable, "-m", "mmtasks", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)


@dataclass
class Runs:
    tmp: Path
    tasks: list[str]
    a: Path
    b: Path
    api: mmtasks.EvaluationResult
    b_proc: subprocess.CompletedProcess

    def results(self, run: Path) -> dict[str, Any]:
        return json.loads((run / "results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    tmp = tmp_path_factory.mktemp("every-reader")
    tasks = builtin_tasks()
    a, b = tmp / "run-a", tmp / "run-b"
    data = irregular_sample(tmp / "data")
    with ChatServer(models=(MODEL, JUDGE), reply=reply) as server, pytest.MonkeyPatch.context() as mp:
        server.inject(500, times=10**9, match=lambda body: body["model"] == MODEL and bucket(body) == 0)
        server.inject(400, times=10**9, match=lambda body: body["model"] == MODEL and bucket(body) == 1,
                      message=OVERFLOW, code="context_length_exceeded")
        mp.setenv("OPENAI_BASE_URL", server.base_url)
        mp.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
        for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
            mp.setenv(var, "1")
        api = mmtasks.evaluate(tasks=tasks, model=f"openai:{MODEL}", model_args="max_retries=0",
                               judge=f"openai:{JUDGE}", judge_args="max_retries=0", data_dir=data, limit=LIMIT,
                               output_path=a, use_cache=False, allow_failures=True, progress=False)
    b_proc = cli("--tasks", ",".join(tasks), "--data-dir", str(data), "--limit", str(LIMIT), "--model", f"replay:{a}",
                 "--judge", "random", "--output-path", str(b), "--no-cache", "--no-progress", "--allow-failures",
                 tmp=tmp)
    assert b_proc.returncode == 0, b_proc.stderr
    return Runs(tmp, tasks, a, b, api, b_proc)


def totals(problems: dict[str, dict[str, int]]) -> Counter:
    out: Counter = Counter()
    for counts in problems.values():
        out.update(counts)
    return out


def test_the_runs_hold_every_task_and_every_problem_kind(runs: Runs) -> None:
    a, b = runs.results(runs.a), runs.results(runs.b)
    assert sorted(a["results"]) == sorted(b["results"]) == runs.tasks
    found = totals(a["problems"])
    assert all(found[kind] > 0 for kind in PROBLEM_KINDS), found
    excluded = {t: c.get("excluded") for t, c in a["coverage"].items() if c.get("excluded")}
    assert excluded.pop("mmiu") == {"output missing": 1}  # the irregular record put first
    # any other exclusion is one its task's record policy declares, counted by the policy's reason
    # (MathVerse's Vision Only tasks leave out the dataset's other problem versions)
    for task, reasons in excluded.items():
        declared = {rule.get("reason") for rule in (a["configs"][task].get("dataset") or {}).get("record_policy") or []}
        assert set(reasons) <= declared, (task, reasons, declared)
    unscored = totals({t: c["unscored"] for t, c in a["coverage"].items()})
    # (unparsed: most built-in tasks score an unparsed answer as wrong; Video-MME's leave it unscored)
    assert all(unscored[kind] > 0 for kind in UNSCORED_KINDS if kind != "unparsed"), unscored
    # run B replays A's answers: A's failed requests fail again (a truncated reply was recorded as
    # its empty answer, replayed as such), its guesses are guessed again
    assert totals(b["problems"])["request_failures"] == found["request_failures"] + found["context_overflow"]
    assert totals(b["problems"])["guessed"] == found["guessed"]
    # the command line's summary names every task with a failure, with its counts; the results
    # table shows the record policy's treatments by reason
    for task, counts in b["problems"].items():
        shown = ", ".join(f"{k}={v}" for k, v in counts.items() if v and k not in RECORD_TREATMENTS)
        if shown:
            assert f"  {task}: {shown}" in runs.b_proc.stderr, task
    table = [" ".join(line.split()) for line in runs.b_proc.stdout.splitlines()]
    for treatment in RECORD_TREATMENTS:
        for task, coverage in b["coverage"].items():
            for reason, n in coverage.get(treatment, {}).items():
                assert f"{treatment.replace('_', ' ')}: {reason} {n}" in table, (task, treatment)


def test_leaderboard_build_plot_and_publish(runs: Runs) -> None:
    out = runs.tmp / "board"
    proc = cli("leaderboard", "build", str(runs.a), str(runs.b), "--out", str(out), tmp=runs.tmp)
    assert proc.returncode == 0, proc.stderr
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    results = {run.name: runs.results(run) for run in (runs.a, runs.b)}
    on_board: dict[str, set[str]] = {name: set() for name in results}
    for bench in board["benchmarks"]:
        for entry in bench["entries"]:
            if entry["source"] != "run":
                continue
            (ref,) = entry["runs"]
            res = results[ref["run"]]
            for task in ref["tasks"]:
                on_board[ref["run"]].add(task)
                assert entry["problems"][task] == res["problems"][task], (ref["run"], task)
                assert entry["coverage"].get(task) == res["coverage"].get(task), (ref["run"], task)
    # every task is on the board: the tasks of no leaderboard.yaml in the automatic tab
    assert all(on_board[name] == set(res["results"]) for name, res in results.items())
    # both runs are in every tab (B's random-judged tasks make entries of their own)
    for bench in board["benchmarks"]:
        assert {ref["run"] for e in bench["entries"] if e["source"] == "run" for ref in e["runs"]} == set(results), bench["id"]

    figures = runs.tmp / "figures"
    proc = cli("leaderboard", "plot", str(runs.a), str(runs.b), "--out", str(figures), "--format", "svg", tmp=runs.tmp)
    assert proc.returncode == 0, proc.stderr
    for bench in board["benchmarks"]:
        assert (figures / f"{bench['id']}_bar.svg").is_file(), bench["id"]

    # the dry run reads what the repo holds (from the loopback Hub) and changes nothing
    from tests.builders import serving
    from tests.hub_server import hub_server
    from tests.leaderboard.test_publish import TOKEN, publish

    server, state = hub_server({TOKEN: {"mmtasks-org"}})
    with serving(server) as port:
        proc = publish([str(out), "--repo", "mmtasks-org/board", "--with-site", "--dry-run"], runs.tmp,
                       f"http://127.0.0.1:{port}")
    assert proc.returncode == 0, proc.stderr
    assert "upload leaderboard.json" in proc.stdout and "0 to delete" in proc.stdout
    assert all(r.method == "GET" for r in state.requests) and not state.repos


def view_data(folder: Path, key: str, rel: str) -> Any:
    text = (folder / rel).read_text(encoding="utf-8")
    prefix = f"MMV.load({json.dumps(key)},"
    assert text.startswith(prefix) and text.rstrip().endswith(");")
    return json.loads(text[len(prefix):text.rstrip().rindex(")")])


@pytest.mark.parametrize("n_runs", [1, 2])
def test_view_of_one_run_and_of_two(runs: Runs, n_runs: int) -> None:
    folders = [runs.a, runs.b][:n_runs]
    out = runs.tmp / f"view-{n_runs}"
    proc = cli("view", *map(str, folders), "--out", str(out), tmp=runs.tmp)
    assert proc.returncode == 0, proc.stderr
    index = view_data(out, "index", "index.js")
    assert sorted(t["name"] for t in index["tasks"]) == runs.tasks
    kinds = index["kinds"]
    assert set(kinds) == set(VIEW_KIND_PROBLEM)
    results = [runs.results(f) for f in folders]
    for task in index["tasks"]:
        name = task["name"]
        assert [r["problems"] for r in task["runs"]] == [res["problems"][name] for res in results], name
        assert [r["coverage"] for r in task["runs"]] == [res["coverage"].get(name) for res in results], name
        if task["protocol"] != "single_turn":
            continue  # a row is a document; the counts are of turns or questions
        rows = view_data(out, f"{task['dir']}/rows", f"{index['data']}/{task['dir']}/rows.js")["rows"]
        for k, res in enumerate(results):
            masks = [row[4 + 3 * k] for row in rows]
            shown = {VIEW_KIND_PROBLEM[kind]: sum(1 for m in masks if m >> bit & 1) for bit, kind in enumerate(kinds)}
            counted = {kind: res["problems"][name].get(kind, 0) for kind in shown}
            assert shown == counted, (name, k)


def test_judge_agreement(runs: Runs) -> None:
    report = runs.tmp / "agreement.json"
    proc = cli("judge", "agreement", str(runs.a), str(runs.b), "--json", str(report), "--resamples", "20", tmp=runs.tmp)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    a = runs.results(runs.a)
    # the judged tasks whose judge gave a number at least once (with --limit 2, a task's model requests
    # can all fail; MathVista's judge extracts an answer: no number to agree on)
    def scored(row: dict[str, Any]) -> bool:
        return row["judge_failures"] > 0 or any(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                for j in row["judge"] for v in (j.get("fields") or {}).values())

    judged = sorted(t for t in a["results"] if a["configs"][t].get("judge") and any(
        scored(row) for row in map(json.loads, (runs.a / "samples" / f"{t}.jsonl").open())))
    assert sorted({q["task"] for q in data["quantities"]}) == judged
    # every item A's judge gave no verdict for is one only B (the random judge) scored
    assert data["only_a"] == 0
    assert data["only_b"] == sum(a["problems"][t]["judge_failures"] for t in judged) > 0
    assert f"{data['n_items']} items judged by both; 0 only in the first, {data['only_b']} only in the second" in proc.stdout


def test_python_api_samples(runs: Runs) -> None:
    """The API's ``.samples`` (read back from run A's samples files) hold the counts of its problems."""
    result = runs.api
    assert sorted(result.samples) == runs.tasks
    a = runs.results(runs.a)
    failures = {t: {k: v for k, v in c.items() if v and k not in RECORD_TREATMENTS} for t, c in a["problems"].items()}
    assert result.problems == {t: c for t, c in failures.items() if c}
    for task, samples in result.samples.items():
        counts: Counter = Counter()
        for sample in samples:
            overflow = sum(1 for f in sample.failures if "context_overflow:" in f)
            truncated = sum(1 for f in sample.failures if f.startswith("truncated:"))
            counts.update({"context_overflow": overflow, "truncated": truncated,
                           "request_failures": len(sample.failures) - overflow - truncated,
                           "unparsed": sample.unparsed, "judge_failures": sample.judge_failures,
                           "guessed": sample.guessed})
            counts.update(kind for kind in sample.irregular if kind in RECORD_TREATMENTS)
        assert len(samples) == a["n-samples"][task]["effective"], task
        # an excluded record is no sample: results.json counts it, by reason
        expected = {k: v for k, v in a["problems"][task].items() if v and k != "excluded"}
        assert {k: v for k, v in counts.items() if v} == expected, task
