"""MMDU scoring: the judge-reply parser, the judge prompt, and the aggregator against
numbers computed by hand the way the authors' scores/statistic.py computes them."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import pytest

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.dialogues.judging import judge_request
from mmtasks.dialogues.protocols import DialogueContext
from mmtasks.core.sample import Sample
from mmtasks.models.base import ChatModel, ModelSpec
from mmtasks.core.request import Reply, Request
from mmtasks.scheduling.scheduler import Scheduler
from mmtasks.scoring.aggregation import TaskResult
from mmtasks.scoring.bootstrap import bootstrap_ratio_stderr, bootstrap_stderr
from mmtasks.scoring.aggregation import aggregate
from mmtasks import registry
from mmtasks.task import Task
from tests.mmdu_data import judge_reply, scores, tag, write_mmdu
from tests.plugins import plugin

mmdu, MMDU = plugin("mmdu")
METRICS, parse_mmdu_judge = mmdu.METRICS, mmdu.parse_mmdu_judge

PROMPT_FILE = Path(__file__).resolve().parents[3] / "tasks" / "mmdu" / "judge_prompt.txt"
#: sha256 of shared/specs/mmdu_judge_prompt.txt (the authors' meta_prompt, 6,037 bytes)
PROMPT_SHA256 = "aa321957582d42830ae3bcd4211b13e04546f172b81d9319b0f625b826860ab8"

# Paper Figure 3: the judge reasons per dimension, then ends with the dictionary.
FIGURE3_REPLY = """Creativity: The response offers a reasonable comparison of the two paintings but adds little beyond what the reference provides. Score: 6
Richness: It covers the style, the period and the subjects of both paintings with useful detail. Score: 7
Visual Perception: The description of the brushwork and colours matches the images well. Score: 7
Logical Coherence: The answer is well organised and consistent. Score: 7
Answer Accuracy: The facts given agree with the reference answer. Score: 8
Image Relationship Understanding: It relates the two images clearly, pointing out common themes and differences. Score: 8
Overall Score: The answer performs well in all dimensions. Score: 7

