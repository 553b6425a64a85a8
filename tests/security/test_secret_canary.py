"""API keys never reach anything mmtasks prints or writes.

Canary keys (random, so they cannot occur by chance) are planted in the environment:
the standard OPENAI_API_KEY and, through ``api_key_env=``, variables whose names do not
look secret. The loopback server echoes keys back the way careless servers do: in its
401 message and in the error bodies of failed calls. Every file under the output folder
and the cache folder, and everything the runs printed (also with --verbose), is then
scanned for the canaries.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text
from tests.cli_process import SAMPLE, cli_env, read_samples, run_cli
from tests.mmdu_data import judge_reply, scores
from tests.realbench_oracle import RealBenchOracle

pytestmark = pytest.mark.slow

MODEL, JUDGE = "test-model", "judge-model"


def scan(paths: list[Path], canaries: list[str]) -> list[str]:
    """Every file under ``paths`` (recursively) that contains a canary, as bytes or text."""
    found = []
    for root in paths:
        for path in [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file()):
            data = path.read_bytes()
            found += [f"{path}: {c[:14]}..." for c in canaries if c.encode() in data or c.encode("utf-16-le") in data]
    return found


def test_canary_keys_never_reach_outputs_caches_or_logs(tmp_path: Path) -> None:
    # the keys named by api_key_env do not have the sk- shape that redact() hides on sight:
    # they are hidden only because the backend registered them
    model_key = f"canary-model-{secrets.token_hex(16)}"
    judge_key = f"canary-judge-{secrets.token_hex(16)}"
    std_key = f"sk-canary-{secrets.token_hex(16)}"
    url_credential = f"canary{secrets.token_hex(16)}"
    userinfo_token = f"canaryuser{secrets.token_hex(16)}"
    deploy_token = "question"  # an unrelated variable that merely looks secret: never applied to data
    canaries = [model_key, judge_key, std_key, url_credential, userinfo_token]
    oracle = RealBenchOracle()
    failing_doc = "文具笔记"  # rank-e-002
    failing_judge = "Describe both images"

    def reply(body: dict) -> str:
        text = last_user_text(body)
        if body["model"] == JUDGE:
            if failing_judge in text:
                raise PermissionError(f"quota check failed for key {judge_key}")  # -> 500 echoing the key
            return judge_reply(scores(6, 6, 6, 6, 6, 6, 7))
        if failing_doc in text:
            raise PermissionError(f"quota check failed for key {model_key}")
        if "image-text note" in text:
            return oracle(body)
        return "An answer."

    logs = tmp_path / "logs"
    cache = tmp_path / "cache"
    outs = []
    with ChatServer(reply=reply, models=(MODEL, JUDGE)) as server:
        # 1. a rejected key: the server echoes it in its 401 message
        server.api_key = "sk-the-accepted-key-0000"
        for n, verbose in enumerate(([], ["--verbose"])):
            out = tmp_path / f"rejected{n}"
            outs.append(out)
            run = run_cli(["--tasks", "realbench_ranking_easy", "--model", f"openai:{MODEL}", "--data-dir", str(SAMPLE),
                           "--output-path", str(out), "--cache-dir", str(cache), "--no-progress", *verbose],
                          cli_env(server.base_url, api_key=std_key), logs)
            assert run.process.returncode != 0
            assert "the API key was rejected" in run.stderr and "Incorrect API key provided: ***" in run.stderr

        # 2. keys from variables named by api_key_env (names that do not look secret), a password in
        #    a credential in the judge's base_url query (Azure-style ?api-key=, next to an api-version
        #    that is not a secret), failures whose error bodies echo the keys, --verbose (debug logs)
        server.api_key = None
        for n, verbose in enumerate(([], ["--verbose"])):
            out = tmp_path / f"run{n}"
            outs.append(out)
            env = cli_env(server.base_url, api_key=std_key, EVAL_MODEL_CREDENTIAL=model_key, EVAL_JUDGE_CREDENTIAL=judge_key,
                          DEPLOY_TOKEN=deploy_token)
            run = run_cli(["--tasks", "realbench_ranking_easy,mmdu", "--limit", "3", "--data-dir", str(SAMPLE),
                           "--model", f"openai:{MODEL}", "--model-args", "api_key_env=EVAL_MODEL_CREDENTIAL,max_retries=1",
                           "--judge", f"openai:{JUDGE}", "--judge-args", "api_key_env=EVAL_JUDGE_CREDENTIAL,max_retries=1,"
                           f"base_url={server.base_url}?api-version=2024-06-01&api-key={url_credential}",
                           "--output-path", str(out), "--cache-dir", str(cache), "--no-progress", *verbose], env, logs)
            assert run.process.returncode == 1, run.stderr
            if verbose:
                assert "DEBUG" in run.stderr  # the debug logs were on, and scanned
            # the echoed keys arrived, and were redacted where they are recorded
            rows = read_samples(out, "realbench_ranking_easy")
            assert rows[1]["failures"] and "quota check failed for key ***" in rows[1]["failures"][0]
            turns = [t for s in read_samples(out, "mmdu") for t in s["extra"]["turns"]]
            assert any("key ***" in (t.get("judge_error") or "") for t in turns)
            assert "key ***" in run.stderr  # the failed-request warnings
            # the query reached the judge's endpoint; only the credential in it is redacted, and a
            # variable mmtasks does not read (DEPLOY_TOKEN=question) rewrites nothing
            judged = [c for c in server.log if c.body and c.body.get("model") == JUDGE]
            assert judged and all(c.query == f"api-version=2024-06-01&api-key={url_credential}" for c in judged)
            assert turns and all("question" in t for t in turns)  # the field name, once rewritten to "***"
            assert "2024-06-01" in (out / "results.json").read_text()

        # 3. a token as user info in base_url (http://TOKEN@host/v1): refused with one line, before
        #    anything is written or sent (httpx would have sent it as Basic auth instead of the key)
        out = tmp_path / "userinfo"
        outs.append(out)
        mark = len(server.log)
        run = run_cli(["--tasks", "realbench_ranking_easy", "--limit", "1", "--data-dir", str(SAMPLE), "--model", f"openai:{MODEL}",
                       "--model-args", f"base_url={server.base_url.replace('http://', f'http://{userinfo_token}@')}",
                       "--output-path", str(out), "--cache-dir", str(cache), "--no-progress"],
                      cli_env(server.base_url, api_key=std_key), logs)
        assert run.process.returncode == 2, run.stderr
        assert "base_url carries credentials" in run.stderr and "Traceback" not in run.stderr
        assert len(run.stderr.strip().splitlines()) <= 2  # the error and its hint
        assert len(server.log) == mark and not (out / "results.json").exists()

    assert len(list(logs.glob("*.err"))) == 5
    found = scan([*outs, cache, logs], canaries)
    assert found == [], found
