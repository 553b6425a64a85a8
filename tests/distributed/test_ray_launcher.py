"""``--launcher ray`` on a local Ray cluster on the CPU (:mod:`mmtasks.ray_launcher`): the model's
replicas are Ray actors answering the loopback chat server. A replica killed (``ray.kill``) while
it holds a request, after it has answered others, loses nothing: its request goes to the other
replica, and the run's files equal a single process's (samples byte for byte, results.json but for
its volatile keys). Every reply stays in the driver's response cache: the same run in one process
afterwards sends nothing.

The kill is driven by events, not by time: the server delivers the first replies, then holds every
further call until the test has killed a replica; the test waits until both replicas are each
holding one call (batch size 1), asks each replica what it did, and kills one that had answered."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from mmtasks.cli import main
from tests.chat_server import ChatServer
from tests.cli_process import VOLATILE_RESULT_KEYS, comparable_results, samples_files, wait_until

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
#: single-turn tasks and a multi-turn one (MMDU: each turn's request goes to whichever replica is free)
TASKS = "realbench_ranking_easy,realbench_extraction_hard,mmdu"
API_KEY = "sk-test-not-a-real-key-000"


class Hold:
    """A latency function for the chat server: the first ``free`` calls go through, later ones
    wait until :meth:`release` (then they are answered as usual; a killed client's reply goes
    nowhere). ``held`` counts calls waiting now."""

    def __init__(self, free: int) -> None:
        self.free = free
        self.calls = 0
        self.held = 0
        self._lock = threading.Lock()
        self._released = threading.Event()

    def __call__(self, body: dict) -> float:
        with self._lock:
            self.calls += 1
            hold = self.calls > self.free and not self._released.is_set()
            if hold:
                self.held += 1
        if hold:
            self._released.wait(120)  # the bound is a guard against a broken test, not a timing
            with self._lock:
                self.held -= 1
        return 0.0

    def release(self) -> None:
        self._released.set()


def test_an_unreachable_cluster_is_one_line_before_any_model(tmp_path, capsys):
    """Ray itself retries an address that nothing answers for minutes: the run says so at once
    (this test runs before the module's cluster is started: the process has joined none)."""
    assert not ray.is_initialized()
    with socket.socket() as closed:  # bound, not listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        code = main(["--tasks", "realbench_ranking_easy", "--model", "random", "--limit", "2", "--data-dir", str(SAMPLE),
                     "--output-path", str(tmp_path / "out"), "--no-cache", "--no-progress",
                     "--launcher", "ray", "--ray-address", address])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"no Ray cluster answers at {address}" in err[0] and "--ray-address" in err[0], err
    assert not ray.is_initialized() and not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def cluster():
    """A small local Ray cluster: 2 CPUs (one per replica), no dashboard; the workers get the
    test's API key (the openai backend asks for one, the loopback server takes any)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"OPENAI_API_KEY": API_KEY}})
    yield
    ray.shutdown()


def args(out: Path, cache: Path, server: ChatServer, *extra: str) -> list[str]:
    return ["--tasks", TASKS, "--model", "openai:test-model", "--model-args", f"base_url={server.base_url}",
            "--judge", "random", "--seed", "3", "--limit", "4", "--data-dir", str(SAMPLE), "--output-path", str(out),
            "--cache-dir", str(cache), "--batch-size", "1", "--no-progress", "--allow-failures", *extra]


def replica_states() -> list:
    from mmtasks.ray_launcher import ACTOR_PREFIX, NAMESPACE

    actors = [ray.get_actor(f"{ACTOR_PREFIX}-{i}", namespace=NAMESPACE) for i in range(2)]
    return list(zip(actors, ray.get([a.current.remote() for a in actors])))


def test_a_replica_killed_mid_run_loses_nothing(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    hold = Hold(free=4)
    with ChatServer() as server:
        assert main(args(tmp_path / "single", tmp_path / "single-cache", server)) == 0
        n_calls = server.calls
        server.reset()
        server.latency = hold

        result: list[int] = []
        run = threading.Thread(target=lambda: result.append(main(args(
            tmp_path / "ray", tmp_path / "cache", server, "--launcher", "ray", "--ray-replicas", "2"))))
        run.start()
        try:
            wait_until(lambda: hold.held == 2, timeout=300, what="both replicas holding a call")
            states = replica_states()
            assert all(len(state.answering) == 1 for _, state in states)
            assert sum(state.answered for _, state in states) == 4
            victim, state = max(states, key=lambda s: s[1].answered)  # one of them answered some of the 4
            assert state.answered >= 2
            ray.kill(victim)
        finally:
            hold.release()
            run.join(300)
        assert result == [0]
        # the killed replica's request was sent again by the other one: one call more than one process
        assert server.calls == n_calls + 1

        data = json.loads((tmp_path / "ray" / "results.json").read_text())
        assert data["run_stats"]["ray"]["requeued"] in ({"0": 1, "1": 0}, {"0": 0, "1": 1})
        assert sum(data["run_stats"]["ray"]["answered"].values()) == n_calls
        assert comparable_results(tmp_path / "ray" / "results.json") == comparable_results(tmp_path / "single" / "results.json")
        assert samples_files(tmp_path / "ray") == samples_files(tmp_path / "single")
        assert set(VOLATILE_RESULT_KEYS) >= {"run_stats"}

        # every reply is in the driver's cache, under the model's own identity: one process sends nothing
        before = server.calls
        assert main(args(tmp_path / "again", tmp_path / "cache", server)) == 0
        assert server.calls == before
        assert samples_files(tmp_path / "again") == samples_files(tmp_path / "single")


def test_replicas_that_do_not_fit_are_refused(cluster, tmp_path, capsys):
    with ChatServer() as server:
        code = main(args(tmp_path / "out", tmp_path / "cache", server, "--launcher", "ray", "--ray-replicas", "3"))
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "3 replica(s) of openai:test-model" in err[0] and "--ray-replicas" in err[0], err


def test_hf_replicas_on_the_cpu_equal_one_process(cluster, tmp_path, tiny_llava_dir, monkeypatch):
    """Two replicas of a tiny LLaVA through transformers, each on the CPU (num_gpus 0 on a cluster
    without GPUs), each pulling batches of 2: the files of one process."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    common = ["--tasks", "realbench_ranking_easy,realbench_extraction_hard", "--model", f"hf:{tiny_llava_dir}",
              "--model-args", "dtype=float32", "--limit", "3", "--batch-size", "2", "--data-dir", str(SAMPLE),
              "--no-progress", "--allow-failures"]
    assert main([*common, "--output-path", str(tmp_path / "single"), "--cache-dir", str(tmp_path / "c1")]) == 0
    assert main([*common, "--output-path", str(tmp_path / "ray"), "--cache-dir", str(tmp_path / "c2"),
                 "--launcher", "ray", "--ray-replicas", "2"]) == 0
    assert comparable_results(tmp_path / "ray" / "results.json") == comparable_results(tmp_path / "single" / "results.json")
    assert samples_files(tmp_path / "ray") == samples_files(tmp_path / "single")
    answered = json.loads((tmp_path / "ray" / "results.json").read_text())["run_stats"]["ray"]["answered"]
    sent = json.loads((tmp_path / "single" / "results.json").read_text())["run_stats"]["sent"]["model"]
    assert sum(answered.values()) == sent and len(answered) == 2


