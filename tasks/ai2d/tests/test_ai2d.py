"""AI2D from a copy of its folder on an include path (local and Hub layout): replayed replies scored by
hand; lmms-eval's prompt and reading and VLMEvalKit's exact matching against their code run verbatim
(reference/ beside this file)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from tests.folder_runs import hub_folder, package_unchanged, parts_of, plugin, results_of, samples_of
from tests.folder_runs import run_copy_target as run_copy
from tests.reference_code import load_reference

REFERENCE = Path(__file__).parent / "reference"
TASKS = ("ai2d_copy", "ai2d_no_mask_copy", "ai2d_vlmevalkit_copy")


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("ai2d"):
        yield


#: doc -> (reply, lmms-eval's reading, VLMEvalKit's); golds 0 A (the options are the letters A, B, C),
#: 1 B, 2 A, 3 C, 4 B
REPLIES = {
    "0": ("The answer is A", "The answer is A", "A"),   # lmms-eval keeps the whole reply: wrong
    "1": ("B. larva", "B", "B"),
    "2": ("(A) sunlight", "(A) sunlight", "A"),          # "(A)" is no "A." start: lmms-eval wrong
    "3": ("pupa", "pupa", "C"),                          # VLMEvalKit reads the option text
    "4": ("C", "C", "C"),                                # wrong for both
}
#: right: lmms-eval 1 of 5, VLMEvalKit 0, 1, 2, 3 (4 of 5)
ACC = {"lmms_eval": 20.0, "vlmevalkit": 80.0}


def rows() -> list[tuple[str, str, str]]:
    return [(task, d, r) for task in TASKS for d, (r, *_) in REPLIES.items()]


def check(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    for task in ("ai2d_copy", "ai2d_no_mask_copy"):
        assert results["results"][task]["acc"] == pytest.approx(ACC["lmms_eval"]), task
        assert results["variants"][task]["vlmevalkit"]["metrics"]["acc"] == pytest.approx(ACC["vlmevalkit"]), task
        assert {d: s["parsed"] for d, s in samples_of(out, task).items()} == {d: p for d, (_, p, _) in REPLIES.items()}
    assert results["results"]["ai2d_vlmevalkit_copy"]["acc"] == pytest.approx(ACC["vlmevalkit"])
    samples = samples_of(out, "ai2d_vlmevalkit_copy")
    assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, (_, _, p) in REPLIES.items()}
    assert samples["3"]["read_by"] == "option_text"


def test_ai2d_from_the_local_sample(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "ai2d", ",".join(TASKS), rows())
    check(proc, out)
    # lmms-eval's prompt (ai2d_doc_to_text, run verbatim) and VLMEvalKit's (build_prompt), after the image
    reference = load("ai2d_utils_75571cf")
    doc = {"question": "What comes after the egg in this life cycle?", "options": ["adult", "larva", "pupa", "egg"]}
    kwargs = {"prompt_format": "mcq", "pre_prompt": "", "post_prompt": "\nAnswer with the option's letter from the given choices directly."}
    assert parts_of(samples_of(out, "ai2d_copy")["1"]) == ["<img>", reference.ai2d_doc_to_text(doc, kwargs)]
    assert parts_of(samples_of(out, "ai2d_vlmevalkit_copy")["1"]) == [
        "<img>", "Question: What comes after the egg in this life cycle?\nOptions:\nA. adult\nB. larva\nC. pupa\nD. egg\n"
        "Please select the correct answer from the options above. \n"]
    # the unmasked copy: the same questions on other pictures
    masked, plain = (samples_of(out, t)["0"]["prompt"][-1]["content"][0]["image"] for t in ("ai2d_copy", "ai2d_no_mask_copy"))
    assert masked.endswith("ai2d/images/0.jpg") and plain.endswith("ai2d/images_no_mask/0.jpg")


def test_ai2d_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hub = {"_base.yaml": {"path: lmms-lab/ai2d": f"path: {hub_folder('ai2d', 'hf')}"},
           "ai2d_no_mask.yaml": {"path: Efficient-Large-Model/ai2d-no-mask": f"path: {hub_folder('ai2d', 'hf_no_mask')}"}}
    proc, out = run_copy(tmp_path, "ai2d", ",".join(TASKS), rows(), hub=hub)
    check(proc, out)


# --- conformance with the peers' code ------------------------------------------------------------

def load(name: str) -> ModuleType:
    return load_reference(name, REFERENCE)


FOUR = ["sunlight", "water", "rabbits", "foxes"]
LETTERS = ["A", "B", "C"]
#: (options, gold index, reply)
CASES = [
    (FOUR, "0", "A"), (FOUR, "0", "A."), (FOUR, "0", "a"), (FOUR, "0", "(A)"), (FOUR, "0", "A)"), (FOUR, "0", " A"),
    (FOUR, "0", "A\n"), (FOUR, "0", " A. sunlight"), (FOUR, "0", "A. B."), (FOUR, "1", "B: water"),
    (FOUR, "1", "The answer is B."), (FOUR, "1", "The correct answer is **B**"), (FOUR, "1", "water"),
    (FOUR, "2", "rabbits and foxes"), (FOUR, "3", "D"), (FOUR, "3", "d."), (FOUR, "2", "Option C"),
    (FOUR, "0", "I think A, not B"), (FOUR, "0", "Cannot determine the answer"), (FOUR, "0", ""),
    (FOUR, "1", "B.\nBecause plants need water."), (FOUR, "3", "E."), (FOUR, "2", "C!"),
    (LETTERS, "0", "A"), (LETTERS, "1", "The label B"), (LETTERS, "2", "C."), (LETTERS, "1", "b"),
    (FOUR, "0", "A) sunlight"), (FOUR, "0", "A: sunlight"), (FOUR, "2", "C - rabbits"), (FOUR, "1", "B.water"),
]


@pytest.mark.parametrize(("options", "gold", "reply"), CASES)
def test_the_task_reads_as_lmms_eval(options: list[str], gold: str, reply: str) -> None:
    reference = load("ai2d_utils_75571cf")
    doc = {"question": "Q?", "options": options, "answer": gold}
    registry, path = plugin("ai2d", "ai2d_scoring.py")
    parsed = registry.parsers.get("ai2d_lmms_eval", plugins=[path]).fn(reply, doc)
    ours = registry.metrics.get("ai2d_exact_match", plugins=[path])(parsed, "ABCD"[int(gold)], doc) / 100.0
    assert ours == reference.score(doc, reply)


@pytest.mark.parametrize(("options", "gold", "reply"), CASES)
def test_the_variant_vlmevalkit_reads_as_can_infer(options: list[str], gold: str, reply: str) -> None:
    reference = load_reference("vlmevalkit_matching_util_e8e78f0")
    doc = {"question": "Q?", "options": options, "answer": gold}
    registry, path = plugin("ai2d", "ai2d_scoring.py")
    parsed = registry.parsers.get("ai2d_vlmevalkit", plugins=[path]).fn(reply, doc)
    theirs = reference.can_infer(reply, {"ABCD"[k]: o for k, o in enumerate(options)})
    assert parsed == (theirs or None)


def test_the_cases_tell_the_readings_apart() -> None:
    registry, path = plugin("ai2d", "ai2d_scoring.py")
    lmms = registry.parsers.get("ai2d_lmms_eval", plugins=[path]).fn
    vlm = registry.parsers.get("ai2d_vlmevalkit", plugins=[path]).fn
    match = registry.metrics.get("ai2d_exact_match", plugins=[path])
    differ = [c for c in CASES if match(lmms(c[2], {"options": c[0]}), "ABCD"[int(c[1])], {})
              != match(vlm(c[2], {"options": c[0]}), "ABCD"[int(c[1])], {})]
    assert len(differ) >= 5
