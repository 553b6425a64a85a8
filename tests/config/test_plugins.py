"""Plugins and the checks made when a task loads.

- A plugin file in a task folder (``plugins:`` in the YAML, inherited through ``include``,
  importing a sibling helper relatively) registers a parser and a metric that only the
  tasks loading it can use; a run scores with them, against the loopback chat server.
- An installed package (an entry point in the group ``mmtasks``, found by
  importlib.metadata in a ``*.dist-info`` on ``sys.path``; nothing is installed) registers
  a parser and contributes a task folder; ``mmtasks tasks`` lists its task and a run uses it.
- Each load-time check (unknown ``protocol_args`` key, misspelled aggregator, a judge the
  protocol does not use, a metric the aggregator does not report, a broken plugin file)
  fails with one line, exit 2 and no request sent.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mmtasks.cli import main
from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text

REPO = Path(__file__).resolve().parents[2]
MODEL = "plugin-model"
RECORDS = [
    {"id": "a", "question": "How many apples?", "answer": 7},
    {"id": "b", "question": "How many pears?", "answer": 3},
    {"id": "c", "question": "How many plums?", "answer": 2},
]
REPLIES = {"apples": "I count seven apples.", "pears": "There are 4 of them, I think five... no, 4.", "plums": "No idea."}


def reply(body: dict) -> str:
    text = last_user_text(body)
    return next(r for k, r in REPLIES.items() if k in text)


@pytest.fixture
def server(chat_server: ChatServer) -> ChatServer:
    chat_server.models = (MODEL, "plugin-judge")
    chat_server.reply = reply
    return chat_server


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def write_data(root: Path) -> Path:
    lines = "".join(json.dumps(r) + "\n" for r in RECORDS)
    write(root / "bench" / "test.jsonl", lines)
    return root


def cli(capsys: pytest.CaptureFixture[str], server: ChatServer, tmp_path: Path, *args: str) -> tuple[int, str]:
    code = main(["--model", f"openai:{MODEL}", "--model-args", f"base_url={server.base_url}",
                 "--data-dir", str(write_data(tmp_path / "data")), "--no-cache", "--no-progress", *args])
    return code, capsys.readouterr().err


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("mmtasks: error:"), err
    return lines[0]


BASE = """
    plugins: [scoring.py]
    dataset:
      local: {dir: bench, file: test.jsonl}
      images_field: null
    prompt:
      user: "{{ doc.question }} Answer with a number."
    target: "field:answer"
"""
SCORING = """
    from mmtasks.plugin import metric, parser
    from mmtasks.scoring.metrics import exact_integer  # noqa: F401  (a built-in module stays built in)

    from .words import NUMBERS  # a helper module beside it, imported relatively


    @parser("last_number_word")
    def last_number_word(text: str) -> int | None:
        found = [NUMBERS.get(w, w) for w in text.lower().replace(".", " ").replace(",", " ").split()]
        numbers = [int(w) for w in found if isinstance(w, int) or str(w).isdigit()]
        return numbers[-1] if numbers else None


    @metric("abs_error")
    def abs_error(parsed: int | None, target: int, doc: dict) -> float | None:
        return None if parsed is None else float(abs(parsed - int(target)))
"""
WORDS = """
    NUMBERS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
