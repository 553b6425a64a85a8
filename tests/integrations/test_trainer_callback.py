"""Evaluation during training (mmtasks/integrations/trainer.py, ``evaluate(model=...)``): a tiny text
model (tests/tiny_models.py) trains for four steps on CPU under a ``transformers.Trainer`` with
:class:`MMTasksCallback` evaluating every two steps; the metrics reach the trainer's log (``on_log``,
the path of every ``report_to`` tracker) at steps 2 and 4, and differ because the weights changed
between them (the replies differ, and the task's chrF scores the replies' characters). The model is
never reloaded (loading is made to fail) and keeps training after each evaluation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tests.tiny_models import build_tiny_text_model  # noqa: E402

TASK = """\
task: train_qa
dataset: {local: {dir: qa, file: qa.jsonl}, images_field: null}
prompt: {user: "{{ doc.question }}"}
target: "{{ doc.answer }}"
generation: {max_new_tokens: 6, temperature: 0.0}
metrics:
  - {name: chrf, function: chrf, primary: true}
"""
QUESTIONS = [("q1", "what color is the cat ?", "the cat is red and the dog is blue"),
             ("q2", "how many people are in the picture ?", "three people are in the picture"),
             ("q3", "which shape is on the left ?", "the first shape on the left is a tree"),
             ("q4", "describe the second image .", "a green car and a house with two trees")]
#: token ids of the tiny vocabulary's words (not special tokens), one training sequence each
TRAIN = [[10, 11, 12, 13], [14, 15, 16, 17], [20, 21, 22, 23, 24], [30, 31, 32]] * 2


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("train")
    model_dir = build_tiny_text_model(root / "model")
    tasks = root / "tasks"
    tasks.mkdir()
    (tasks / "train_qa.yaml").write_text(TASK, encoding="utf-8")
    data = root / "data" / "qa"
    data.mkdir(parents=True)
    (data / "qa.jsonl").write_text("".join(json.dumps({"id": i, "question": q, "answer": a}) + "\n"
                                           for i, q, a in QUESTIONS), encoding="utf-8")
    return {"model": model_dir, "tasks": tasks, "data": root / "data"}


def _no_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    from mmtasks.models import hf

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the model in memory was loaded again")

    monkeypatch.setattr(hf, "_load", refuse)


def test_the_callback_logs_at_two_steps_and_the_metrics_follow_the_weights(
        setup: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainerCallback, TrainingArguments

    from mmtasks.integrations import MMTasksCallback

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(setup["model"])
    model = AutoModelForCausalLM.from_pretrained(setup["model"])
    _no_loading(monkeypatch)

    class Sentences(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(TRAIN)

        def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
            ids = torch.tensor(TRAIN[i])
            return {"input_ids": ids, "labels": ids.clone()}

    logs: list[dict[str, float]] = []
    modes: list[bool] = []

    class Recorder(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs_: dict[str, float] | None = None, **kw: Any) -> None:
            logs.append(dict(kw.get("logs") or logs_ or {}))

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            modes.append(kw["model"].training)

    args = TrainingArguments(output_dir=str(tmp_path / "trainer"), max_steps=4, per_device_train_batch_size=1,
                             learning_rate=1.0, optim="sgd", lr_scheduler_type="constant", logging_steps=100,
                             save_strategy="no", report_to=[], use_cpu=True, seed=0, data_seed=0, disable_tqdm=True)
    trainer = Trainer(model=model, args=args, train_dataset=Sentences(), processing_class=tokenizer)
    callback = MMTasksCallback(tasks="train_qa", every_n_steps=2, trainer=trainer, include_paths=[setup["tasks"]],
                               data_dir=setup["data"], output_path=tmp_path / "evals")
    trainer.add_callback(callback)
    trainer.add_callback(Recorder())
    trainer.train()

    assert [step for step, _ in callback.history] == [2, 4]
    logged = [row for row in logs if "mmtasks/train_qa/chrf" in row]
    assert [row["epoch"] for row in logged] == [0.25, 0.5]  # steps 2 and 4 of 8 sentences, one a step
    assert len(logged) == 2 and all("mmtasks/train_qa/chrf_stderr" in row and row["mmtasks/train_qa/coverage"] == 100.0
                                    for row in logged)
    first, second = (row["mmtasks/train_qa/chrf"] for row in logged)
    assert first != second  # the weights changed between steps 2 and 4, and so did the score

    # the replies themselves differ (what the score reads), and each evaluation's files are its step's
    replies = [[json.loads(line)["responses"][0] for line in
                (tmp_path / "evals" / f"step-{step}" / "samples" / "train_qa.jsonl").read_text().splitlines()]
               for step in (2, 4)]
    assert replies[0] != replies[1] and all(len(r) == 4 for r in replies)
    results = json.loads((tmp_path / "evals" / "step-4" / "results.json").read_text())
    assert results["results"]["train_qa"]["chrf"] == second
    assert results["run_card"]["model"]["source"] == "none" and results["config"]["model"].startswith("hf:")
    assert modes == [True] * 4  # back in training mode after each evaluation


def test_evaluate_takes_a_model_in_memory_with_no_reload_and_follows_a_weight_change(
        setup: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import mmtasks
    from mmtasks.errors import ConfigError

    tokenizer = AutoTokenizer.from_pretrained(setup["model"])
    model = AutoModelForCausalLM.from_pretrained(setup["model"])
    _no_loading(monkeypatch)
    options = {"include_paths": [setup["tasks"]], "data_dir": setup["data"]}
    before = mmtasks.evaluate("train_qa", model=model, processor=tokenizer, **options)
    again = mmtasks.evaluate("train_qa", model=model, processor=tokenizer, **options)
    assert [s.responses for s in before.samples["train_qa"]] == [s.responses for s in again.samples["train_qa"]]
    with torch.no_grad():  # a deterministic perturbation: the output layer's weights scaled and shifted
        model.lm_head.weight.mul_(-1.0)
    after = mmtasks.evaluate("train_qa", model=model, processor=tokenizer, **options)
    assert [s.responses for s in before.samples["train_qa"]] != [s.responses for s in after.samples["train_qa"]]
    assert before["results"]["train_qa"]["chrf"] != after["results"]["train_qa"]["chrf"]
    assert tokenizer.padding_side == "right"  # the caller's tokenizer is not changed (a copy pads on the left)

    with pytest.raises(ConfigError, match="without the response cache"):
        mmtasks.evaluate("train_qa", model=model, processor=tokenizer, use_cache=True, **options)
    with pytest.raises(ConfigError, match="needs its processor"):
        mmtasks.evaluate("train_qa", model=model, **options)
    with pytest.raises(ConfigError, match="a transformers model with its processor, or a vLLM LLM"):
        mmtasks.evaluate("train_qa", model=object(), **options)


def test_the_callback_needs_a_schedule() -> None:
    from mmtasks.errors import ConfigError
    from mmtasks.integrations import MMTasksCallback

    with pytest.raises(ConfigError, match="every_n_steps=N and/or on_save=True"):
        MMTasksCallback(tasks="train_qa")
    with pytest.raises(ConfigError, match="at least 1"):
        MMTasksCallback(tasks="train_qa", every_n_steps=0)


def test_a_checkpoint_loaded_from_its_folder_is_named_by_its_hash_in_the_run_card(setup: dict[str, Path]) -> None:
    """The run card of an ``hf:`` run of a local folder: the folder's config/index/safetensors-header
    hash; of the same weights in memory: no file names them."""
    import mmtasks
    from mmtasks.core.provenance import local_checkpoint_hash

    result = mmtasks.evaluate("train_qa", model=f"hf:{setup['model']}", include_paths=[setup["tasks"]],
                              data_dir=setup["data"], use_cache=False)
    assert result["run_card"]["model"] == {"source": "local", "name": "model",
                                           "sha256": local_checkpoint_hash(setup["model"])}


@pytest.mark.slow
def test_on_two_processes_the_callback_takes_the_trainers_group_and_rank_0_logs_every_document(
        setup: dict[str, Path], tmp_path: Path) -> None:
    """torchrun, 2 ranks on the CPU (gloo): the Trainer's DDP process group is the evaluation's; each
    rank answers half the documents with its replica, rank 0 logs the scores of all four, rank 1
    logs nothing; the score is that of a single-process evaluation of the same trained weights."""
    import os
    import subprocess
    import sys

    import mmtasks

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(PYTHONPATH=str(root), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               MMTASKS_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                           str(root / "tests" / "integrations" / "trainer_ddp_driver.py"), str(setup["model"]),
                           str(setup["tasks"]), str(setup["data"]), str(tmp_path)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    rank0 = json.loads((tmp_path / "rank0.json").read_text())
    rank1 = json.loads((tmp_path / "rank1.json").read_text())
    assert rank0["world"] == 2 and rank1["history"] == []  # rank 1 answered its share and logged nothing
    [(step, metrics)] = rank0["history"]
    assert step == 2
    samples = [json.loads(line) for line in (tmp_path / "evals" / "step-2" / "samples" / "train_qa.jsonl").read_text().splitlines()]
    assert [s["doc_id"] for s in samples] == ["q1", "q2", "q3", "q4"]  # both ranks' shares, in document order
    single = mmtasks.evaluate("train_qa", model=f"hf:{tmp_path / 'trained'}", include_paths=[setup["tasks"]],
                              data_dir=setup["data"], use_cache=False)
    assert [s.responses for s in single.samples["train_qa"]] == [s["responses"] for s in samples]
    assert metrics["mmtasks/train_qa/chrf"] == single["results"]["train_qa"]["chrf"]
