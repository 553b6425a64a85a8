"""``mmtasks view``: the site's files, its thumbnails, and the page in headless Chromium (filters,
images in place in a multi-turn MMDU dialogue, judge verdicts, the two-run "where they disagree"
filter, a hostile sample shown as inert text); named runs on the leaderboard and in the view."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import expect

import mmtasks
from mmtasks.cli import main as cli_main
from mmtasks.errors import ConfigError
from mmtasks.leaderboard.cli import main as leaderboard_main
from mmtasks.results.schema import public_spec
from mmtasks.results.writer import OutputError, atomic_write_bytes
from mmtasks.view.images import LARGE_SIDE, THUMB_SIDE, ImageStore
from mmtasks.view.records import FAILURE_KINDS, failure_kinds, load_view_run, same_answer
from mmtasks.view.site import INDEX_JS, build_view
from tests.builders import serving
from tests.leaderboard.test_leaderboard import browser  # noqa: F401  (the fixture: system Chromium through playwright)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
TASKS = "mmdu,mmrc,muirbench,llava_bench_wild,realbench_ranking_hard"
HOSTILE_REPLY = ('<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
                 '<a href="javascript:window.__xss=3">click me</a>')
HOSTILE_ID = 'doc "quoted" \'single\' <b>id</b>'


def _evaluate(out: Path, **options: Any) -> Path:
    mmtasks.evaluate(tasks=TASKS, model=options.pop("model", "random"), judge="random", data_dir=SAMPLE,
                     output_path=out, use_cache=False, allow_failures=True, **options)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two random runs of the sample (seeds 0 and 1: answers differ) and a copy of the first with
    problems and a hostile sample planted in its MUIRBench samples."""
    root = tmp_path_factory.mktemp("viewer-runs")
    a = _evaluate(root / "run-a", run_name="Random A", seed=0)
    b = _evaluate(root / "run-b", seed=1)
    hostile = root / "run-hostile"
    shutil.copytree(a, hostile)
    path = hostile / "samples" / "muirbench.jsonl"
    samples = [json.loads(line) for line in path.read_text().splitlines()]
    samples[0].update(doc_id=HOSTILE_ID, responses=[HOSTILE_REPLY], parsed=HOSTILE_REPLY,
                      target='"><script>window.__xss=4</script>',
                      breakdown={**samples[0]["breakdown"], "task": '<img src=x onerror="window.__xss=5">'},
                      failures=['context_overflow: <script>window.__xss=6</script> too long'])
    samples[1].update(unparsed=1, responses=["no letter here", "still none"], parsed=None)
    samples[2].update(judge_failures=1)
    samples[3].update(failures=["HTTP 500: server error"], responses=[None], parsed=None, metrics={"acc": None})
    samples[4]["extra"] = {"guessed": 1}
    samples[5]["responses"] = ["a needle-in-the-haystack reply (B)"]
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    return {"a": a, "b": b, "hostile": hostile}


def _serve(site: Path) -> Iterator[str]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    with serving(server) as port:
        yield f"http://127.0.0.1:{port}/index.html"


def _page(browser, url: str):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: problems.append(f"outside request: {r.url}")
            if not r.url.startswith((url.rsplit("/", 1)[0], "data:")) else None)
    page.goto(url)
    page.wait_for_selector("#docs tbody tr")
    return page, problems


def _task_index(site: Path, task: str) -> int:
    index = _index(site)
    return next(t for t, entry in enumerate(index["tasks"]) if entry["name"] == task)


def _index(site: Path) -> dict[str, Any]:
    text = (site / INDEX_JS).read_text()
    return json.loads(text[text.index(",") + 1: text.rindex(")")])


def _samples(run: Path, task: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "samples" / f"{task}.jsonl").read_text().splitlines()]


def _count(page) -> int:
    return page.locator("#docs tbody tr").count()


# --- the site's files ---------------------------------------------------------------------------


