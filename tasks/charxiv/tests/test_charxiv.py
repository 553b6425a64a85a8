"""CharXiv from its folder, against the authors' code (tests/reference/charxiv_src, verbatim):

- the prompt strings are constants.py's;
- the model's questions are build_descriptive_quries' and build_reasoning_queries';
- the grader prompts are build_descriptive_grading_queries' (a batch of one) and
  build_reasoning_grading_queries', on tricky responses;
- the grader's replies are read as get_descriptive_result_gpt and get_reasoning_result_gpt read them
  (run with a scripted client);
- a run on the sample with recorded replies and a scripted judge gives the hand-computed figures, and
  get_stats.py run on the same scores gives the same;
- the random baseline, the Hub layout."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text
from tests.folder_copies import FAST, JUDGE, PACKAGE_TASKS, SAMPLE, read_jsonl, results_of, run_mmtasks, samples_of
from tests.folder_runs import package_unchanged

REFERENCE = Path(__file__).resolve().parent / "reference" / "charxiv_src"
PLUGIN = PACKAGE_TASKS / "charxiv" / "charxiv.py"
AUTHORS_MODULES = ("constants", "score_utils", "descriptive_utils", "reasoning_utils", "get_stats")


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("charxiv"):
        yield


@pytest.fixture(scope="module")
def authors() -> Iterator[types.SimpleNamespace]:
    """The authors' src/ modules, imported from the verbatim copies (their flat imports need the
    folder on sys.path); removed from sys.modules afterwards."""
    saved = {name: sys.modules.pop(name) for name in AUTHORS_MODULES if name in sys.modules}
    sys.path.insert(0, str(REFERENCE))
    try:
        yield types.SimpleNamespace(**{name: importlib.import_module(name) for name in AUTHORS_MODULES})
    finally:
        sys.path.remove(str(REFERENCE))
        for name in AUTHORS_MODULES:
            sys.modules.pop(name, None)
        sys.modules.update(saved)


@pytest.fixture(scope="module")
def ours() -> types.SimpleNamespace:
    """The plugin module as the tasks load it."""
    from mmtasks import registry

    path = registry.load_plugin_file(PLUGIN, roots=[PLUGIN.parent])
    protocol = registry.protocols.get("charxiv", plugins=[path])
    return types.SimpleNamespace(**protocol.run.__globals__)


def records() -> list[dict]:
    return read_jsonl(SAMPLE / "charxiv" / "charxiv.jsonl")


def authors_data(rows: list[dict]) -> tuple[dict, dict, dict]:
    """The sample's rows in the authors' data/*_val.json layout: descriptive, reasoning, image metadata
    (figure id = the row's position)."""
    dmeta, rmeta, imeta = {}, {}, {}
    for k, r in enumerate(rows):
        loc = r["subplot_loc"] if r["subplot_loc"] is not None else [r["subplot_row"], r["subplot_col"]]
        dmeta[str(k)] = {"figure_id": k, "num_subplots": r["num_subplots"], "subplot_loc": loc,
                         "qids": [r[f"descriptive_q{i}"] for i in range(1, 5)],
                         "answers": [r[f"descriptive_a{i}"] for i in range(1, 5)]}
        rmeta[str(k)] = {"figure_id": k, "query": r["reasoning_q"], "answer": r["reasoning_a"],
                         "inst_category": r["reasoning_a_type"], "qa_source": r["reasoning_q_source"]}
        imeta[str(k)] = {"category": r["category"], "year": r["year"], "figure_path": r["figure_path"]}
    return dmeta, rmeta, imeta


# --- prompts -----------------------------------------------------------------------------------------

def test_the_prompt_strings_are_the_authors(authors, ours) -> None:
    c = authors.constants
    prompts = ours.PROMPTS
    assert prompts["descriptive_resp_inst"] == {str(k): v for k, v in c.DESCRIPTIVE_RESP_INST.items()}
    assert prompts["descriptive_grading_prefix"] == c.DESCRIPTIVE_GRADING_PREFIX
    assert prompts["descriptive_grading_qmap"] == {str(k): v for k, v in c.DESCRIPTIVE_GRADING_QMAP.items()}
    assert prompts["descriptive_grading_icl"] == c.DESCRIPTIVE_GRADING_ICL
    assert prompts["reasoning_grading_prefix"] == c.REASONING_GRADING_PREFIX
    assert prompts["reasoning_grading_inst"] == {str(k): v for k, v in c.REASONING_GRADING_INST.items()}
    assert prompts["reasoning_resp_inst"] == {str(k): v for k, v in c.REASONING_RESP_INST.items()}


def test_the_model_questions_are_the_authors(authors, ours) -> None:
    rows = records()
    dmeta, rmeta, _ = authors_data(rows)
    theirs_d = authors.descriptive_utils.build_descriptive_quries(dmeta, "images")
    theirs_r = authors.reasoning_utils.build_reasoning_queries(rmeta, "images")
    for k, row in enumerate(rows):
        assert [q.text for q in ours.questions(row, "descriptive")] == [theirs_d[f"{k}_{i}"]["question"] for i in range(4)]
        (reasoning,) = ours.questions(row, "reasoning")
        assert reasoning.text == theirs_r[k]["question"]
    # every template with each kind of subplot place, and the number instructions
    for qid in range(1, 20):
        for loc in ([0, 0], [2, 3], "the left subplot"):
            data = {"0": {"figure_id": 0, "subplot_loc": loc, "qids": [qid]}}
            assert ours.descriptive_question(qid, loc) == authors.descriptive_utils.build_descriptive_quries(data, "i")["0_0"]["question"]
    for answer in ("12", "0.25", "3.100", "-7", "1e3"):
        assert ours.number_instruction(answer) == authors.reasoning_utils.get_number_instruction(answer)


#: tricky responses for the grader prompts: braces (str.format), the placeholders, newlines, empty, unicode
TRICKY_RESPONSES = ["", "{}", "{0} and {1}", "The answer is <|response|>", "<|ground_truth|>", "line 1\nline 2\n\n",
                    "α, β, γ_v^t", "  spaced  ", "T2:\nResponse 2: 5\nGround Truth 2: 5"]


@pytest.mark.parametrize("response", TRICKY_RESPONSES)
def test_the_descriptive_grader_prompt_is_the_authors(authors, ours, response: str) -> None:
    for qid in range(1, 20):
        answer = "Not Applicable" if qid % 3 else "{x} <|OVERARCHING_QUESTION|>"
        groups = {q: [] for q in range(1, 20)}
        groups[qid].append((f"7_{qid % 4}", response, answer))
        (theirs,) = authors.descriptive_utils.build_descriptive_grading_queries(groups)
        assert ours.descriptive_grading_query(qid, response, answer) == theirs["grading_query"]


@pytest.mark.parametrize("response", TRICKY_RESPONSES)
def test_the_reasoning_grader_prompt_is_the_authors(authors, ours, response: str) -> None:
    for kind in (1, 2, 3, 4):
        for question in ("Which curve is highest?", "Is <|ground_truth|> shown?", "Say <|response|> {0}"):
            record = {"reasoning_q": question, "reasoning_a": "0.25" if kind == 4 else "<|question|> red",
                      "reasoning_a_type": kind}
            data = {"0": {"figure_id": 3, "inst_category": kind, "answer": record["reasoning_a"]}}
            resp = {"3": {"raw_question": question, "response": response}}
            theirs = authors.reasoning_utils.build_reasoning_grading_queries(data, resp)["3"]["grading_query"]
            assert ours.reasoning_grading_query(record, response) == theirs


# --- the grader's replies ----------------------------------------------------------------------------

class ScriptedClient:
    """An OpenAI client stand-in answering every completion with ``text`` (what the authors' grading
    functions call)."""

    def __init__(self, text: str) -> None:
        message = types.SimpleNamespace(content=text)
        completion = types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])
        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=lambda **kwargs: completion))


DESCRIPTIVE_REPLIES = [
    '{"extract_answer_T1": "Year", "score_T1": 1}',
    '{"extract_answer_T1": "5", "score_T1": 0}',
    '{"extract_answer_T1": "5", "score_T1": 1.0}',
    '{"extract_answer_T1": "5", "score_T1": true}',
    '{"extract_answer_T1": "5", "score_T1": "1"}',   # a string: not in [0, 1]
    '{"extract_answer_T1": "5", "score_T1": 2}',
    '{"extract_answer_T1": "5", "score_T1": 0.5}',   # between 0 and 1: not in [0, 1] (a list, not a range)
    '{"extract_answer_T1": "5", "score_T1": NaN}',
    '{"score_T1": 1}',                               # no extract_answer_T1
    '{"extract_answer_T1": "5", "score_T2": 1}',
    '[{"extract_answer_T1": "5", "score_T1": 1}]',
    'The score is 1.',
    '',
]


@pytest.mark.parametrize("reply", DESCRIPTIVE_REPLIES)
def test_descriptive_verdicts_are_read_as_the_authors_read_them(authors, ours, reply: str, capsys) -> None:
    theirs = authors.descriptive_utils.get_descriptive_result_gpt(ScriptedClient(reply), "prompt", 1, max_retries=2)
    mine = ours.read_descriptive_verdict(reply)
    if theirs["score_T1"] == -1:  # their dummy output: every try failed
        assert mine is None
    else:
        assert mine == {"extracted_answer": theirs["extract_answer_T1"], "score": theirs["score_T1"]}


REASONING_REPLIES = [
    '{"extracted_answer": "red", "score": 1}',
    '{"extracted_answer": "0.3", "score": 0}',
    '{"extracted_answer": "12", "score": 2}',
    '{"extracted_answer": "12", "score": 0.5}',      # between 0 and 1: invalid, as 2 is
    '{"extracted_answer": "12", "score": "1"}',
    '{"extracted_answer": "12", "score": 1.0}',
    '{"extract_answer": "12", "score": 1}',          # the key the prefix names, not the one read
    '{"extracted_answer": "12"}',
    '["red", 1]',
    'not json',
]


@pytest.mark.parametrize("reply", REASONING_REPLIES)
def test_reasoning_verdicts_are_read_as_the_authors_read_them(authors, ours, reply: str, capsys) -> None:
    ext, scr = authors.reasoning_utils.get_reasoning_result_gpt(ScriptedClient(reply), "prompt", max_retries=2)
    mine = ours.read_reasoning_verdict(reply)
    if scr == -1 and ext == "Failed to parse response":
        assert mine is None
    else:
        assert mine is not None and mine["extracted_answer"] == ext
        # get_stats: a score that is not in [0, 1] is invalid and counts 0
        assert (mine["score"], mine["invalid"]) == ((scr, 0) if scr in [0, 1] else (0, 1))
        # lmms-eval averages the score as the grader wrote it
        assert mine["raw_score"] == (scr if isinstance(scr, (int, float)) else 0)


def test_a_fenced_json_reply_is_read_inside_the_fence(ours) -> None:
    assert ours.read_reasoning_verdict('```json\n{"extracted_answer": "red", "score": 1}\n```') == \
        {"extracted_answer": "red", "score": 1, "invalid": 0, "raw_score": 1}


# --- a run on the sample, replies recorded, a scripted judge --------------------------------------------

#: figure_path -> the model's replies (descriptive: one per question, in order; reasoning: one)
DESCRIPTIVE = {
    "images/0.jpg": ["Sales 2020", "5", "Not Applicable", "1 by 1"],   # golds Sales 2020, 0, Not Applicable, 1 by 1
    "images/1.jpg": ["year", "2", "CPI, GDP", "4"],                     # golds Year, 2, GDP, CPI, 4
    "images/2.jpg": ["1.5", "3", "increases then stabilizes", "9"],     # golds 1.5, Not Applicable, Increases then stabilizes, 9
}
REASONING = {"images/0.jpg": "The tallest bar is red.", "images/1.jpg": "0.3", "images/2.jpg": "12"}


def scripted_judge(prompt: str, asked: dict[str, int]) -> str:
    """Grades as a careful grader would on these replies: a descriptive response is right when it
    equals the ground truth without case; a reasoning response when it contains it. The first grading
    of the answer "9" is not JSON (asked again); the grading of the answer "12" scores 2 (invalid)."""
    asked[prompt] = asked.get(prompt, 0) + 1
    descriptive = re.search(r"T1:\nResponse 1: (.*)\nGround Truth 1: (.*)\n\n$", prompt, re.DOTALL)
    if descriptive:
        response, truth = descriptive.groups()
        if response == "9" and asked[prompt] == 1:
            return "Let me think about it."
        return json.dumps({"extract_answer_T1": response, "score_T1": int(response.lower() == truth.lower())})
    turn = prompt.split("### Your Turn ###")[1]
    truth = re.search(r"\* Ground Truth: (.*)\n", turn).group(1)
    response = re.search(r"\* Response: (.*)\n", turn).group(1)
    if response == "12":
        return json.dumps({"extracted_answer": response, "score": 2})
    return "```json\n" + json.dumps({"extracted_answer": response, "score": int(truth.lower() in response.lower())}) + "\n```"


def run_scripted(chat_server: ChatServer, tmp_path: Path) -> tuple[Path, dict[str, int]]:
    asked: dict[str, int] = {}
    chat_server.models = (JUDGE,)
    chat_server.reply = lambda body: scripted_judge(last_user_text(body), asked)
    predictions = tmp_path / "predictions.jsonl"
    lines = [{"task": "charxiv_descriptive", "doc_id": k, "responses": v} for k, v in DESCRIPTIVE.items()]
    lines += [{"task": "charxiv_reasoning", "doc_id": k, "responses": [v]} for k, v in REASONING.items()]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "charxiv", "--data-dir", str(SAMPLE), "--model", f"replay:{predictions}",
                        "--judge", f"openai:{JUDGE}", "--judge-args", FAST, "--output-path", str(out)],
                       tmp_path, base_url=chat_server.base_url)
    assert proc.returncode == 0, proc.stderr
    return out, asked


def test_scripted_run_gives_the_hand_computed_and_the_authors_stats(chat_server: ChatServer, tmp_path: Path,
                                                                    authors, capsys) -> None:
    out, asked = run_scripted(chat_server, tmp_path)
    results = results_of(out)
    d, r = results["results"]["charxiv_descriptive"], results["results"]["charxiv_reasoning"]
    # descriptive: right 1,0,1,1 | 1,1,0,1 | 1,0,1,1 -> 9 of 12
    assert d["overall"] == 75.0
    # IE: q1 1, q4 0, q2 1, q7 1 -> 75; PR: q11, q18, q16 all 1; Counting: q10 1, q19 1, q12 0; Enum: q13 0; Comp: q17 1
    assert (d["information_extraction"], d["pattern_recognition"], d["counting"], d["enumeration"],
            d["compositionality"]) == (75.0, 100.0, 66.67, 0.0, 100.0)
    # reasoning: red 1, 0.3 0, 12 scored 2 -> invalid, 0
    assert r["overall"] == 33.33
    assert (r["text_in_chart"], r["text_in_general"], r["number_in_chart"], r["number_in_general"]) == (100.0, 0.0, 0.0, 0.0)
    assert results["problems"]["charxiv_descriptive"].get("judge_failures", 0) == 0
    # the grading of "9" was asked twice, every other once
    assert sorted(asked.values()) == [1] * 14 + [2]

    # get_stats.py, verbatim, on the same scores
    rows = records()
    dmeta, rmeta, imeta = authors_data(rows)
    index = {row["figure_path"]: str(k) for k, row in enumerate(rows)}
    d_scores, r_scores = {}, {}
    for s in samples_of(out, "charxiv_descriptive"):
        for q in s["extra"]["questions"]:
            d_scores[f"{index[s['doc_id']]}_{q['index']}"] = {"score": q["score"]}
    for s in samples_of(out, "charxiv_reasoning"):
        (q,) = s["extra"]["questions"]
        r_scores[index[s["doc_id"]]] = {"score": 2 if q["invalid"] else q["score"]}
    stats = authors.get_stats
    theirs_d = stats.get_stats(stats.get_descriptive_scores(d_scores, dmeta, rmeta, imeta))
    theirs_r = stats.get_stats(stats.get_reasoning_scores(r_scores, dmeta, rmeta, imeta))
    assert theirs_d["Overall Score"] == d["overall"] and theirs_r["Overall Score"] == r["overall"]
    assert theirs_r["N_invalid"] == results["n-samples"]["charxiv_reasoning"]["invalid"] == 1
    assert theirs_d["N_invalid"] == results["n-samples"]["charxiv_descriptive"]["invalid"] == 0
    breakdowns = {task: results["breakdowns"][task] for task in ("charxiv_descriptive", "charxiv_reasoning")}
    for theirs, task, groups in ((theirs_d, "charxiv_descriptive", {"By Category": "category", "By Subject": "subject",
                                                                     "By Year": "year", "By Subplot": "subplots",
                                                                     "By Question": "question"}),
                                 (theirs_r, "charxiv_reasoning", {"By Answer Type": "category", "By Source": "source",
                                                                  "By Subject": "subject", "By Year": "year",
                                                                  "By Subplot": "subplots"})):
        for their_group, name in groups.items():
            mine = breakdowns[task][name]
            filled = {label: value for label, value in theirs[their_group].items() if label in mine}
            assert {label: row["overall"] for label, row in mine.items()} == filled
            # a group get_stats leaves empty (0) has no row here
            assert all(theirs[their_group][label] == 0 for label in theirs[their_group] if label not in mine)


def test_scripted_run_sends_the_authors_prompts(chat_server: ChatServer, tmp_path: Path, authors) -> None:
    out, _ = run_scripted(chat_server, tmp_path)
    judged = [last_user_text(b) for b in chat_server.bodies]
    rows = records()
    dmeta, rmeta, _ = authors_data(rows)
    expected = []
    for k, row in enumerate(rows):
        for i in range(4):
            groups = {q: [] for q in range(1, 20)}
            groups[row[f"descriptive_q{i + 1}"]].append((f"{k}_{i}", DESCRIPTIVE[row["figure_path"]][i],
                                                         row[f"descriptive_a{i + 1}"]))
            (query,) = authors.descriptive_utils.build_descriptive_grading_queries(groups)
            expected.append(query["grading_query"])
        resp = {str(k): {"raw_question": row["reasoning_q"], "response": REASONING[row["figure_path"]]}}
        expected.append(authors.reasoning_utils.build_reasoning_grading_queries({"0": rmeta[str(k)]}, resp)[str(k)]["grading_query"])
    assert sorted(set(judged)) == sorted(expected)
    assert all(b["temperature"] == 0 and b["seed"] == 42 and b["max_tokens"] == 256 for b in chat_server.bodies)
    # the model saw each question's text, then the chart
    theirs = authors.descriptive_utils.build_descriptive_quries(dmeta, "images")
    by_doc = {s["doc_id"]: s for s in samples_of(out, "charxiv_descriptive")}
    for k, row in enumerate(rows):
        prompts = by_doc[row["figure_path"]]["prompt"]
        assert [[p["type"] for p in m["content"]] for m in prompts] == [["text", "image"]] * 4
        assert [m["content"][0]["text"] for m in prompts] == [theirs[f"{k}_{i}"]["question"] for i in range(4)]


# --- random baseline, the Hub layout ----------------------------------------------------------------------

def test_random_model_and_random_judge(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "charxiv", "--data-dir", str(SAMPLE), "--model", "random", "--judge", "random",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)["results"]
    scores = [q["score"] for s in samples_of(out, "charxiv_descriptive") for q in s["extra"]["questions"]]
    assert len(scores) == 12 and set(scores) <= {0, 1}
    assert results["charxiv_descriptive"]["overall"] == round(100 * sum(scores) / 12, 2)
    assert results["charxiv_reasoning"]["overall"] is not None
    # each grading names the question it graded, which the run viewer shows it under (a grading
    # without one was shown nowhere: the viewer attaches a question's judge by that index)
    for task in ("charxiv_descriptive", "charxiv_reasoning"):
        for s in samples_of(out, task):
            graded = [q for q in s["extra"]["questions"] if q["status"] in ("judged", "judge_failure")]
            assert [j.get("question") for j in s["judge"]] == [q["index"] for q in graded] != []
            assert all(j["fields"]["score"] == q["score"] for j, q in zip(s["judge"], graded))


def test_from_the_hub_layout(tmp_path: Path) -> None:
    """The same YAML reads the Hub schema (the path pointed at the Hub-style sample folder instead of
    princeton-nlp/CharXiv; the copy's tasks renamed, a group belonging to its folder)."""
    folder = tmp_path / "tasks" / "charxiv_copy"
    shutil.copytree(PACKAGE_TASKS / "charxiv", folder, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    hub = json.dumps(str(SAMPLE / "charxiv" / "hf"))
    for path in folder.glob("*.yaml"):
        text = path.read_text(encoding="utf-8").replace("path: princeton-nlp/CharXiv", f"path: {hub}")
        text = re.sub(r"^task: (\w+)$", r"task: \1_copy", text, flags=re.MULTILINE).replace("group: charxiv\n", "group: charxiv_copy\n")
        path.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "charxiv_copy", "--include-path", str(folder.parent),
                        "--model", "random", "--judge", "random", "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    samples = samples_of(out, "charxiv_descriptive_copy")
    assert sorted(s["doc_id"] for s in samples) == ["images/0.jpg", "images/1.jpg", "images/2.jpg"]
    assert all(len(s["extra"]["questions"]) == 4 for s in samples)
    assert len(samples_of(out, "charxiv_reasoning_copy")) == 3


def test_hub_copy_holds_the_local_records() -> None:
    datasets = pytest.importorskip("datasets")
    local = records()
    hub = datasets.load_dataset(str(SAMPLE / "charxiv" / "hf"), split="validation")
    hub = hub.cast_column("image", datasets.Image(decode=False))
    assert len(hub) == len(local)
    for rec, row in zip(local, hub):
        assert {k: v for k, v in row.items() if k != "image"} == {k: v for k, v in rec.items() if k != "image"}
        assert row["image"]["bytes"] == (SAMPLE / "charxiv" / rec["image"]).read_bytes()


# --- the lmms_eval task variant against lmms-eval's code ----------------------------------------------

LMMS_EVAL = Path(__file__).resolve().parent / "reference" / "lmms_eval_charxiv"


@pytest.fixture
def lmms_eval_utils() -> Iterator[types.ModuleType]:
    """lmms-eval's lmms_eval/tasks/charxiv/utils.py (verbatim), imported under its own package name
    from the bundled copy (lmms-eval itself is not installed); removed from sys.modules afterwards."""
    names = ("lmms_eval", "lmms_eval.tasks", "lmms_eval.tasks.charxiv")
    saved = {name: mod for name, mod in sys.modules.items() if name == "lmms_eval" or name.startswith("lmms_eval.")}
    for name in saved:
        del sys.modules[name]
    for name in names:
        package = types.ModuleType(name)
        package.__path__ = [str(LMMS_EVAL)] if name == "lmms_eval.tasks.charxiv" else []
        sys.modules[name] = package
    try:
        yield importlib.import_module("lmms_eval.tasks.charxiv.utils")
    finally:
        for name in [n for n in sys.modules if n == "lmms_eval" or n.startswith("lmms_eval.")]:
            del sys.modules[name]
        sys.modules.update(saved)


class PromptClient:
    """An OpenAI client stand-in answering each completion with ``reply(prompt)`` and keeping the prompts."""

    def __init__(self, reply) -> None:
        self.prompts: list[str] = []

        def create(**kwargs):
            prompt = kwargs["messages"][0]["content"]
            self.prompts.append(prompt)
            message = types.SimpleNamespace(content=reply(prompt))
            return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])

        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=create))


#: the model's replies for the variant (whitespace around them: lmms-eval strips the response)
LMMS_REPLIES = {"images/0.jpg": "The tallest bar is red.\n", "images/1.jpg": " 0.3", "images/2.jpg": "12"}


def test_lmms_eval_variant_asks_grades_and_scores_as_lmms_eval(chat_server: ChatServer, tmp_path: Path,
                                                                lmms_eval_utils, capsys) -> None:
    from PIL import Image as PILImage

    def plain_judge(prompt: str) -> str:
        """scripted_judge's verdict as bare JSON (lmms-eval reads no fenced reply)."""
        return scripted_judge(prompt, {}).removeprefix("```json\n").removesuffix("\n```")

    chat_server.models = (JUDGE,)
    chat_server.reply = lambda body: plain_judge(last_user_text(body))
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"task": "charxiv_reasoning_lmms_eval", "doc_id": k, "responses": [v]}) + "\n"
                                   for k, v in LMMS_REPLIES.items()), encoding="utf-8")
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "charxiv_reasoning_lmms_eval", "--data-dir", str(SAMPLE), "--model", f"replay:{predictions}",
                        "--judge", f"openai:{JUDGE}", "--judge-args", FAST, "--output-path", str(out)],
                       tmp_path, base_url=chat_server.base_url)
    assert proc.returncode == 0, proc.stderr
    ours = results_of(out)["results"]["charxiv_reasoning_lmms_eval"]["overall"]
    our_prompts = sorted(last_user_text(b) for b in chat_server.bodies)

    # lmms-eval's own pipeline on the same rows, replies and grader
    client = PromptClient(plain_judge)
    lmms_eval_utils._client = client
    results = []
    by_doc = {s["doc_id"]: s for s in samples_of(out, "charxiv_reasoning_lmms_eval")}
    for row in records():
        doc = {**row, "image": PILImage.open(SAMPLE / "charxiv" / row["image"])}
        messages = lmms_eval_utils.charxiv_reasoning_doc_to_messages_cot(doc)
        (prompt,) = by_doc[row["figure_path"]]["prompt"]
        assert [p["type"] for p in prompt["content"]] == ["image", "text"] == [p["type"] for p in messages[0]["content"]]
        assert prompt["content"][1]["text"] == messages[0]["content"][1]["text"]
        results.append(lmms_eval_utils.charxiv_reasoning_process_results(doc, [LMMS_REPLIES[row["figure_path"]]])["reasoning_acc"])
    theirs = lmms_eval_utils.charxiv_reasoning_aggregate_results(results)
    assert sorted(client.prompts) == our_prompts
    # red 1, 0.3 0, 12 graded 2 (counted as it is): (1 + 0 + 2) / 3
    assert ours == pytest.approx(100 * theirs) == pytest.approx(100.0)
    # the instruction follows the source: chart 1 (answer type 4, source 3) is asked with instruction 3
    # (Number-in-Chart), without the decimal places the authors' instruction 4 adds
    (second,) = by_doc["images/1.jpg"]["prompt"]
    assert "decimal places" not in second["content"][1]["text"]


def test_lmms_eval_variant_counts_a_failed_grading_as_minus_one(chat_server: ChatServer, tmp_path: Path,
                                                                lmms_eval_utils, capsys) -> None:
    """A question the grader never answers in JSON: lmms-eval's get_reasoning_result_gpt gives up after
    its 10 tries with the dummy score -1, which its mean includes; ours asks as often and counts -1."""
    from PIL import Image as PILImage

    unreadable = "a reply the grader cannot grade"

    def judge(prompt: str) -> str:
        if unreadable in prompt:
            return "I cannot grade this."
        return scripted_judge(prompt, {}).removeprefix("```json\n").removesuffix("\n```")

    replies = {**LMMS_REPLIES, "images/1.jpg": unreadable}
    chat_server.models = (JUDGE,)
    chat_server.reply = lambda body: judge(last_user_text(body))
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"task": "charxiv_reasoning_lmms_eval", "doc_id": k, "responses": [v]}) + "\n"
                                   for k, v in replies.items()), encoding="utf-8")
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "charxiv_reasoning_lmms_eval", "--data-dir", str(SAMPLE), "--model", f"replay:{predictions}",
                        "--judge", f"openai:{JUDGE}", "--judge-args", FAST, "--output-path", str(out), "--allow-failures"],
                       tmp_path, base_url=chat_server.base_url)
    assert proc.returncode == 0, proc.stderr
    assert results_of(out)["problems"]["charxiv_reasoning_lmms_eval"]["judge_failures"] == 1
    ours = results_of(out)["results"]["charxiv_reasoning_lmms_eval"]["overall"]
    asked = sum(unreadable in last_user_text(b) for b in chat_server.bodies)

    client = PromptClient(judge)
    lmms_eval_utils._client = client
    results = [lmms_eval_utils.charxiv_reasoning_process_results(
        {**row, "image": PILImage.open(SAMPLE / "charxiv" / row["image"])}, [replies[row["figure_path"]]])["reasoning_acc"]
        for row in records()]
    theirs = lmms_eval_utils.charxiv_reasoning_aggregate_results(results)
    assert asked == sum(unreadable in p for p in client.prompts) == 10
    # red 1, the failed grading -1, 12 graded 2: (1 - 1 + 2) / 3
    assert ours == pytest.approx(100 * theirs) == pytest.approx(200 / 3)


def test_a_reply_too_large_for_the_judge_is_not_sent(chat_server: ChatServer, tmp_path: Path) -> None:
    """A reply past MAX_JUDGED_CHARS is a judge failure of its question (counted 0, as an invalid
    score), never a judge prompt of megabytes."""
    from mmtasks.dialogues.judging import MAX_JUDGED_CHARS

    chat_server.models = (JUDGE,)
    chat_server.reply = lambda body: scripted_judge(last_user_text(body), {})
    replies = {**REASONING, "images/1.jpg": "x" * (MAX_JUDGED_CHARS + 1)}
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"task": "charxiv_reasoning", "doc_id": k, "responses": [v]}) + "\n"
                                   for k, v in replies.items()), encoding="utf-8")
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "charxiv_reasoning", "--data-dir", str(SAMPLE), "--model", f"replay:{predictions}",
                        "--judge", f"openai:{JUDGE}", "--judge-args", FAST, "--output-path", str(out)],
                       tmp_path, base_url=chat_server.base_url)
    results = results_of(out)
    assert results["problems"]["charxiv_reasoning"]["judge_failures"] == 1, proc.stderr
    assert len(chat_server.bodies) == 2 and all(len(last_user_text(b)) < 10_000 for b in chat_server.bodies)
    # red 1, the unjudged 0, 12 scored 2 (invalid) 0
    assert results["results"]["charxiv_reasoning"]["overall"] == 33.33


def test_every_task_of_the_folder_has_a_column_in_its_tab() -> None:
    """A run of any of the folder's tasks (the peer variant too) lands on its tab, not on the
    automatic 'Other tasks' one."""
    import yaml

    from mmtasks.leaderboard.sections import load_section

    folder = Path(__file__).resolve().parents[1]
    tasks = {doc["task"] for f in folder.glob("*.yaml") if f.name != "leaderboard.yaml"
             for doc in [yaml.safe_load(f.read_text(encoding="utf-8"))] if isinstance(doc, dict) and "task" in doc}
    assert "charxiv_reasoning_lmms_eval" in tasks
    assert tasks <= set(load_section(folder / "leaderboard.yaml").tasks)
