"""LLaVA-Interleave-Bench from a copy of its folder on an include path (local and Hub layout), replayed
replies scored by hand with lmms-eval's rules; the multiple-choice reading, ROUGE-L and the adapter."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.folder_runs import hub_folder, package_unchanged
from tests.folder_runs import parts_of, plugin, results_of, run_copy_target as run_copy, samples_of



@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("llava_interleave"):
        yield


# --- LLaVA-Interleave-Bench ----------------------------------------------------------------

#: ROUGE-L F (rouge 1.0.1) of "The circle is red." against "the circle is red in the second image": the
#: reply's words {The, circle, is, red} (n = 4; case kept, the period splits off an empty sentence),
#: the answer's distinct words m = 7, the common subsequence circle, is, red: P = 3/4, R = 3/7
SPOT_F = 2 * (3 / 4 * 3 / 7) / (3 / 4 + 3 / 7 + 1e-8)
SAME_F = 2 * (1 * 1) / (1 + 1 + 1e-8)   # a reply equal to a one-sentence answer
#: (task, doc, reply, score 0-100)
INTERLEAVE_REPLIES = [
    ("llava_interleave_in_domain_copy", "spot_1", "The circle is red.", 100 * SPOT_F),     # open-ended: ROUGE-L
    ("llava_interleave_in_domain_copy", "nlvr2_1", "A. yes", 100.0),                      # "A. text": A
    ("llava_interleave_in_domain_copy", "qbench_1", "The second one", 0.0),               # no letter: the text, not B
    ("llava_interleave_in_domain_copy", "raven_1", "(C)", 100.0),
    ("llava_interleave_out_domain_copy", "mathverse_1", "a", 0.0),                        # the article reads as A; gold D
    ("llava_interleave_out_domain_copy", "mantis_1", "two", 100 * SAME_F),
    ("llava_interleave_multi_view_copy", "scanqa_1", "a brown table", 100 * SAME_F),
    ("llava_interleave_multi_view_copy", "nuscenes_1", "", 0.0),                          # an empty reply: 0
]


def check_interleave(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    res = results["results"]
    # one question per category here: each task's overall is the mean of its questions
    in_domain = (100 * SPOT_F + 100 + 0 + 100) / 4
    out_domain = multi_view = 100 * SAME_F / 2
    assert res["llava_interleave_in_domain_copy"]["acc"] == pytest.approx(in_domain)
    assert res["llava_interleave_out_domain_copy"]["acc"] == pytest.approx(out_domain)
    assert res["llava_interleave_multi_view_copy"]["acc"] == pytest.approx(multi_view)
    assert results["groups"]["llava_interleave_copy"]["average"] == pytest.approx((in_domain + out_domain + multi_view) / 3)
    for task in {r[0] for r in INTERLEAVE_REPLIES}:
        samples = samples_of(out, task)
        expected = {d: score for t, d, _, score in INTERLEAVE_REPLIES if t == task}
        assert {d: s["metrics"]["acc"] for d, s in samples.items()} == pytest.approx(expected)


def interleave_rows() -> list[tuple[str, str, str]]:
    return [(t, d, r) for t, d, r, _ in INTERLEAVE_REPLIES]


def test_llava_interleave_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "llava_interleave", "llava_interleave_copy", interleave_rows())
    check_interleave(proc, out)
    samples = samples_of(out, "llava_interleave_in_domain_copy")
    assert parts_of(samples["nlvr2_1"]) == ["<img>", "<img>", "Is this statement true: both images show a star?\n"
                                            "A. yes\nB. no\nYour answer is:"]
    # a multi-view record's prompt is its conversations, as lmms-eval's doc_to_text_conversation has it
    view = samples_of(out, "llava_interleave_multi_view_copy")["scanqa_1"]
    assert parts_of(view) == ['[{"from": "human", "value": "', "<img>", "<img>", 'What stands in the middle of the room?"}]']


def test_llava_interleave_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hf, hf_view = hub_folder("llava_interleave", "hf"), hub_folder("llava_interleave", "hf_multi_view")
    old = "path: lmms-lab-encoder/LLaVA-NeXT-Interleave-Bench"
    hub = {"llava_interleave_in_domain.yaml": {old: f"path: {hf}"}, "llava_interleave_out_domain.yaml": {old: f"path: {hf}"},
           "llava_interleave_multi_view.yaml": {old: f"path: {hf_view}"}}
    proc, out = run_copy(tmp_path, "llava_interleave", "llava_interleave_copy", interleave_rows(), hub=hub)
    check_interleave(proc, out)


@pytest.mark.parametrize(("reply", "read"), [
    ("B. the second", "B"),
    ("b. the second", "B"),                        # any case
    ("The answer is (b)", "B"),                    # the first standalone letter
    ("a cat", "A"),                                # the article too
    ("It is the second", "it is the second"),      # no letter: the processed text
    ("yes, the first.", "yes the first"),          # ", " removes the commas; the period goes
])
def test_interleave_multi_choice_reading(reply: str, read: str) -> None:
    registry, path = plugin("llava_interleave", "interleave_scoring.py")
    parse = registry.parsers.get("interleave_answer", plugins=[path]).fn
    assert parse(reply, {"question_type": "multi-choice"}) == read


@pytest.mark.parametrize(("hyp", "ref", "f"), [
    ("a cat sat", "a cat sat", SAME_F),
    ("the cat the cat", "the cat", SAME_F),                                # words counted as a set
    ("cat. a", "a cat", 2 * (1 * 1) / (2 + 1e-8)),                         # sentences: "cat", "a": both words in the union
    ("dog", "a cat", 0.0),
    ("...", "a cat", 0.0),                                                 # no sentence (the package raises)
])
def test_interleave_rouge_l(hyp: str, ref: str, f: float) -> None:
    registry, path = plugin("llava_interleave", "interleave_scoring.py")
    fns = registry.metrics.get("interleave_score", plugins=[path])
    fns = getattr(fns, "fn", fns).__globals__
    assert fns["rouge_l_f"](hyp, ref) == pytest.approx(f)


def test_interleave_adapter_dumps_a_conversation_list() -> None:
    registry, path = plugin("llava_interleave", "interleave_scoring.py")
    adapt = registry.adapters.get("interleave_conversation", plugins=[path])
    conv = [{"from": "human", "value": "<image>Where?"}]
    assert adapt({"conversations": conv})["prompt_text"] == '[{"from": "human", "value": "<image>Where?"}]'
    assert adapt({"conversations": "as is"})["prompt_text"] == "as is"
    assert adapt({"question": "Q?"})["prompt_text"] == "Q?"