@pytest.mark.parametrize(("model", "args", "gpus", "expected", "placed"), [
    ("hf", {}, 0, 0, {"device": "cpu"}),  # a cluster without GPUs: the CPU
    ("hf", {}, 8, 1, {"device": "cuda:0"}),  # one GPU each by default: the replica sees only its own
    ("hf", {"num_gpus": 2}, 8, 2, {"device_map": "auto"}),  # several: spread over them
    ("hf", {"num_gpus": 1, "device_map": "auto"}, 8, 1, {"device_map": "auto"}),  # the user's placement kept
    ("vllm", {"tensor_parallel_size": 4, "pipeline_parallel_size": 2}, 16, 8,
     {"tensor_parallel_size": 4, "pipeline_parallel_size": 2}),
    ("openai", {}, 8, 0, {}),
])
def test_a_replicas_resources_come_from_the_model_args(model, args, gpus, expected, placed):
    from mmtasks.models.base import ModelSpec
    from mmtasks.ray_launcher import placement

    where = placement(ModelSpec(backend=model, name="m", args=args), gpus)
    assert where.num_gpus == expected
    assert where.spec.args == placed  # num_gpus is the launcher's, never the backend's
    assert where.spec.identity() == ModelSpec(backend=model, name="m", args=args).identity()


@pytest.mark.parametrize("model", ["vllm", "openai"])
def test_num_gpus_is_refused_where_it_would_do_nothing(model):
    from mmtasks.errors import ConfigError
    from mmtasks.models.base import ModelSpec
    from mmtasks.ray_launcher import placement

    with pytest.raises(ConfigError, match="num_gpus"):
        placement(ModelSpec(backend=model, name="m", args={"num_gpus": 2}), 8)
