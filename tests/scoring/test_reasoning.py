"""A thinking model's reasoning, split from its answer before any parser, metric or judge reads
the reply (mmtasks/core/reasoning.py), and every reply's finish reason.

Hand-written replies in each form: ``<think>`` tags, the ``reasoning_content`` field of an
OpenAI-compatible reply (the loopback server), a reply that starts inside a block whose opening
tag the chat template wrote, a block that never closed (the ``truncated`` failure kind), and
replies that hit the token limit (``finish_reason: length``). Checked: the parsed answer (MMMU's
rule), the judge's input, the counts in results.json and the results table, the cache, the
viewer's display, and the first-failures watch.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from mmtasks.cli import main
from mmtasks.core.reasoning import ReasoningFormat, opens_reasoning, split_reply, split_text
from mmtasks.core.request import Reply
from mmtasks.errors import ConfigError
from mmtasks.models.base import ModelSpec, parse_model_spec
from mmtasks.report import results_table_lines
from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text
from tests.leaderboard.test_leaderboard import browser  # noqa: F401  (the fixture: system Chromium through playwright)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
DEFAULT = ReasoningFormat()


# --- the split, by hand ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "answer", "reasoning"), [
    ("<think>Option A looks right, but ... </think> The answer is (C)", "The answer is (C)", "Option A looks right, but ..."),
    ("  <think>\nstep 1\n</think>\n\nB", "B", "step 1"),
    # the chat template wrote <think>: the reply starts inside the block
    ("Option (A) looks right... </think>The answer is (C)", "The answer is (C)", "Option (A) looks right..."),
    # two blocks: both are reasoning, the text around them the answer
    ("<think>a</think>Yes<think>b</think>, sure", "Yes, sure", "a\n\nb"),
    ("no reasoning at all ", "no reasoning at all ", None),  # untouched, spaces included
])
def test_split_text(text: str, answer: str, reasoning: str | None) -> None:
    cut = split_text(text, DEFAULT)
    assert (cut.answer, cut.reasoning, cut.unclosed) == (answer, reasoning, False)


def test_never_closed_and_empty_answers_are_truncated_failures() -> None:
    never = split_reply(Reply(text="<think>(A) or (C)... let me check the", finish_reason="length"), DEFAULT, 64)
    assert never.text is None and not never.ok
    assert never.error == "truncated: the reasoning never closed (no </think>); the reply hit the token limit (max_new_tokens=64)"
    assert never.reasoning == "(A) or (C)... let me check the"  # kept for the samples
    empty = split_reply(Reply(text="<think>done</think>\n", finish_reason="stop"), DEFAULT)
    assert empty.error == "truncated: the answer is empty after the reasoning" and empty.reasoning == "done"
    # a server that split it already: content "" beside its reasoning field
    field = split_reply(Reply(text="", reasoning="I think (B)", finish_reason="stop"), DEFAULT)
    assert field.error == "truncated: the answer is empty after the reasoning"
    at_limit = split_reply(Reply(text="", finish_reason="length"), DEFAULT, 8)
    assert at_limit.error == "truncated: the reply is empty at the token limit (max_new_tokens=8)"
    # an answer cut at the limit without reasoning is the model's text: scored (and counted as length)
    cut = split_reply(Reply(text="The sky is", finish_reason="length"), DEFAULT, 3)
    assert cut.ok and cut.text == "The sky is" and cut.reasoning is None
    # a prompt that opened the block (hf, vllm mark it), and a reply that never closes it
    opened = split_reply(Reply(text="Hmm, (A)?", starts_in_reasoning=True), DEFAULT)
    assert opened.error == "truncated: the reasoning never closed (no </think>)" and opened.reasoning == "Hmm, (A)?"
    # split once: a delivered reply passes through again unchanged
    done = split_reply(Reply(text="<think>x</think>B"), DEFAULT)
    assert split_reply(done, DEFAULT) is done and (done.text, done.reasoning) == ("B", "x")


def test_reasoning_settings_per_model_and_preset() -> None:
    spec = parse_model_spec("openai:m", {"reasoning_tags": ["<seed:think>", "</seed:think>"], "timeout": 5})
    assert spec.args == {"timeout": 5}  # never passed to the backend
    assert spec.reasoning == ReasoningFormat(tags=("<seed:think>", "</seed:think>"))
    cut = split_reply(Reply(text="<seed:think>r</seed:think>A <think>kept</think>"), spec.reasoning)
    assert (cut.text, cut.reasoning) == ("A <think>kept</think>", "r")
    off = parse_model_spec("openai:m", {"reasoning_tags": "none"})
    assert split_reply(Reply(text="<think>x</think>B"), off.reasoning).text == "<think>x</think>B"
    server_opens = ModelSpec(backend="openai", name="m", args={"reasoning_starts_open": True})
    assert split_reply(Reply(text="(A) hmm"), server_opens.reasoning).error.startswith("truncated: ")
    # ...unless the server split the reply itself (a reasoning field): its content is the answer
    served = split_reply(Reply(text="(B)", reasoning="hmm"), server_opens.reasoning)
    assert (served.text, served.reasoning) == ("(B)", "hmm")
    with pytest.raises(ConfigError, match="reasoning_tags / reasoning_starts_open: expected two non-empty tags"):
        parse_model_spec("openai:m", {"reasoning_tags": ["<think>"]})
    # the preset's, under --model-args
    from mmtasks.models.presets import Preset

    preset = Preset(name="thinker", weights="org/thinker", reasoning={"tags": ["<r>", "</r>"], "starts_open": True})
    assert preset.to_spec({}).reasoning == ReasoningFormat(tags=("<r>", "</r>"), starts_open=True)
    assert preset.to_spec({"reasoning_starts_open": False}).reasoning == ReasoningFormat(tags=("<r>", "</r>"))


def test_a_prompt_that_opens_a_block() -> None:
    assert opens_reasoning("<|im_start|>assistant\n<think>\n", DEFAULT)
    assert not opens_reasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n", DEFAULT)  # thinking switched off
    assert not opens_reasoning("<|im_start|>assistant\n", DEFAULT)


# --- end to end: MMMU's rule on replies with reasoning, through the openai backend ------------

#: the last user text's marker -> the reply (its parts, as the loopback server sends them)
MMMU_REPLIES: dict[str, dict[str, Any]] = {
    # tags in the content; the reasoning names (A) and (C), the answer (B) (gold B)
    "ACCOUNTING": {"content": "<think>It could be (A) or (C).</think> The value is 58, so (B)"},
    # the server's reasoning field (gold B)
    "opening hours": {"content": "(B)", "reasoning_content": "Is it (A)? No: the first opens at 9, so (B).",
                      "reasoning_tokens": 14},
    # starts inside a block the template opened; without the split MMMU's rule reads (A) or (D) (gold C)
    "quarter": {"content": "Option (A) looks right, but the chart peaks later (D)?</think> The sales were highest in Q3 of the year"},
    # never closed, cut at the limit: truncated (MMMU's random fallback must not guess it)
    "FINANCE": {"content": "<think>(A) or (C)... let me check the card", "finish_reason": "length"},
    # an answer cut at the limit: scored (gold star), counted as length
    "Name the shape": {"content": "star", "finish_reason": "length"},
    # reasoning and no answer after it: truncated
    "MARKETING": {"content": "", "reasoning_content": "The card says 98, that is (B)."},
}
MMMU_TASKS = ["mmmu_val_accounting", "mmmu_val_economics", "mmmu_val_finance", "mmmu_val_manage", "mmmu_val_marketing"]


def mmmu_reply(body: dict) -> dict[str, Any]:
    text = last_user_text(body)
    return next(parts for marker, parts in MMMU_REPLIES.items() if marker in text)


def run_cli(args: list[str], server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    return main([*args, "--no-progress"])


def read(out: Path) -> tuple[dict, dict[str, dict[str, dict]]]:
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    samples = {path.stem: {s["doc_id"]: s for s in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
               for path in (out / "samples").glob("*.jsonl")}
    return results, samples


@pytest.fixture(scope="module")
def mmmu_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict, list[str], ChatServer]:
    root = tmp_path_factory.mktemp("reasoning-mmmu")
    with ChatServer(reply=mmmu_reply, models=("test-model",)) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("MMTASKS_CACHE_DIR", str(root / "cache"))
        args = ["--tasks", ",".join(MMMU_TASKS), "--data-dir", str(SAMPLE), "--model", "openai:test-model",
                "--output-path", str(root / "out"), "--allow-failures"]
        code = run_cli(args, server, mp)
        assert code == 0
        results, samples = read(root / "out")
        calls = server.calls
        # the same run again from the cache: nothing sent, both parts served again
        code = run_cli([*args[:-2], str(root / "again"), "--allow-failures"], server, mp)
        assert code == 0 and server.calls == calls
        lines = results_table_lines(results)
        yield root / "out", results, samples, lines, server


def test_mmmu_reads_the_answer_never_the_reasoning(mmmu_run) -> None:
    out, results, samples, _, _ = mmmu_run
    assert samples["mmmu_val_accounting"]["validation_Accounting_1"]["parsed"] == "B"
    assert samples["mmmu_val_economics"]["validation_Economics_1"]["parsed"] == "B"
    economics_2 = samples["mmmu_val_economics"]["validation_Economics_2"]
    assert economics_2["parsed"] == "C"  # the option text Q3 of the answer; not (A) or (D) of the reasoning
    assert economics_2["responses"] == ["The sales were highest in Q3 of the year"]
    assert economics_2["reasoning"] == ["Option (A) looks right, but the chart peaks later (D)?"]
    assert samples["mmmu_val_economics"]["validation_Economics_1"]["reasoning"] == ["Is it (A)? No: the first opens at 9, so (B)."]
    assert results["results"]["mmmu_val_accounting"]["acc"] == 100.0
    assert results["results"]["mmmu_val_economics"]["acc"] == 100.0
    assert results["results"]["mmmu_val_manage"]["acc"] == 100.0  # "star", cut at the limit but an answer


def test_truncated_replies_are_counted_never_scored(mmmu_run) -> None:
    _, results, samples, _, _ = mmmu_run
    finance = samples["mmmu_val_finance"]["validation_Finance_1"]
    assert finance["responses"] == [None] and finance["parsed"] is None and finance["guessed"] == 0
    assert finance["failures"] == ["truncated: the reasoning never closed (no </think>); the reply hit the token limit "
                                   "(max_new_tokens=128)"]
    assert finance["reasoning"] == ["(A) or (C)... let me check the card"] and finance["finish_reasons"] == ["length"]
    marketing = samples["mmmu_val_marketing"]["validation_Marketing_1"]
    assert marketing["failures"] == ["truncated: the answer is empty after the reasoning"]
    for task in ("mmmu_val_finance", "mmmu_val_marketing"):
        assert results["problems"][task]["truncated"] == 1 and results["problems"][task]["request_failures"] == 0
        assert results["coverage"][task] == {"unit": "documents", "scored": 0, "total": 1, "percent": 0.0,
                                             "unscored": {"truncated": 1}}
        assert results["results"][task]["acc"] is None and results["results"][task]["acc_all"] == 0.0


def test_finish_reasons_and_reasoning_lengths_in_results_and_table(mmmu_run) -> None:
    _, results, _, lines, _ = mmmu_run
    # the tokens the loopback server reported (tests/chat_wire.py: whitespace-separated words)
    assert results["replies"]["mmmu_val_finance"]["tokens"] == {"model": {"completion": 8, "prompt": 30, "replies": 1}}
    replies = {task: {k: v for k, v in row.items() if k != "tokens"} for task, row in results["replies"].items()}
    # "(A) or (C)... let me check the card": 35 characters
    assert replies["mmmu_val_finance"] == {"n": 1, "finish_reasons": {"length": 1},
                                           "reasoning": {"n": 1, "unit": "characters", "mean": 35.0, "total": 35}}
    assert replies["mmmu_val_manage"] == {"n": 1, "finish_reasons": {"length": 1}}
    # Economics: 2 replies, one with reasoning_tokens from the server (14 tokens), one from tags (no count):
    # not every reasoning has a token count, so characters: 44 ("Is it (A)? No: ...") + 54 ("Option (A) ...")
    assert replies["mmmu_val_economics"] == {"n": 2, "finish_reasons": {"stop": 2},
                                             "reasoning": {"n": 2, "unit": "characters", "mean": 49.0, "total": 98}}
    # "It could be (A) or (C).": 23 characters
    assert replies["mmmu_val_accounting"]["reasoning"] == {"n": 1, "unit": "characters", "mean": 23.0, "total": 23}
    table = "\n".join(lines)
    assert re.search(r"^mmmu_val_finance\b", table, re.M)
    assert re.search(r"^  ! replies at the token limit +100\.0% +1/1$", table, re.M)
    assert re.search(r"^  ! truncated +1$", table, re.M)
    assert re.search(r"^  reasoning, mean characters +49 +2/2$", table, re.M)
    assert "! replies at the token limit: more room with --gen-kwargs max_new_tokens=N" in lines


def test_the_cache_keeps_both_parts(mmmu_run) -> None:
    out, _, samples, _, _ = mmmu_run
    again_results, again = read(out.parent / "again")
    assert again_results["run_stats"]["cached"] == {"model": 6} and again_results["run_stats"]["sent"] == {}
    for task, docs in samples.items():
        for doc_id, sample in docs.items():
            got = again[task][doc_id]
            assert (got["responses"], got["reasoning"], got["finish_reasons"], got["failures"]) == \
                   (sample["responses"], sample["reasoning"], sample["finish_reasons"], sample["failures"])
    first = json.loads((out / "results.json").read_text(encoding="utf-8"))
    # the same summary, token counts included (each cached reply's as reported when received)
    assert again_results["replies"] == first["replies"]
    assert {k: v for k, v in again_results["replies"]["mmmu_val_economics"].items() if k != "tokens"} == \
           {"n": 2, "finish_reasons": {"stop": 2}, "reasoning": {"n": 2, "unit": "characters", "mean": 49.0, "total": 98}}


def test_replay_gives_the_recorded_reasoning_again(mmmu_run, tmp_path: Path, capsys) -> None:
    out, results, samples, _, _ = mmmu_run
    assert main(["--tasks", ",".join(MMMU_TASKS), "--data-dir", str(SAMPLE), "--model", f"replay:{out}",
                 "--output-path", str(tmp_path / "replayed"), "--no-cache", "--no-progress", "--allow-failures"]) == 0
    replayed, again = read(tmp_path / "replayed")
    assert again["mmmu_val_economics"]["validation_Economics_2"]["reasoning"] == samples["mmmu_val_economics"]["validation_Economics_2"]["reasoning"]
    # a recorded reply without an answer is replayed as its reasoning and finish reason: truncated again
    finance = again["mmmu_val_finance"]["validation_Finance_1"]
    assert finance["failures"] == ["truncated: the answer is empty after the reasoning; the reply hit the token limit "
                                   "(max_new_tokens=128)"]
    assert finance["reasoning"] == ["(A) or (C)... let me check the card"] and finance["finish_reasons"] == ["length"]
    # the same replies, finish reasons, reasoning and token counts (as the first run recorded them: a
    # rescoring run's samples equal the run it replays, tests/scoring/test_rescoring.py)
    assert replayed["problems"] == results["problems"] and replayed["replies"] == results["replies"]


# --- the judge is sent the answer only, unless its prompt asks for the reasoning -----------------

JUDGED = """\
task: judged_reasoning
dataset:
  local: {dir: qa, file: qa.jsonl}
  images_field: null
