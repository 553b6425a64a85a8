"""MLVU's generation tasks (sub-scene captioning, video summary) on the bundled sample: the model
and the GPT-4 judge scripted on a loopback server, figures by hand (the authors' reading of the
judge's replies, quirks kept); the judge prompts; the judge-reply reading against VLMEvalKit's
copy of the authors' extract_scores (bundled) and the authors' calculate.py / calculate_sum.py
run from MMTASKS_REFERENCE_DIR (unlicensed) with only their folder changed; the random judge."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("av")

from tests.chat_server import ChatServer  # noqa: E402
from tests.chat_wire import last_user_text  # noqa: E402
from tests.folder_copies import FAST, JUDGE, MODEL, SAMPLE, results_of, run_mmtasks, samples_of  # noqa: E402
from tests.reference_code import load_file as load, reference_dir_file  # noqa: E402

FOLDER = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).parent / "reference"


def ours() -> ModuleType:
    return load(FOLDER / "mlvu_generation.py", "mlvu_generation_under_test")


#: what the judge answers, by the first words of what it is shown, in the order asked
JUDGE_REPLIES = {
    "the white square crosses": ["Good.\n{'score_accuracy': 3.5, 'score_relevance': 4, 'total_score': 7.5}"],
    # one key only: the authors add it as the first score and 0 as the second (their try/except)
    "the screen is blue": ["Only this: {'score_relevance': 5, 'total_score': 5}"],
    # no "," after the last score: the authors read to the reply's last character but one
    "alternates between a black": ["{'score_completeness': 2, 'score_reliability': 3}"],
    # "four" is no float (the authors' script stops): no verdict, re-asked; then no key at all: 0 and 0
    "A white square moves right": ["score_completeness: four, score_reliability: 2,", "No scores here."],
}


def judge_key(prompt: str) -> str:
    (key,) = [k for k in JUDGE_REPLIES if k in prompt]
    return key


def test_scores_from_scripted_judge_replies(chat_server: ChatServer, tmp_path: Path) -> None:
    asked: dict[str, int] = {}
    prompts: dict[str, str] = {}

    def reply(body: dict) -> str:
        text = last_user_text(body)
        if body["model"] == JUDGE:
            key = judge_key(text)
            prompts[key] = text
            asked[key] = asked.get(key, 0) + 1
            return JUDGE_REPLIES[key][asked[key] - 1]
        return "The screen changes colour." if "summarize" in text else "A white square moves."

    chat_server.models = (MODEL, JUDGE)
    chat_server.reply = reply
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "mlvu_dev_generation", "--data-dir", str(SAMPLE), "--model", f"openai:{MODEL}",
                        "--model-args", FAST, "--judge", f"openai:{JUDGE}", "--judge-args", FAST,
                        "--output-path", str(out)], tmp_path, base_url=chat_server.base_url)
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    ssc, vs = results["results"]["mlvu_dev_sub_scene"], results["results"]["mlvu_dev_summary"]
    # SSC: accuracy (3.5 + 5) / 2, relevance (4 + 0) / 2, total their sum
    assert (ssc["accuracy"], ssc["relevance"], ssc["total"]) == pytest.approx((4.25, 2.0, 6.25))
    # VS: completeness (2 + 0) / 2, reliability (3 + 0) / 2
    assert (vs["completeness"], vs["reliability"], vs["total"]) == pytest.approx((1.0, 1.5, 2.5))
    # G-Avg: the mean of the two totals
    assert results["groups"]["mlvu_dev_generation"]["average"] == pytest.approx((6.25 + 2.5) / 2)
    assert asked == {k: len(v) for k, v in JUDGE_REPLIES.items()}
    assert prompts["the white square crosses"] == (
        "Please score the respondent's answer according to the steps in the Instructions. You must end with a JSON dict "
        "to store the scores.\nQuestion: Please describe the scene when the white square crosses the red screen.\n"
        "Scoring Points: ['The square is white', 'It moves from left to right', 'The screen turns from red to blue']\n"
        "Respondent's Answer: A white square moves.")  # ours: no final newline
    assert prompts["alternates between a black"] == (
        "Please score the respondent's answer according to the steps in the Instructions. You must end with a JSON dict "
        "to store the scores.\nStandard Answer: The video alternates between a black screen and an orange one, two "
        "seconds each, twice.\nRespondent's Answer: The screen changes colour.")
    sample = samples_of(out, "mlvu_dev_sub_scene")[0]
    assert sample["prompt"][0]["content"][0]["text"] == (
        "Carefully watch this video and pay attention to every detail. Based on your observations, answer the given questions.")


#: tricky judge replies: (reply, the sub-scene keys' reading, the summary keys' reading); None: the authors' float() raises
READINGS = [
    ("{'score_accuracy': 3, 'score_relevance': 4, 'total_score': 7}", [3.0, 4.0], []),
    ('{"score_accuracy": 2.5, "score_relevance": 5}', [2.5, 5.0], []),  # JSON: the quote before ":"; no "," at the end
    ("score_accuracy: 4, and score_relevance: 3, fine", [4.0, 3.0], []),
    ("{'score_relevance': 1, 'score_accuracy': 5,}", [5.0, 1.0], []),  # keys read in the authors' order
    ("{'score_completeness': 4, 'score_reliability': 5, 'total_score': 9}", [], [4.0, 5.0]),
    ("{'score_accuracy':3, 'score_relevance': 4,", None, []),  # no space after ":": float("") raises
    ("{'score_accuracy': four, 'score_relevance': 4,", None, []),
    ("nothing", [], []),
]


@pytest.mark.parametrize("reply, sub_scene, summary", READINGS)
def test_replies_as_vlmevalkits_copy_of_extract_scores(reply: str, sub_scene: list | None, summary: list | None) -> None:
    module = load(REFERENCE / "vlmevalkit_mlvu.py", "reference_vlmevalkit_mlvu_generation")
    for theirs, keys, expected in ((module.extract_scores_sub_scene, ours().SUB_SCENE_KEYS, sub_scene),
                                   (module.extract_scores_summary, ours().SUMMARY_KEYS, summary)):
        assert ours().extract_scores(reply, keys) == expected
        if expected is None:
            with pytest.raises(ValueError):
                theirs(reply)
        else:
            assert theirs(reply) == expected


def authors_figures(script: str, replies: list[str], tmp_path: Path) -> list[float]:
    """The authors' calculate.py / calculate_sum.py (from MMTASKS_REFERENCE_DIR), their path set to a
    folder of the judge outputs evaluate_ssc.py / evaluate_summary.py write: what they print."""
    path = reference_dir_file(script, "github.com/JUNJIE99/MLVU evaluation/generation_evaluation/ at fd060c1, no license: not bundled")
    outputs = tmp_path / script
    outputs.mkdir()
    for k, text in enumerate(replies):
        (outputs / f"{k}.json").write_text(json.dumps([{"explain": text}, {"q": "q", "a": "a", "pred": "p"}]), encoding="utf-8")
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("path=")]
    lines[at] = f"path={str(outputs)!r}"  # ours: the only change, the folder it reads
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        exec(compile("\n".join(lines), script, "exec"), {"__name__": "__main__"})  # noqa: S102 - the reference script
    return [float(x) for x in buffer.getvalue().split()]


@pytest.mark.parametrize("script, parse, keys", [
    ("calculate.py", "mlvu_sub_scene_scores", ("accuracy", "relevance")),
    ("calculate_sum.py", "mlvu_summary_scores", ("completeness", "reliability")),
])
def test_figures_as_the_authors_calculate(tmp_path: Path, script: str, parse: str, keys: tuple[str, str]) -> None:
    parser = getattr(ours(), parse)
    replies = [r for r, sub_scene, summary in READINGS if (sub_scene if parse.startswith("mlvu_sub") else summary) is not None]
    replies += ["Only this: {'score_relevance': 5, 'score_reliability': 2, 'total_score': 5}"]
    theirs = authors_figures(script, replies, tmp_path)
    fields = [parser(r, {}) for r in replies]
    first = sum(f[keys[0]] for f in fields) / len(fields)
    second = sum(f[keys[1]] for f in fields) / len(fields)
    assert theirs == pytest.approx([first, second, first + second])