"""


def plugin_folder(root: Path) -> Path:
    """An include path with a benchmark whose base YAML lists a plugin file."""
    write(root / "bench" / "_base.yaml", BASE)
    write(root / "bench" / "scoring.py", SCORING)
    write(root / "bench" / "words.py", WORDS)
    write(root / "bench" / "count.yaml", """
        include: _base.yaml
        task: plugin_count
        answer: {parser: last_number_word}
        metrics:
          - {name: acc, function: exact_integer, primary: true}
          - {name: abs_error, function: abs_error, higher_is_better: false}
    """)
    # the same data and parser, without the plugin: the name is not visible to it
    write(root / "bench" / "other.yaml", """
        task: plugin_other
        dataset:
          local: {dir: bench, file: test.jsonl}
          images_field: null
        prompt: {user: "{{ doc.question }}"}
        target: "field:answer"
        answer: {parser: last_number_word}
    """)
    return root


def test_a_plugin_file_scores_only_the_tasks_that_load_it(capsys, server: ChatServer, tmp_path: Path) -> None:
    inc = plugin_folder(tmp_path / "inc")
    out = tmp_path / "run"
    code, err = cli(capsys, server, tmp_path, "--tasks", "plugin_count", "--include-path", str(inc), "--output-path", str(out))
    assert code == 1, err  # one answer is unparsed: a counted problem
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]["plugin_count"]
    # a: "seven" = 7 (right, error 0); b: last number 4 (wrong, error 1); c: unparsed (wrong, no error)
    assert results["acc"] == pytest.approx(100 / 3)
    assert results["abs_error"] == pytest.approx(0.5)
    assert server.calls == 3

    server.reset()
    code, err = cli(capsys, server, tmp_path, "--tasks", "plugin_other", "--include-path", str(inc))
    assert code == 2
    line = error_line(err)
    assert f"{inc / 'bench' / 'other.yaml'}, field 'answer.parser'" in line
    assert f"parser 'last_number_word' is defined in the plugin file {(inc / 'bench' / 'scoring.py').resolve()}" in line
    assert "add 'scoring.py' to the task's plugins:" in line
    assert server.calls == 0 and server.log == []


def test_what_a_plugin_file_imports_stays_visible_to_every_task(server: ChatServer, tmp_path: Path) -> None:
    """In a fresh process the plugin file is the first to import mmtasks.scoring.metrics: the
    built-in metrics it registers must not become the plugin's (the next task uses one)."""
    inc = plugin_folder(tmp_path / "inc")
    write(inc / "bench" / "plain.yaml", """
        task: plugin_plain
        dataset: {local: {dir: bench, file: test.jsonl}, images_field: null}
        prompt: {user: "{{ doc.question }}"}
        target: "field:answer"
        answer: {parser: integer}
        metrics: [{name: acc, function: exact_integer}]
    """)
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, "-m", "mmtasks", "--tasks", "plugin_count,plugin_plain", "--include-path", str(inc),
                          "--model", f"openai:{MODEL}", "--model-args", f"base_url={server.base_url}",
                          "--data-dir", str(write_data(tmp_path / "data")), "--no-progress", "--output-path", str(out)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr  # unparsed answers are counted problems, not errors
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    assert results["plugin_count"]["acc"] == pytest.approx(100 / 3)
    assert results["plugin_plain"]["acc"] == 0.0  # "seven", "4" (gold 3), "No idea."
    assert server.calls == 6


def test_two_task_folders_may_each_have_a_plugin_name(capsys, server: ChatServer, tmp_path: Path) -> None:
    """Plugin names are per task: two benchmarks' plugin files may both define ``last_number_word``."""
    first = plugin_folder(tmp_path / "inc1")
    second = tmp_path / "inc2"
    write(second / "b2" / "words.py", WORDS)
    write(second / "b2" / "scoring.py", SCORING.replace('@metric("abs_error")', '@metric("abs_error_2")'))
    write(second / "b2" / "count2.yaml", """
        task: plugin_count_2
        plugins: [scoring.py]
        dataset: {local: {dir: bench, file: test.jsonl}, images_field: null}
        prompt: {user: "{{ doc.question }}"}
        target: "field:answer"
        answer: {parser: last_number_word}
        metrics: [{name: acc, function: exact_integer}]
    """)
    code, err = cli(capsys, server, tmp_path, "--tasks", "plugin_count,plugin_count_2", "--include-path", str(first),
                    "--include-path", str(second))
    assert code == 1, err  # the unparsed answers
    assert server.calls == 6


