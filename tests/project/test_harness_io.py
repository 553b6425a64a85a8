"""The fast paths of document loading and samples writing give what the slow ones gave."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest
from PIL import Image as PILImage

from mmtasks.core.sample import Sample
from mmtasks.documents.dataset import image_file_problem
from mmtasks.documents.paths import ConfinedPaths, confined
from mmtasks.errors import DataError
from mmtasks.results.files import SamplesWriter, dumps


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A data root with plain folders, symlinked folders and files inside and outside it."""
    root = tmp_path / "data"
    (root / "images" / "a").mkdir(parents=True)
    (root / "images" / "a" / "1.jpg").write_bytes(b"x")
    (root / "other").mkdir()
    (root / "other" / "2.jpg").write_bytes(b"x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "3.jpg").write_bytes(b"x")
    os.symlink(root / "other", root / "images" / "link_in")            # folder link, stays inside
    os.symlink(tmp_path / "outside", root / "images" / "link_out")     # folder link, leaves
    os.symlink(root / "other" / "2.jpg", root / "images" / "a" / "f_in.jpg")
    os.symlink(tmp_path / "outside" / "3.jpg", root / "images" / "a" / "f_out.jpg")
    return root


CASES = [
    "images/a/1.jpg", "images/a/missing.jpg", "images/link_in/2.jpg", "images/a/f_in.jpg",
    "images/./a/1.jpg", "images/a/../a/1.jpg", "other/../images/a/1.jpg", "images/a/", "images",
    "images/link_out/3.jpg", "images/a/f_out.jpg", "../outside/3.jpg", "images/../../outside/3.jpg",
    "/etc/passwd", "", "images//a/1.jpg",
]


@pytest.mark.parametrize("relative", CASES)
def test_confined_paths_match_confined(tree: Path, relative: str) -> None:
    paths = ConfinedPaths(tree)
    try:
        expected: Path | str = confined(tree, relative, doc_id="d")
    except DataError as exc:
        expected = type(exc).__name__ + (": leaves" if "leaves" in str(exc) else ": other")
    try:
        got: Path | str = paths(relative, doc_id="d")
        got = paths(relative, doc_id="d")  # second call: from the directory cache
    except DataError as exc:
        got = type(exc).__name__ + (": leaves" if "leaves" in str(exc) else ": other")
    assert got == expected


def test_confined_paths_cache_is_bounded(tree: Path) -> None:
    paths = ConfinedPaths(tree, cache_size=3)
    for k in range(20):
        (tree / "images" / f"d{k}").mkdir()
        assert paths(f"images/d{k}/x.jpg") == confined(tree, f"images/d{k}/x.jpg")
    assert len(paths._dirs) <= 3


def _image(path: Path, fmt: str, mode: str = "RGB") -> Path:
    # an icon 16 px square: Pillow 12.3 (what trackio's pin installs) writes a 5x4 ICO it cannot read back
    PILImage.new(mode, (16, 16) if fmt == "ICO" else (5, 4), 0).save(path, format=fmt)
    return path


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "GIF", "WEBP", "BMP", "TIFF", "ICO", "TGA"])
def test_image_sniff_accepts_images(tmp_path: Path, fmt: str) -> None:
    assert image_file_problem(_image(tmp_path / f"x.{fmt.lower()}", fmt)) is None


def test_image_sniff_rejects_non_images(tmp_path: Path) -> None:
    (tmp_path / "empty.jpg").write_bytes(b"")
    (tmp_path / "text.jpg").write_bytes(b"this is not a jpeg, just some text")
    (tmp_path / "short.jpg").write_bytes(b"\xff\xd8")
    (tmp_path / "dir.jpg").mkdir()
    assert image_file_problem(tmp_path / "empty.jpg") == "not a readable image"
    assert image_file_problem(tmp_path / "text.jpg") == "not a readable image"
    assert image_file_problem(tmp_path / "short.jpg") == "not a readable image"
    assert image_file_problem(tmp_path / "dir.jpg") == "image not found"
    assert image_file_problem(tmp_path / "missing.jpg") == "image not found"


@dataclass
class _Nested:
    a: int
    b: tuple[str, ...]


