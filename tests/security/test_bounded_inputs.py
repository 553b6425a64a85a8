"""Findings 9 and 10 of issue 23: bounded, typed inputs everywhere, and output that cannot act
on the terminal or break the page.

Every reader (results.json, leaderboard.yaml, judge agreement's samples, data records, parquet)
turns bad input into one line naming the file and field; numbers are finite and in range;
terminal output escapes control characters; a page link with ``#%`` still shows the board;
``limit`` takes integers only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import mmtasks
from mmtasks.cli import main
from mmtasks.errors import ConfigError, printable
from mmtasks.leaderboard.sections import load_section
from tests.leaderboard.test_leaderboard_sections import SMALL, write

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "tests" / "fixtures" / "runs" / "qwen2vl7b-realbench-2025-11-26"
SAMPLE = ROOT / "data" / "sample"
ESC = "\x1b]0;owned\x07\x1b[2J"


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# --- results.json ---------------------------------------------------------------------------

def crafted(tmp_path: Path, name: str, edit) -> Path:  # noqa: ANN001
    run = tmp_path / name
    shutil.copytree(RUN, run)
    text = (run / "results.json").read_text()
    (run / "results.json").write_text(edit(text))
    return run


ACC = '"acc": 15.2'
CASES = {
    "nan-date": (lambda t: t.replace('"date": ', '"date": NaN, "was": ', 1), "date", "not a finite number"),
    "infinity": (lambda t: t.replace(ACC, '"acc": Infinity', 1), "results.realbench_retrieval_easy.acc", "not a finite number"),
    "1e400": (lambda t: t.replace(ACC, '"acc": 1e400', 1), "results.realbench_retrieval_easy.acc", "not a finite number"),
    "10**400": (lambda t: t.replace(ACC, f'"acc": {10**400}', 1), "results.realbench_retrieval_easy.acc", "out of range"),
    "1e300": (lambda t: t.replace(ACC, '"acc": 1e300', 1), "results.realbench_retrieval_easy.acc", "out of range"),
    "deep": (lambda t: t.rstrip().removesuffix("}") + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}", None, "nested more than"),
    "future-date": (lambda t: t.replace('"date": ', '"date": 1e18, "was": ', 1), "date", "less than or equal"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_crafted_results_json_is_one_line_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    edit, field, words = CASES[case]
    run = crafted(tmp_path, "run", edit)
    assert ACC in (RUN / "results.json").read_text()
    code = main(["leaderboard", "build", str(run), "--out", str(tmp_path / "board")])
    assert code == 2  # before: a traceback, or Infinity written into leaderboard.json
    line = one_error_line(capsys.readouterr().err)
    assert "results.json" in line and words in line and (field is None or f"field '{field}'" in line), line
    assert not (tmp_path / "board" / "leaderboard.json").exists()


# --- judge agreement -------------------------------------------------------------------------

def samples_run(folder: Path, scores: list[object], key: str = "score") -> Path:
    (folder / "samples").mkdir(parents=True)
    rows = [{"task": "bench", "doc_id": "d", "judge": [{"turn": i + 1, "fields": {key: s}} for i, s in enumerate(scores)]}]
    (folder / "samples" / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows).replace('"INF"', "Infinity"))
    return folder


def test_judge_agreement_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = samples_run(tmp_path / "a", [1, 1_000_000, 3, 500_000])
    b = samples_run(tmp_path / "b", [2, 999_999, 3, 1])
    assert main(["judge", "agreement", str(a), str(b), "--resamples", "50"]) == 0  # before: a k x k table of 10**12
    assert "kappa" in capsys.readouterr().out
    inf = samples_run(tmp_path / "c", [1, "INF", 3, 4])
    assert main(["judge", "agreement", str(a), str(inf)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "bench.jsonl:1" in line and "field 'judge[1].fields.score'" in line and "not a finite number" in line
    assert main(["judge", "agreement", str(a), str(b), "--resamples", "1000000000"]) == 2
    assert "field '--resamples'" in one_error_line(capsys.readouterr().err)


# --- data records ------------------------------------------------------------------------------

TASK = """\
task: tiny
dataset:
  local: {dir: tiny, file: data.jsonl}
  images_field: images
