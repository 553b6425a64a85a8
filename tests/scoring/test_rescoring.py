"""Rescoring without re-running: changing only a metric sends nothing, changing only the
judge sends only judge requests, and ``replay:`` of a run folder reproduces its scores."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.chat_server import ChatServer
from tests.chat_wire import last_user_text
from tests.cli_process import REPO, SAMPLE, cli_env, run_cli
from tests.mmdu_data import judge_reply, scores
from tests.realbench_oracle import RealBenchOracle, stable_hash

pytestmark = pytest.mark.slow

MODEL, JUDGE_A, JUDGE_B = "test-model", "judge-a", "judge-b"
MMDU_TURNS = 24  # in the bundled sample


class Replies:
    def __init__(self) -> None:
        self.oracle = RealBenchOracle()

    def __call__(self, body: dict) -> str:
        text = last_user_text(body)
        if body["model"] in (JUDGE_A, JUDGE_B):
            h = stable_hash(body["model"] + text)  # the two judges disagree
            return judge_reply(scores(*(2 + (h >> k) % 8 for k in range(7))))
        if "identify and list the image numbers" in text:
            return self.oracle(body)
        return "Answer: " + " ".join(text.split()[:10])


def models_called(server: ChatServer, since: int) -> Counter[str]:
    return Counter(c.body["model"] for c in server.log[since:] if c.path.endswith("/chat/completions"))


def test_changing_a_metric_or_the_judge_reruns_only_that(tmp_path: Path) -> None:
    variants = tmp_path / "variants"
    variants.mkdir()
    # the same prompts as realbench_retrieval_hard, scored with F1 only
    (variants / "retrieval_hard_f1.yaml").write_text(
        f"task: retrieval_hard_f1\n"
        f"include: {REPO / 'tasks' / 'realbench' / 'retrieval_hard.yaml'}\n"
        f"group: [variants]\n"
        f"metrics:\n  - {{name: f1, function: set_f1, primary: true}}\n", encoding="utf-8")
    cache = tmp_path / "cache"

    def args(out: str, tasks: str, judge: str = JUDGE_A, model: str = f"openai:{MODEL}") -> list[str]:
        return ["--tasks", tasks, "--model", model, "--judge", f"openai:{judge}", "--include-path", str(variants),
                "--data-dir", str(SAMPLE), "--output-path", str(tmp_path / out), "--cache-dir", str(cache), "--no-progress"]

    def results(out: str) -> dict:
        return json.loads((tmp_path / out / "results.json").read_text())

    with ChatServer(reply=Replies(), models=(MODEL, JUDGE_A, JUDGE_B)) as server:
        env = cli_env(server.base_url)
        first = run_cli(args("a", "mmdu,realbench_retrieval_hard"), env, tmp_path / "logs")
        assert first.process.returncode == 0, first.stderr
        sent = models_called(server, 0)
        assert sent[JUDGE_A] == MMDU_TURNS and sent[MODEL] >= MMDU_TURNS + 9
        a = results("a")

        # only the metric changed: nothing is sent, the shared metric has the same value
        mark = len(server.log)
        metric = run_cli(args("b", "mmdu,retrieval_hard_f1"), env, tmp_path / "logs")
        assert metric.process.returncode == 0, metric.stderr
        assert models_called(server, mark) == Counter()
        b = results("b")
        assert set(b["results"]["retrieval_hard_f1"]) == {"alias", "f1", "f1_stderr", "f1_all"}
        assert b["results"]["retrieval_hard_f1"]["f1"] == a["results"]["realbench_retrieval_hard"]["f1"]
        assert b["results"]["mmdu"] == a["results"]["mmdu"]
        assert b["run_stats"]["sent"] == {} and b["run_stats"]["cached"]["model"] == a["run_stats"]["sent"]["model"]

        # only the judge changed: only judge requests are sent, one per turn
        mark = len(server.log)
        judge = run_cli(args("c", "mmdu,realbench_retrieval_hard", judge=JUDGE_B), env, tmp_path / "logs")
        assert judge.process.returncode == 0, judge.stderr
        assert models_called(server, mark) == Counter({JUDGE_B: MMDU_TURNS})
        c = results("c")
        assert c["results"]["realbench_retrieval_hard"] == a["results"]["realbench_retrieval_hard"]
        assert c["results"]["mmdu"]["overall"] != a["results"]["mmdu"]["overall"]
        assert c["config"]["judge"] == f"openai:{JUDGE_B}"

        # replay of the first run's folder with the first judge: the same scores, nothing sent
        mark = len(server.log)
        replay = run_cli(args("d", "mmdu,realbench_retrieval_hard", model=f"replay:{tmp_path / 'a'}"), env, tmp_path / "logs")
        assert replay.process.returncode == 0, replay.stderr
        assert models_called(server, mark) == Counter()
        assert results("d")["results"] == a["results"]
        assert (tmp_path / "d" / "samples" / "mmdu.jsonl").read_text() == (tmp_path / "a" / "samples" / "mmdu.jsonl").read_text()


SEGMENT_TWICE = """
import sys
from pathlib import Path
import jieba
from mmtasks.cache.response_cache import ResponseCache
from mmtasks.scoring import rouge
cache = ResponseCache(Path(sys.argv[1]))
rouge.remember_segments(cache.memo("segments"))
print(rouge.segment("我爱北京天安门"), rouge.rouge_l_f1("我爱北京", "我爱北京天安门"), jieba.dt.initialized)
"""


def test_segmentations_are_remembered_in_the_cache(tmp_path: Path) -> None:
    """Rescoring ROUGE-L from the cache does not load jieba's dictionary (1-2 s) again."""
    def once() -> str:
        proc = subprocess.run([sys.executable, "-c", SEGMENT_TWICE, str(tmp_path / "cache")], cwd=REPO,
                              env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split("\n")[0]

    first, second = once(), once()
    assert first.startswith("我 爱 北京 天安门 0.857") and first.endswith("True")
    assert second == first.replace("True", "False")  # same segmentation and score, no dictionary loaded