def test_site_files_thumbnails_and_rebuild(runs: dict[str, Path], tmp_path: Path) -> None:
    site = tmp_path / "view"
    index = build_view([load_view_run(runs["a"])], site)
    assert [t["name"] for t in index["tasks"]] == TASKS.split(",")
    assert index["runs"][0]["name"] == "Random A" and index["runs"][0]["model"] == "random"
    data = site / index["data"]
    mmdu = index["tasks"][0]
    assert mmdu["n"] == 6 and (data / mmdu["dir"] / "rows.js").is_file() and (data / mmdu["dir"] / "c0.js").is_file()
    # nothing in the site names a path of this machine
    for path in site.rglob("*.js"):
        assert str(SAMPLE) not in path.read_text() and str(runs["a"]) not in path.read_text(), path
    thumbs = sorted((site / "img").glob("*.jpg"))
    assert thumbs and index["images_written"] == len(thumbs)
    # a rebuild writes a new data folder, removes the old one and reuses every thumbnail
    before = {p: p.stat().st_mtime_ns for p in thumbs}
    again = build_view([load_view_run(runs["a"])], site)
    assert again["data"] != index["data"] and not data.exists() and (site / again["data"]).is_dir()
    assert again["images_written"] == 0 and {p: p.stat().st_mtime_ns for p in thumbs} == before


def test_links_planted_in_a_view_are_replaced_never_followed(runs: dict[str, Path], tmp_path: Path) -> None:
    site = tmp_path / "view"
    build_view([load_view_run(runs["a"])], site, tasks=["muirbench"])
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    thumb = sorted((site / "img").glob("*.jpg"))[0]
    for planted in (site / "app.js", site / INDEX_JS, thumb):
        planted.unlink()
        planted.symlink_to(victim)
    build_view([load_view_run(runs["a"])], site, tasks=["muirbench"])
    assert victim.read_text() == "untouched"
    assert not (site / "app.js").is_symlink() and not (site / INDEX_JS).is_symlink()
    assert not thumb.is_symlink() and thumb.read_bytes()[:2] == b"\xff\xd8"  # written again, as a JPEG


def test_thumbnails_are_bounded_and_exif_free(tmp_path: Path, runs: dict[str, Path]) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["a"], run)
    big = tmp_path / "photo.jpg"
    exif = Image.Exif()
    exif[0x010F] = "SecretCameraMaker"  # Make
    exif[0x0112] = 6  # orientation: rotate 90
    Image.new("RGB", (3000, 1000), (10, 120, 200)).save(big, exif=exif.tobytes())
    path = run / "samples" / "muirbench.jsonl"
    samples = [json.loads(line) for line in path.read_text().splitlines()]
    samples[0]["prompt"][0]["content"].append({"type": "image", "image": str(big)})
    samples[1]["prompt"][0]["content"].append({"type": "image", "image": str(tmp_path / "gone.jpg")})
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    site = tmp_path / "view"
    build_view([load_view_run(run)], site, tasks=["muirbench"])
    chunk = (site / _index(site)["data"] / "t0" / "c0.js").read_text()
    docs = json.loads(chunk[chunk.index(",") + 1: chunk.rindex(")")])
    shown = docs[0]["A"]["prompt"][0]["content"][-1]
    assert shown["name"] == "photo.jpg" and (shown["w"], shown["h"]) == (1000, 3000)  # EXIF orientation applied
    for key, side in (("thumb", THUMB_SIDE), ("large", LARGE_SIDE)):
        with Image.open(site / shown[key]) as img:
            assert max(img.size) == side and img.size[0] < img.size[1]
            assert not img.getexif() and "exif" not in img.info and "icc_profile" not in img.info
        assert b"SecretCameraMaker" not in (site / shown[key]).read_bytes()
    missing = docs[1]["A"]["prompt"][0]["content"][-1]
    assert missing == {"type": "image", "name": "gone.jpg", "missing": missing["missing"]}
    assert "not found" in missing["missing"] and str(tmp_path) not in chunk