def test_plugins_are_inherited_relative_to_the_file_that_lists_them(tmp_path: Path) -> None:
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.documents.dataset import Document
    from mmtasks.task import Task

    inc = plugin_folder(tmp_path / "inc")
    write(inc / "bench" / "variants" / "extra.py", """
        from mmtasks.plugin import metric

        @metric("always_one")
        def always_one(parsed, target, doc):
            return 1.0
    """)
    write(inc / "bench" / "variants" / "hard.yaml", """
        include: ../_base.yaml
        task: plugin_hard
        plugins: [extra.py]
        answer: {parser: last_number_word}
        metrics: [{name: one, function: always_one}, {name: err, function: abs_error}]
    """)
    reg = TaskRegistry.discover([inc])
    config, path = reg.load("plugin_hard")
    assert config.plugins == [str(inc.resolve() / "bench" / "scoring.py"), str(inc.resolve() / "bench" / "variants" / "extra.py")]
    task = Task(config, path, roots=(reg.root("plugin_hard"),))
    assert task.plugins == (inc.resolve() / "bench" / "scoring.py", inc.resolve() / "bench" / "variants" / "extra.py")
    doc = Document(index=0, doc_id="x", record={}, images=(), source="s")
    assert task.state(doc).score(3, 5) == {"one": 1.0, "err": 2.0}
    assert reg.root("plugin_hard") == inc.resolve()


def test_a_plugin_file_must_stay_inside_the_task_folder(capsys, server: ChatServer, tmp_path: Path) -> None:
    inc = plugin_folder(tmp_path / "inc")
    write(tmp_path / "outside.py", "raise SystemExit('must never run')\n")
    write(inc / "bench" / "escape.yaml", """
        include: _base.yaml
        task: plugin_escape
        plugins: [../../outside.py]
        answer: {parser: last_number_word}
    """)
    code, err = cli(capsys, server, tmp_path, "--tasks", "plugin_escape", "--include-path", str(inc))
    assert code == 2
    line = error_line(err)
    assert "field 'plugins'" in line and "outside.py is outside the task's folder" in line
    assert server.log == []


def test_two_plugin_files_with_one_module_name_are_refused(tmp_path: Path) -> None:
    from mmtasks.errors import ConfigError
    from mmtasks.registry import load_plugin_file

    first = write(tmp_path / "folder" / "my-plugin.py", "X = 1\n")
    second = write(tmp_path / "folder" / "my_plugin.py", "X = 2\n")
    load_plugin_file(first, roots=[tmp_path])
    with pytest.raises(ConfigError, match=r"my_plugin.py has the module name of .*my-plugin.py"):
        load_plugin_file(second, roots=[tmp_path])


@pytest.mark.parametrize(("source", "line_no", "message"), [
    ("x = 1\ndef broken(:\n    pass\n", 2, "SyntaxError: invalid syntax"),
    ("import os\nimport mmtasks_no_such_module_xyz\n", 2, "ModuleNotFoundError: No module named 'mmtasks_no_such_module_xyz'"),
    ("from mmtasks.plugin import parser\n\n@parser('text')\ndef mine(text):\n    return text\n", None,
     "parser 'text' is registered twice"),
])
def test_a_broken_plugin_file_shows_its_own_error(capsys, server: ChatServer, tmp_path: Path, source: str,
                                                  line_no: int | None, message: str) -> None:
    inc = plugin_folder(tmp_path / "inc")
    broken = write(inc / "bench" / "scoring.py", source)
    code, err = cli(capsys, server, tmp_path, "--tasks", "plugin_count", "--include-path", str(inc))
    assert code == 2
    line = error_line(err)
    assert message in line
    if line_no is not None:
        assert f"{broken.resolve()}:{line_no}: plugin file failed to import" in line
    assert server.log == []


# --- checked at load: one line, exit 2, nothing sent ------------------------------

