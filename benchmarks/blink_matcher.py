#!/usr/bin/env python
"""How close the LLM answer matcher (``--matcher``) brings mmtasks to the BLINK authors' letters.

    python benchmarks/blink_matcher.py tests/fixtures/published/blink/val_outputs.jsonl.gz [--models GPT4V,OPUS]
    python benchmarks/blink_matcher.py PATH/TO/BLINK_Benchmark    # a checkout: eval/saved_outputs

The authors release, for each of the 19 baselines of their paper, every val reply
(``eval/saved_outputs/<model>/<Subtask>.json``: ``full_prediction``) with the letter their
``analyze_answer`` extracted (``prediction``: their token heuristic, and gpt-3.5-turbo where it
could not decide) and the gold letter (``answer``). For each model this script runs the 14
``blink_*`` tasks end to end: the replies replayed (``--model replay:``), read by the tasks' rule
(``first_letter``), and every reply the rule cannot read sent to the matcher (``--matcher``) - a
loopback OpenAI-compatible server (``tests/chat_server.py``) that plays an **honest matcher**:
it answers with the authors' extracted letter for that reply (their gpt-3.5-turbo's answer
where they asked it; their heuristic's letter where they did not). It prints, per model and in
all, how often mmtasks' letter is theirs without and with the matcher, and the val averages
(the mean of the 14 subtask accuracies, ``eval/evaluate.py``) from their letters, from the rule
alone (results.json's ``matcher[task].without_matcher``) and with the matcher (``results``).

The saved outputs hold neither the questions nor the option texts: each record gets its idx as
its question (the loopback matcher finds the reply by it) and placeholder options, A up to the
highest gold letter of its subtask (every subtask's number of choices in practice). Their letter
is the one their evaluation counts: a prediction that is exactly "(X)"; anything else (a
"(Z) Failed", a matcher reply with more text) is no letter, as ``eval/evaluate.py`` compares
predictions with the gold "(X)" exactly.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.chat_server import ChatServer  # noqa: E402
from tests.chat_wire import last_user_text  # noqa: E402

_THEIR_LETTER = re.compile(r"^\(([A-E])\)$")
_QUESTION = re.compile(r"Example 4: \nQuestion: (\S+)\nSelect from the following choices\?")


def their_letter(prediction: Any) -> str | None:
    """The letter the authors' evaluation counts: a prediction that is exactly "(X)"."""
    match = _THEIR_LETTER.match(prediction.strip()) if isinstance(prediction, str) else None
    return match.group(1) if match else None


def subtask_of(idx: str) -> str:
    """evaluate.py's task of an idx (``val_Multi-view_Reasoning_12`` -> ``Multi-view_Reasoning``)."""
    return "_".join(idx.split("val")[1][1:].split("_")[:-1])


def load_models(source: Path) -> dict[str, list[dict[str, Any]]]:
    """model -> its val records (``idx``, ``answer``, ``full_prediction``, ``prediction``), from a
    checkout's ``eval/saved_outputs/<model>/<Subtask>.json`` or from the bundled extract
    (``tests/fixtures/published/blink/val_outputs.jsonl.gz``: the same records with ``model``)."""
    out: dict[str, list[dict[str, Any]]] = {}
    if source.is_file():
        with gzip.open(source, "rt", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    record = json.loads(line)
                    out.setdefault(record["model"], []).append(record)
        return out
    root = source / "eval" / "saved_outputs"
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and "concat" not in p.name):
        for path in sorted(folder.glob("*.json")):
            out.setdefault(folder.name, []).extend(json.loads(path.read_text(encoding="utf-8"))["val"])
    return out


def write_model(records: list[dict[str, Any]], work: Path) -> tuple[Path, Path, dict[str, Any]]:
    """The model's replies as BLINK records (data/blink/<Subtask>.jsonl) and a replay file;
    idx -> their prediction (what the honest matcher answers)."""
    data = work / "data" / "blink"
    data.mkdir(parents=True, exist_ok=True)
    replies = work / "replies.jsonl"
    theirs: dict[str, Any] = {}
    by_subtask: dict[str, list[dict[str, Any]]] = {}
    for d in records:
        by_subtask.setdefault(subtask_of(d["idx"]), []).append(d)
    with replies.open("w", encoding="utf-8") as out:
        for subtask, rows in sorted(by_subtask.items()):
            n_letters = max(ord(d["answer"].strip("()")) - ord("A") + 1 for d in rows)
            with (data / f"{subtask}.jsonl").open("w", encoding="utf-8") as fh:
                for d in rows:
                    choices = [f"option {chr(ord('A') + k)}" for k in range(n_letters)]
                    fh.write(json.dumps({"idx": d["idx"], "question": d["idx"], "image_1": None, "image_2": None,
                                         "image_3": None, "image_4": None, "choices": choices, "answer": d["answer"],
                                         "prompt": f"{d['idx']}\nSelect from the following choices."}) + "\n")
                    out.write(json.dumps({"task": f"blink_{subtask.lower().replace('-', '_')}", "doc_id": d["idx"],
                                          "responses": [d["full_prediction"] or ""]}) + "\n")
                    theirs[d["idx"]] = d["prediction"]
    return work / "data", replies, theirs


