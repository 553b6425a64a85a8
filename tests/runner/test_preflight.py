"""The preflight (issue 20): every mistake a benchmark author makes is found before any model or
judge is built - all of them in one run, each naming its file, line or document and field - and
the model's limits are known before the first request.

Each mistake is run against the loopback server (``--model openai:...``) and a tiny ``hf:``
checkpoint: the server sees no request at all, and no file of the checkpoint is opened."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.config.task_registry import BUILTIN_TASKS_DIR, TaskRegistry
from tests.builders import ranking_record, write_realbench
from tests.chat_server import ChatServer
from tests.cli_process import REPO, SAMPLE

# -- a valid task, and the mistakes made in it -------------------------------------------

TASK = """\
task: my_choice
dataset:
  local: {dir: realbench, file: ranking_easy.jsonl}
  required_fields: {options: dict, answer: str}
prompt:
  user: |
    {{ doc.text }}
    {% for i in range(n_images) %}Image {{ i + 1 }}: {{ image(i) }}
    {% endfor %}
target: "field:answer"
answer:
  parser: choice
  parser_args: {options_field: options}
  space: {kind: choice, choices: [A, B, C, D]}
metrics:
  - {name: acc, function: choice_acc}
breakdowns:
  - {name: category, value: "{{ doc.category }}"}
generation: {max_new_tokens: 16}
"""


def edit(old: str, new: str) -> Callable[[Path, Path], None]:
    def apply(task_file: Path, data: Path) -> None:
        text = task_file.read_text(encoding="utf-8")
        assert old in text, old
        task_file.write_text(text.replace(old, new), encoding="utf-8")
    return apply


def remove_fourth_image(task_file: Path, data: Path) -> None:
    (data / "realbench" / "images" / "r-4" / "2.jpg").unlink()


def letter_outside_options(task_file: Path, data: Path) -> None:
    rec = ranking_record("r-2", n_images=2, answer="F")
    rec["options"] = {"A": [1, 2, 3], "B": [2, 1, 3], "C": [3, 2, 1]}
    _replace_record(data, 2, rec)


def symlinked_images(task_file: Path, data: Path) -> None:
    images = data / "realbench" / "images"
    outside = data.parent / "elsewhere"
    images.rename(outside)
    images.symlink_to(outside, target_is_directory=True)


def _replace_record(data: Path, line: int, rec: dict) -> None:
    path = data / "realbench" / "ranking_easy.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = json.dumps(rec, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


#: mistake -> (how it is made, what the one error line must say)
MISTAKES: dict[str, tuple[Callable[[Path, Path], None], tuple[str, ...]]] = {
    "misspelled metric function": (edit("function: choice_acc", "function: choice_ac"),
                                   ("my_choice.yaml", "field 'metrics[0].function'", "did you mean 'choice_acc'")),
    "metric the aggregator does not report": (edit("  - {name: acc, function: choice_acc}\n",
                                                   "  - {name: acc, function: choice_acc}\n  - {name: rouge}\n"),
                                              ("my_choice.yaml", "field 'metrics[1].name'", "not one that aggregator")),
    "misspelled template variable": (edit("{{ doc.text }}", "{{ doc.questoin }}"),
                                     ("my_choice.yaml", "document 'r-1'", "field 'prompt.user'", "questoin",
                                      "the same in 4 more documents")),
    "image missing in the 4th record": (remove_fourth_image,
                                        ("ranking_easy.jsonl:4", "document 'r-4'", "field 'images'", "image not found",
                                         "r-4/2.jpg")),
    "undefined variable in a breakdown": (edit("{{ doc.category }}", "{{ doc.categroy }}"),
                                          ("my_choice.yaml", "document 'r-1'", "field 'breakdowns.category'", "categroy")),
    "answer letter outside the options": (letter_outside_options,
                                          ("ranking_easy.jsonl:2", "document 'r-2'", "field 'answer'",
                                           "target 'F' is outside the answer space", "parser 'choice'",
                                           "the record's options (options) are A, B, C")),
    "choices that are neither a list nor JSON": (edit("choices: [A, B, C, D]", "choices: 'A, B, C, D'"),
                                                 ("my_choice.yaml", "field 'answer.space'", "neither a YAML list nor valid JSON")),
    "unknown top-level key": (edit("prompt:", "promt:"),
                              ("my_choice.yaml", "field 'promt'", "unknown key", "did you mean 'prompt'")),
    "unknown nested key": (edit("  parser: choice", "  parsr: choice"),
                           ("my_choice.yaml", "field 'answer.parsr'", "unknown key", "did you mean 'parser'")),
    "unknown parser argument": (edit("parser_args: {options_field: options}", "parser_args: {options_feild: options}"),
                                ("my_choice.yaml", "field 'answer.parser_args.options_feild'", "did you mean 'options_field'")),
    "images folder symlinked out of the data root": (symlinked_images,
                                                     ("ranking_easy.jsonl:1", "document 'r-1'", "field 'images'",
                                                      "through the symlink", "elsewhere", "symlinks out of the data root")),
}


@pytest.fixture()
def bench(tmp_path: Path) -> tuple[Path, Path]:
    """(task folder, data root): 5 valid records of 2 images each and the valid task."""
    data = tmp_path / "data"
    write_realbench(data, "ranking_easy.jsonl", [ranking_record(f"r-{i}", n_images=2) for i in range(1, 6)])
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "my_choice.yaml").write_text(TASK, encoding="utf-8")
    return tasks, data


# -- watching that nothing was built ------------------------------------------------------

_WATCHED: list[str] = []
_OPENED: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _WATCHED and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if any(path.startswith(w) for w in _WATCHED):
            _OPENED.append(path)


sys.addaudithook(_audit)


@pytest.fixture()
def nothing_built(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No backend may be built: ``load_model`` is the one way to build one."""
    import mmtasks.runner

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was built before the preflight's problems were reported")

    monkeypatch.setattr(mmtasks.runner, "load_model", refuse)
    yield


