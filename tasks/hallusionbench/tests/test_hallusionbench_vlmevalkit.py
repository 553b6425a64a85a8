"""HallusionBench's ``vlmevalkit`` variant against VLMEvalKit's code, run verbatim (the shared
``tests/reference/vlmevalkit_yorn_e8e78f0.py``, commit e8e78f05, Apache-2.0).

VLMEvalKit's ``ImageYORNDataset.evaluate`` (``vlmeval/dataset/image_yorn.py``) reads each reply with
``YOrN_Extraction``, asks its judge (``YOrN_auxeval``: ``YOrN_match_prompt``) about the replies read as
Unknown when it has one, scores ``answer == extracted`` and rates with ``Hallusion_rating``. Its TSV holds
the image split only (951 questions), so the no-figure questions of the sample are not in its data.
Here: every reply below reads alike by ``YOrN_Extraction`` and by the variant's parser; ``Hallusion_rating``
on the sample's replies and on tricky ones gives the variant's aAcc, fAcc, qAcc (and its per-split aAcc
the variant's breakdowns); with ``--matcher``, the matcher is asked ``YOrN_match_prompt``'s text byte for
byte about the Unknown replies only, and ``YOrN_auxeval`` with a stand-in judge giving the same answers
leads ``Hallusion_rating`` to the variant's figures. Every figure is also worked out by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hb_replies import REPLIES, VLMEVALKIT
from tests.folder_runs import SAMPLE, copy_bench_files, plugin, predictions, read_jsonl, results_of, samples_of
from tests.reference_code import load_reference

TASK = "hallusionbench_copy"

#: doc id -> a reply VLMEvalKit's rule reads oddly (the no-figure VS questions are not in its data):
#: "**Yes**" is no word "yes" ("*" is not among process_punctuation's marks); yes and no both: Unknown;
#: "no." -> "no"; "Yes/No: yes" -> "yes no: yes", whose "no:" is no "no": Yes; "Nope": Unknown; "No!"
#: followed by a space loses its "!": No
TRICKY: dict[str, str] = {
    "VD_illusion_0_0_0": "**Yes**, they are the same size.",       # gold Yes: Unknown
    "VD_illusion_0_0_1": "No, they are not. Yes, the left one looks bigger.",  # gold No: Unknown
    "VD_illusion_0_1_0": "no.",                                    # gold No: No
    "VD_illusion_0_1_1": "The answer is No",                       # gold No: No
    "VS_chart_0_0_0": "Yes",
    "VS_chart_0_0_1": "No",
    "VS_chart_0_1_0": "Yes/No: yes",                               # gold Yes: Yes
    "VS_chart_0_1_1": "Nope, 2019 was lower.",                     # gold No: Unknown
    "VS_map_1_0_0": "Yes.",
    "VS_map_1_1_0": "No! Lyon, per the image.",                    # gold No: No
}
#: by hand, without a matcher: right 0_1_0, 0_1_1, chart_0_1_0, map_1_1_0: aAcc 4 of 7; figures
#: VD_illusion_0_0 (wrong, wrong) no, VD_illusion_0_1 yes, VS_chart_0_1 (right, wrong) no, VS_map_1_1 yes:
#: 2 of 4; questions VD q0 (wrong, right) no, VD q1 (wrong, right) no, chart q0 yes, chart q1 no, map q0
#: yes: 2 of 5
TRICKY_RULE = {"aAcc": 400 / 7, "fAcc": 50.0, "qAcc": 40.0}
#: the matcher's answer to each reply the rule reads as Unknown (by the reply's first words)
MATCHER = {"**Yes**": "Yes", "No, they": "No", "Nope": "Unknown"}
#: by hand, with it: VD_illusion_0_0_0 and _0_0_1 now right, VS_chart_0_1_1 stays wrong: aAcc 6 of 7;
#: figures VD_illusion_0_0 yes, 0_1 yes, VS_chart_0_1 no, VS_map_1_1 yes: 3 of 4; questions VD q0, VD q1,
#: chart q0, map q0 right, chart q1 not: 4 of 5
TRICKY_MATCHED = {"aAcc": 600 / 7, "fAcc": 75.0, "qAcc": 80.0}
#: hand-written replies read one by one by both (gold unused): marks the rule drops or spaces, digits
EDGE = ["Yes", "yes.", "YES!", "No.", "no", "(no)", "Yes, no", "yes-no", "yes/no", "Yes;", "No;it is not",
        "I'd say yes", "yesterday", "nope", "No, 1,000 were sold", "No,1,000", "Yes... probably", "\"Yes\"",
        "[No]", "yes\nno", "", "   ", "Y", "N", "No-one knows", "It is not (yes)", "**No**", "Yes: 3.5", "noyes"]


def scoring() -> Any:
    registry, path = plugin("hallusionbench", "hallusionbench_scoring.py")
    return registry._PLUGIN_MODULES[path]


def image_split() -> list[dict[str, Any]]:
    """The sample's records VLMEvalKit's TSV has: those with a figure (visual_input 1 or 2)."""
    rows = []
    for r in read_jsonl(SAMPLE / "hallusionbench" / "hallusionbench.jsonl"):
        if r["image"] is not None:
            key = "_".join(r[f] for f in ("category", "subcategory", "set_id", "figure_id", "question_id"))
            rows.append({**r, "key": key})
    return rows


def tsv_rows(replies: dict[str, str]) -> list[dict[str, Any]]:
    """The records as VLMEvalKit's HallusionBench.tsv has them: category VD/VS, l2-category
    <category>_<subcategory> (its score files' splits, e.g. "VD_video"), answer Yes/No, and an index whose
    fourth to sixth "_" fields are set_id, figure_id, question_id, as Hallusion_rating reads them (ours:
    the TSV itself is not readable here; its first three fields are never read)."""
    return [{"index": f"hb_{r['category']}_{r['subcategory']}_{r['set_id']}_{r['figure_id']}_{r['question_id']}",
             "category": r["category"], "l2-category": f"{r['category']}_{r['subcategory']}",
             "question": r["question"], "answer": "Yes" if str(r["gt_answer"]) == "1" else "No",
             "prediction": replies[r["key"]]} for r in image_split()]


def rate(ref: Any, rows: list[dict[str, Any]], extracted: dict[str, str]) -> dict[str, dict[str, float]]:
    """ImageYORNDataset.evaluate's last steps: score = answer == extracted, then Hallusion_rating; by split."""
    pd = pytest.importorskip("pandas")
    data = pd.DataFrame(rows)
    data["extracted"] = [extracted[x] for x in data["index"]]
    data["score"] = data["answer"] == data["extracted"]
    table = ref.Hallusion_rating(data)
    return {row["split"]: {k: float(row[k]) for k in ("aAcc", "fAcc", "qAcc")} for _, row in table.iterrows()}


def replay(tmp_path: Path, replies: dict[str, str], *extra: str) -> Path:
    from mmtasks.cli import main

    tasks = tmp_path / "tasks"
    copy_bench_files("hallusionbench", tasks)
    model = predictions(tmp_path / "pred.jsonl", [(TASK, d, r) for d, r in replies.items()])
    judge = predictions(tmp_path / "judge.jsonl", [(TASK, d, "correct") for d in replies])
    out = tmp_path / "out"
    code = main(["--tasks", TASK, "--include-path", str(tasks), "--data-dir", str(SAMPLE), "--model", f"replay:{model}",
                 "--judge", f"replay:{judge}", "--output-path", str(out), "--no-progress", *extra])
    assert code == 0
    return out


@pytest.mark.parametrize("reply", EDGE + list(TRICKY.values()) + [r for r, *_ in REPLIES.values()])
def test_each_reply_reads_as_yorn_extraction(reply: str) -> None:
    ref = load_reference("vlmevalkit_yorn_e8e78f0")
    theirs = ref.YOrN_Extraction(reply)
    assert scoring().read_yes_no_vlmevalkit(reply) == (None if theirs == "Unknown" else theirs)


def test_hand_readings() -> None:
    read = scoring().read_yes_no_vlmevalkit
    assert [read(r) for r in ("**Yes**, they are.", "Yes/No: yes", "No! Lyon.", "yes.", "Yes, no", "No, 1,000")] == [
        None, "Yes", "No", "Yes", None, "No"]


@pytest.mark.parametrize(("replies", "expected"), [({k: r for k, (r, *_) in REPLIES.items()}, VLMEVALKIT),
                                                   (TRICKY, TRICKY_RULE)], ids=["sample", "tricky"])
def test_hallusion_rating_verbatim_gives_the_variant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     replies: dict[str, str], expected: dict[str, float]) -> None:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    ref = load_reference("vlmevalkit_yorn_e8e78f0")
    rows = tsv_rows(replies)
    theirs = rate(ref, rows, {r["index"]: ref.YOrN_Extraction(r["prediction"]) for r in rows})
    assert theirs["Overall"] == pytest.approx(expected)
    variant = results_of(replay(tmp_path, replies))["variants"][TASK]["vlmevalkit"]
    assert {k: variant["metrics"][k] for k in expected} == pytest.approx(theirs["Overall"])
    # its per-split aAcc: the variant's breakdowns (category VD/VS; its l2-category VD_illusion is our VD/illusion)
    for split, scores in theirs.items():
        if split == "Overall":
            continue
        table, label = ("category", split) if split in ("VD", "VS") else ("subcategory", split.replace("_", "/", 1))
        assert variant["breakdowns"][table][label]["correct"] == pytest.approx(scores["aAcc"]), split