prompt: {user: "{{ doc.q }}"}
target: "field:a"
answer: {parser: text}
metrics: [{name: exact_match, function: exact_match}]
"""


def tiny(tmp_path: Path, record_line: str) -> list[str]:
    (tmp_path / "tasks").mkdir(exist_ok=True)
    (tmp_path / "tasks" / "tiny.yaml").write_text(TASK)
    data = tmp_path / "data" / "tiny"
    data.mkdir(parents=True, exist_ok=True)
    (data / "data.jsonl").write_text('{"id": "ok", "q": "x", "a": "y", "images": []}\n' + record_line + "\n")
    return ["--tasks", "tiny", "--include-path", str(tmp_path / "tasks"), "--data-dir", str(tmp_path / "data"),
            "--model", "random", "--output-path", str(tmp_path / "out"), "--no-cache", "--no-progress"]


def test_a_nul_byte_in_an_image_path_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(tiny(tmp_path, '{"id": "bad", "q": "x", "a": "y", "images": ["a\\u0000.png"]}'))
    assert code == 2  # before: ValueError: embedded null byte
    line = one_error_line(capsys.readouterr().err)
    assert "data.jsonl:2" in line and "document 'bad'" in line and "NUL byte" in line


def test_a_lone_surrogate_in_a_record_is_one_line_and_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(tiny(tmp_path, '{"id": "bad", "q": "half \\ud800 a pair", "a": "y", "images": []}'))
    assert code == 2  # before: UnicodeEncodeError while writing the samples, and a .partial left behind
    line = one_error_line(capsys.readouterr().err)
    assert "data.jsonl:2" in line and "field 'q'" in line and "lone surrogate" in line
    assert not list((tmp_path / "out").rglob("*.partial"))


def test_a_corrupt_parquet_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    datasets = pytest.importorskip("datasets")
    parquet = tmp_path / "test.parquet"
    datasets.Dataset.from_dict({"id": ["a", "b"], "q": ["x", "y"], "a": ["y", "y"]}).to_parquet(str(parquet))
    raw = parquet.read_bytes()
    parquet.write_bytes(raw[:4] + b"\x00" * 64 + raw[68:])  # the magic kept, the pages broken
    capsys.readouterr()
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "hub.yaml").write_text(TASK.replace("task: tiny", "task: hub").replace(
        "  local: {dir: tiny, file: data.jsonl}\n  images_field: images",
        f"  hf: {{path: parquet, data_files: {json.dumps(str(parquet))}, split: train}}\n  images_field: null"))
    code = main(["--tasks", "hub", "--include-path", str(tmp_path / "tasks"), "--model", "random",
                 "--output-path", str(tmp_path / "out"), "--no-cache", "--no-progress"])
    assert code == 2  # before: DatasetGenerationError traceback
    err = capsys.readouterr().err  # (the datasets library's own progress lines aside)
    line = one_error_line("\n".join(x for x in err.splitlines() if "examples/s" not in x))
    assert "field 'dataset.hf'" in line and "corrupt" in line


# --- leaderboard.yaml ----------------------------------------------------------------------------

@pytest.mark.parametrize("change, field", [
    (("metric: acc}", "metric: acc, decimals: 101}"), "columns.0.decimals"),
    (("metric: acc}", "metric: acc, scale_max: .inf}"), "columns.0.scale_max"),
    (("metric: acc}", "metric: acc, scale_min: .nan}"), "columns.0.scale_min"),
    (("metric: acc}", "metric: acc, scale_min: 100}"), "columns.0"),
])
def test_leaderboard_yaml_numbers_are_finite_and_in_range(tmp_path: Path, change: tuple[str, str], field: str) -> None:
    path = write(tmp_path / "leaderboard.yaml", SMALL.replace(*change, 1))
    with pytest.raises(ConfigError) as err:  # before: loaded, and broke the tab
        load_section(path, known_tasks={"mybench_mc"})
    assert err.value.field == field and str(path) in str(err.value)


# --- the terminal --------------------------------------------------------------------------------

def test_control_characters_never_reach_the_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert printable(f"a{ESC}b\u202ec") == "a\\x1b]0;owned\\x07\\x1b[2Jb\\u202ec"
    # a run folder's name and a section title (leaderboard build)
    run = tmp_path / f"run{ESC}"
    shutil.copytree(RUN, run)
    inc = tmp_path / "inc"
    write(inc / "mine" / "leaderboard.yaml", SMALL.replace("title: My Bench", 'title: "My\\e]0;owned\\a\\e[2JBench"')
          .replace("mybench_mc", "realbench_retrieval_easy"))
    assert main(["leaderboard", "build", str(run), "--out", str(tmp_path / "board"), "--include-path", str(inc)]) == 0
    # judge JSON keys (judge agreement)
    a = samples_run(tmp_path / "a", [1, 2, 3], key=f"score{ESC}")
    b = samples_run(tmp_path / "b", [1, 3, 3], key=f"score{ESC}")
    assert main(["judge", "agreement", str(a), str(b), "--resamples", "10"]) == 0
    # an error naming a file whose name holds them
    assert main(["leaderboard", "build", str(tmp_path / f"nope{ESC}"), "--out", str(tmp_path / "x")]) == 2
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out + err  # before: raw ESC sequences (title, clipboard)
    assert "My\\x1b]0;owned" in out and "score\\x1b" in out and "nope\\x1b" in err


# --- the page -----------------------------------------------------------------------------------

def test_a_link_with_a_bad_percent_escape_shows_the_board(tmp_path: Path) -> None:
    from tests.leaderboard.test_leaderboard import CHROMIUM_ARGS  # noqa: PLC0415

    playwright = pytest.importorskip("playwright.sync_api")
    from mmtasks.leaderboard.build import build_leaderboard, load_runs
    from mmtasks.leaderboard.site import write_site

    if not Path("/usr/bin/chromium").exists():
        pytest.skip("chromium is not installed (make browser)")
    write_site(build_leaderboard(load_runs([RUN])), tmp_path / "site")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto((tmp_path / "site" / "index.html").as_uri() + "#%")
        page.wait_for_selector("#overview tbody tr")  # the overview; before: only "URI malformed"
        assert not problems, problems
        browser.close()


# --- the Python API -------------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [True, 2.0, "3"])
def test_limit_takes_integers_only(limit: object) -> None:
    with pytest.raises(ConfigError, match="field '--limit'"):  # before: limit=True ran one document
        mmtasks.evaluate(tasks="realbench_ranking_easy", model="random", data_dir=SAMPLE, limit=limit, use_cache=False)



def test_a_reply_holding_a_lone_surrogate_is_written_escaped(tmp_path: Path, chat_server, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    chat_server.reply = lambda body: "(1) \ud800 half a pair"
    out = tmp_path / "out"
    code = main(["--tasks", "realbench_ranking_easy", "--limit", "2", "--model", "openai:test-model", "--model-args",
                 f"base_url={chat_server.base_url}", "--data-dir", str(SAMPLE), "--output-path", str(out),
                 "--no-cache", "--no-progress"])
    assert code in (0, 1) and (out / "results.json").exists()  # before: UnicodeEncodeError, a .partial left
    lines = (out / "samples" / "realbench_ranking_easy.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and "\\ud800" in lines[0] and json.loads(lines[0])["responses"][0].startswith("(1) \ud800")
    assert not list(out.rglob("*.partial"))