def honest_matcher(theirs: dict[str, Any]):  # type: ignore[no-untyped-def]
    """The loopback matcher's reply function: the authors' extracted prediction for the reply."""

    def reply(body: dict) -> str:
        match = _QUESTION.search(last_user_text(body))
        if match is None:  # the backend's start-up probe
            return "(Z)"
        prediction = theirs.get(match.group(1))
        return prediction if isinstance(prediction, str) and prediction.strip() else "(Z) Failed"

    return reply


def run_model(records: list[dict[str, Any]], work: Path, server: ChatServer) -> dict[str, Any]:
    """One model's counts: replies, agreement with their letter without / with the matcher,
    replies asked about, and the three val averages."""
    import mmtasks

    data, replies, theirs = write_model(records, work)
    server.reply = honest_matcher(theirs)
    result = mmtasks.evaluate(tasks="blink", model=f"replay:{replies}", data_dir=data, output_path=work / "run",
                              matcher="openai:gpt-3.5-turbo", matcher_args={"base_url": server.base_url, "max_retries": 0},
                              use_cache=False, allow_failures=True, overwrite=True)
    out = {"n": 0, "rule_agree": 0, "matcher_agree": 0, "asked": 0, "theirs": [], "rule": [], "with": []}
    for task, samples in result.samples.items():
        right = {"theirs": 0, "rule": 0, "with": 0}
        for s in samples:
            gold = s.target
            mine = s.parsed
            rule_letter = None if "matcher" in s.extra else mine  # the matcher is asked only when the rule read none
            letter = their_letter(theirs.get(s.doc_id))
            out["n"] += 1
            out["rule_agree"] += rule_letter == letter
            out["matcher_agree"] += mine == letter
            out["asked"] += "matcher" in s.extra
            right["theirs"] += letter == gold
            right["rule"] += rule_letter == gold
            right["with"] += mine == gold
        for key in right:
            out[key].append(100 * right[key] / len(samples))
        summary = result["matcher"][task]
        assert abs(summary["without_matcher"]["acc"] - out["rule"][-1]) < 1e-9, task  # results.json says the same
        assert abs(result["results"][task]["acc"] - out["with"][-1]) < 1e-9, task
    for key in ("theirs", "rule", "with"):
        out[key] = sum(out[key]) / len(out[key])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a checkout of github.com/zeyofu/BLINK_Benchmark (eval/saved_outputs), "
                        "or the bundled tests/fixtures/published/blink/val_outputs.jsonl.gz")
    parser.add_argument("--models", default="", help="comma-separated models (default: all 19)")
    parser.add_argument("--work", type=Path, default=None, help="working folder (default: a temporary one)")
    args = parser.parse_args(argv)
    wanted = {m for m in args.models.split(",") if m}
    models = {name: rows for name, rows in load_models(args.source).items() if not wanted or name in wanted}
    started = time.perf_counter()
    totals = {"n": 0, "rule_agree": 0, "matcher_agree": 0, "asked": 0}
    gaps: dict[str, list[float]] = {"rule": [], "with": []}
    print(f"{'model':24s} {'replies':>7s} {'asked':>6s} {'agree rule':>10s} {'+matcher':>9s} {'theirs':>7s} {'rule':>7s} {'+matcher':>9s}")
    with tempfile.TemporaryDirectory() as tmp, ChatServer() as server:
        work_root = args.work or Path(tmp)
        for name, rows in models.items():
            row = run_model(rows, work_root / name, server)
            for key in totals:
                totals[key] += row[key]
            gaps["rule"].append(row["rule"] - row["theirs"])
            gaps["with"].append(row["with"] - row["theirs"])
            print(f"{name:24s} {row['n']:7d} {row['asked']:6d} {row['rule_agree'] / row['n']:10.3f} "
                  f"{row['matcher_agree'] / row['n']:9.3f} {row['theirs']:7.2f} {row['rule']:7.2f} {row['with']:9.2f}")
    n = totals["n"]
    print(f"all: {n} replies, {totals['asked']} ({totals['asked'] / n:.1%}) sent to the matcher; their letter for "
          f"{totals['rule_agree'] / n:.1%} of the replies by the rule alone, {totals['matcher_agree'] / n:.1%} with the matcher")
    for key, label in (("rule", "rule alone"), ("with", "with the matcher")):
        values = gaps[key]
        print(f"val average, {label}: mean |gap| to theirs {sum(abs(v) for v in values) / len(values):.2f} points, "
              f"largest {max(values, key=abs):+.2f}, over {len(values)} models")
    print(f"{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