def test_an_image_past_pils_own_bomb_limit_is_shown_as_not_decoded(tmp_path: Path) -> None:
    """A few KB of PNG declaring 15000x15000 pixels: PIL refuses it at open (more than twice its
    limit) with DecompressionBombError, which is neither OSError nor ValueError; the view names
    the image and why instead of stopping with a traceback."""
    bomb = tmp_path / "bomb.png"
    Image.new("1", (15000, 15000)).save(bomb)
    store = ImageStore(tmp_path / "site", atomic_write_bytes)
    shown = store.show(str(bomb))
    assert shown.name == "bomb.png" and shown.missing == "cannot be decoded (DecompressionBombError)" and shown.thumb is None
    assert store.written == 0 and not (tmp_path / "site").exists()


def test_out_folder_that_is_not_a_view_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(OutputError, match=r"holds files that mmtasks did not write \(mine.txt\)"):
        build_view([load_view_run(runs["a"])], tmp_path)
    assert (tmp_path / "mine.txt").read_text() == "keep me"
    assert cli_main(["view", str(runs["a"]), "--out", str(tmp_path)]) == 2


def test_failure_kinds_and_agreement_read_the_samples_as_problems_do(runs: dict[str, Path]) -> None:
    samples = _samples(runs["hostile"], "muirbench")
    bits = {k: 1 << i for i, k in enumerate(FAILURE_KINDS)}
    assert failure_kinds(samples[0]) == bits["context_overflow"]
    assert failure_kinds(samples[1]) == bits["unparsed"]
    assert failure_kinds(samples[2]) == bits["judge_failure"]
    assert failure_kinds(samples[3]) == bits["request_failure"]
    assert failure_kinds(samples[4]) == bits["guessed"]
    assert failure_kinds(samples[6]) == 0
    assert same_answer(samples[6], samples[6]) and not same_answer(samples[0], samples[6])


def test_public_spec_hides_machine_paths() -> None:
    assert public_spec("replay:/home/me/runs/a/predictions.jsonl") == "replay:predictions.jsonl"
    assert public_spec("replay:/home/me/runs/a/samples/") == "replay:a/samples"
    assert public_spec("hf:/models/llava-1.5-13b") == "hf:llava-1.5-13b"
    assert public_spec("hf:Qwen/Qwen2-VL-7B-Instruct") == "hf:Qwen/Qwen2-VL-7B-Instruct"
    assert public_spec("random") == "random"


# --- the page ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def one_site(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    site = tmp_path_factory.mktemp("view-one")
    assert cli_main(["view", str(runs["hostile"]), "--out", str(site)]) == 0
    for url in _serve(site):
        yield url, site


def test_table_filters_and_sort(browser, one_site, runs: dict[str, Path]) -> None:  # noqa: F811
    url, site = one_site
    samples = _samples(runs["hostile"], "muirbench")
    t = _task_index(site, "muirbench")
    page, problems = _page(browser, f"{url}#t={t}")
    assert _count(page) == len(samples) == 9
    # breakdown: MUIRBench task
    counting = [s for s in samples if s["breakdown"].get("task") == "Counting"]
    page.locator('select[data-filter="dim"][data-dim="0"]').select_option(label="Counting")
    assert _count(page) == len(counting) > 0
    page.locator('select[data-filter="dim"][data-dim="0"]').select_option(value="")
    # failure kinds, one by one
    for kind, expected in (("context_overflow", 1), ("unparsed", 1), ("judge_failure", 1), ("request_failure", 1),
                           ("guessed", 1), ("failed", 5), ("ok", 4)):
        page.locator("#filter-kind").select_option(value=kind)
        assert _count(page) == expected, kind
    page.locator("#filter-kind").select_option(value="unparsed")
    assert page.locator("#docs tbody tr .badge").all_text_contents() == ["unparsed"]
    page.locator("#filter-kind").select_option(value="")
    # score range (acc is 0 or 100) and sort by score
    right = [s for s in samples if s["metrics"].get("acc") == 100.0]
    page.locator("#filter-min").fill("50")
    assert _count(page) == len(right)
    page.locator("#filter-min").fill("")
    page.locator("#sort").select_option(value="desc")
    scores = page.locator("#docs tbody td.score").all_text_contents()
    numbers = [float(s) for s in scores if s != "\u2013"]
    assert numbers == sorted(numbers, reverse=True) and scores[-1] == "\u2013"  # unscored last
    page.locator("#sort").select_option(value="asc")
    numbers = [float(s) for s in page.locator("#docs tbody td.score").all_text_contents() if s != "\u2013"]
    assert numbers == sorted(numbers)
    # text search: an id, then a word that only a reply holds (read from the documents' chunks)
    page.locator("#filter-search").fill("muir_sample_3")
    expect(page.locator("#docs tbody td.doc-id")).to_have_text(["muir_sample_3"])
    page.locator("#filter-search").fill("needle-in-the-haystack")
    expect(page.locator("#docs tbody td.doc-id")).to_have_text([samples[5]["doc_id"]])
    assert not problems, problems


