"""benchmarks/blink_matcher.py on a hand-made saved_outputs folder (the BLINK authors' layout):
the replies the rule cannot read go to the loopback honest matcher, and the counts it prints are
the hand-computed ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import blink_matcher

SUBTASKS = ["Art Style", "Counting", "Forensic Detection", "Functional Correspondence", "IQ Test", "Jigsaw",
            "Multi-view Reasoning", "Object Localization", "Relative Depth", "Relative Reflectance",
            "Semantic Correspondence", "Spatial Relation", "Visual Correspondence", "Visual Similarity"]


def test_the_benchmark_counts_agreement_with_and_without_the_matcher(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "eval" / "saved_outputs" / "SomeModel"
    folder.mkdir(parents=True)
    for name in SUBTASKS:
        key = name.replace(" ", "_")
        records = [{"idx": f"val_{key}_1", "answer": "(B)", "full_prediction": "(A) is right", "prediction": "(A)"}]
        if name == "Counting":
            records += [
                # the rule reads no letter; their matcher said (B): the honest matcher says it too
                {"idx": "val_Counting_2", "answer": "(B)", "full_prediction": "There are two.", "prediction": "(B)"},
                # the rule reads no letter; their matcher found none
                {"idx": "val_Counting_3", "answer": "(A)", "full_prediction": "I can't tell.", "prediction": "(Z) Failed"},
                # the rule reads C; their heuristic read D (the rule and theirs disagree)
                {"idx": "val_Counting_4", "answer": "(D)", "full_prediction": "C or (D)? (D).", "prediction": "(D)"},
            ]
        (folder / f"{name}.json").write_text(json.dumps({"val": records, "test": []}))
    assert blink_matcher.main([str(tmp_path), "--work", str(tmp_path / "work")]) == 0
    out = capsys.readouterr().out
    # 17 replies; 2 asked. Agreement with their letter, rule alone: the 14 "(A) is right" (A = A) and
    # "I can't tell" (no letter = their "(Z) Failed", no letter); "There are two." (none vs B) and
    # "C or (D)? (D)." (C vs D) differ -> 15/17. With the matcher "There are two." is B too -> 16/17.
    assert "SomeModel                     17      2      0.882     0.941" in out
    # val averages: theirs 13 subtasks at 0 (A vs gold B) and Counting 2/4 -> 50/14 = 3.57;
    # rule: Counting 0/4 -> 0.00; with the matcher: Counting 1/4 -> 25/14 = 1.79
    assert out.splitlines()[1].split()[-3:] == ["3.57", "0.00", "1.79"]
    assert "all: 17 replies, 2 (11.8%) sent to the matcher" in out


def test_on_the_bundled_blink_outputs_the_matcher_closes_the_gap(tmp_path: Path) -> None:
    """OPUS, the model whose replies the rule reads least: the figures of benchmarks/README.md."""
    from tests.chat_server import ChatServer

    records = blink_matcher.load_models((Path(__file__).resolve().parents[3] / "tests") / "fixtures" / "published" / "blink" / "val_outputs.jsonl.gz")["OPUS"]
    with ChatServer() as server:
        row = blink_matcher.run_model(records, tmp_path / "OPUS", server)
    # their letter for 1,606 of the 1,901 replies by the rule alone (84.5%), 1,800 with the matcher (94.7%)
    assert (row["n"], row["asked"], row["rule_agree"], row["matcher_agree"]) == (1901, 269, 1606, 1800)
    assert [round(row[k], 2) for k in ("theirs", "rule", "with")] == [44.05, 38.39, 44.23]