@pytest.fixture()
def watch_files() -> Iterator[Callable[[Path], list[str]]]:
    """``watch(folder)``: the files under ``folder`` this process opens from now on."""
    def watch(folder: Path) -> list[str]:
        _WATCHED.append(str(folder.resolve()))
        return _OPENED
    yield watch
    _WATCHED.clear()
    _OPENED.clear()


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def run_check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``mmtasks check ARGV``: (exit status, stdout, stderr)."""
    code = main(["check", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def openai_args(server: ChatServer) -> list[str]:
    return ["--model", "openai:test-model", "--model-args", f"base_url={server.base_url}"]


@pytest.fixture()
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")


# -- one test per mistake -----------------------------------------------------------------

@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_each_mistake_is_one_line_before_any_request_openai(mistake, bench, chat_server, capsys, tmp_path, api_key,
                                                            nothing_built):
    tasks, data = bench
    make, expected = MISTAKES[mistake]
    make(tasks / "my_choice.yaml", data)
    code, err = run_cli(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data),
                        *openai_args(chat_server), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                        "--output-path", str(tmp_path / "out"))
    assert code == 2, err
    assert sum(line.startswith("mmtasks: error:") for line in err.splitlines()) == 1 and "Traceback" not in err, err
    # one line names the file (and line or document), the field and the cause
    assert any(all(text in line for text in expected) for line in err.splitlines()), (expected, err)
    assert chat_server.log == []  # not even GET /v1/models
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_each_mistake_is_found_before_an_hf_checkpoint_is_opened(mistake, bench, tiny_llava_dir, capsys, tmp_path,
                                                                 nothing_built, watch_files):
    tasks, data = bench
    make, expected = MISTAKES[mistake]
    make(tasks / "my_choice.yaml", data)
    opened = watch_files(tiny_llava_dir)
    code, err = run_cli(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data),
                        "--model", f"hf:{tiny_llava_dir}", "--no-cache", "--no-progress")
    assert code == 2, err
    assert all(text in err for text in expected), err
    assert opened == []  # no weight, config or tokenizer file of the checkpoint was opened


def test_the_watch_sees_a_checkpoint_being_opened(tiny_llava_dir, watch_files):
    """The audit hook above would see the backend open the checkpoint (the assertion can fail)."""
    opened = watch_files(tiny_llava_dir)
    (tiny_llava_dir / "config.json").read_text()
    assert opened and opened[0].endswith("config.json")


def test_the_task_without_mistakes_passes(bench, capsys):
    """The valid task itself passes the preflight (the mistakes above are the only problems)."""
    tasks, data = bench
    code, out, err = run_check(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data))
    assert code == 0, err
    assert out.startswith("checked 5 documents of 1 task in ") and out.rstrip().endswith(": no problems")


def test_five_different_mistakes_are_reported_in_one_run(bench, chat_server, capsys, tmp_path, api_key, nothing_built):
    tasks, data = bench
    edit("{{ doc.text }}", "{{ doc.questoin }}")(tasks / "my_choice.yaml", data)      # 1. template variable
    edit("{{ doc.category }}", "{{ doc.categroy }}")(tasks / "my_choice.yaml", data)  # 2. breakdown
    letter_outside_options(tasks / "my_choice.yaml", data)                          # 3. target outside the options
    remove_fourth_image(tasks / "my_choice.yaml", data)                             # 4. missing image
    broken = ranking_record("r-5", n_images=2)                                      # 5. schema: options not a dict
    broken["options"] = ["A", "B"]
    _replace_record(data, 5, broken)
    code, err = run_cli(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data),
                        *openai_args(chat_server), "--no-cache", "--no-progress")
    assert code == 2 and chat_server.log == []
    assert "Traceback" not in err
    head, *lines = err.splitlines()
    assert head == "mmtasks: error: 5 problems found before any model or judge was built:", err
    body = "\n".join(lines)
    for expected in (("field 'prompt.user'", "questoin"), ("field 'breakdowns.category'", "categroy"),
                     ("ranking_easy.jsonl:2", "document 'r-2'", "target 'F'"),
                     ("ranking_easy.jsonl:4", "document 'r-4'", "image not found"),
                     ("ranking_easy.jsonl:5", "document 'r-5'", "field 'options'", "expected dict")):
        assert any(all(text in line for text in expected) for line in lines), (expected, body)


def test_problems_are_grouped_and_capped_with_a_count(bench, capsys):
    tasks, data = bench
    records = [ranking_record(f"r-{i}", n_images=2) for i in range(1, 41)]
    write_realbench(data, "ranking_easy.jsonl", records)
    for i in range(1, 41):
        (data / "realbench" / "images" / f"r-{i}" / "1.jpg").unlink()
    code, _, err = run_check(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data))
    assert code == 2
    lines = err.splitlines()
    assert lines[0] == "mmtasks: error: 40 problems found before any model or judge was built:"
    assert sum("image not found: " in line for line in lines) == 5
    assert lines[-1].strip() == "... and 35 more like this (image not found, field 'images')"


def test_a_json_string_of_choices_is_a_list_not_characters(bench, capsys, tmp_path):
    tasks, data = bench
    edit("choices: [A, B, C, D]", "choices: '[\"A\",\"B\",\"C\"]'")(tasks / "my_choice.yaml", data)
    out = tmp_path / "out"
    code, err = run_cli(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data),
                        "--model", "random", "--no-cache", "--no-progress", "--output-path", str(out))
    assert code == 0, err
    replies = [json.loads(line)["responses"][0] for line in (out / "samples" / "my_choice.jsonl").read_text().splitlines()]
    assert replies and set(replies) <= {"A", "B", "C"}


def test_reused_folder_refusal_lists_the_settings_that_differ(bench, capsys, tmp_path):
    tasks, data = bench
    args = ["--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data), "--model", "random",
            "--no-cache", "--no-progress", "--output-path", str(tmp_path / "out")]
    assert run_cli(capsys, *args, "--limit", "2")[0] == 0
    code, err = run_cli(capsys, *args, "--limit", "3")
    assert code == 2
    assert "holds the results of another run (model random, tasks my_choice); settings that differ: config.limit 2 (now 3)" in err


def test_reused_folder_refusal_comes_before_any_request(bench, capsys, tmp_path, chat_server, api_key):
    tasks, data = bench
    out = ["--output-path", str(tmp_path / "out"), "--tasks", "my_choice", "--include-path", str(tasks),
           "--data-dir", str(data), "--no-cache", "--no-progress"]
    assert run_cli(capsys, *out, "--model", "random", "--limit", "2")[0] == 0
    code, err = run_cli(capsys, *out, *openai_args(chat_server), "--limit", "2")
    assert code == 2 and chat_server.log == []
    line = next(line for line in err.splitlines() if line.startswith("mmtasks: error:"))
    assert "settings that differ:" in line and 'config.model "random" (now "openai:test-model")' in line, line
    assert "base_url" in line and chat_server.base_url in line  # a plain URL is named (one with credentials would not be)


# -- the model's limits, before the first request ------------------------------------------

LONG = TASK.replace("generation: {max_new_tokens: 16}", "generation: {max_new_tokens: 2048}")


def test_max_model_len_from_the_server_fails_a_2048_token_task_before_any_chat_request(bench, chat_server, capsys,
                                                                                      tmp_path, api_key):
    tasks, data = bench
    (tasks / "my_choice.yaml").write_text(LONG, encoding="utf-8")
    chat_server.max_model_len = 1024
    code, err = run_cli(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data),
                        *openai_args(chat_server), "--no-cache", "--no-progress")
    assert code == 2
    line = next(line for line in err.splitlines() if line.startswith("mmtasks: error:"))
    assert ("my_choice.yaml" in line and "field 'generation.max_new_tokens'" in line and "2048 new tokens" in line
            and "at most 1024 tokens" in line and "--gen-kwargs max_new_tokens=N" in line), line
    assert chat_server.calls == 0  # only GET /v1/models
    assert [c.path for c in chat_server.log] == ["/v1/models"]


def test_gen_kwargs_override_is_recorded_and_marked_unofficial(bench, chat_server, capsys, tmp_path, api_key):
    tasks, data = bench
    (tasks / "my_choice.yaml").write_text(LONG, encoding="utf-8")
    chat_server.max_model_len = 1024
    chat_server.reply = lambda body: "A"
    out = tmp_path / "out"
    code, err = run_cli(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data),
                        *openai_args(chat_server), "--no-cache", "--no-progress", "--output-path", str(out),
                        "--gen-kwargs", "max_new_tokens=512")
    assert code == 0, err
    assert {b["max_tokens"] if "max_tokens" in b else b["max_completion_tokens"] for b in chat_server.bodies} == {512}
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["config"]["gen_kwargs"] == {"max_new_tokens": 512}
    from mmtasks.results.schema import read_results

    config = read_results(out / "results.json").config
    assert not config.official_protocol and "gen-kwargs max_new_tokens=512" in config.variant()


def test_unknown_gen_kwarg_gets_a_did_you_mean(bench, capsys):
    tasks, data = bench
    code, _, err = run_check(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data),
                             "--gen-kwargs", "max_new_token=5")
    assert code == 2 and "field '--gen-kwargs'" in err and "did you mean 'max_new_tokens'" in err


def test_the_same_400_on_every_request_stops_the_run_after_a_handful(bench, chat_server, capsys, tmp_path, api_key):
    tasks, data = bench
    write_realbench(data, "ranking_easy.jsonl", [ranking_record(f"r-{i}", n_images=1) for i in range(1, 61)])
    chat_server.inject(400, times=10_000, message="max_tokens=2048 cannot be greater than max_model_len=1024")
    code, err = run_cli(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data),
                        "--model", "openai:test-model", "--model-args", f"base_url={chat_server.base_url},concurrency=2",
                        "--no-cache", "--no-progress")
    assert code == 2
    line = next(line for line in err.splitlines() if line.startswith("mmtasks: error:"))
    assert ("field '--model'" in line and "the first 5 requests to openai:test-model all failed the same way" in line
            and "HTTP 400: max_tokens=2048 cannot be greater than max_model_len=1024" in line), line
    assert 5 <= chat_server.calls <= 10  # a handful (the fifth failure, and the few in flight or starting), not 60


#: OpenAI's context-window refusal (the same text for every document, whatever its length)
CONTEXT_WINDOW_400 = "Your input exceeds the context window of this model. Please adjust your input and try again."


@pytest.mark.parametrize(("message", "kind"), [(CONTEXT_WINDOW_400, "context_overflow"),
                                               ("Invalid image: the file could not be decoded", "request_failures")],
                         ids=["context-overflow", "per-document-400"])
def test_a_documents_own_failures_do_not_stop_a_healthy_run(bench, chat_server, capsys, tmp_path, api_key,
                                                            message, kind):
    """Issue 31, finding 6: 20 documents, the first 5 refused at once with the same 400 (sent one
    at a time, so they are the first 5 replies), the rest answered. Before: exit 2, "the first 5
    requests ... all failed the same way", even with --allow-failures, and again on every re-run."""
    tasks, data = bench
    records = [ranking_record(f"r-{i}", n_images=1, text=("LONG-DOC " if i <= 5 else "") + "做饭步骤")
               for i in range(1, 21)]
    write_realbench(data, "ranking_easy.jsonl", records)
    chat_server.inject(400, times=10_000, match="LONG-DOC", message=message)
    out = tmp_path / "out"
    args = ("--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data), "--model", "openai:test-model",
            "--model-args", f"base_url={chat_server.base_url},concurrency=1,max_retries=0", "--max-live", "1",
            "--no-progress", "--allow-failures", "--output-path", str(out), "--cache-dir", str(tmp_path / "cache"))
    for _ in range(2):  # the run, then the same command again (the 5 failures are all it sends)
        code, err = run_cli(capsys, *args)
        assert code == 0, err  # before: 2, the run stopped
        results = json.loads((out / "results.json").read_text())
        assert results["problems"]["my_choice"][kind] == 5 and results["n-samples"]["my_choice"]["effective"] == 20
    # the probe without documents, for the refusal that might have been the server's
    probes = [c for c in chat_server.log if c.body and "Reply with the word OK." in json.dumps(c.body)]
    assert len(probes) == (0 if kind == "context_overflow" else 2)