CHECKED = {
    "typo_args.yaml": """
        task: typo_args
        dataset: {local: {dir: bench, file: test.jsonl}, images_field: null}
        protocol: replay_probe
        protocol_args:
          hystory: reference
          probe_prompt: "{{ question.question }}"
    """,
    "typo_aggregator.yaml": """
        task: typo_aggregator
        dataset: {local: {dir: bench, file: test.jsonl}, images_field: null}
        prompt: {user: "{{ doc.question }}"}
        answer: {parser: integer}
        target: "field:answer"
        aggregator: per_sample_maen
        metrics: [{name: acc, function: exact_integer}]
    """,
    "unused_judge.yaml": """
        task: unused_judge
        plugins: [ask.py]
        dataset: {local: {dir: bench, file: test.jsonl}, images_field: null}
        protocol: ask_once
        prompt: {user: "{{ doc.question }}"}
        target: "field:answer"
        judge:
          prompt: "Is {{ answer }} right?"
          parser: yes_no
    """,
    "decorative_metric.yaml": """
        task: decorative_metric
        dataset: {local: {dir: bench, file: test.jsonl}, images_field: null}
        prompt: {user: "{{ doc.question }}"}
        answer: {parser: integer}
        target: "field:answer"
        metrics:
          - {name: acc, function: exact_integer}
          - {name: fluency}
    """,
}
ASK = """
    from mmtasks.plugin import Request, Sample, protocol, verdict_parser


    @protocol("ask_once")  # it never calls a judge (uses_judge=False)
    def ask_once(state, ctx):
        doc, messages = state.doc, state.messages
        sample = Sample(task=state.task, doc_id=doc.doc_id, doc_index=doc.index,
                        prompt=[m.to_json() for m in messages], target=state.target)
        (reply,) = yield [Request(messages=messages, generation=state.config.generation, target="model",
                                  task=state.task, doc_id=doc.doc_id)]
        sample.responses.append(reply.text)
        return sample


    @verdict_parser("yes_no")
    def yes_no(text):
        return {"yes": True, "no": False}.get(text.strip().lower())
"""


@pytest.mark.parametrize(("task", "field", "message"), [
    ("typo_args", "protocol_args.hystory", "unknown key (did you mean 'history'?)"),
    ("typo_aggregator", "aggregator", "unknown aggregator 'per_sample_maen' (did you mean 'per_sample_mean'?)"),
    ("unused_judge", "judge", "protocol 'ask_once' does not use a judge, so this judge: block would never be called"),
    ("decorative_metric", "metrics[1].name", "metric 'fluency' is not one that aggregator 'per_sample_mean' reports"),
])
def test_load_time_checks_fail_before_any_request(capsys, server: ChatServer, tmp_path: Path, task: str, field: str,
                                                  message: str) -> None:
    inc = tmp_path / "inc"
    for name, text in CHECKED.items():
        write(inc / "checks" / name, text)
    write(inc / "checks" / "ask.py", ASK)
    code, err = cli(capsys, server, tmp_path, "--tasks", task, "--include-path", str(inc),
                    "--judge", "openai:plugin-judge", "--judge-args", f"base_url={server.base_url}")
    assert code == 2
    line = error_line(err)
    assert line.startswith(f"mmtasks: error: {inc / 'checks' / (task + '.yaml')}, field '{field}': "), line
    assert message in line
    assert server.log == []  # no chat call, not even the readiness check of the model or the judge


