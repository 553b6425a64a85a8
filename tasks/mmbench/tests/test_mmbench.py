"""MMBench from a copy of its folder on an include path (the v1.1 TSV layout and the lmms-lab/MMBench
Hub layout): replayed replies, CircularEval scored by hand."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.folder_runs import hub_folder, package_unchanged, plugin
from tests.folder_runs import parts_of, results_of, run_copy_target as run_copy, samples_of


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mmbench"):
        yield


# The sample's English questions and their circular copies (data/sample/mmbench, make_sample.py):
#   3 (4 options, gold B; copies 1000003 A, 2000003 D, 3000003 C)  attribute_recognition
#   17 (2 options, gold A; copy 1000017 B)                           image_topic
#   42 (3 options, gold C; copies 1000042 B, 2000042 A)              spatial_relationship
#: doc -> (reply, VLMEvalKit's letter, lmms-eval's letter)
REPLIES = {
    "3": ("B", "B", "B"),
    # one letter, among the last four words; lmms-eval takes "A" in a reply of more than three
    # words for a quantifier ("A cat ..."), and no affix or option text follows: unread
    "1000003": ("The answer is A", "A", None),
    "2000003": ("D. blue", "D", "D"),
    "3000003": ("(C)", "C", "C"),                            # lmms-eval: the "(X)" affix
    "17": ("A", "A", "A"),
    "1000017": ("yes", "B", "B"),                            # the option text ("no", "yes")
    "42": ("C", "C", "C"),
    # one letter, but the first of 14 words (not among the last four), no "answer is X", and longer
    # than twice the options' text: VLMEvalKit reads nothing; lmms-eval's lone letter rule reads B
    "1000042": ("B is the answer because the triangle is clearly on the left side here", None, "B"),
    "2000042": ("A", "A", "A"),
}


def check(proc: subprocess.CompletedProcess, out: Path, task: str) -> None:
    assert proc.returncode == 1, proc.stderr  # one unparsed reply is a problem
    results = results_of(out)
    res = results["results"][task]
    # CircularEval: 3 and 17 have every copy right; 42 has one copy unread: 2 of 3 questions
    assert res["circular_acc"] == pytest.approx(100 * 2 / 3)
    assert res["acc"] == pytest.approx(100 * 8 / 9)  # per copy
    assert results["problems"][task]["unparsed"] == 1
    assert results["n-samples"][task]["questions"] == 3
    rows = results["breakdowns"][task]
    assert {k: v["circular_acc"] for k, v in rows["category"].items()} == {
        "attribute_recognition": 100.0, "image_topic": 100.0, "spatial_relationship": 0.0}
    assert {k: (v["circular_acc"], v["n"]) for k, v in rows["l2_category"].items()} == {
        "finegrained_perception (instance-level)": (100.0, 4), "coarse_perception": (100.0, 2),
        "finegrained_perception (cross-instance)": (0.0, 3)}
    # lmms-eval's reading: 17 and 42 have every copy right, 3 one copy unread: 2 of 3 again, but
    # not the same two questions
    variant = results["variants"][task]["lmms_eval"]
    assert variant["metrics"]["circular_acc"] == pytest.approx(100 * 2 / 3)
    assert variant["metrics"]["acc"] == pytest.approx(100 * 8 / 9)
    assert {k: v["circular_acc"] for k, v in variant["breakdowns"]["category"].items()} == {
        "attribute_recognition": 0.0, "image_topic": 100.0, "spatial_relationship": 100.0}
    samples = samples_of(out, task)
    assert {d: s["parsed"] for d, s in samples.items()} == {d: v for d, (_, v, _) in REPLIES.items()}
    assert {d: s["extra"]["variants"]["lmms_eval"]["unparsed"] for d, s in samples.items()} == {
        d: int(lm is None) for d, (_, _, lm) in REPLIES.items()}


def rows(task: str) -> list[tuple[str, str, str]]:
    return [(task, d, r) for d, (r, *_) in REPLIES.items()]


def test_mmbench_v11_from_the_tsv_layout(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "mmbench", "mmbench_dev_en_v11_copy", rows("mmbench_dev_en_v11_copy"))
    check(proc, out, "mmbench_dev_en_v11_copy")
    samples = samples_of(out, "mmbench_dev_en_v11_copy")
    # VLMEvalKit's prompt: the image, the question, the options present, the instruction
    assert parts_of(samples["1000042"]) == [
        "<img>", "Question: Which shape is on the left?\nOptions:\nA. triangle\nB. square\nC. circle\n"
        "Please select the correct answer from the options above. \n"]
    assert parts_of(samples["17"])[1].startswith("Hint: The image shows one shape.\nQuestion: Is there a star")


def test_mmbench_v10_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hub = {"mmbench_dev_en.yaml": {"path: lmms-lab/MMBench": f"path: {hub_folder('mmbench', 'hf')}"}}
    proc, out = run_copy(tmp_path, "mmbench", "mmbench_dev_en_copy", rows("mmbench_dev_en_copy"), hub=hub)
    check(proc, out, "mmbench_dev_en_copy")


@pytest.mark.parametrize(("reply", "vlmevalkit", "lmms_eval"), [
    ("B", "B", "B"),
    ("B.", "B", "B"),
    ("Answer: C", "C", "C"),
    # VLMEvalKit: "A" not among the last four words, the reply too long for the option texts;
    # lmms-eval: "A" a word of a long reply is taken for a quantifier, then the one option text named
    ("I choose A because it is red and round", None, "A"),
    ("A B", None, None),                                    # two letters, no option text
    ("the correct answer is **b**", "B", None),             # "answer is X", any case (VLMEvalKit only)
    ("E", None, "E"),                                       # lmms-eval looks for A-E whatever the options
    ("Cannot determine the answer", "Z", None),
    ("Failed to obtain answer via API", None, None),
    ("green", "C", "C"),                                    # the option text
])
def test_the_two_readings(reply: str, vlmevalkit: str | None, lmms_eval: str | None) -> None:
    registry, path = plugin("mmbench", "mmbench_scoring.py")
    doc = {"A": "red", "B": "blue", "C": "green", "D": None}
    assert registry.parsers.get("mmbench_option", plugins=[path]).fn(reply, doc) == vlmevalkit
    assert registry.parsers.get("mmbench_option_lmms_eval", plugins=[path]).fn(reply, doc) == lmms_eval


def test_convert_tsv_resolves_the_copies_image_references(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    import base64
    import importlib.util
    import json

    from tests.folder_runs import PACKAGE_TASKS, SAMPLE

    jpeg = (SAMPLE / "mmbench" / "images" / "en" / "3.jpg").read_bytes()
    encoded = base64.b64encode(jpeg).decode()
    header = "index\tquestion\thint\tA\tB\tC\tD\tanswer\tcategory\timage\tsource\tl2-category\tcomment\tsplit\n"
    rows = [f"3\tq?\t\tred\tblue\t\t\tB\tc\t{encoded}\ts\tl2\t\tdev\n",
            "1000003\tq?\t\tblue\tred\t\t\tA\tc\t3\ts\tl2\t\tdev\n"]
    tsv = tmp_path / "MMBench_DEV_EN_V11.tsv"
    tsv.write_text(header + "".join(rows), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("mmbench_convert", PACKAGE_TASKS / "mmbench" / "convert_tsv.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.convert(tsv, tmp_path / "mmbench")
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["image"] for r in records] == ["images/MMBench_DEV_EN_V11/3.jpg"] * 2  # the copy names its original's file
    assert (tmp_path / "mmbench" / records[0]["image"]).read_bytes() == jpeg
    assert records[1] == {"index": 1000003, "question": "q?", "hint": None, "A": "blue", "B": "red", "C": None, "D": None,
                          "answer": "A", "category": "c", "image": records[1]["image"], "source": "s", "l2-category": "l2",
                          "comment": None, "split": "dev"}


@pytest.mark.parametrize(("lang", "post_prompt"), [
    ("en", "\nAnswer with the option's letter from the given choices directly."),
    ("cn", "\n请直接使用所提供的选项字母作为答案回答。"),
])
def test_the_lmms_eval_prompt_variant(tmp_path: Path, lang: str, post_prompt: str) -> None:
    """mmbench_dev_{en,cn}_lmms_eval send what lmms-eval's mmbench_doc_to_text builds: the options from
    its MMBench_Evaluator.create_options_prompt, run verbatim (reference/), in its f-string."""
    import importlib.util
    import json

    from tests.folder_runs import SAMPLE

    spec = importlib.util.spec_from_file_location("lmms_mmbench", Path(__file__).parent / "reference" / "lmms_eval_mmbench_evals_75571cf.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    evaluator = module.MMBench_Evaluator(sys_prompt="There are several options:")
    task = f"mmbench_dev_{lang}_lmms_eval_copy"
    records = [json.loads(line) for line in (SAMPLE / "mmbench" / f"MMBench_DEV_{lang.upper()}.jsonl").read_text(encoding="utf-8").splitlines()]
    proc, out = run_copy(tmp_path, "mmbench", task, [(task, str(r["index"]), "A") for r in records])
    assert proc.returncode == 0, proc.stderr
    samples = samples_of(out, task)
    for doc in records:
        options, _ = evaluator.create_options_prompt(doc, ["A", "B", "C", "D", "E"])
        query = f"{doc['hint']} {doc['question']} {options}" if doc["hint"] is not None else f"{doc['question']} {options}"
        assert parts_of(samples[str(doc["index"])]) == ["<img>", f"{query}\n{post_prompt}"]
