"""Scoring variants (a task's ``variants:``): the same replies scored other named ways beside the
task's own rule, in results.json (per task and group), the results table, ``compare --variant``
and the viewer's data; ``answer.unparsed: unscored`` leaves replies read as nothing out of the
denominator and counts them apart. Every figure below is computed by hand from six replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.api import evaluate
from mmtasks.comparison.runs import compare
from mmtasks.errors import ConfigError, MmtasksError
from mmtasks.report import results_table_lines

ANSWERS = ["A", "B", "C", "D", "A", "B"]
#: reply -> (the task's reading: the last standalone A-D; the variant "first": its first character)
REPLIES = ["A",                # A right   | A right
           "The answer is B",  # B right   | T: nothing
           "no idea",          # nothing   | nothing
           "C",                # C wrong   | C wrong
           "A.",               # A right   | A right
           "D, or rather B"]   # B right   | D wrong

PLUGIN = '''
import re
from mmtasks.plugin import aggregator, parser
from mmtasks.scoring.aggregation import TaskResult, per_sample_mean, values_by_label, mean_of_means

@parser("last_letter")
def last_letter(text, doc):
    found = re.findall(r"\\b[A-D]\\b", text)
    return found[-1] if found else None

@parser("first_char")
def first_char(text, doc):
    head = text.strip()[:1]
    return head if head in ("A", "B", "C", "D") else None

@aggregator("mean_of_halves", emits=lambda cfg: [m.name for m in cfg.metrics])
def mean_of_halves(task, samples, seed):
    result = per_sample_mean(task, samples, seed)
    result.metrics["acc"] = mean_of_means(values_by_label(samples, "acc", "half"))
    return result
'''

TASK = '''task: {name}
group: [vgroup]
dataset:
  local: {{dir: vt, file: vt.jsonl}}
  images_field: null
plugins: [vt_plugin.py]
prompt: {{user: "{{{{ doc.question }}}}"}}
target: "field:answer"
answer:
  parser: last_letter
  unparsed: unscored
metrics:
  - {{name: acc, function: choice_acc, primary: true}}
breakdowns:
  - {{name: half, value: "{{{{ 'first' if doc.id in ['d1', 'd2', 'd3'] else 'second' }}}}"}}
variants:
  - {{name: first, description: "first character", source: "a peer, file x.py at abc123", parser: first_char, unparsed: scored_wrong}}
  - {{name: wrong, description: "unparsed counted wrong", unparsed: scored_wrong}}
  - {{name: halves, description: "mean of the two halves", aggregator: mean_of_halves}}
'''


def _setup(tmp_path: Path, replies: list[str], out: str, *, names: tuple[str, ...] = ("vt",)) -> dict:
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "vt_plugin.py").write_text(PLUGIN, encoding="utf-8")
    for name in names:
        (tasks / f"{name}.yaml").write_text(TASK.format(name=name), encoding="utf-8")
    data = tmp_path / "data" / "vt"
    data.mkdir(parents=True, exist_ok=True)
    (data / "vt.jsonl").write_text("".join(json.dumps({"id": f"d{i + 1}", "question": f"q{i + 1}", "answer": a}) + "\n"
                                           for i, a in enumerate(ANSWERS)), encoding="utf-8")
    predictions = tmp_path / f"{out}.jsonl"
    predictions.write_text("".join(json.dumps({"task": name, "doc_id": f"d{i + 1}", "responses": [r]}) + "\n"
                                   for name in names for i, r in enumerate(replies)), encoding="utf-8")
    evaluate(",".join(names), f"replay:{predictions}", data_dir=tmp_path / "data", output_path=tmp_path / out,
                      include_paths=[str(tasks)], use_cache=False, allow_failures=True)
    return json.loads((tmp_path / out / "results.json").read_text(encoding="utf-8"))


def test_each_variant_scores_the_same_replies_its_own_way(tmp_path: Path) -> None:
    data = _setup(tmp_path, REPLIES, "run")
    # the task's rule: 5 replies read, 4 right; the one read as nothing is left out, and counted
    assert data["results"]["vt"]["acc"] == pytest.approx(100 * 4 / 5)
    assert data["results"]["vt"]["acc_all"] == pytest.approx(100 * 4 / 6)
    assert data["coverage"]["vt"]["scored"] == 5 and data["coverage"]["vt"]["unscored"] == {"unparsed": 1}
    assert data["problems"]["vt"]["unparsed"] == 1
    v = data["variants"]["vt"]
    assert v["first"]["metrics"]["acc"] == pytest.approx(100 * 2 / 6)  # d1, d5 right; d2, d3 unread: wrong
    assert v["first"]["coverage"]["scored"] == 6
    assert v["first"]["source"] == "a peer, file x.py at abc123"
    assert v["wrong"]["metrics"]["acc"] == pytest.approx(100 * 4 / 6)
    # halves: first (d1 right, d2 right, d3 left out) 100; second (d4 wrong, d5, d6 right) 66.67
    assert v["halves"]["metrics"]["acc"] == pytest.approx((100 + 200 / 3) / 2)
    assert v["first"]["breakdowns"]["half"]["first"]["acc"] == pytest.approx(100 / 3)
    # a group whose one member declares the variants: their group averages
    assert data["groups"]["vgroup"]["variants"]["first"] == pytest.approx(100 * 2 / 6)
    lines = "\n".join(results_table_lines(data))
    assert "acc [first]" in lines and "33.33" in lines and "vgroup [wrong]" in lines
    # each sample keeps its variants' scores: compare and the viewer read them
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples" / "vt.jsonl").read_text().splitlines()]
    d2 = next(r for r in rows if r["doc_id"] == "d2")
    assert d2["extra"]["variants"]["first"] == {"metrics": {"acc": 0.0}, "read_by": None, "unparsed": 1, "guessed": 0}
    assert next(r for r in rows if r["doc_id"] == "d3")["metrics"] == {"acc": None}


def test_compare_on_a_variant(tmp_path: Path) -> None:
    _setup(tmp_path, REPLIES, "a")
    _setup(tmp_path, ["A", "B", "C", "D", "A", "B"], "b")  # every reply right, by both readings
    own = compare(tmp_path / "a", tmp_path / "b")
    first = compare(tmp_path / "a", tmp_path / "b", variant="first")
    (row,) = own.tasks
    (vrow,) = first.tasks
    # own rule: compare counts A's unscored d3 as 0, as acc_all does: A 4 of 6, B 6 of 6
    assert (row.metrics[0].n, row.metrics[0].a, row.metrics[0].b) == (6, pytest.approx(200 / 3), pytest.approx(100.0))
    # the variant: all 6 scored, A 2 of 6 right, B 6 of 6
    assert (vrow.metrics[0].n, vrow.metrics[0].a, vrow.metrics[0].b) == (6, pytest.approx(100 / 3), pytest.approx(100.0))
    with pytest.raises(ConfigError, match="no task of both runs has a scoring variant 'nope'"):
        compare(tmp_path / "a", tmp_path / "b", variant="nope")


def test_a_variant_names_a_parser_that_does_not_exist(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "vt_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (tasks / "vt.yaml").write_text(TASK.format(name="vt").replace("parser: first_char", "parser: frist_char"), encoding="utf-8")
    with pytest.raises(MmtasksError) as err:
        evaluate("vt", "random", data_dir=tmp_path, include_paths=[str(tasks)])
    assert "variants[0].parser" in str(err.value) and "frist_char" in str(err.value)


def test_two_variants_of_one_name_are_refused(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "vt_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (tasks / "vt.yaml").write_text(TASK.format(name="vt").replace("name: halves", "name: wrong"), encoding="utf-8")
    with pytest.raises(MmtasksError, match="wrong named twice"):
        evaluate("vt", "random", data_dir=tmp_path, include_paths=[str(tasks)])


def test_a_variant_that_reads_replies_again_needs_single_turn(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "mmdu_v.yaml").write_text(
        f"task: mmdu_v\ninclude: {root / 'tasks' / 'mmdu' / 'mmdu.yaml'}\ngroup: []\n"
        "variants:\n  - {name: other, parser: text}\n", encoding="utf-8")
    with pytest.raises(MmtasksError, match="needs the single_turn protocol, not 'multi_turn'"):
        evaluate("mmdu_v", "random", judge="random", data_dir=root / "data" / "sample", include_paths=[str(tasks)])


JUDGED = '''task: vj
dataset:
  local: {dir: vt, file: vt.jsonl}
  images_field: null
plugins: [vt_plugin.py]
prompt: {user: "{{ doc.question }}"}
target: "field:answer"
answer: {parser: verbatim}
judge:
  parser: json_object
  parser_args: {required: [score]}
  metrics: [score]
  retries: 0
  prompt: "ANSWER {{ answer }}"
metrics:
  - {name: score, primary: true}
variants:
  - {name: rule, description: "a peer reads the letter by rule", parser: last_letter, metrics: {score: {function: choice_acc}}}
'''


def test_a_variant_computes_a_metric_the_judge_gives(tmp_path: Path) -> None:
    """A peer that reads by rule what the task's judge decides: the variant computes the judge's
    metric by a function (bind_variants refused it before: 'not a per-sample metric')."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "vt_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (tasks / "vj.yaml").write_text(JUDGED, encoding="utf-8")
    data = tmp_path / "data" / "vt"
    data.mkdir(parents=True)
    (data / "vt.jsonl").write_text("".join(json.dumps({"id": f"d{i + 1}", "question": f"q{i + 1}", "answer": a}) + "\n"
                                           for i, a in enumerate(ANSWERS)), encoding="utf-8")
    model, judge = tmp_path / "model.jsonl", tmp_path / "judge.jsonl"
    model.write_text("".join(json.dumps({"task": "vj", "doc_id": f"d{i + 1}", "responses": [r]}) + "\n"
                             for i, r in enumerate(REPLIES)), encoding="utf-8")
    # the judge gives every reply score 1 but d6's (0)
    judge.write_text("".join(json.dumps({"task": "vj", "doc_id": f"d{i + 1}", "responses": [json.dumps({"score": 0 if i == 5 else 1})]})
                             + "\n" for i in range(6)), encoding="utf-8")
    evaluate("vj", f"replay:{model}", judge=f"replay:{judge}", data_dir=tmp_path / "data", output_path=tmp_path / "out",
             include_paths=[str(tasks)], use_cache=False)
    out = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert out["results"]["vj"]["score"] == pytest.approx(5 / 6)  # the judge's: 5 of 6
    # the rule (last standalone A-D): d1 A, d2 B, d4 C (wrong), d5 A, d6 B right; d3 nothing: wrong -> 4 of 6
    assert out["variants"]["vj"]["rule"]["metrics"]["score"] == pytest.approx(100 * 4 / 6)
    (tasks / "vj.yaml").write_text(JUDGED.replace("metrics: {score:", "metrics: {other:"), encoding="utf-8")
    with pytest.raises(MmtasksError, match="'other' is not a per-sample metric of this task .*given by its judge: score"):
        evaluate("vj", "random", judge="random", data_dir=tmp_path / "data", include_paths=[str(tasks)])
