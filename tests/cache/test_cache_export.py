"""``mmtasks cache export/import``: a run's cached replies moved to another machine's (empty)
cache; the same run there takes every reply from the cache."""

from __future__ import annotations

import json
from pathlib import Path

from mmtasks.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"


def run(out: Path, cache: Path, base_url: str, model: str = "test-model") -> dict:
    assert main(["--tasks", "realbench_ranking_easy,mmdu", "--model", f"openai:{model}", "--model-args", f"base_url={base_url}",
                 "--judge", "random", "--limit", "4",
                 "--data-dir", str(SAMPLE), "--output-path", str(out), "--cache-dir", str(cache), "--no-progress",
                 "--allow-failures"]) == 0
    return json.loads((out / "results.json").read_text())["run_stats"]


def test_exported_replies_serve_the_rerun_elsewhere(tmp_path, capsys, chat_server):
    chat_server.models = ("test-model", "other-model")
    url = chat_server.base_url
    first = run(tmp_path / "a", tmp_path / "cache_a", url)
    sent = first["sent"]["model"]  # the random judge is never cached
    assert sent > 0 and not first.get("cached")
    run(tmp_path / "other", tmp_path / "cache_a", url, model="other-model")  # another model's replies in the same cache
    capsys.readouterr()
    exported = tmp_path / "moved" / "replies.sqlite"
    exported.parent.mkdir()
    assert main(["cache", "export", str(exported), "--cache-dir", str(tmp_path / "cache_a"), "--run", str(tmp_path / "a")]) == 0
    assert capsys.readouterr().out.strip() == f"exported {sent} replies to {exported}"
    assert main(["cache", "import", str(exported), "--cache-dir", str(tmp_path / "cache_b")]) == 0
    assert capsys.readouterr().out.strip() == f"imported {sent} replies into {tmp_path / 'cache_b' / 'responses.sqlite'} (0 were there already)"
    calls = chat_server.calls
    again = run(tmp_path / "b", tmp_path / "cache_b", url)
    assert chat_server.calls == calls  # no chat request reached the server
    assert again["cached"]["model"] == sent and not again.get("sent", {}).get("model")
    assert (tmp_path / "b" / "samples" / "mmdu.jsonl").read_bytes() == (tmp_path / "a" / "samples" / "mmdu.jsonl").read_bytes()
    # importing twice adds nothing; exporting over a file is refused
    assert main(["cache", "import", str(exported), "--cache-dir", str(tmp_path / "cache_b")]) == 0
    assert "imported 0 replies" in capsys.readouterr().out
    assert main(["cache", "export", str(exported), "--cache-dir", str(tmp_path / "cache_a")]) == 2
    assert "the export file exists already" in capsys.readouterr().err