def test_the_matcher_asks_yorn_match_prompt(tmp_path: Path, chat_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --matcher, the replies YOrN_Extraction reads as Unknown go to the LLM with YOrN_match_prompt's
    text byte for byte, and nothing else; YOrN_auxeval with a stand-in judge giving the same answers (its
    first try at temperature 0 answered) and Hallusion_rating give the variant's figures."""
    from tests.chat_wire import last_user_text

    ref = load_reference("vlmevalkit_yorn_e8e78f0")

    def answer(prompt: str) -> str:
        reply = prompt.rsplit("\nAnswer: ", 1)[1]
        return next(v for k, v in MATCHER.items() if reply.startswith(k))

    chat_server.reply = lambda body: answer(last_user_text(body)) if "\nAnswer: " in last_user_text(body) else "pong"
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    out = replay(tmp_path, TRICKY, "--matcher", "openai:matcher-model")
    asked = sorted(t for t in map(last_user_text, chat_server.bodies) if "\nAnswer: " in t)

    class Judge:
        """VLMEvalKit's judge as YOrN_auxeval calls it: model.generate(prompt, temperature=...)."""

        def __init__(self) -> None:
            self.prompts: list[str] = []

        def generate(self, prompt: str, temperature: float = 0) -> str:
            self.prompts.append(prompt)
            return answer(prompt)

    judge, rows = Judge(), tsv_rows(TRICKY)
    extracted = {r["index"]: ref.YOrN_Extraction(r["prediction"]) for r in rows}
    for r in rows:
        if extracted[r["index"]] == "Unknown":
            extracted[r["index"]] = ref.YOrN_auxeval(judge, r)
    assert asked == sorted(set(judge.prompts)) and len(asked) == 3
    theirs = rate(ref, rows, extracted)["Overall"]
    assert theirs == pytest.approx(TRICKY_MATCHED)
    variant = results_of(out)["variants"][TASK]["vlmevalkit"]["metrics"]
    assert {k: variant[k] for k in theirs} == pytest.approx(theirs)
    samples = samples_of(out, TASK)
    read = {d: (s["extra"]["variants"]["vlmevalkit"]["read_by"], s["extra"].get("matcher", {}).get("read"))
            for d, s in samples.items()}
    assert read["VD_illusion_0_0_0"] == ("matcher", "Yes") and read["VS_chart_0_1_1"] == (None, None)
    assert read["VD_illusion_0_1_0"] == ("rule", None)
    # the task's own figures (the judge's "correct" on every reply) are not the matcher's
    assert results_of(out)["results"][TASK]["aAcc"] == 100.0