def test_a_run_override_the_protocol_does_not_take_is_an_error(capsys, server: ChatServer, tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    write(inc / "checks" / "typo_aggregator.yaml", CHECKED["typo_aggregator.yaml"].replace("per_sample_maen", "per_sample_mean"))
    code, err = cli(capsys, server, tmp_path, "--tasks", "typo_aggregator", "--include-path", str(inc), "--history", "reference")
    assert code == 2
    assert "field '--history': --history does not apply to task 'typo_aggregator': protocol 'single_turn' has no 'history' setting" in error_line(err)
    assert server.log == []


# --- an installed package, through the entry-point group ``mmtasks`` ----------------

EP_MODULE = """
    from pathlib import Path

    from mmtasks.plugin import parser, task_folder


    @parser("ep_last_int")
    def ep_last_int(text):
        digits = [int(w) for w in text.replace(".", " ").replace(",", " ").split() if w.isdigit()]
        return digits[-1] if digits else None


    task_folder("ep_demo", Path(__file__).parent / "tasks")
"""
EP_TASK = """
    task: ep_count
    group: ep_demo
    dataset: {local: {dir: bench, file: test.jsonl}, images_field: null}
    prompt: {user: "{{ doc.question }}"}
    target: "field:answer"
    answer: {parser: ep_last_int}
    metrics: [{name: acc, function: exact_integer}]
"""


def fake_installed_package(site: Path) -> Path:
    """What ``pip install`` of a package with ``[project.entry-points.mmtasks] demo = "mmtasks_ep_demo"`` leaves."""
    write(site / "mmtasks_ep_demo" / "__init__.py", EP_MODULE)
    write(site / "mmtasks_ep_demo" / "tasks" / "ep_count.yaml", EP_TASK)
    dist = site / "mmtasks_ep_demo-0.1.dist-info"
    write(dist / "METADATA", "Metadata-Version: 2.1\nName: mmtasks-ep-demo\nVersion: 0.1\n")
    write(dist / "entry_points.txt", "[mmtasks]\ndemo = mmtasks_ep_demo\n")
    return site


def test_an_installed_package_adds_a_parser_and_a_task_folder(server: ChatServer, tmp_path: Path) -> None:
    site = fake_installed_package(tmp_path / "site")
    data = write_data(tmp_path / "data")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]), "MMTASKS_CACHE_DIR": str(tmp_path / "cache")}
    listed = subprocess.run([sys.executable, "-m", "mmtasks", "tasks"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^ep_count\s+acc\s+-$", listed.stdout, re.MULTILINE) and "ep_demo: ep_count" in listed.stdout

    out = tmp_path / "run"
    run = subprocess.run([sys.executable, "-m", "mmtasks", "--tasks", "ep_demo", "--model", f"openai:{MODEL}",
                          "--model-args", f"base_url={server.base_url}", "--data-dir", str(data), "--no-progress",
                          "--output-path", str(out)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr  # "No idea." is unparsed: a counted problem
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]["ep_count"]
    # a: "seven" has no digits (unparsed); b: last integer 4 (wrong); c: unparsed
    assert results["acc"] == 0.0
    assert server.calls == 3


def test_a_broken_installed_package_is_named(tmp_path: Path) -> None:
    site = fake_installed_package(tmp_path / "site")
    write(site / "mmtasks_ep_demo" / "__init__.py", "import mmtasks_no_such_dependency_xyz\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    listed = subprocess.run([sys.executable, "-m", "mmtasks", "tasks"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 2
    line = error_line(listed.stderr)
    assert ("the mmtasks plugin 'demo' of mmtasks-ep-demo (mmtasks_ep_demo) failed to import: "
            "ModuleNotFoundError: No module named 'mmtasks_no_such_dependency_xyz'") in line


def test_a_task_built_directly_may_include_a_builtin_benchmark_with_plugins(tmp_path: Path) -> None:
    """Python users (and benchmarks/multi_turn_scheduling.py) build a Task without the runner's
    roots: a task that includes the built-in MMDU YAML still loads MMDU's plugin file (this raised
    "plugin file ... is outside the task's folder" before)."""
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.task import Task

    folder = tmp_path / "mine"
    folder.mkdir()
    mmdu = REPO / "tasks" / "mmdu"
    (folder / "mmdu_short.yaml").write_text(
        f"task: mmdu_short\ninclude: {mmdu / 'mmdu.yaml'}\ngroup: []\n"
        "generation: {max_new_tokens: 8, temperature: 0.0, do_sample: false}\n"
        f"judge: {{prompt_file: {mmdu / 'judge_prompt.txt'}}}\n", encoding="utf-8")
    config, path = TaskRegistry.discover([folder]).load("mmdu_short")
    task = Task(config, path)
    assert [p.name for p in task.plugins] == ["mmdu.py"]
    assert task.judge_parser is not None