def test_first_failures_watch_rules():
    from mmtasks.core.request import Reply, Request
    from mmtasks.scheduling.first_failures import FirstFailures, FirstRequestsFailed

    req = Request(messages=(), target="model")
    gone = "failed after 7 attempts: connection error (ConnectError: [Errno 111] Connection refused)"
    watch = FirstFailures(names={"model": "openai:m"})
    for _ in range(4):
        watch(req, Reply.failure(gone.replace("7", "3")))
    with pytest.raises(FirstRequestsFailed, match="Connection refused"):
        watch(req, Reply.failure(gone))  # the attempt count does not make another reason
    # one success first, or two reasons: per-request failures as before
    for first in (Reply(text="ok"), Reply.failure("HTTP 400: other")):
        watch = FirstFailures(names={"model": "openai:m"})
        watch(req, first)
        for _ in range(10):
            watch(req, Reply.failure("HTTP 400: same"))
    # a context overflow is its document's: neither counted nor the end of the watch
    watch = FirstFailures(names={"model": "openai:m"})
    for _ in range(10):
        watch(req, Reply.failure("context_overflow: HTTP 400: maximum context length exceeded"))
    with pytest.raises(FirstRequestsFailed):
        for _ in range(5):
            watch(req, Reply.failure("HTTP 500: down"))
    # identical 4xx: the probe without documents decides whose they are
    for answer, stops in ((Reply(text="OK"), False), (Reply.failure("HTTP 400: same"), True),
                          (Reply.failure("failed after 3 attempts: HTTP 400: same"), True)):
        sent: list[Request] = []
        watch = FirstFailures(names={"model": "openai:m"}, probe=lambda r, answer=answer: sent.append(r) or answer)
        for _ in range(4):
            watch(req, Reply.failure("HTTP 400: same"))
        if stops:
            with pytest.raises(FirstRequestsFailed):
                watch(req, Reply.failure("HTTP 400: same"))
        else:
            watch(req, Reply.failure("HTTP 400: same"))
            watch(req, Reply.failure("HTTP 400: same"))  # the watch has ended
        assert len(sent) == 1 and sent[0].messages[0].parts[0].text == "Reply with the word OK."
    # cached replies and targets without a model are not watched
    watch = FirstFailures(names={"model": "openai:m"})
    for _ in range(10):
        watch(Request(messages=(), target="judge"), Reply.failure("no judge model configured for this run"))


