"""Data parallel building blocks (mmtasks/distributed.py): rank environment, sharding,
model placement, merging statistics. The launches themselves are in test_data_parallel.py."""

from __future__ import annotations

import pytest

from mmtasks import distributed
from mmtasks.distributed import Ranks, merge_stats, place, ranks_from_env, shard
from mmtasks.errors import ConfigError
from mmtasks.models.base import ModelSpec, parse_model_spec


def test_single_process_without_world_size():
    assert ranks_from_env({}) == Ranks()
    # a stray RANK (some schedulers set it) does not make a run distributed
    assert ranks_from_env({"RANK": "3", "WORLD_SIZE": "1"}) == Ranks()
    assert not Ranks().active and Ranks().is_main


def test_launcher_environment():
    r = ranks_from_env({"WORLD_SIZE": "4", "RANK": "2", "LOCAL_RANK": "0"})
    assert (r.rank, r.world_size, r.local_rank, r.active, r.is_main) == (2, 4, 0, True, False)
    # without LOCAL_RANK (one node), the local rank is the rank
    assert ranks_from_env({"WORLD_SIZE": "2", "RANK": "1"}).local_rank == 1


@pytest.mark.parametrize("env", [
    {"WORLD_SIZE": "two", "RANK": "0"},
    {"WORLD_SIZE": "2"},  # no RANK
    {"WORLD_SIZE": "2", "RANK": "2"},
    {"WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "-1"},
])
def test_bad_launcher_environment(env):
    with pytest.raises(ConfigError):
        ranks_from_env(env)


@pytest.mark.parametrize("world,total", [(2, 10), (3, 10), (4, 3), (8, 0)])
def test_shards_cover_every_document_once_in_order(world, total):
    shards = [list(shard(range(total), Ranks(rank=r, world_size=world))) for r in range(world)]
    assert sorted(x for s in shards for x in s) == list(range(total))
    assert all(s == sorted(s) for s in shards)
    sizes = [len(s) for s in shards]
    assert sizes == [Ranks(rank=r, world_size=world).shard_size(total) for r in range(world)]
    assert max(sizes) - min(sizes) <= 1


def test_hf_model_goes_on_the_rank_device(monkeypatch):
    spec = parse_model_spec("hf:/models/tiny", {"dtype": "float32"})
    ranks = Ranks(rank=3, world_size=4, local_rank=1)
    monkeypatch.setattr(distributed, "_cuda_available", lambda: True)
    placed = place(spec, ranks)
    assert placed.args == {"dtype": "float32", "device": "cuda:1"}
    # placement is not identity: the cache is shared with single-process runs
    assert placed.identity() == spec.identity()
    monkeypatch.setattr(distributed, "_cuda_available", lambda: False)
    assert place(spec, ranks).args["device"] == "cpu"
    # an explicit device is the user's choice
    assert place(spec.model_copy(update={"args": {"device": "cuda:0"}}), ranks).args == {"device": "cuda:0"}


def test_single_process_specs_are_untouched():
    spec = parse_model_spec("hf:/models/tiny", {"device_map": "auto"})
    assert place(spec, Ranks()) is spec


def test_models_spread_over_devices_are_refused_under_data_parallel():
    ranks = Ranks(rank=0, world_size=2)
    with pytest.raises(ConfigError, match="device_map"):
        place(parse_model_spec("hf:/models/tiny", {"device_map": "auto"}), ranks)
    with pytest.raises(ConfigError, match="tensor_parallel_size"):
        place(ModelSpec(backend="vllm", name="Qwen/Qwen2-VL-7B-Instruct"), ranks)


@pytest.mark.parametrize("spec", ["random", "openai:gpt-4o"])
def test_backends_without_a_device_are_replicated_as_is(spec):
    parsed = parse_model_spec(spec)
    assert place(parsed, Ranks(rank=1, world_size=2)) is parsed


def test_merge_stats():
    a = {"waves": 3, "sent": {"model": 5, "judge": 2}, "cached": {}, "failed": {"model": 1}}
    b = {"waves": 4, "sent": {"model": 4}, "cached": {"model": 2}, "failed": {}}
    assert merge_stats([a, b]) == {"waves": 4, "sent": {"model": 9, "judge": 2}, "cached": {"model": 2}, "failed": {"model": 1}}


def test_gather_is_the_identity_for_one_process():
    samples, stats = {"t": [1, 2]}, {"waves": 1}
    assert distributed.gather(samples, stats, Ranks()) == (samples, stats)
