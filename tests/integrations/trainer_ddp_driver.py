"""One rank of tests/integrations/test_trainer_callback.py's data-parallel run (started by torchrun):
a Trainer on the CPU (gloo) trains the tiny text model two steps with MMTasksCallback evaluating at
step 2, then writes what this rank's callback logged; rank 0 also saves the trained weights."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(model_dir: str, tasks_dir: str, data_dir: str, out: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

    from mmtasks.integrations import MMTasksCallback

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    # token ids of the tiny vocabulary (words, not special tokens): fixed, so every rank's batches are known
    sequences = [[10, 11, 12, 13], [14, 15, 16, 17], [20, 21, 22, 23, 24], [30, 31, 32]]

    class Sentences(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(sequences)

        def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
            ids = torch.tensor(sequences[i])
            return {"input_ids": ids, "labels": ids.clone()}

    args = TrainingArguments(output_dir=str(Path(out) / "trainer"), max_steps=2, per_device_train_batch_size=1,
                             learning_rate=1.0, optim="sgd", lr_scheduler_type="constant", logging_steps=100,
                             save_strategy="no", report_to=[], use_cpu=True, ddp_backend="gloo", seed=0, data_seed=0,
                             disable_tqdm=True)
    trainer = Trainer(model=model, args=args, train_dataset=Sentences(), processing_class=tokenizer)
    callback = MMTasksCallback(tasks="train_qa", every_n_steps=2, trainer=trainer, include_paths=[tasks_dir],
                               data_dir=data_dir, output_path=Path(out) / "evals")
    trainer.add_callback(callback)
    trainer.train()
    rank = int(os.environ["RANK"])
    if rank == 0:
        trainer.save_model(str(Path(out) / "trained"))
        tokenizer.save_pretrained(str(Path(out) / "trained"))
    (Path(out) / f"rank{rank}.json").write_text(json.dumps({"history": callback.history,
                                                             "world": int(os.environ["WORLD_SIZE"])}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