# -- every built-in benchmark's sample data passes -----------------------------------------

BUILTIN = TaskRegistry.discover().task_names


@pytest.mark.parametrize("task", BUILTIN)
def test_check_passes_on_every_builtin_benchmarks_sample_data(task, capsys):
    code, out, err = run_check(capsys, "--tasks", task, "--data-dir", str(SAMPLE))
    assert code == 0, err
    summary, *policy = out.rstrip().splitlines()
    assert summary.endswith(": no problems"), out
    # what follows is only the counts of the records the task's record policy treats as its authors do
    # (MathVerse's Vision Only tasks leave out the other problem versions)
    assert all(line.startswith(f"  {task} (its record policy): ") for line in policy), out


def test_builtin_tasks_are_discovered():
    assert BUILTIN_TASKS_DIR.is_dir() and {"mmdu", "mmrc", "realbench_ranking_easy", "muirbench"} <= set(BUILTIN)
    assert REPO.is_dir()


# -- several processes give what one gives ---------------------------------------------------

_CHECK_IN_A_FRESH_PROCESS = """
import sys
import mmtasks.preflight as pf
from mmtasks.errors import Problems
pf.PARALLEL_FROM = 4
workers = int(sys.argv[1])
assert pf._workers(pf.load_tasks(["my_choice"], [sys.argv[2]])[0], pf.data_root(sys.argv[3]), None, workers)[0] == workers
try:
    checked = pf.preflight(["my_choice"], include_paths=[sys.argv[2]], data_dir=sys.argv[3], workers=workers)
    print("ok", checked.documents, checked.scans["my_choice"])
except Problems as exc:
    print(exc.render())
"""