def test_mmdu_images_in_place_and_judge_verdicts(browser, one_site, runs: dict[str, Path]) -> None:  # noqa: F811
    url, site = one_site
    sample = _samples(runs["hostile"], "mmdu")[0]
    page, problems = _page(browser, f"{url}#t={_task_index(site, 'mmdu')}&d=0")
    page.wait_for_selector('section.turn[data-turn="2"]')
    assert page.locator("section.turn").count() == len(sample["extra"]["turns"]) == 4
    # turn 1 asks without an image; turn 2's image sits between "Image1: " and the question, as sent
    assert page.locator('section.turn[data-turn="1"] > .msg img.thumb').count() == 0
    user = page.locator('section.turn[data-turn="2"] > .msg.role-user')
    kinds = user.evaluate("m => [...m.children].slice(1).map(c => c.tagName + ':' + (c.tagName === 'IMG' ? c.alt : c.textContent))")
    assert kinds == ["SPAN:Image1: ", "IMG:s01_sales_2023.jpg",
                     "SPAN:. Here is the chart from my first slide. Which month has the highest bar in Image1, and what value does it show?"]
    thumb = user.locator("img.thumb")
    assert thumb.get_attribute("src").startswith("img/")
    expect(thumb).to_have_js_property("complete", True)
    assert thumb.evaluate("i => i.naturalWidth") > 0
    assert page.locator('section.turn[data-turn="3"] > .msg img.thumb').get_attribute("alt") == "s01_sales_2024.jpg"
    # the reply of each turn follows its question
    assert page.locator('section.turn[data-turn="2"] > .msg.role-assistant .text').text_content() == sample["responses"][1]
    # click to enlarge; Escape closes
    thumb.click()
    expect(page.locator("#overlay img.large")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#overlay")).to_be_hidden()
    # the judge of turn 1: its verdict, its full reply, and its prompt (with the images it was sent)
    judge = page.locator('section.turn[data-turn="1"] section.judge')
    verdict = dict(zip(judge.locator("table.verdict th").all_text_contents(), judge.locator("table.verdict td").all_text_contents()))
    assert verdict == {k: str(v) for k, v in sample["judge"][0]["fields"].items()}
    assert judge.locator(".judge-reply pre").text_content() == sample["judge"][0]["replies"][0]
    judge.locator(".judge-prompt summary").click()
    prompt_text = judge.locator(".judge-prompt").text_content()
    assert sample["judge"][0]["prompt"][-1]["content"][0]["text"][:60] in prompt_text
    # the document's metrics
    assert page.locator('.doc-run table.metrics tr[data-metric="overall"] td').first.text_content() == f"{sample['metrics']['overall']:.2f}"
    assert not problems, problems


def test_mmrc_replay_then_probes_and_reasks(browser, one_site, runs: dict[str, Path]) -> None:  # noqa: F811
    url, site = one_site
    sample = _samples(runs["hostile"], "mmrc")[0]
    page, problems = _page(browser, f"{url}#t={_task_index(site, 'mmrc')}&d=0")
    page.wait_for_selector("section.probe")
    assert page.locator("section.prompt .msg.replayed").count() == sum(m["role"] == "assistant" for m in sample["prompt"])
    assert page.locator("section.probe").count() == len(sample["extra"]["questions"])
    first = page.locator('section.probe[data-probe="0"]')
    assert first.locator("section.judge table.verdict").count() == 1
    # a re-asked MUIRBench answer shows both attempts and the unparsed reason
    page.goto(f"{url}#t={_task_index(site, 'muirbench')}&d=1")
    page.wait_for_selector(".msg.reasked")
    assert page.locator("section.replies .msg").count() == 2
    assert "re-asked" in page.locator("section.replies .msg.reasked .role").text_content()
    assert page.locator(".problems-list .badge").text_content() == "unparsed"
    assert not problems, problems


def test_note_taking_shows_the_notes(browser, tmp_path: Path) -> None:  # noqa: F811
    run = tmp_path / "notes"
    mmtasks.evaluate(tasks="mmrc", model="random", judge="random", data_dir=SAMPLE, output_path=run, use_cache=False,
                     allow_failures=True, strategy="notetaking", limit=1)
    sample = _samples(run, "mmrc")[0]
    site = tmp_path / "view"
    build_view([load_view_run(run)], site)
    for url in _serve(site):
        page, problems = _page(browser, f"{url}#t=0&d=0")
        page.wait_for_selector("section.notes")
        notes = page.locator("section.notes .note:not(.final)")
        assert notes.count() == len(sample["extra"]["notes"]) > 0
        first = sample["extra"]["notes"][0]
        assert notes.first.locator(".role").text_content() == f"note after turn {first['turn']}"
        assert notes.first.locator("details pre").text_content() == first["reply"]
        if first.get("error"):
            assert notes.first.locator(".error").text_content() == f"error: {first['error']}"
        assert page.locator("section.notes .note.final").count() == 1
        # the notes come after the replayed conversation and before the probes
        order = page.locator(".doc-run > section").evaluate_all("s => s.map(x => x.className)")
        assert order.index("part notes") > order.index("part prompt") and order.index("part notes") < order.index("part probe")
        assert not problems, problems


def test_hostile_sample_renders_as_inert_text(browser, one_site) -> None:  # noqa: F811
    url, site = one_site
    page, problems = _page(browser, f"{url}#t={_task_index(site, 'muirbench')}&d=0")
    page.wait_for_selector("section.replies")
    assert page.locator("#docs tbody td.doc-id").first.text_content() == HOSTILE_ID
    assert page.locator(".doc-title .doc-id").text_content() == HOSTILE_ID
    assert page.locator("section.replies .text").text_content() == HOSTILE_REPLY
    assert page.locator("dd.parsed").text_content() == HOSTILE_REPLY
    assert '<img src=x onerror="window.__xss=5">' in page.locator("#docs tbody td.dims").first.text_content()
    assert "window.__xss=6" in page.locator(".problems-list").text_content()
    page.wait_for_timeout(200)
    assert page.evaluate("window.__xss") is None
    assert page.locator('img[src="x"]').count() == 0 and page.locator('a[href^="javascript"]').count() == 0
    assert page.locator("script").count() == 1  # app.js; data scripts are removed once read
    assert not problems, problems


def test_opened_from_disk(browser, one_site) -> None:  # noqa: F811
    _, site = one_site
    page, problems = _page(browser, (site / "index.html").as_uri() + f"#t={_task_index(site, 'mmdu')}&d=1")
    page.wait_for_selector("section.turn img.thumb")
    assert not problems, problems


def test_two_runs_side_by_side_and_where_they_disagree(browser, runs: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    site = tmp_path / "view"
    assert cli_main(["view", str(runs["a"]), str(runs["b"]), "--out", str(site)]) == 0
    a, b = _samples(runs["a"], "realbench_ranking_hard"), _samples(runs["b"], "realbench_ranking_hard")
    disagree = [x["doc_id"] for x, y in zip(a, b) if not same_answer(x, y)]
    assert 0 < len(disagree) < len(a)  # seeds 0 and 1 agree on some answers, not all
    for url in _serve(site):
        page, problems = _page(browser, f"{url}#t={_task_index(site, 'realbench_ranking_hard')}")
        assert page.locator(".runs .run-label").all_text_contents() == ["A", "B"]
        assert page.locator(".runs .run-name").first.text_content() == "Random A"
        assert _count(page) == len(a)
        page.locator("#filter-disagree").check()
        assert page.locator("#docs tbody td.doc-id").all_text_contents() == disagree
        page.locator("#docs tbody tr").first.click()
        page.wait_for_selector(".doc-columns.runs-2")
        row = a.index(next(x for x in a if x["doc_id"] == disagree[0]))
        cols = page.locator(".doc-run")
        assert cols.nth(0).locator("section.replies .text").text_content() == a[row]["responses"][-1]
        assert cols.nth(1).locator("section.replies .text").text_content() == b[row]["responses"][-1]
        assert page.locator(".disagree-badge").count() == 1
        # the header pairs the two runs over the documents both scored (mmtasks compare's statistics)
        from mmtasks.comparison.runs import compare

        acc = next(t for t in compare(runs["a"], runs["b"]).tasks if t.task == "realbench_ranking_hard").metrics[0]
        paired = page.locator("#summary .paired").text_content() or ""
        assert f"Paired over the {len(a)} documents both runs scored" in paired
        sign = "+" if acc.difference >= 0 else "\u2212"
        assert f"B \u2212 A on acc = {sign}{abs(acc.difference):.2f}" in paired
        assert ("not significant" in paired) == (not acc.significant)
        assert not problems, problems


def test_per_turn_scores_and_differing_task_configs_in_the_header(browser, runs: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    """A multi-turn task's header shows its headline per turn (results.json's turn breakdown); two
    runs whose task config hashes differ are flagged (B's MMDU judge prompt edited here)."""
    results_a = json.loads((runs["a"] / "results.json").read_text())
    changed = tmp_path / "run-changed"
    shutil.copytree(runs["b"], changed)
    raw = json.loads((changed / "results.json").read_text())
    raw["configs"]["mmdu"]["judge"]["prompt"] += " (edited)"
    raw["config_hashes"]["mmdu"] = "0" * 16  # as a run of the edited definition records it
    (changed / "results.json").write_text(json.dumps(raw))
    site = tmp_path / "view"
    assert cli_main(["view", str(runs["a"]), str(changed), "--out", str(site)]) == 0
    by_turn = results_a["breakdowns"]["mmdu"]["turn"]
    for url in _serve(site):
        page, problems = _page(browser, f"{url}#t={_task_index(site, 'mmdu')}")
        table = page.locator("#summary table.per-turn")
        assert table.locator("tbody tr").count() == len(by_turn)
        first = table.locator('tbody tr[data-turn="1"] td').all_text_contents()
        assert first[1] == f"{by_turn['1']['overall']:.2f} n={by_turn['1']['n']}"
        assert "different definitions of this task" in page.locator("#summary .configs-differ").text_content()
        page2, _ = _page(browser, f"{url}#t={_task_index(site, 'realbench_ranking_hard')}")
        assert page2.locator("#summary .configs-differ").count() == 0  # same definition in both runs
        assert page2.locator("#summary table.per-turn").count() == 0  # one turn: no per-turn table
        assert not problems, problems


# --- named runs: a replayed run on the leaderboard, linked to its view -------------------------


def test_replayed_run_with_a_name_on_the_leaderboard_and_its_view(browser, runs: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    replayed = tmp_path / "llava-rescored"
    assert cli_main(["--tasks", "realbench_ranking_hard", "--model", f"replay:{runs['a'] / 'samples'}",
                     "--data-dir", str(SAMPLE), "--output-path", str(replayed), "--no-cache", "--no-progress",
                     "--run-name", "LLaVA-1.5-13B"]) == 0
    results = json.loads((replayed / "results.json").read_text())
    assert results["config"]["run_name"] == "LLaVA-1.5-13B"
    unnamed = tmp_path / "unnamed"
    assert cli_main(["--tasks", "realbench_ranking_hard", "--model", f"replay:{runs['b'] / 'samples'}", "--seed", "3",
                     "--data-dir", str(SAMPLE), "--output-path", str(unnamed), "--no-cache", "--no-progress"]) == 0
    board = tmp_path / "board"
    assert cli_main(["view", str(replayed), "--out", str(board / "views" / replayed.name)]) == 0
    assert leaderboard_main(["build", str(replayed), str(unnamed), "--out", str(board), "--no-paper"]) == 0
    data = (board / "leaderboard.json").read_text()
    entries = json.loads(data)["benchmarks"][0]["entries"]
    named = next(e for e in entries if e["run_name"] == "LLaVA-1.5-13B")
    assert named["model"] == "LLaVA-1.5-13B" and named["model_spec"] == "replay:run-a/samples"
    assert named["runs"][0]["view"] == f"views/{replayed.name}/index.html"
    other = next(e for e in entries if e["run_name"] is None)
    assert other["model"] == "replay:run-b/samples" and other["runs"][0]["view"] is None
    assert str(tmp_path) not in data
    for url in _serve(board):
        page = browser.new_page()
        page.goto(url + "#realbench")  # the overview opens first; the benchmark's own page
        page.wait_for_selector("#board-realbench tbody tr")
        row = page.locator("#board-realbench tbody tr", has_text="LLaVA-1.5-13B")
        assert row.locator(".model-name").text_content() == "LLaVA-1.5-13B"
        assert "replay:run-a/samples" in row.locator(".model-details").text_content()
        assert page.locator(".model-name").all_text_contents().count("replay:run-b/samples") >= 1
        assert str(tmp_path) not in page.content()
        link = row.locator("a.view-link")
        assert link.get_attribute("href") == f"views/{replayed.name}/index.html"
        link.click()
        page.wait_for_selector("#docs tbody tr")
        assert page.locator(".runs .run-name").text_content() == "LLaVA-1.5-13B"
        assert "replay:run-a/samples" in page.locator(".runs .run-details").text_content()
        # the run card (results.json's run_card): the data's content hash, the software, the machine
        card = page.locator(".runs .run-card")
        assert card.locator("summary").text_content() == "run card"
        lines = card.locator("li").all_text_contents()
        digest = results["run_card"]["data"]["realbench_ranking_hard"]["sha256"][:12]
        assert f"data realbench_ranking_hard: local realbench/ranking_hard.jsonl@{digest}" in lines
        assert any(line.startswith("software: mmtasks ") for line in lines)
        assert str(tmp_path) not in page.content()
        page.close()


def test_a_run_name_is_recorded_but_a_rename_is_the_same_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = mmtasks.evaluate("realbench_ranking_hard", "random", data_dir=SAMPLE, output_path=out, use_cache=False,
                             run_name="first name")
    assert first["config"]["run_name"] == "first name"
    # the same command under another name resumes into its folder (not refused as another run's)
    again = mmtasks.evaluate("realbench_ranking_hard", "random", data_dir=SAMPLE, output_path=out, use_cache=False,
                             run_name="LLaVA-1.5-13B")
    assert json.loads((out / "results.json").read_text())["config"]["run_name"] == "LLaVA-1.5-13B"
    assert again["results"] == first["results"]
    unnamed = mmtasks.evaluate("realbench_ranking_hard", "random", data_dir=SAMPLE, use_cache=False, limit=1)
    assert "run_name" not in unnamed["config"]
    with pytest.raises(ConfigError, match="run.name|run_name"):
        mmtasks.evaluate("realbench_ranking_hard", "random", data_dir=SAMPLE, use_cache=False, run_name="")


def test_a_bad_samples_line_or_a_folder_without_samples_is_one_line(runs: dict[str, Path], tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["a"], run)
    path = run / "samples" / "muirbench.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:40]
    path.write_text("\n".join(lines) + "\n")
    assert cli_main(["view", str(run), "--out", str(tmp_path / "v1")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("  ")]  # progress: "  task"
    assert len(err) == 1 and "muirbench.jsonl:3" in err[0] and err[0].startswith("mmtasks: error:"), err
    shutil.rmtree(run / "samples")
    assert cli_main(["view", str(run), "--out", str(tmp_path / "v2")]) == 2
    assert "no samples/ folder" in capsys.readouterr().err
    assert cli_main(["view", str(tmp_path / "nowhere"), "--out", str(tmp_path / "v3")]) == 2
    assert "results.json" in capsys.readouterr().err


@pytest.mark.parametrize("depth", [900, 100_000])  # under json's own recursion limit (the page's walk recursed), and far past it
def test_a_deeply_nested_samples_line_is_one_line(runs: dict[str, Path], tmp_path: Path, capsys, depth: int) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["a"], run)
    path = run / "samples" / "muirbench.jsonl"
    lines = path.read_text().splitlines()
    lines[1] = '{"doc_id": "deep", "extra": ' + "[" * depth + "]" * depth + "}"
    path.write_text("\n".join(lines) + "\n")
    assert cli_main(["view", str(run), "--out", str(tmp_path / "v")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("  ")]
    assert len(err) == 1 and "muirbench.jsonl:2" in err[0] and "nested more than 64 deep" in err[0], err


def test_the_paired_line_names_each_runs_failed_documents(browser, tmp_path: Path) -> None:  # noqa: F811
    # issue 41, finding 1, in the viewer: B's requests for 1-3 failed; the line pairs all 7
    # documents, says how many each run failed and that they count as wrong (acc_all)
    from tests.comparison.test_compare import _replayed, _replayed_failing

    a = _replayed(tmp_path, "model-a", {"1", "2", "3"})
    b = _replayed_failing(tmp_path, "model-b", {"4"}, failed={"1", "2", "3"})
    site = tmp_path / "view"
    assert cli_main(["view", str(a), str(b), "--out", str(site)]) == 0
    page, problems = _page(browser, (site / "index.html").as_uri() + f"#t={_task_index(site, 'mantis_eval')}")
    paired = page.locator("#summary .paired").text_content() or ""
    assert "Paired over the 7 documents both runs hold (failed: 0 in A, 3 in B, counted as wrong)" in paired, paired
    assert "B \u2212 A on acc = \u221228.57" in paired, paired
    assert not problems, problems
    page.close()


def test_scoring_variants_in_the_summary_and_on_each_document(browser, tmp_path: Path) -> None:  # noqa: F811
    # Video-MME's replies of tasks/videomme/tests/test_videomme.py: the task's rule leaves its 2 unread
    # replies out (85.71), lmms-eval's variant counts them wrong (66.67); the page says both, and on
    # an unread reply's document the variant's 0 where the task gives no score
    from tasks.videomme.tests.test_videomme import VIDEOMME_REPLIES

    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "videomme", "doc_id": d, "responses": [r]}) + "\n"
                            for d, r in VIDEOMME_REPLIES.items()), encoding="utf-8")
    run = tmp_path / "run"
    mmtasks.evaluate(tasks="videomme", model=f"replay:{pred}", data_dir=SAMPLE, output_path=run, use_cache=False,
                     allow_failures=True, num_frames=1)
    site = tmp_path / "view"
    build_view([load_view_run(run)], site)
    page, problems = _page(browser, (site / "index.html").as_uri() + "#t=0&d=4")  # 002-2 "answer: c": unread
    summary = page.locator("#summary").text_content() or ""
    assert "variant lmms_eval: acc 66.67" in summary, summary
    page.wait_for_selector("section.variants")
    item = page.locator("section.variants li").first
    assert item.text_content() == "lmms_eval: read nothing; acc 0 (differs from the task's own)"
    assert "differs" in (item.get_attribute("class") or "")
    assert not problems, problems
    page.close()
