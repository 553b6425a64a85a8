"""The optional LLM answer matcher (issue 26): BLINK's and MMIU's authors ask an LLM which option
a reply chose when no rule reads one. ``answer.matcher`` holds their prompt; ``--matcher SPEC``
turns it on; its requests go through the scheduler and the response cache; every sample says
how its answer was read; results.json gives the metrics with and without the matcher."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.config.task_config import TaskConfig
from mmtasks.config.yaml_loader import read_yaml
from mmtasks.documents.dataset import Document
from mmtasks.dialogues.matching import matcher_request, read_matcher_reply
from mmtasks.errors import ConfigError
from mmtasks.preflight import preflight
from mmtasks.scoring import parsers as p
from mmtasks.task import Task
from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text
from tests.leaderboard.test_leaderboard import browser  # noqa: F401  (the fixture: system Chromium through playwright)

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample"


# --- reading the matcher's reply ------------------------------------------------------------

@pytest.mark.parametrize(("reply", "read"), [
    ("(B)", "B"), ("B", "B"), ("Your output: (C)", "C"), ("(A) Point A", "A"),
    ("(Z) Failed", None), ("Z", None), ("I cannot tell.", None), ("(E)", None),  # E: not an option here
])
def test_the_matchers_reply_is_read_among_the_options_and_z(reply: str, read: str | None) -> None:
    assert read_matcher_reply(reply, ["A", "B", "C", "D"], "Z") == read


def test_word_labels_and_how_an_answer_was_read() -> None:
    assert read_matcher_reply("**False**", ["True", "False"], "none") == "False"
    assert read_matcher_reply("none", ["True", "False"], "none") is None
    assert p.read_by(None) is None and p.read_by("B") == "rule" and p.read_by(p.Guess("B")) == "random"
    assert p.read_by(p.Matched("B")) == "matcher" and p.read_by(p.OptionText("B")) == "option_text"
    mmmu = p.bind("choice", {"letters": ["A", "B"], "rule": "mmmu"})
    doc = {"options": ["a red cat", "a blue dog"]}
    # MMMU's third step: the option's text in a reply of more than 5 words
    named = p.bind("choice", {"rule": "mmmu"})("I am fairly sure it shows a blue dog", doc)
    assert named == "B" and p.read_by(named) == "option_text"
    assert p.read_by(mmmu("The answer is (A)", {})) == "rule"


# --- the authors' prompts, rendered ----------------------------------------------------------

def _task(name: str) -> tuple[Task, object]:
    task = preflight([name], data_dir=SAMPLE).tasks[0]
    return task, next(iter(task.documents(SAMPLE)))


def test_blinks_matcher_prompt_is_the_authors_build_prompt() -> None:
    task, doc = _task("blink_counting")
    request = matcher_request(task.state(doc), "I count three.", position=0)
    text = request.messages[-1].parts[0].text  # type: ignore[union-attr]
    prefix = (REPO / "tasks" / "blink" / "matcher_prompt.txt").read_text(encoding="utf-8")
    # eval/multiple_choice.py build_prompt's literal, its strings joined as Python joins them (no space
    # after "output (Z)"), then Example 4 with analyze_answer's question and "(A) 1\n(B) 2 ..." options
    assert prefix.startswith("You are an AI assistant who will help me to match an answer with several options")
    assert "etc., output (Z)If the meaning of all options" in prefix and prefix.endswith("Your output: (Z)\nExample 4: \n")
    assert text == prefix + ("Question: How many circles are in the image?\nSelect from the following choices?\n"
                             "Options: (A) 1\n(B) 2\n(C) 3\n(D) 4\n(Z) Failed\nAnswer: I count three.\nYour output: ")
    assert request.target == "matcher" and request.generation.temperature == 0.0
    assert request.meta["answer_space"]["choices"] == ["A", "B", "C", "D", "Z"]


def test_mmius_matcher_prompt_is_the_authors_build_prompt() -> None:
    task, doc = _task("mmiu")
    text = matcher_request(task.state(doc), "the third one", position=0).messages[-1].parts[0].text  # type: ignore[union-attr]
    prefix = (REPO / "tasks" / "mmiu" / "matcher_prompt.txt").read_text(encoding="utf-8")
    assert "try to match an answer as much as possible. Your should output a single uppercase character" in prefix
    assert text == prefix + ("Question: Which piece completes the first image??\nOptions: A: the second image\n"
                             "B: the third image\nAnswer: the third one\nYour output: ")
    assert task.config.answer.matcher is not None and task.config.answer.matcher.default_model == "openai:gpt-4o-mini"


# --- load-time checks -----------------------------------------------------------------------

def _load(tmp_path: Path, answer: str) -> Task:
    (tmp_path / "t.yaml").write_text(f"task: t\ndataset: {{local: {{dir: d, file: f.jsonl}}}}\nanswer: {answer}\n"
                                     "metrics: [{name: acc, function: exact_match}]\n", encoding="utf-8")
    return Task(TaskConfig.model_validate(read_yaml(tmp_path / "t.yaml")), tmp_path / "t.yaml")


def test_a_matcher_needs_a_parser_that_reads_options_and_a_prompt(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "{parser: integer, matcher: {prompt: 'x {{ prediction }}'}}")
    assert err.value.field == "answer.matcher" and "reads no options" in err.value.message
    with pytest.raises(ValueError, match="a matcher needs a prompt"):
        _load(tmp_path, "{parser: choice, matcher: {question: x}}")
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "{parser: choice, matcher: {prompt_file: ../../elsewhere.txt}}")
    assert err.value.field == "answer.matcher.prompt_file"
    assert _load(tmp_path, "{space: [yes, no], matcher: {prompt: 'p'}}").parser.name == "label"
    # a parser of its own (a plugin's) with a declared choice space of letters: the matcher names those
    task = _load(tmp_path, "{parser: text, space: {kind: choice, choices: [A, B, C]}, matcher: {prompt: 'p'}}")
    assert task.answers.answer_labels(Document(index=0, doc_id="1", record={}, images=(), source="f.jsonl")) == ["A", "B", "C"]
    with pytest.raises(ConfigError, match="reads no options"):
        _load(tmp_path, "{parser: text, space: {kind: text}, matcher: {prompt: 'p'}}")
    (tmp_path / "t.yaml").write_text("task: t\ndataset: {local: {dir: d, file: f.jsonl}}\nprotocol: multi_turn\n"
                                     "answer: {parser: choice, matcher: {prompt: p}}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="single_turn protocol only") as err:
        Task(TaskConfig.model_validate(read_yaml(tmp_path / "t.yaml")), tmp_path / "t.yaml")
    assert err.value.field == "answer.matcher"


# --- end to end: BLINK-shaped records, replayed replies, a loopback matcher ----------------------

RECORDS = [  # idx, choices, gold, the model's reply
    ("val_Counting_1", ["1", "2", "3", "4"], "(C)", "(C) 3"),                              # the rule reads C
    ("val_Counting_2", ["0", "1", "2", "3"], "(B)", "There seems to be exactly one."),       # no letter: matcher B
    ("val_Counting_3", ["1", "2", "3"], "(A)", "I cannot count them."),                    # matcher: Z
    ("val_Counting_4", ["5", "6"], "(B)", "Six, I believe."),                              # matcher A (wrong)
]


def _blink_data(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data" / "blink"
    data.mkdir(parents=True)
    with (data / "Counting.jsonl").open("w") as fh:
        for idx, choices, gold, _ in RECORDS:
            prompt = "How many?\nSelect from the following choices.\n" + "\n".join(f"({'ABCD'[i]}) {c}" for i, c in enumerate(choices))
            fh.write(json.dumps({"idx": idx, "question": "How many?", "image_1": None, "image_2": None, "image_3": None,
                                 "image_4": None, "choices": choices, "answer": gold, "prompt": prompt}) + "\n")
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps({"task": "blink_counting", "doc_id": idx, "responses": [reply]}) + "\n"
                               for idx, _, _, reply in RECORDS))
    return tmp_path / "data", replies


def honest_matcher(body: dict) -> str:
    """The loopback matcher: answers as a careful reader would (hand-written for RECORDS)."""
    text = last_user_text(body)
    if "\nAnswer: " not in text:  # the backend's start-up probe
        return "pong"
    answer = text.rsplit("\nAnswer: ", 1)[1]
    return {"There seems to be exactly one.\nYour output: ": "(B)",
            "I cannot count them.\nYour output: ": "(Z) Failed",
            "Six, I believe.\nYour output: ": "(A)"}.get(answer, "(Z)")


def _run(tmp_path: Path, server: ChatServer, monkeypatch: pytest.MonkeyPatch, out: str, *extra: str) -> dict:
    data, replies = _blink_data(tmp_path) if not (tmp_path / "replies.jsonl").exists() else (tmp_path / "data", tmp_path / "replies.jsonl")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["--tasks", "blink_counting", "--data-dir", str(data), "--model", f"replay:{replies}",
                 "--output-path", str(tmp_path / out), "--no-progress", "--allow-failures", *extra])
    assert code == 0
    return json.loads((tmp_path / out / "results.json").read_text())


def _samples(tmp_path: Path, out: str) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / out / "samples" / "blink_counting.jsonl").read_text().splitlines()]


def test_the_matcher_reads_what_no_rule_reads(tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    chat_server.reply = honest_matcher
    results = _run(tmp_path, chat_server, monkeypatch, "with", "--matcher", "openai:matcher-model")
    samples = _samples(tmp_path, "with")
    assert [(s["parsed"], s["read_by"]) for s in samples] == [("C", "rule"), ("B", "matcher"), (None, None), ("A", "matcher")]
    # with the matcher: C right, B right, unread, A wrong -> 2/4; the rule alone: only C -> 1/4
    assert results["results"]["blink_counting"]["acc"] == 50.0
    summary = results["matcher"]["blink_counting"]
    assert summary["read_by"] == {"rule": 1, "option_text": 0, "matcher": 2, "random": 0, "none": 1}
    assert (summary["asked"], summary["failed"], summary["without_matcher"]["acc"]) == (3, 0, 25.0)
    assert results["problems"]["blink_counting"]["unparsed"] == 1
    assert results["config"]["matcher"] == "openai:matcher-model" and results["config"]["matcher_spec"]["name"] == "matcher-model"
    from mmtasks.results.schema import parse_results
    # a leaderboard row of its own: the matcher is part of the evaluation setting
    assert parse_results(results).config.display_name.endswith(" + matcher openai:matcher-model")
    # three matcher calls (the rule read the first reply), at the task's settings, the prompt the authors';
    # the variant vlmevalkit asks its three unread replies apart, in its own matcher_prompt (VLMEvalKit's)
    every = [b for b in chat_server.bodies if last_user_text(b) != "ping"]
    bodies = [b for b in every if "There are several options: \n" not in last_user_text(b)]
    assert len(bodies) == 3 and len(every) == 6
    assert all(b["model"] == "matcher-model" and b["temperature"] == 0.0 for b in bodies)
    assert all(last_user_text(b).startswith("You are an AI assistant who will help me to match") for b in bodies)
    assert samples[1]["extra"]["matcher"]["reply"] == "(B)" and samples[1]["extra"]["matcher"]["read"] == "B"
    table = capsys.readouterr().out
    rows = [line.split() for line in table.splitlines()]
    assert ["acc", "without", "matcher", "25.00"] in rows and ["read", "by", "matcher", "2", "3", "asked"] in rows
    # the same run again: every matcher reply comes from the response cache
    _run(tmp_path, chat_server, monkeypatch, "again", "--matcher", "openai:matcher-model")
    assert len([b for b in chat_server.bodies if last_user_text(b) != "ping"]) == 6
    assert [s["parsed"] for s in _samples(tmp_path, "again")] == ["C", "B", None, "A"]


def test_off_unless_asked_and_the_default_is_the_authors_model(tmp_path: Path, chat_server: ChatServer,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    chat_server.reply = honest_matcher
    results = _run(tmp_path, chat_server, monkeypatch, "without")
    assert not chat_server.bodies and "matcher" not in results and "matcher" not in results["config"]
    assert results["results"]["blink_counting"]["acc"] == 25.0
    assert [s["read_by"] for s in _samples(tmp_path, "without")] == ["rule", None, None, None]
    results = _run(tmp_path, chat_server, monkeypatch, "default", "--matcher", "default")
    assert results["config"]["matcher"] == "openai:gpt-3.5-turbo"
    assert {b["model"] for b in chat_server.bodies if last_user_text(b) != "ping"} == {"gpt-3.5-turbo"}
    assert results["results"]["blink_counting"]["acc"] == 50.0


def test_a_failing_matcher_leaves_the_rules_reading(tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    chat_server.inject(400, times=100, match="Your output: ")  # matcher calls only, not the start-up probe
    results = _run(tmp_path, chat_server, monkeypatch, "failing", "--matcher", "openai:matcher-model",
                   "--matcher-args", "max_retries=0")
    assert results["results"]["blink_counting"]["acc"] == 25.0
    assert results["matcher"]["blink_counting"]["failed"] == 3
    assert results["matcher"]["blink_counting"]["read_by"]["none"] == 3


def test_a_guess_is_replaced_by_the_matchers_reading(tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "guessing.yaml").write_text(
        "task: guessing\ndataset: {local: {dir: g, file: g.jsonl}, images_field: null}\n"
        "prompt: {user: '{{ doc.q }}'}\ntarget: '{{ doc.answer }}'\n"
        "answer:\n  parser: choice\n  parser_args: {letters: [A, B, C, D], fallback: random}\n"
        "  matcher: {prompt: 'Which option? {{ prediction }}', question: '{{ doc.q }}'}\n"
        "metrics: [{name: acc, function: choice_acc}]\n", encoding="utf-8")
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "g.jsonl").write_text('{"id": "g1", "q": "?", "answer": "D"}\n{"id": "g2", "q": "?", "answer": "D"}\n')
    (tmp_path / "r.jsonl").write_text('{"task": "guessing", "doc_id": "g1", "responses": ["the fourth"]}\n'
                                      '{"task": "guessing", "doc_id": "g2", "responses": ["no idea"]}\n')
    chat_server.reply = lambda body: "D" if "the fourth" in last_user_text(body) else "Z"  # ping too: Z
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--tasks", "guessing", "--include-path", str(tasks), "--data-dir", str(tmp_path), "--model",
                 f"replay:{tmp_path / 'r.jsonl'}", "--matcher", "openai:m", "--output-path", str(tmp_path / "out"),
                 "--no-progress", "--allow-failures"]) == 0
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples" / "guessing.jsonl").read_text().splitlines()]
    assert [s["read_by"] for s in samples] == ["matcher", "random"]   # Z: the seeded guess stays
    assert samples[0]["parsed"] == "D" and samples[0]["guessed"] == 0 and samples[1]["guessed"] == 1
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["matcher"]["guessing"]["read_by"]["random"] == 1
    assert results["problems"]["guessing"]["guessed"] == 1


def test_matcher_on_a_run_whose_tasks_have_none_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--tasks", "realworldqa", "--data-dir", str(SAMPLE), "--model", "random", "--matcher", "random",
                 "--output-path", str(tmp_path / "out"), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--matcher" in err and "no task of this run has an answer matcher" in err
    assert not (tmp_path / "out").exists()


def test_the_random_baseline_can_stand_in_for_the_matcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, replies = _blink_data(tmp_path)
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--tasks", "blink_counting", "--data-dir", str(data), "--model", f"replay:{replies}", "--matcher", "random",
                 "--output-path", str(tmp_path / "out"), "--no-progress", "--allow-failures"]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    summary = results["matcher"]["blink_counting"]
    assert summary["asked"] == 3 and summary["read_by"]["rule"] == 1
    assert summary["read_by"]["matcher"] + summary["read_by"]["none"] == 3   # a letter or Z, drawn at random


def test_the_view_shows_how_each_answer_was_read(request: pytest.FixtureRequest, tmp_path: Path, chat_server: ChatServer,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from mmtasks.view.records import load_view_run
    from mmtasks.view.site import build_view
    from tests.view.test_viewer import _page, _serve

    chat_server.reply = honest_matcher
    _run(tmp_path, chat_server, monkeypatch, "run", "--matcher", "openai:matcher-model")
    site = tmp_path / "view"
    build_view([load_view_run(tmp_path / "run")], site)
    # the browser starts after the run: playwright's event loop would stand in the way of the
    # run's own (the API matcher is scheduled barrier-free, on asyncio)
    browser = request.getfixturevalue("browser")
    for url in _serve(site):
        page, problems = _page(browser, f"{url}#t=0&d=1")          # val_Counting_2: read by the matcher
        page.wait_for_selector("section.matcher")
        assert page.locator("dd.read-by").text_content() == "matcher"
        assert page.locator("section.matcher .matcher-read").text_content() == "read: B"
        assert page.locator("section.matcher pre").text_content() == "(B)"
        page.goto(f"{url}#t=0&d=0")                                  # val_Counting_1: the rule's
        page.wait_for_selector("dd.read-by")
        assert page.locator("dd.read-by").text_content() == "rule" and page.locator("section.matcher").count() == 0
        assert not problems, problems


# --- a scoring variant that asks the matcher (variants[].matcher) ----------------------------------

def _variant_task(tmp_path: Path, variant: str, matcher: str) -> Path:
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "peer.yaml").write_text(
        "task: peer\ndataset: {local: {dir: g, file: g.jsonl}, images_field: null}\n"
        "prompt: {user: '{{ doc.q }}'}\ntarget: '{{ doc.answer }}'\n"
        f"answer:\n  parser: text\n{matcher}"
        "metrics: [{name: acc, function: exact_match}]\n"
        f"variants:\n  - {variant}\n", encoding="utf-8")
    (tmp_path / "g").mkdir(exist_ok=True)
    (tmp_path / "g" / "g.jsonl").write_text('{"id": "g1", "q": "?", "answer": "D"}\n{"id": "g2", "q": "?", "answer": "B"}\n'
                                            '{"id": "g3", "q": "?", "answer": "A"}\n')
    (tmp_path / "r.jsonl").write_text("".join(json.dumps({"task": "peer", "doc_id": d, "responses": [r]}) + "\n"
                                              for d, r in (("g1", "the fourth"), ("g2", "B"), ("g3", "no idea"))))
    return tasks


MATCHER = "  matcher: {prompt: 'Which option? {{ prediction }}', question: '{{ doc.q }}', labels: '[\"A\", \"B\", \"C\", \"D\"]'}\n"
VARIANT = "{name: peer, parser: choice, parser_args: {letters: [A, B, C, D]}, matcher: true}"


def test_a_variant_asks_the_matcher_about_what_its_own_parser_reads_nothing_in(
        tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The task's own parser (text) reads no options, so ``answer.matcher.labels`` names them; the
    variant's choice parser reads "B" and nothing in the two others, which go to the matcher: "D"
    (right) and "Z" (unread: wrong). The task's own rule never asks."""
    tasks = _variant_task(tmp_path, VARIANT, MATCHER)
    chat_server.reply = lambda body: "D" if "the fourth" in last_user_text(body) else "Z"
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    base = ["--tasks", "peer", "--include-path", str(tasks), "--data-dir", str(tmp_path), "--model",
            f"replay:{tmp_path / 'r.jsonl'}", "--no-progress", "--allow-failures"]
    assert main([*base, "--matcher", "openai:m", "--output-path", str(tmp_path / "with")]) == 0
    results = json.loads((tmp_path / "with" / "results.json").read_text())
    assert results["variants"]["peer"]["peer"]["metrics"]["acc"] == pytest.approx(200 / 3)
    assert results["results"]["peer"]["acc"] == pytest.approx(100 / 3)  # the text rule: "B" only
    samples = [json.loads(line) for line in (tmp_path / "with" / "samples" / "peer.jsonl").read_text().splitlines()]
    assert [s["extra"]["variants"]["peer"]["read_by"] for s in samples] == ["matcher", "rule", None]
    assert [s["read_by"] for s in samples] == ["rule", "rule", "rule"]
    asked = [last_user_text(b) for b in chat_server.bodies if "Which option?" in last_user_text(b)]
    assert asked == ["Which option? the fourth", "Which option? no idea"]
    assert results["matcher"]["peer"]["asked"] == 2
    # without --matcher: nothing asked, the variant's unread replies are wrong
    assert main([*base, "--output-path", str(tmp_path / "without")]) == 0
    results = json.loads((tmp_path / "without" / "results.json").read_text())
    assert results["variants"]["peer"]["peer"]["metrics"]["acc"] == pytest.approx(100 / 3)
    assert len([b for b in chat_server.bodies if "Which option?" in last_user_text(b)]) == 2


def test_a_variant_that_asks_the_matcher_needs_one(tmp_path: Path) -> None:
    tasks = _variant_task(tmp_path, VARIANT, "")
    with pytest.raises(ConfigError) as err:
        Task(TaskConfig.model_validate(read_yaml(tasks / "peer.yaml")), tasks / "peer.yaml")
    assert err.value.field == "variants[0].matcher" and "has none" in err.value.message
    # a task parser of no options is refused a matcher unless the matcher names its labels
    with pytest.raises(ConfigError, match="reads no options"):
        _load(tmp_path, "{parser: text, matcher: {prompt: 'p'}}")
    assert _load(tmp_path, "{parser: text, matcher: {prompt: 'p', labels: '[\"A\"]'}}").parser.name == "text"