def test_several_processes_find_what_one_finds(bench, tmp_path):
    import subprocess

    tasks, data = bench
    records = [ranking_record(f"r-{i}", n_images=2) for i in range(1, 31)]
    records[7]["id"] = "r-3"                       # a duplicate id, in another share than its first
    records[12]["answer"] = "F"                    # a target outside the options
    write_realbench(data, "ranking_easy.jsonl", records)
    (data / "realbench" / "images" / "r-20" / "2.jpg").unlink()
    path = data / "realbench" / "ranking_easy.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[24] = '{"id": "r-25", "images": ['      # a malformed line (read by every share)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def check(workers: int) -> str:
        out = subprocess.run([sys.executable, "-c", _CHECK_IN_A_FRESH_PROCESS, str(workers), str(tasks), str(data)],
                             capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout

    one, several = check(1), check(3)
    assert one == several
    assert one.startswith("4 problems found") and "duplicate document id 'r-3'" in one and "target 'F'" in one
    assert "malformed JSON line" in one and "r-20/2.jpg" in one
    write_realbench(data, "ranking_easy.jsonl", [ranking_record(f"r-{i}", n_images=2) for i in range(1, 31)])
    assert check(1) == check(3) and check(1).startswith("ok 30 ")


def test_recorded_settings_hold_no_secret_and_keep_plain_values():
    from mmtasks.runner import recorded_settings

    identity = {"config": {"limit": 2, "gen_kwargs": {"max_new_tokens": 512},
                           "model_args": {"base_url": "http://user:pw-123456789@host:8000/v1?api-key=k-123456789",
                                          "api_key": "sk-not-registered-123", "api_key_env": "MY_KEY",
                                          "default_headers": {"api-key": "h-123456789"}, "dtype": "bfloat16"}}}
    recorded = recorded_settings(identity)
    text = json.dumps(recorded)
    assert not any(s in text for s in ("pw-123456789", "k-123456789", "sk-not-registered-123", "h-123456789"))
    args = recorded["config"]["model_args"]
    assert args["base_url"] == "http://host:8000/v1" and args["api_key_env"] == "MY_KEY" and args["dtype"] == "bfloat16"
    assert recorded["config"]["limit"] == 2 and recorded["config"]["gen_kwargs"] == {"max_new_tokens": 512}


def test_a_target_outside_the_options_is_found_when_the_parser_guesses_at_random(bench, capsys):
    """With ``fallback: random`` the choice parser answers every text; a guess is not the target's answer."""
    tasks, data = bench
    edit("parser_args: {options_field: options}", "parser_args: {options_field: options, fallback: random}")(
        tasks / "my_choice.yaml", data)
    letter_outside_options(tasks / "my_choice.yaml", data)
    code, _, err = run_check(capsys, "--tasks", "my_choice", "--include-path", str(tasks), "--data-dir", str(data))
    assert code == 2 and "ranking_easy.jsonl:2, document 'r-2', field 'answer': target 'F' is outside the answer space" in err


# -- image headers: the size without decoding ---------------------------------------------

@pytest.mark.parametrize(("fmt", "options"), [
    ("PNG", {}), ("GIF", {}), ("BMP", {}), ("TIFF", {}), ("WEBP", {"lossless": False}), ("WEBP", {"lossless": True}),
    ("JPEG", {}), ("JPEG", {"progressive": True}), ("JPEG", {"exif": "big"}),
])
def test_header_sizes_agree_with_pil(tmp_path, fmt, options):
    from PIL import Image as PILImage

    from mmtasks.documents.image_header import HEAD_BYTES, header_size, image_bytes_problem, image_file_problem

    for size in [(5, 4), (641, 479), (3000, 1)]:
        img = PILImage.new("RGB", size, (10, 20, 30))
        kw = dict(options)
        if kw.get("exif") == "big":  # an EXIF block larger than the first read: the frame header lies past it
            exif = PILImage.Exif()
            exif[0x010E] = "x" * 20_000
            kw["exif"] = exif.tobytes()
        path = tmp_path / f"x.{fmt.lower()}"
        img.save(path, format=fmt, **kw)
        data = path.read_bytes()
        with PILImage.open(path) as opened:
            assert opened.size == size
        if fmt != "TIFF":  # TIFF's size comes from PIL's header parse
            assert header_size(data[:HEAD_BYTES], None, data) == size
        assert image_file_problem(path) is None and image_bytes_problem(data) is None


def test_header_over_the_pixel_budget_and_broken_headers(tmp_path):
    from mmtasks.core.pixels import MAX_IMAGE_PIXELS
    from mmtasks.documents.image_header import image_file_problem

    png = tmp_path / "wide.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (200_000).to_bytes(4, "big") + (600).to_bytes(4, "big") + b"\x08\x02\x00\x00\x00")
    assert image_file_problem(png) == f"image is 200000x600 pixels, more than the limit of {MAX_IMAGE_PIXELS} (a decompression bomb?)"
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")  # a JPEG that ends before its frame header
    assert image_file_problem(cut) == "not a readable image"


def test_problems_of_several_tasks_are_reported_together(bench, capsys):
    tasks, data = bench
    base = (tasks / "my_choice.yaml").read_text(encoding="utf-8")
    (tasks / "bad_keys.yaml").write_text(base.replace("task: my_choice", "task: bad_keys").replace("prompt:", "promt:")
                                         .replace("  parser: choice", "  parsr: choice"), encoding="utf-8")
    (tasks / "bad_metric.yaml").write_text(base.replace("task: my_choice", "task: bad_metric")
                                           .replace("function: choice_acc", "function: choice_ac"), encoding="utf-8")
    remove_fourth_image(tasks / "my_choice.yaml", data)
    code, _, err = run_check(capsys, "--tasks", "bad_keys,bad_metric,my_choice", "--include-path", str(tasks),
                             "--data-dir", str(data))
    assert code == 2
    lines = err.splitlines()
    # bad_keys's data is checked too (read with its keys in error left out): its missing image is
    # reported with its key errors, not after they are fixed (issue 27)
    assert lines[0] == "mmtasks: error: 5 problems found before any model or judge was built:"
    assert lines[1:] == [
        "  task bad_keys:",
        f"    {tasks / 'bad_keys.yaml'}, field 'answer.parsr': unknown key (did you mean 'parser'?)",
        f"    {tasks / 'bad_keys.yaml'}, field 'promt': unknown key (did you mean 'prompt'?)",
        next(line for line in lines if "image not found" in line),
        "  task bad_metric:",
        next(line for line in lines if "field 'metrics[0].function'" in line),
        "  task my_choice:",
        next(line for line in lines if "image not found" in line),
    ]
    assert "bad_metric.yaml" in lines[6] and "did you mean 'choice_acc'" in lines[6]
