"""MMMU (validation), added as a task folder only (tasks/mmmu: 30 subject tasks, group mmmu_val).

It runs from a copy of its folder on an include path (tasks and groups renamed ``copy_mmmu_val*``),
in a subprocess with the package unchanged, on the bundled sample (data/sample/mmmu), from the
local JSONL and from the Hub-style parquet copy. The model replays scripted replies; every parse and
score below is worked out by hand from the sample's gold answers and MMMU's rules
(github.com/MMMU-Benchmark/MMMU mmmu/utils/eval_utils.py), as the comments say.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.core.conversation import Image
from mmtasks.task import Task
from tests.builders import folder_digest
from tests.folder_runs import predictions, read_jsonl, results_of, run_mmtasks, samples_of

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "data" / "sample"
PACKAGE_TASKS = REPO / "tasks"
MC = "Answer with the option's letter from the given choices directly."
OPEN = "Answer the question using a single word or phrase."


@pytest.fixture(autouse=True)
def package_unchanged():
    before = folder_digest(PACKAGE_TASKS / "mmmu")
    yield
    assert folder_digest(PACKAGE_TASKS / "mmmu") == before


def copy_mmmu(dest_root: Path, *, replace: dict[str, str] | None = None) -> None:
    """``tasks/mmmu`` copied to ``dest_root/mmmu_copy`` with every task and group renamed
    ``copy_mmmu_val...`` (and ``replace`` applied to ``_base.yaml``); no leaderboard tab."""
    dest = dest_root / "mmmu_copy"
    shutil.copytree(PACKAGE_TASKS / "mmmu", dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "leaderboard.yaml").unlink()
    for yaml_file in dest.glob("*.yaml"):
        text = yaml_file.read_text(encoding="utf-8").replace("mmmu_val", "copy_mmmu_val")
        if yaml_file.name == "_base.yaml":
            for old, new in (replace or {}).items():
                assert old in text, old
                text = text.replace(old, new)
        yaml_file.write_text(text, encoding="utf-8")


def subject_of(doc_id: str) -> str:
    return "_".join(doc_id.split("_")[1:-1])  # main_eval_only.py's category of an id


# doc id -> (reply, parsed, right); the gold answers are the sample's (data/sample/mmmu)
REPLIES: dict[str, tuple[str, object, bool]] = {
    # Art and Design
    "validation_Art_1": ("The sum is 26.", [26.0], True),                        # "is " -> "26"; gold 26
    "validation_Art_Theory_1": ("It is a circle", ["a circle"], True),            # gold "circle" inside "a circle"
    "validation_Design_1": ("D", "D", True),
    "validation_Music_1": ("square", ["square"], False),                          # gold diamond
    # Business
    "validation_Accounting_1": ("The value is 58, so (B)", "B", True),
    "validation_Economics_1": ("(A) or (B)? I'd say (B)", "B", True),             # two brackets: the last
    "validation_Economics_2": ("The sales were highest in Q3 of the year", "C", True),  # > 5 words: option text Q3
    "validation_Finance_1": ("C.", "C", True),
    "validation_Manage_1": ("star", ["star"], True),
    "validation_Marketing_1": ("I am not sure", "guess", True),                   # no match: guess B (gold B)
    # Science
    "validation_Biology_1": ("(C)", "C", True),
    "validation_Chemistry_1": ("The first one opens earlier", "guess", False),    # 5 words, no letter: guess C (gold A)
    "validation_Geography_1": ("B", "B", True),
    "validation_Math_1": ("A", "A", True),
    "validation_Math_2": ("24/7", [7.0, 24.0, "24/7"], True),                     # gold ['24/7', '3.429']
    "validation_Physics_1": ("D", "guess", False),                                # D is no option (A-C): guess B (gold A)
    "validation_Physics_2": ("(A)", "A", True),
    # Health and Medicine
    "validation_Basic_Medical_Science_1": ("A", "A", False),                      # gold D
    "validation_Clinical_Medicine_1": ("x = 76", [76.0], True),                   # "=" in the last line
    "validation_Diagnostics_and_Laboratory_Medicine_1": ("C", "C", True),
    "validation_Pharmacy_1": ("B", "B", True),
    "validation_Public_Health_1": ("The answer is 27", [27.0], False),            # gold 72
    # Humanities and Social Science
    "validation_History_1": ("B", "B", True),
    "validation_Literature_1": ("63", [63.0], True),
    "validation_Psychology_1": ("A", "A", False),                                 # gold B
    "validation_Sociology_1": ("star", ["star"], True),
    # Tech and Engineering
    "validation_Agriculture_1": ("C", "C", True),
    "validation_Architecture_and_Engineering_1": ("B", "B", True),
    "validation_Computer_Science_1": ("square", ["square"], True),
    "validation_Electronics_1": ("78.0", [78.0], True),                           # 78.0 equals gold 78
    "validation_Energy_and_Power_1": ("triangle", ["triangle"], True),
    "validation_Materials_1": ("B", "B", True),
    "validation_Mechanical_Engineering_1": ("85", [85.0], True),
}
#: the guesses: random.Random("42:<id>").choice(the letters), worked out once and written here
GUESSES = {"validation_Marketing_1": "B", "validation_Chemistry_1": "C", "validation_Physics_1": "B"}
#: subject accuracies from REPLIES: Music, Basic_Medical_Science, Public_Health, Psychology and
#: Chemistry 0; Physics 50 (1 of 2); every other subject 100
SUBJECT_ACC = {"Music": 0.0, "Basic_Medical_Science": 0.0, "Public_Health": 0.0, "Psychology": 0.0, "Chemistry": 0.0,
               "Physics": 50.0}
#: the groups: the mean of their subjects' accuracies
GROUPS = {"copy_mmmu_val": 2450 / 30,                        # 30 subjects: 24 x 100 + 50
          "copy_mmmu_val_art_design": 75.0,                  # Art, Art_Theory, Design 100; Music 0
          "copy_mmmu_val_business": 100.0,
          "copy_mmmu_val_science": 70.0,                     # (100 + 0 + 100 + 100 + 50) / 5
          "copy_mmmu_val_health_medicine": 60.0,             # (0 + 100 + 100 + 100 + 0) / 5
          "copy_mmmu_val_humanities_social_science": 75.0,   # Psychology 0
          "copy_mmmu_val_tech_engineering": 100.0}


def test_the_guesses_are_the_documented_draws() -> None:
    letters = {d: "ABCD" if d == "validation_Marketing_1" else "ABC" for d in GUESSES}
    assert {d: random.Random(f"42:{d}").choice(letters[d]) for d in GUESSES} == GUESSES


def check_run(out: Path) -> None:
    results = results_of(out)
    records = {r["id"]: r for f in sorted((SAMPLE / "mmmu").glob("*.jsonl")) for r in read_jsonl(f)}
    assert set(records) == set(REPLIES)
    tasks = {f"copy_mmmu_val_{s.lower()}": s for s in {subject_of(d) for d in REPLIES}}
    assert len(tasks) == 30
    for task, subject in tasks.items():
        assert results["results"][task]["acc"] == pytest.approx(SUBJECT_ACC.get(subject, 100.0)), task
        guessed = sum(1 for d in GUESSES if subject_of(d) == subject)
        assert results["problems"][task] == {"request_failures": 0, "unparsed": 0, "judge_failures": 0,
                                             **({"guessed": guessed} if guessed else {})}, task
        assert results["coverage"][task].get("guessed", 0) == guessed
        for doc_id, sample in samples_of(out, task).items():
            reply, parsed, right = REPLIES[doc_id]
            assert sample["parsed"] == (GUESSES[doc_id] if parsed == "guess" else parsed), doc_id
            assert sample["guessed"] == int(parsed == "guess"), doc_id
            assert sample["metrics"]["acc"] == (100.0 if right else 0.0), doc_id
    for group, average in GROUPS.items():
        assert results["groups"][group]["average"] == pytest.approx(average), group


def replies_file(tmp_path: Path) -> Path:
    return predictions(tmp_path / "pred.jsonl",
                       [(f"copy_mmmu_val_{subject_of(d).lower()}", d, reply) for d, (reply, _, _) in REPLIES.items()])


def test_mmmu_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    tasks, out = tmp_path / "tasks", tmp_path / "out"
    copy_mmmu(tasks)
    proc = run_mmtasks(["--tasks", "copy_mmmu_val", "--include-path", str(tasks), "--data-dir", str(SAMPLE),
                        "--model", f"replay:{replies_file(tmp_path)}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr  # 3 guesses are problems (counted, shown)
    assert "guessed=1" in proc.stderr
    check_run(out)
    # the images where the tags name them: the question's and the options'
    physics = samples_of(out, "copy_mmmu_val_physics")["validation_Physics_2"]
    parts = ["<img>" if p["type"] == "image" else p["text"] for p in physics["prompt"][-1]["content"]]
    assert parts == ["The arrow in ", "<img>", " points along a force. Which diagram shows the same direction?\n(A) ",
                     "<img>", "\n(B) ", "<img>", f"\n(C) Neither of them\n\n{MC}"]
    images = [p["image"] for p in physics["prompt"][-1]["content"] if p["type"] == "image"]
    assert [Path(i).name for i in images] == ["1.jpg", "2.jpg", "3.jpg"]


def test_mmmu_from_the_hub_layout(tmp_path: Path) -> None:
    """The same YAML reads the Hugging Face dataset, one config per subject; here its ``path``
    names the Hub-style sample folder (parquet, embedded images) instead of MMMU/MMMU."""
    tasks, out = tmp_path / "tasks", tmp_path / "out"
    copy_mmmu(tasks, replace={"path: MMMU/MMMU": f"path: {json.dumps(str(SAMPLE / 'mmmu' / 'hf'))}"})
    proc = run_mmtasks(["--tasks", "copy_mmmu_val", "--include-path", str(tasks),  # no --data-dir: the hf source
                        "--model", f"replay:{replies_file(tmp_path)}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr
    check_run(out)
    physics = samples_of(out, "copy_mmmu_val_physics")["validation_Physics_2"]
    assert sum(p["type"] == "image" for p in physics["prompt"][-1]["content"]) == 3


def test_mmmu_random_baseline_scores_every_question(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "mmmu_val", "--data-dir", str(SAMPLE), "--model", "random",
                        "--output-path", str(out), "--no-cache"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    assert sum(results["n-samples"][t]["effective"] for t in results["results"]) == len(REPLIES)
    assert all(results["coverage"][t]["percent"] == 100.0 for t in results["results"])
    assert 0.0 <= results["groups"]["mmmu_val"]["average"] <= 100.0


# --- the prompt: construct_prompt of mmmu/utils/data_utils.py with configs/llava1.5.yaml ------------

#: "{question}\n{options}\nAnswer with ..." where options are "(A) option\n" lines, and
#: "{question}\nAnswer the question using ..." for open questions, written out by hand; the
#: "<image k>" tags stay here as text: each must be image_k, in place
OFFICIAL_PROMPTS = {
    "validation_Economics_2": f"<image 1> In which quarter were the sales highest?\n(A) Q1\n(B) Q2\n(C) Q3\n(D) Q4\n"
                              f"(E) The sales did not change\n\n{MC}",
    "validation_Physics_2": "The arrow in <image 1> points along a force. Which diagram shows the same direction?\n"
                            f"(A) <image 2>\n(B) <image 3>\n(C) Neither of them\n\n{MC}",
    "validation_Agriculture_1": f"Which image shows a blue square?\n(A) <image 1>\n(B) <image 2>\n(C) <image 3>\n\n{MC}",
    "validation_Math_2": f"What is 24 divided by 7? Give it as a fraction or as a decimal. <image 1>\n{OPEN}",
    "validation_Art_Theory_1": f"Name the shape drawn in <image 1>.\n{OPEN}",
}


def test_the_prompt_is_the_official_one_with_images_at_their_tags() -> None:
    registry = TaskRegistry.discover()
    seen = set()
    for doc_id, expected in OFFICIAL_PROMPTS.items():
        config, path = registry.load(f"mmmu_val_{subject_of(doc_id).lower()}")
        task = Task(config, path)
        doc = next(d for d in task.documents(SAMPLE) if d.doc_id == doc_id)
        (message,) = task.state(doc).messages
        text, order = "", []
        for part in message.parts:
            if isinstance(part, Image):
                k = doc.images.index(part) + 1
                text += f"<image {k}>"
                order.append(k)
            else:
                text += part.text
        assert text == expected, doc_id
        assert order == sorted(order)  # in these records the tags come in image order
        seen.add(doc_id)
    assert seen == set(OFFICIAL_PROMPTS)