{'Creativity': 6, 'Richness': 7, 'Visual Perception': 7, 'Logical Coherence': 7, 'Answer Accuracy': 8, 'Image Relationship Understanding': 8, 'Overall Score': 7}"""


# --- the judge prompt file ---------------------------------------------------

def test_prompt_file_is_the_official_text_byte_for_byte() -> None:
    raw = PROMPT_FILE.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == PROMPT_SHA256
    assert len(raw) == 6037 and raw.startswith(b"\nYou are an assistant skilled") and raw.endswith(b"'Overall Score': 7}.\n\n")


def mmdu_task() -> Task:
    config, path = TaskRegistry.discover().load("mmdu")
    return Task(config, path)


def test_rendered_judge_prompt_is_file_then_official_suffix(tmp_path: Path) -> None:
    write_mmdu(tmp_path, [[2, 0]])
    task = mmdu_task()
    doc = next(task.documents(tmp_path))
    question = "Image1: <ImageHere>. Image2: <ImageHere>. What {{ is }} shown?\r\nAnd {% here %}?"
    req = judge_request(task.state(doc), position=0, question=question, reference="ref {x}", answer="ans\n")
    system, user = req.messages
    assert system.role == "system" and system.plain_text == "You are a helpful assistant."
    text = user.parts[0].text
    raw = PROMPT_FILE.read_bytes()
    assert text.encode("utf-8").startswith(raw)
    suffix = ("[Question]\n" + question + "\n\n[The Start of Reference Answer]\nref {x}\n[The End of Reference Answer]\n\n"
              "[The Start of Assistant\u2019s Answer]\nans\n\n[The End of Assistant\u2019s Answer]")
    assert text == raw.decode("utf-8") + suffix
    # judge images: all of the dialogue's images, after the text, in order; settings from the YAML
    assert [p.path.name for p in user.parts[1:]] == ["d0_img0.png", "d0_img1.png"]
    assert req.target == "judge" and req.generation.max_new_tokens == 4096 and req.generation.temperature == 0.0


def test_prompt_file_is_read_relative_to_the_task_yaml_and_missing_file_is_an_error(tmp_path: Path) -> None:
    from mmtasks.errors import ConfigError

    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "judge.txt").write_bytes(b"\r\nline one\r\n\xe2\x80\x99 kept\n")
    base = "task: {name}\ndataset: {{local: {{dir: mmdu, file: benchmark.json}}}}\nprotocol: multi_turn\n"
    (folder / "a.yaml").write_text(base.format(name="a_task") + "judge: {prompt_file: judge.txt, parser: json_object}\n")
    (folder / "b.yaml").write_text(base.format(name="b_task") + "judge: {prompt_file: nope.txt, parser: json_object}\n")
    registry = TaskRegistry.discover([folder])
    task = Task(*registry.load("a_task"))
    assert task.judge_prefix == "\r\nline one\r\n\u2019 kept\n"  # no newline translation, nothing stripped
    with pytest.raises(ConfigError, match="judge.prompt_file"):
        Task(*registry.load("b_task"))


# --- parsing -----------------------------------------------------------------

def test_figure3_reply_parses() -> None:
    assert registry.verdict_parsers.get("mmdu_judge", plugins=[MMDU]).fn is mmdu.mmdu_judge
    assert parse_mmdu_judge(FIGURE3_REPLY) == {
        "creativity": 6, "richness": 7, "visual_perception": 7, "logical_coherence": 7,
        "answer_accuracy": 8, "image_relationship_understanding": 8, "overall": 7,
    }


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (judge_reply(scores(11, -2, 7, 7, 7, 7, 10)), {"creativity": 10, "richness": 0, "overall": 10}),  # clipped
        (judge_reply(scores(7, 7, 7, 7, 7, 7, 7)).replace("'Overall Score': 7", "'Overall Score': 7.5"), {"overall": 7.5}),
        (judge_reply(scores(7, 7, 7, 7, 7, 7, 7)).replace("'Overall Score': 7", "'Overall Score': 7.0"), {"overall": 7}),
        (judge_reply(scores(7, 7, 7, 7, 7, 7, 7)) + "\nThat is all.", {"overall": 7}),  # text after the dict
        (judge_reply({**scores(7, 7, 7, 7, 7, 7, 7), "Extra": 1}), {"overall": 7}),        # extra keys ignored
    ],
)
def test_parser_accepts_and_clips(reply: str, expected: dict) -> None:
    parsed = parse_mmdu_judge(reply)
    assert parsed is not None and set(parsed) == set(METRICS)
    for k, v in expected.items():
        assert parsed[k] == v and type(parsed[k]) is type(v)


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot evaluate this answer.",                                        # no dict at all
        "{'Creativity': 6, 'Richness': 7",                                      # unclosed
        judge_reply({k: v for k, v in scores(7, 7, 7, 7, 7, 7, 7).items() if k != "Overall Score"}),  # missing dimension
        judge_reply(scores(7, 7, 7, 7, 7, 7, 7)).replace("'Richness': 7", "'Richness': '7'"),          # a string is not a score
        judge_reply(scores(7, 7, 7, 7, 7, 7, 7)).replace("'Richness': 7", "'Richness': True"),
        judge_reply(scores(7, 7, 7, 7, 7, 7, 7)).replace("'Richness': 7", "'Richness': None"),
        "{'Creativity': __import__('os').getpid()}",                             # never evaluated
        "Scores follow in a {dict}: " + judge_reply(scores(7, 7, 7, 7, 7, 7, 7)),  # first '{' to last '}', as the authors read it
        "[1, 2] {1, 2}",                                                           # a set literal, not a dict
    ],
)
def test_parser_rejects(reply: str) -> None:
    assert parse_mmdu_judge(reply) is None


# --- aggregation through the protocol, with scripted model and judge -----------

class Scripted(ChatModel):
    """Answers each request with ``answer(request)`` (a string, or None for a failed request)."""

    def __init__(self, answer: Callable[[Request], str | None]) -> None:
        super().__init__(ModelSpec(backend="scripted", name="x"))
        self.answer = answer
        self.requests: list[Request] = []

    def generate(self, requests: Sequence[Request]) -> Iterable[tuple[int, Reply]]:
        for i, req in enumerate(requests):
            self.requests.append(req)
            text = self.answer(req)
            yield i, Reply(text=text) if text is not None else Reply.failure("HTTP 500: injected")


def _tag_of(req: Request) -> str:
    text = "".join(m.plain_text for m in req.messages if m.role == "user")
    found = re.findall(r"\[d\d+t\d+\]", text)
    return found[-1]


# judge replies per turn tag; a list gives the reply per attempt (the last repeats)
JUDGE: dict[str, list[str]] = {
    tag(0, 1): [FIGURE3_REPLY],                                                   # C6 ... O7
    tag(0, 2): ["Sorry, I cannot score this.", judge_reply(scores(5, 5, 5, 5, 5, 5, 4))],  # malformed, then valid
    tag(0, 3): [judge_reply({k: v for k, v in scores(9, 9, 9, 9, 9, 9, 9).items() if k != "Overall Score"})],  # never valid
    tag(1, 1): [judge_reply(scores(9, 9, 9, 9, 9, 9, 9))],
    tag(1, 2): [judge_reply(scores(3, 5, 5, 5, 5, 5, 5))],
    tag(1, 3): [judge_reply(scores(10, 10, 10, 10, 10, 10, 10))],
}


def _judge_answer(req: Request) -> str:
    replies = JUDGE[_tag_of(req)]
    return replies[min(req.attempt, len(replies) - 1)]


def _model_answer(req: Request) -> str | None:
    t = _tag_of(req)
    return None if t == tag(2, 1) else f"model answer {t}"


def run_dialogues(root: Path, task: Task, ctx: DialogueContext) -> tuple[list[Sample], Scripted, Scripted, Scheduler]:
    model, judge = Scripted(_model_answer), Scripted(_judge_answer)
    scheduler = Scheduler(models={"model": model, "judge": judge})
    proto = registry.protocols.get("multi_turn").run
    samples = list(scheduler.run(proto(task.state(doc), ctx) for doc in task.documents(root)))
    return sorted(samples, key=lambda s: s.doc_index), model, judge, scheduler


def test_official_aggregation_by_hand(tmp_path: Path) -> None:
    # dialogue 0: 3 turns (judged; malformed then valid; missing dimension every time),
    # dialogue 1: 3 turns, dialogue 2: 1 turn whose model request fails.
    write_mmdu(tmp_path, [[2, 0, 1], [1, 1, 0], [1]])
    task = mmdu_task()
    samples, model, judge, scheduler = run_dialogues(tmp_path, task, DialogueContext(has_judge=True))
    result: TaskResult = aggregate(task.scoring, task.aggregator, samples, 0)
    m = result.metrics

    # judge calls: 6 answered turns + 1 re-ask of d0t2 + 3 re-asks of d0t3; the failed turn is never judged
    assert len(judge.requests) == 6 + 1 + 3
    assert all(_tag_of(r) != tag(2, 1) for r in judge.requests)
    assert [r.attempt for r in judge.requests if _tag_of(r) == tag(0, 3)] == [0, 1, 2, 3]
    # waves: 3 model turns, then the judge waves of the longest re-asking dialogue (4 attempts)
    assert scheduler.stats.waves == 3 + 4

    # statistic.py: sum over validly judged turns / their count * 10
    valid_overall = [7, 4, 9, 5, 10]
    valid_creativity = [6, 5, 9, 3, 10]
    assert m["overall"] == pytest.approx(10 * sum(valid_overall) / 5) == pytest.approx(70.0)
    assert m["overall_micro"] == m["overall"]
    assert m["creativity"] == pytest.approx(10 * sum(valid_creativity) / 5) == pytest.approx(66.0)
    assert m["image_relationship_understanding"] == pytest.approx(10 * (8 + 5 + 9 + 5 + 10) / 5)
    # the paper's macro: per dialogue (d0: 7,4 -> 55; d1: 9,5,10 -> 80; d2 has no judged turn), then the mean
    assert m["overall_macro"] == pytest.approx((55 + 80) / 2)
    assert m["creativity_macro"] == pytest.approx((55 + 220 / 3) / 2)
    # failures (one judge failure, one request failure) counted as 0
    assert m["overall_all"] == pytest.approx(10 * 35 / 7)
    assert result.problems == {"request_failures": 1, "unparsed": 0, "judge_failures": 1}
    assert result.counts == {"judged_turns": 5, "clusters": 3}  # cluster: dialogue, 3 dialogues
    assert result.coverage == {"unit": "turns", "scored": 5, "total": 7, "unscored": {"request_failure": 1, "judge_failure": 1}}
    assert not {"judge_failures", "request_failures", "judged_turns"} & set(m)  # counters are not metrics
    turn = result.breakdowns["turn"]
    assert list(turn) == ["1", "2", "3"] and all(set(row) == {*METRICS, "n"} for row in turn.values())
    assert [(row["overall"], row["n"]) for row in turn.values()] == [(80.0, 2), (45.0, 2), (100.0, 1)]
    assert turn["2"]["creativity"] == pytest.approx(40.0)  # d0t2: 5, d1t2: 3
    assert result.higher_is_better["overall"] is True
    # stderr: cluster bootstrap over dialogues of the micro ratio, on the 0-100 scale
    expected = 10 * bootstrap_ratio_stderr([11, 24, 0], [2, 3, 0], seed=0)
    assert m["overall_stderr"] == pytest.approx(expected) and m["overall_stderr"] > 0

    # the samples say what happened to each turn
    d0, d1, d2 = samples
    assert [t["status"] for t in d0.extra["turns"]] == ["judged", "judged", "judge_failure"]
    assert d0.judge_failures == 1 and d0.extra["turns"][2]["judge_error"] == "judge reply could not be parsed"
    assert d0.extra["turns"][1]["scores"]["overall"] == 4
    assert d0.metrics["overall"] == pytest.approx(55.0)
    assert d2.extra["turns"][0]["status"] == "request_failure" and d2.responses == [None]
    assert d2.failures == ["turn 1: HTTP 500: injected"] and d2.judge == [] and d2.metrics == {}
    assert d1.responses == [f"model answer {tag(1, t)}" for t in (1, 2, 3)]
    assert d1.target == [f"reference answer {tag(1, t)}" for t in (1, 2, 3)]


def test_predict_only_asks_no_judge_and_scores_nothing(tmp_path: Path) -> None:
    write_mmdu(tmp_path, [[1, 1]])
    task = mmdu_task()
    samples, model, judge, _ = run_dialogues(tmp_path, task, DialogueContext(predict_only=True))
    assert judge.requests == [] and len(model.requests) == 2
    result = aggregate(task.scoring, task.aggregator, samples, 0)
    assert result.metrics["overall"] is None and result.metrics["overall_all"] is None
    assert result.problems == {"request_failures": 0, "unparsed": 0, "judge_failures": 0}
    assert result.coverage is None  # no judge was asked: nothing to say about coverage
    assert [t["status"] for t in samples[0].extra["turns"]] == ["unjudged", "unjudged"]


def test_ratio_bootstrap_matches_mean_bootstrap_for_unit_denominators() -> None:
    values = [3.0, 7.0, 1.0, 9.0, 4.0]
    assert bootstrap_ratio_stderr(values, [1] * 5, seed=3) == pytest.approx(bootstrap_stderr(values, seed=3))
    assert bootstrap_ratio_stderr([5.0], [1.0]) == 0.0
    with pytest.raises(ValueError):
        bootstrap_ratio_stderr([1.0, 2.0], [1.0])


def test_the_random_judge_scores_every_dimension() -> None:
    import random

    from mmtasks.models.random_model import random_verdict

    spec = registry.verdict_parsers.get("mmdu_judge", plugins=[MMDU])
    verdict = parse_mmdu_judge(random_verdict(random.Random(0), spec.space({}), n_images=1))
    assert verdict is not None and set(verdict) == set(METRICS) and all(1 <= v <= 10 for v in verdict.values())