prompt: {user: "{{ doc.question }}"}
target: "{{ doc.answer }}"
answer: {parser: text}
judge:
  parser: json_object
  parser_args: {required: [score]}
  metrics: [score]
  prompt: "ANSWER [{{ answer }}]"
metrics:
  - {name: score, primary: true}
"""


@pytest.mark.parametrize("prompt", ["ANSWER [{{ answer }}]", "ANSWER [{{ answer }}] REASONING [{{ reasoning }}]"])
def test_the_judge_sees_the_answer_and_the_reasoning_only_when_asked(
        tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch, prompt: str) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "judged.yaml").write_text(JUDGED.replace("ANSWER [{{ answer }}]", prompt), encoding="utf-8")
    (tmp_path / "data" / "qa").mkdir(parents=True)
    rows = [{"id": "tags", "question": "Sky?", "answer": "blue"}, {"id": "field", "question": "Grass?", "answer": "green"}]
    (tmp_path / "data" / "qa" / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    def reply(body: dict) -> Any:
        text = last_user_text(body)
        if body["model"] == "judge-model":
            return '{"score": 1}'
        if text == "Sky?":
            return "<think>Rayleigh scattering, so SECRET-THOUGHT-1</think>blue"
        return {"content": "green", "reasoning_content": "chlorophyll, SECRET-THOUGHT-2"}

    chat_server.models, chat_server.reply = ("test-model", "judge-model"), reply
    code = run_cli(["--tasks", "judged_reasoning", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data"),
                    "--model", "openai:test-model", "--judge", "openai:judge-model", "--output-path", str(tmp_path / "out"),
                    "--no-cache"], chat_server, monkeypatch)
    assert code == 0
    judged = sorted(last_user_text(c.body) for c in chat_server.log if c.body and c.body["model"] == "judge-model")
    if "reasoning" in prompt:
        assert judged == ["ANSWER [blue] REASONING [Rayleigh scattering, so SECRET-THOUGHT-1]",
                          "ANSWER [green] REASONING [chlorophyll, SECRET-THOUGHT-2]"]
    else:
        assert judged == ["ANSWER [blue]", "ANSWER [green]"]
    _, samples = read(tmp_path / "out")
    assert samples["judged_reasoning"]["tags"]["parsed"] == "blue"
    assert samples["judged_reasoning"]["field"]["reasoning"] == ["chlorophyll, SECRET-THOUGHT-2"]


# --- the first-failures watch: the first replies all cut at the limit --------------------------


def test_first_replies_all_cut_in_their_reasoning_stop_the_run(tmp_path: Path, chat_server: ChatServer,
                                                                monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    chat_server.reply = lambda body: {"content": "<think>Let me think step by step about", "finish_reason": "length"}
    code = run_cli(["--tasks", "mmmu_val", "--data-dir", str(SAMPLE), "--model", "openai:test-model",
                    "--model-args", "concurrency=2", "--output-path", str(tmp_path / "out"), "--no-cache"],
                   chat_server, monkeypatch)
    err = capsys.readouterr().err
    assert code == 2
    assert ("the first 5 replies of openai:test-model all hit the token limit before an answer, so the run stopped "
            "instead of sending the rest: truncated: the reply hit the token limit (max_new_tokens=128)") in err
    assert "--gen-kwargs max_new_tokens=N with N above 128" in err
    assert 5 <= chat_server.calls <= 10  # a handful (the fifth, and the few in flight), not MMMU's 33 questions


# --- the viewer: the reasoning folded under the answer, truncated in the failure filter -----------


def test_the_viewer_folds_the_reasoning_under_the_answer(browser, mmmu_run, tmp_path: Path) -> None:  # noqa: F811
    from tests.view.test_viewer import _page, _serve, _task_index

    out, _, samples, _, _ = mmmu_run
    site = tmp_path / "view"
    assert main(["view", str(out), "--out", str(site)]) == 0
    for url in _serve(site):
        economics = _task_index(site, "mmmu_val_economics")
        doc = next(i for i, d in enumerate(samples["mmmu_val_economics"]) if d == "validation_Economics_2")
        page, problems = _page(browser, f"{url}#t={economics}&d={doc}")
        reply = page.locator(".doc-run .msg.role-assistant").first
        reply.wait_for()
        assert reply.locator(".answer-text").text_content() == "The sales were highest in Q3 of the year"
        folded = reply.locator("details.reasoning")
        assert folded.get_attribute("open") is None  # folded until clicked
        assert folded.locator("summary").text_content() == "reasoning (54 characters)"
        folded.locator("summary").click()
        assert folded.locator("pre").text_content() == "Option (A) looks right, but the chart peaks later (D)?"
        assert not problems, problems
        # the truncated reply: no answer, its reasoning, its finish reason; the failure filter finds it
        page, problems = _page(browser, f"{url}#t={_task_index(site, 'mmmu_val_finance')}&d=0")
        reply = page.locator(".doc-run .msg.role-assistant").first
        reply.wait_for()
        assert reply.locator(".text.failed").text_content() == "(no answer: the reply was truncated)"
        assert reply.locator(".finish").text_content() == " \u00b7 hit the token limit"
        assert reply.locator("details.reasoning pre").text_content() == "(A) or (C)... let me check the card"
        assert page.locator(".problems-list .badge.kind-truncated").text_content() == "truncated"
        page.locator("#filter-kind").select_option(value="truncated")
        assert page.locator("#docs tbody tr").count() == 1
        page.locator("#filter-kind").select_option(value="request_failure")
        assert page.locator("#docs tbody tr").count() == 0
        assert not problems, problems


def test_the_watch_on_replies_at_the_token_limit(caplog: pytest.LogCaptureFixture) -> None:
    from mmtasks.core.request import GenerationConfig, Request
    from mmtasks.scheduling.first_failures import FirstFailures, FirstRequestsFailed

    req = Request(messages=(), generation=GenerationConfig(max_new_tokens=16), target="model")
    cut = split_reply(Reply(text="<think>step one, step", finish_reason="length"), DEFAULT, 16)
    empty = split_reply(Reply(text="<think>done</think>", finish_reason="length"), DEFAULT, 16)
    watch = FirstFailures(names={"model": "hf:thinker"})
    for reply in (cut, empty, cut, empty):  # never closed or empty after it: one cause at the limit
        watch(req, reply)
    with pytest.raises(FirstRequestsFailed) as stopped:
        watch(req, cut)
    assert stopped.value.field == "--gen-kwargs" and "max_new_tokens=N with N above 16" in str(stopped.value.hint)
    # answers cut at the limit are scored: the run goes on, one warning names the setting
    watch = FirstFailures(names={"model": "hf:talker"})
    with caplog.at_level("WARNING", logger="mmtasks"):
        for _ in range(8):
            watch(req, Reply(text="a long answer that", finish_reason="length", split=True))
    warnings = [r.getMessage() for r in caplog.records if "token limit" in r.getMessage()]
    assert warnings == ["the first 5 replies of hf:talker all hit the token limit (max_new_tokens=16): their answers "
                        "are cut; give the model room with --gen-kwargs max_new_tokens=N"]
    # one reply that ended by itself first: no warning
    caplog.clear()
    watch = FirstFailures(names={"model": "hf:talker"})
    with caplog.at_level("WARNING", logger="mmtasks"):
        watch(req, Reply(text="short", finish_reason="stop", split=True))
        for _ in range(8):
            watch(req, Reply(text="a long answer that", finish_reason="length", split=True))
    assert not [r for r in caplog.records if "token limit" in r.getMessage()]


def test_replay_then_probe_keeps_each_probes_reasoning(tmp_path: Path, chat_server: ChatServer,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """MMRC's probes: each answer without its reasoning, the reasoning beside it in the question's
    record (the viewer shows it under the probe's reply) and in the sample's ``reasoning``."""
    chat_server.reply = lambda body: {"content": "Paris", "reasoning_content": "recall: " + last_user_text(body)[:20]}
    code = run_cli(["--tasks", "mmrc", "--data-dir", str(SAMPLE), "--model", "openai:test-model", "--limit", "1",
                    "--predict-only", "--output-path", str(tmp_path / "out"), "--no-cache", "--allow-failures"],
                   chat_server, monkeypatch)
    assert code == 0  # "Paris" is no answer to some probes: unparsed, accepted here
    _, samples = read(tmp_path / "out")
    (sample,) = samples["mmrc"].values()
    questions = sample["extra"]["questions"]
    assert questions and all(q["response"] == "Paris" and q["reasoning"].startswith("recall: ") for q in questions)
    assert len(sample["reasoning"]) == len(sample["responses"]) and all(r.startswith("recall: ") for r in sample["reasoning"])