def _sample(i: int, **kw: object) -> Sample:
    return Sample(task="t", doc_id=f"d{i}", doc_index=i, prompt=[{"role": "user", "content": [{"type": "text", "text": f"q{i} 中文"}]}],
                  responses=[f"r{i}", None], parsed={1, 2}, target=[i], metrics={"acc": float(i % 2), "f1": None},
                  breakdown={"n": "1-6"}, extra={"nested": [_Nested(i, ("x",))]}, **kw)  # type: ignore[arg-type]


def test_sample_json_is_what_asdict_gave() -> None:
    s = _sample(3, failures=["boom"], judge=[{"fields": None}], judge_failures=1)
    assert dumps(s.to_json()) == dumps(asdict(s))
    assert Sample.from_json(json.loads(dumps(s.to_json()))).extra == {"nested": [{"a": 3, "b": ["x"]}]}


def test_slim_keeps_what_aggregators_read() -> None:
    s = _sample(4, failures=["boom"], unparsed=True, judge_failures=2, judge=[{"fields": None}])
    slim = s.slim()
    for name in ("task", "doc_id", "doc_index", "metrics", "failures", "unparsed", "breakdown", "judge_failures", "extra"):
        assert getattr(slim, name) == getattr(s, name)
    assert slim.prompt == [] and slim.responses == [] and slim.parsed is None and slim.target is None and slim.judge == []


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("order", [[0, 1, 2, 3, 4], [1, 0, 4, 2, 3], [4, 3, 2, 1, 0]])
def test_samples_writer_orders_by_document(tmp_path: Path, order: list[int]) -> None:
    writer = SamplesWriter(tmp_path)
    for i in order:
        writer.write(_sample(i))
    writer.close()
    final = writer.finish("t")
    assert _lines(final) == [dumps(_sample(i).to_json()) for i in range(5)]
    assert not (tmp_path / "t.jsonl.partial").exists()


def test_samples_writer_finishes_a_partial_file_of_another_process(tmp_path: Path) -> None:
    """A killed run's partial file: lines in any order, a blank line and a torn last line."""
    rows = [dumps(_sample(i).to_json()) for i in (2, 0, 1)]
    (tmp_path / "t.jsonl.partial").write_text(rows[0] + "\n\n" + rows[1] + "\n" + rows[2] + "\n" + rows[2][:40], encoding="utf-8")
    final = SamplesWriter(tmp_path).finish("t")
    assert _lines(final) == [rows[1], rows[2], rows[0]]


def test_samples_writer_empty_task(tmp_path: Path) -> None:
    assert SamplesWriter(tmp_path).finish("none").read_text() == ""


@pytest.mark.parametrize("n", [9, 1001, 2500])
def test_bootstrap_does_not_depend_on_its_chunk_size(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """The resampling buffer bound (memory) changes nothing in the figures."""
    import random

    from mmtasks.scoring import bootstrap

    rng = random.Random(n)
    values = [rng.random() * 100 for _ in range(n)]
    nums, dens = values, [float(rng.randint(1, 8)) for _ in range(n)]
    expected = (bootstrap.bootstrap_stderr(values, seed=1234), bootstrap.bootstrap_ratio_stderr(nums, dens, seed=3))
    for chunk in (n, 3 * n + 1, 10**7):
        monkeypatch.setattr(bootstrap, "_CHUNK_VALUES", chunk)
        assert (bootstrap.bootstrap_stderr(values, seed=1234), bootstrap.bootstrap_ratio_stderr(nums, dens, seed=3)) == expected


@pytest.mark.parametrize("source", ["{{ doc.x }}", "{{doc.x|length}}", "{{ doc.x | length }}", "{{ doc.missing }}",
                                    "{{ doc.missing | length }}", "{{ doc.items }}", "{{ doc.x }} ", "{{ doc.x | upper }}"])
@pytest.mark.parametrize("value", ["food", "", "<b>&", 3, 1.5, None, True, [1, 2], {"a": 1}])
def test_doc_field_fast_path_renders_what_jinja_renders(monkeypatch: pytest.MonkeyPatch, source: str, value: object) -> None:
    from mmtasks import templates
    from mmtasks.errors import TemplateError

    variables = {"doc": {"x": value}, "n_images": 2}

    def outcome() -> str:
        try:
            return templates.render(source, variables, origin="t.yaml", doc_id="d", field="breakdowns.b")
        except TemplateError as exc:
            return f"TemplateError: {exc}"

    fast = outcome()
    monkeypatch.setattr(templates, "doc_field", lambda source: None)  # Jinja only
    assert outcome() == fast
