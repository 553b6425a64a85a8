"""``mmtasks serve`` (mmtasks/integrations/server.py) with its client: a job (model, tasks) in,
results out equal to the same evaluation run directly; each job's files under the output root; a
bad job is a 400 line, a failing job a failed status with its line (the next job still runs); a
token is required when set. The server runs in this process on a free loopback port."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import mmtasks
from mmtasks.errors import ConfigError, MmtasksError
from mmtasks.integrations.server import EvalClient, EvalServer, start

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data" / "sample"
TOKEN = "serve-token-0123456789"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, EvalServer]]:
    server = EvalServer(data_dir=DATA, output_root=tmp_path / "jobs", token=TOKEN)
    httpd, worker = start(server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", server
    finally:
        httpd.shutdown()
        httpd.server_close()
        server.queue.put(None)
        worker.join()


def test_a_job_gives_the_results_of_the_same_evaluation_run_directly(served: tuple[str, EvalServer], tmp_path: Path) -> None:
    url, server = served
    client = EvalClient(url, token=TOKEN)
    job = client.submit("realbench_ranking_easy,realbench_ranking_hard", "random", limit=3, seed=1)
    results = client.wait(job, poll_s=0.05, max_polls=100_000)
    direct = mmtasks.evaluate(tasks="realbench_ranking_easy,realbench_ranking_hard", model="random", data_dir=DATA,
                              limit=3, seed=1, use_cache=False)
    assert results["results"] == direct["results"] and results["groups"] == direct["groups"]
    written = json.loads((tmp_path / "jobs" / job / "results.json").read_text(encoding="utf-8"))
    assert written["results"] == results["results"]
    assert client.status(job)["status"] == "done"

    # a job that fails (an unknown task) is its error's line; the next job runs
    failing = client.submit("no_such_task", "random")
    with pytest.raises(MmtasksError, match="failed: .*no_such_task"):
        client.wait(failing, poll_s=0.05, max_polls=100_000)
    after = client.wait(client.submit("realbench_ranking_easy", "random", limit=1), poll_s=0.05, max_polls=100_000)
    assert after["n-samples"]["realbench_ranking_easy"]["effective"] == 1
    client.close()


def test_bad_jobs_unknown_ids_and_missing_tokens_are_refused(served: tuple[str, EvalServer]) -> None:
    url, server = served
    client = EvalClient(url, token=TOKEN)
    with pytest.raises(ConfigError, match="400: limit: Input should be greater than or equal to 1"):
        client.submit("realbench_ranking_easy", "random", limit=0)
    with pytest.raises(ConfigError, match="400: data_dir: Extra inputs are not permitted"):
        client.submit("realbench_ranking_easy", "random", data_dir="/etc")  # paths are the server's
    with pytest.raises(ConfigError, match="404: no such job"):
        client.status("0123456789abcdef")
    assert httpx.get(f"{url}/v1/health").status_code == 401
    assert httpx.post(f"{url}/v1/jobs", json={"tasks": "x", "model": "random"},
                      headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.get(f"{url}/v1/health", headers={"Authorization": f"Bearer {TOKEN}"}).json()["status"] == "ok"
    assert server.jobs == {}
    client.close()
