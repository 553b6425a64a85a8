"""Data parallel runs: ``torchrun``/``accelerate launch`` start one process per device.

Under a launcher that sets ``WORLD_SIZE`` > 1 (``torchrun --nproc_per_node N -m
mmtasks ...``, ``accelerate launch -m mmtasks ...``), every process runs the
same command; document number k of the run (counted across all tasks, in task
order) is served by rank ``k % WORLD_SIZE``. Each rank loads its own copy of
the model on its own device (``cuda:LOCAL_RANK``, or the CPU without CUDA),
runs its shard through the usual scheduler and cache, and sends its finished
samples to rank 0. Rank 0 alone sorts them back into document order, scores,
and writes ``results.json`` and ``samples/<task>.jsonl`` - the same files a
single process writes. Other ranks print nothing but errors.

This is for models that fit on one device. A model that needs several GPUs
stays single-process: ``hf:`` with ``device_map=auto`` or ``vllm:`` with
``tensor_parallel_size``. vLLM's own data parallelism is a server
(``vllm serve --data-parallel-size N``) used through the ``openai`` backend.
See docs/running-at-scale.md.

The one collective operation is :func:`gather`, at the end. A rank that fails
exits with its error at once; torchrun and accelerate then stop the other
ranks, and every reply received so far is in the response cache, so running
the same command again resumes.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from mmtasks.errors import ConfigError, MmtasksError
from mmtasks.models.base import ModelSpec
from mmtasks.rank_agreement import DEFAULT_SILENCE_S, Liaison

T = TypeVar("T")

#: how long a finished rank waits for the slowest one (shards can differ by hours on a big run)
DEFAULT_TIMEOUT_S = 48 * 3600
TIMEOUT_ENV = "MMTASKS_DIST_TIMEOUT_S"
#: backends whose model each rank loads onto its own device
_PLACED_BACKENDS = {"hf"}


class RankFailedError(MmtasksError):
    """Another rank of a data parallel run failed, so this one cannot finish."""

    exit_code = 1


@dataclass(frozen=True)
class Ranks:
    """Where this process sits in a data parallel run (one process: rank 0 of 1)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def active(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def owns(self, index: int) -> bool:
        """Whether document number ``index`` of the run is this rank's."""
        return index % self.world_size == self.rank

    def shard_size(self, total: int) -> int:
        """How many of ``total`` documents this rank serves."""
        return len(range(self.rank, total, self.world_size))


def ranks_from_env(environ: Mapping[str, str] | None = None) -> Ranks:
    """Read ``WORLD_SIZE``/``RANK``/``LOCAL_RANK`` as set by torchrun and accelerate launch.

    Without ``WORLD_SIZE`` (or with ``WORLD_SIZE=1``) the run is a single process,
    whatever else the environment holds.
    """
    env = os.environ if environ is None else environ

    def read(name: str, default: int) -> int:
        raw = env.get(name, "")
        if raw == "":
            return default
        try:
            return int(raw)
        except ValueError:
            raise ConfigError(f"environment variable {name}={raw!r} is not an integer", field=name,
                              hint="set by torchrun/accelerate launch; unset it for a single-process run") from None

    world = read("WORLD_SIZE", 1)
    if world == 1:
        return Ranks()
    rank = read("RANK", -1)
    local = read("LOCAL_RANK", rank)
    if world < 1 or not 0 <= rank < world or local < 0:
        raise ConfigError(f"inconsistent launcher environment: RANK={rank}, WORLD_SIZE={world}, LOCAL_RANK={local}",
                          field="WORLD_SIZE")
    return Ranks(rank=rank, world_size=world, local_rank=local)


def shard(items: Iterable[T], ranks: Ranks) -> Iterator[T]:
    """The items of ``items`` that belong to this rank (round robin, so shards differ by at most one)."""
    for index, item in enumerate(items):
        if ranks.owns(index):
            yield item


def _torch_distributed() -> Any:
    try:
        import torch.distributed as dist
    except ImportError:
        raise ConfigError("WORLD_SIZE > 1 (a data parallel launch) needs torch", field="WORLD_SIZE",
                          hint="pip install 'mmtasks[hf]', or run without torchrun/accelerate launch") from None
    if not dist.is_available():
        raise ConfigError("this torch build has no torch.distributed", field="WORLD_SIZE")
    return dist


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def device_for(ranks: Ranks) -> str:
    """The device this rank's model goes on."""
    return f"cuda:{ranks.local_rank}" if _cuda_available() else "cpu"


def _timeout() -> timedelta:
    raw = os.environ.get(TIMEOUT_ENV)
    if not raw:
        return timedelta(seconds=DEFAULT_TIMEOUT_S)
    try:
        seconds = float(raw)
    except ValueError:
        raise ConfigError(f"{TIMEOUT_ENV}={raw!r} is not a number of seconds", field=TIMEOUT_ENV) from None
    return timedelta(seconds=seconds)


def _liaison(ranks: Ranks, silence_s: float) -> Liaison:
    """This rank's link to the others through the process group's store (see :mod:`mmtasks.rank_agreement`);
    each evaluation in the group gets its own keys (a Trainer evaluates many times in one group)."""
    from torch.distributed import distributed_c10d

    store = distributed_c10d._get_default_store()
    run = int(store.add(f"mmtasks/runs/{ranks.rank}", 1))
    return Liaison(store, ranks.rank, ranks.world_size, silence_s, prefix=f"mmtasks/{run}")


@contextmanager
def process_group(ranks: Ranks, silence_s: float = DEFAULT_SILENCE_S) -> Iterator[Liaison | None]:
    """Join the launcher's process group for the run (NCCL with CUDA, gloo on the CPU); yields
    this rank's :class:`~mmtasks.rank_agreement.Liaison` (None for a single process).

    The group is not initialised again when the caller (e.g. accelerate in a script) already
    did it.
    """
    if not ranks.active:
        yield None
        return
    dist = _torch_distributed()
    if dist.is_initialized():
        liaison = _liaison(ranks, silence_s)
        try:
            yield liaison
        finally:
            liaison.close()
        return
    if _cuda_available():
        import torch

        visible = torch.cuda.device_count()
        if ranks.local_rank >= visible:
            raise ConfigError(f"LOCAL_RANK={ranks.local_rank} but this node has {visible} visible GPU(s)",
                              field="LOCAL_RANK", hint=f"start at most {visible} processes per node (--nproc_per_node)")
        torch.cuda.set_device(ranks.local_rank)
        backend = "nccl"
    else:
        backend = "gloo"
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        if not os.environ.get(name):
            raise ConfigError(f"WORLD_SIZE={ranks.world_size} but {name} is not set", field=name,
                              hint="start data parallel runs with torchrun or accelerate launch")
    dist.init_process_group(backend=backend, rank=ranks.rank, world_size=ranks.world_size, timeout=_timeout())
    liaison = _liaison(ranks, silence_s)
    # Not in a finally: a failing rank keeps its connections until it has printed its
    # error and exited, so that its error comes before the other ranks notice.
    yield liaison
    liaison.close()
    dist.destroy_process_group()


def quiet_unless_main(ranks: Ranks) -> None:
    """On ranks other than 0: errors only (no warnings, no library progress bars)."""
    if ranks.is_main:
        return
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    logging.getLogger().setLevel(logging.ERROR)
    for name in ("mmtasks", "transformers", "accelerate", "torch", "huggingface_hub"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    try:  # transformers' own progress bars (weight loading) ignore the logging level
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def place(spec: ModelSpec, ranks: Ranks) -> ModelSpec:
    """The spec this rank loads: an ``hf`` model goes whole onto this rank's device.

    ``device`` is a placement arg (not part of the model identity), so the cache
    is shared with single-process runs. A spec that spreads one model over
    several devices cannot be replicated per rank and is refused.
    """
    if not ranks.active:
        return spec
    if spec.backend == "vllm":
        raise ConfigError(
            "vllm: models do their own parallelism; do not start them with torchrun/accelerate launch",
            field="--model",
            hint="run one process with --model-args tensor_parallel_size=N, or for data parallelism "
                 "`vllm serve --data-parallel-size N` and --model openai:NAME",
        )
    if spec.backend not in _PLACED_BACKENDS:
        return spec
    if spec.args.get("device_map") is not None:
        raise ConfigError(
            f"device_map={spec.args['device_map']!r} spreads one model over several devices, but a data "
            f"parallel run (WORLD_SIZE={ranks.world_size}) loads a whole model on each rank's device",
            field="--model-args",
            hint="drop device_map to give each rank its own device, or run a single process with device_map=auto",
        )
    if spec.args.get("device") is not None:
        return spec
    return spec.model_copy(update={"args": {**spec.args, "device": device_for(ranks)}})


def _add_counts(into: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """Nested counters added key by key (``sent`` per target, ``replies`` per task and counter)."""
    out = dict(into)
    for key, value in more.items():
        out[key] = _add_counts(out.get(key, {}), value) if isinstance(value, dict) else out.get(key, 0) + value
    return out


def merge_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Run statistics of all ranks: waves run side by side (the most any rank ran), counts add up."""
    out: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if isinstance(value, dict):
                out[key] = _add_counts(out.get(key, {}), value)
            elif key == "waves":
                out[key] = max(out.get(key, 0), value)
            else:
                out[key] = out.get(key, 0) + value
    return out


def gather(samples: dict[str, list[T]], stats: dict[str, Any], ranks: Ranks,
           liaison: Liaison | None = None) -> tuple[dict[str, list[T]], dict[str, Any]] | None:
    """Every rank's samples (per task, in no particular order) and merged stats, on rank 0.

    Returns them unchanged for a single process and ``None`` on the other ranks.
    This is the run's only collective operation: a finished rank first waits (through
    ``liaison``) for the slowest one, watching its heartbeats, and names a rank that falls
    silent (:class:`~mmtasks.rank_agreement.RankSilent`).
    """
    if not ranks.active:
        return samples, stats
    dist = _torch_distributed()
    if liaison is not None:
        liaison.post("done", "1")
        liaison.collect("done", "finish its share of the documents")
    mine = (samples, stats)
    parts: list[Any] | None = [None] * ranks.world_size if ranks.is_main else None
    try:
        dist.gather_object(mine, parts, dst=0)
    except RuntimeError as exc:  # gloo: a peer closed its connection (NCCL peers are stopped by the launcher)
        logging.getLogger("mmtasks").debug("gather failed: %s", exc)
        raise RankFailedError(
            f"rank {ranks.rank} lost the other ranks while gathering samples: another rank stopped "
            "(its error, if it printed one, is in the launcher's output)",
            hint="fix that error and run the same command again: replies already received are in the cache",
        ) from exc
    if parts is None:
        return None
    merged: dict[str, list[T]] = {task: [] for task in samples}
    for part_samples, _ in parts:
        for task, rows in part_samples.items():
            merged.setdefault(task, []).extend(rows)
    return merged, {**merge_stats([part_stats for _, part_stats in parts]), "world_size": ranks.world_size}
