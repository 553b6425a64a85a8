"""The run viewer at scale: a synthetic run of 20,000 samples, its view built with
``mmtasks view``, then opened in headless Chromium (the system Chromium, through playwright).

Measured:
- the build (``build_view``): seconds, the site's size, files written;
- the first view, served over http by a counting static server: seconds from navigation to the
  first table row (time to first render, measured in Python around ``page.goto`` and in the page
  with ``performance.now()``), and the bytes the server sent until then;
- opening one document (its chunk), and a full-text search (every chunk) for scale;
- the first view opened from disk (``file://``): seconds to the first row.

Each sample is a single-turn multiple-choice answer with a judge record, two of 64 shared
images, a 500-character prompt, a 300-character reply and a 900-character judge prompt: the
size of a RealBench/MUIRBench sample with a judge, as runs write them.

    python benchmarks/viewer_scale.py [--samples 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import platform
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mmtasks.view.records import load_view_run  # noqa: E402
from mmtasks.view.site import build_view  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
WORDS = ("the chart shows monthly sales for the first quarter and the second image compares them with "
         "last year while the note asks which month changed the most and why").split()


def _text(rng: random.Random, n: int) -> str:
    out: list[str] = []
    length = 0
    while length < n:
        word = rng.choice(WORDS)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)


def synthetic_run(root: Path, n: int) -> Path:
    """A run folder: results.json and samples/synthetic_mc.jsonl with ``n`` samples."""
    rng = random.Random(0)
    images = root / "images"
    images.mkdir(parents=True)
    pool = []
    for k in range(64):
        path = images / f"{k}.jpg"
        Image.new("RGB", (640, 480), ((37 * k) % 256, (91 * k) % 256, (53 * k + 80) % 256)).save(path, quality=85)
        pool.append(str(path))
    run = root / "run"
    (run / "samples").mkdir(parents=True)
    categories = [f"category_{i}" for i in range(12)]
    with (run / "samples" / "synthetic_mc.jsonl").open("w") as fh:
        for i in range(n):
            answer, target = rng.choice("ABCD"), rng.choice("ABCD")
            failed = i % 97 == 0
            reply = None if failed else _text(rng, 300) + f" The answer is {answer}."
            sample = {
                "task": "synthetic_mc", "doc_id": f"syn-{i:05d}", "doc_index": i,
                "prompt": [{"role": "user", "content": [
                    {"type": "text", "text": _text(rng, 250)}, {"type": "image", "image": rng.choice(pool)},
                    {"type": "text", "text": _text(rng, 250)}, {"type": "image", "image": rng.choice(pool)},
                    {"type": "text", "text": "Answer with the option's letter."}]}],
                "responses": [reply], "parsed": None if failed else answer, "target": target,
                "metrics": {"acc": None if failed else 100.0 * (answer == target)},
                "failures": ["HTTP 500: server error"] if failed else [], "unparsed": 0, "guessed": int(i % 53 == 0),
                "breakdown": {"category": categories[i % 12], "n_images": "2"},
                "judge": [{"fields": {"score": rng.randint(0, 10)}, "replies": [_text(rng, 200)], "error": None,
                           "prompt": [{"role": "user", "content": [{"type": "text", "text": _text(rng, 900)}]}]}],
                "judge_failures": 0, "extra": {},
            }
            fh.write(json.dumps(sample) + "\n")
    results = {
        "results": {"synthetic_mc": {"alias": "synthetic_mc", "acc": 25.0, "acc_stderr": 0.3}},
        "problems": {"synthetic_mc": {"request_failures": n // 97 + 1}},
        "configs": {"synthetic_mc": {"task": "synthetic_mc", "protocol": "single_turn",
                                     "metrics": [{"name": "acc", "primary": True}]}},
        "versions": {"synthetic_mc": 1}, "n-samples": {"synthetic_mc": {"original": n, "effective": n}},
        "higher_is_better": {"synthetic_mc": {"acc": True}},
        "config": {"model": "random", "run_name": "synthetic 20k"}, "git_hash": None, "date": time.time(),
    }
    (run / "results.json").write_text(json.dumps(results))
    return run


def index_chunks(site: Path) -> int:
    text = (site / "index.js").read_text()
    return json.loads(text[text.index(",") + 1: text.rindex(")")])["tasks"][0]["chunks"]


class Counting(http.server.SimpleHTTPRequestHandler):
    sent: dict[str, int] = {}
    lock = threading.Lock()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def copyfile(self, source, outputfile) -> None:  # type: ignore[no-untyped-def]
        data = source.read()
        outputfile.write(data)
        with self.lock:
            self.sent[self.path] = self.sent.get(self.path, 0) + len(data)


def measure(site: Path, repeat: int) -> dict[str, object]:
    from playwright.sync_api import expect, sync_playwright

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Counting, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    first, in_page, first_bytes, doc_s, doc_bytes, search_s, search_bytes, disk = [], [], [], [], [], [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        version = browser.version
        for _ in range(repeat):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})  # a cold cache each time
            page = context.new_page()
            Counting.sent = {}
            t0 = time.perf_counter()
            page.goto(url)
            page.wait_for_selector("#docs tbody tr")
            first.append(time.perf_counter() - t0)
            in_page.append(page.evaluate("() => performance.now()") / 1000)
            first_bytes.append(sum(Counting.sent.values()))
            rows = page.locator("#filter-count").text_content()
            t0 = time.perf_counter()
            page.locator("#docs tbody tr").nth(7).click()
            page.wait_for_selector(".doc-run section.replies")
            doc_s.append(time.perf_counter() - t0)
            doc_bytes.append(sum(Counting.sent.values()) - first_bytes[-1])
            before = sum(Counting.sent.values())
            t0 = time.perf_counter()
            page.locator("#filter-search").fill("syn-19999")
            done = f"{index_chunks(site)}/{index_chunks(site)}"
            expect(page.locator("#filter-count")).to_have_attribute("data-searched", done, timeout=300_000)
            expect(page.locator("#filter-count")).to_have_text("1 of 20000 documents")
            search_s.append(time.perf_counter() - t0)
            search_bytes.append(sum(Counting.sent.values()) - before)
            context.close()
            page = browser.new_page()
            t0 = time.perf_counter()
            page.goto((site / "index.html").as_uri())
            page.wait_for_selector("#docs tbody tr")
            disk.append(time.perf_counter() - t0)
            page.close()
        browser.close()
    server.shutdown()
    return {"chromium": version, "rows": rows, "first_render_s": first, "first_render_in_page_s": in_page,
            "first_view_bytes": first_bytes, "open_document_s": doc_s, "open_document_bytes": doc_bytes,
            "full_text_search_s": search_s, "full_text_search_bytes": search_bytes, "file_url_first_render_s": disk}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mmtasks-viewer-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        run = synthetic_run(root, args.samples)
        made = time.perf_counter() - t0
        site = root / "view"
        t0 = time.perf_counter()
        index = build_view([load_view_run(run)], site)
        built = time.perf_counter() - t0
        files = [p for p in site.rglob("*") if p.is_file()]
        samples_mb = (run / "samples" / "synthetic_mc.jsonl").stat().st_size / 1e6
        print(f"machine: {platform.processor() or platform.machine()}, {platform.system()} {platform.release()}, "
              f"Python {platform.python_version()}")
        print(f"synthetic run: {args.samples} samples, {samples_mb:.1f} MB of samples (made in {made:.1f} s)")
        print(f"build: {built:.1f} s; {len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB; "
              f"{index['tasks'][0]['chunks']} chunks; {index['images_written']} image files")
        out = measure(site, args.repeat)
        print(f"chromium {out['chromium']}; table: {out['rows']}")
        for key in ("first_render_s", "first_render_in_page_s", "open_document_s", "full_text_search_s", "file_url_first_render_s"):
            values = out[key]
            assert isinstance(values, list)
            print(f"{key}: median {statistics.median(values):.3f}  (runs {', '.join(f'{v:.3f}' for v in values)})")
        for key in ("first_view_bytes", "open_document_bytes", "full_text_search_bytes"):
            values = out[key]
            assert isinstance(values, list)
            print(f"{key}: {statistics.median(values) / 1e6:.3f} MB  (runs {', '.join(str(v) for v in values)})")
        shutil.rmtree(site, ignore_errors=True)


if __name__ == "__main__":
    main()
