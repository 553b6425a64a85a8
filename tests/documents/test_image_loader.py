"""ImageLoader: decoded once per image while cached, in worker threads, errors for the request that needs the image."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PIL import Image as PILImage

from mmtasks.core.conversation import Image
from mmtasks.documents.image_loader import ImageLoader, image_key
from mmtasks.errors import DataError


def _png(path: Path, size: tuple[int, int], colour: tuple[int, int, int]) -> Path:
    PILImage.new("RGB", size, colour).save(path)
    return path


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(image label, decoding thread name) of every decode."""
    calls: list[tuple[str, str]] = []
    original = Image.load
    monkeypatch.setattr(Image, "load", lambda self: (calls.append((self.label or "", threading.current_thread().name)), original(self))[1])
    return calls


def test_each_image_decoded_once_off_the_main_thread(tmp_path: Path, counted: list[tuple[str, str]]) -> None:
    a = _png(tmp_path / "a.png", (4, 3), (255, 0, 0))
    b = _png(tmp_path / "b.png", (2, 5), (0, 0, 255))
    loader = ImageLoader(workers=2)
    # separate Image objects for the same file (a later turn, another document) share the decode
    refs = [Image(path=a, label="a"), Image(path=b, label="b"), Image(path=a, label="a"), Image(path=a, label="a")]
    loader.prefetch(refs)
    pixels = [loader.load(r) for r in refs]
    assert [p.size for p in pixels] == [(4, 3), (2, 5), (4, 3), (4, 3)]
    assert pixels[0].getpixel((0, 0)) == (255, 0, 0) and pixels[0] is pixels[2]
    assert sorted(label for label, _ in counted) == ["a", "b"] and loader.decoded == 2
    assert all(name.startswith("mmtasks-decode") for _, name in counted)
    loader.close()


def test_cache_is_bounded_by_decoded_bytes(tmp_path: Path, counted: list[tuple[str, str]]) -> None:
    files = [_png(tmp_path / f"{k}.png", (10, 10), (k, k, k)) for k in range(6)]  # 300 bytes decoded each
    loader = ImageLoader(workers=1, cache_bytes=700)
    for f in files:
        loader.load(Image(path=f, label=f.name))
    assert loader._total <= 700 and len(loader._sizes) == 2
    loader.load(Image(path=files[-1], label=files[-1].name))  # most recent: still cached
    assert len(counted) == 6
    loader.load(Image(path=files[0], label=files[0].name))  # evicted: decoded again
    assert len(counted) == 7
    loader.close()


def test_bad_image_raises_for_each_request_that_needs_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not a png at all")
    loader = ImageLoader(workers=1)
    for _ in range(2):
        with pytest.raises(DataError, match="bad.png"):
            loader.load(Image(path=bad, doc_id="d1"))
    with pytest.raises(DataError, match="not found"):
        loader.load(Image(path=tmp_path / "missing.png", doc_id="d2"))
    loader.close()


def test_keys_tell_pixels_apart(tmp_path: Path) -> None:
    a = _png(tmp_path / "a.png", (4, 3), (255, 0, 0))
    b = _png(tmp_path / "b.png", (4, 3), (0, 255, 0))
    assert image_key(Image(path=a)) == image_key(Image(path=a)) != image_key(Image(path=b))
    assert image_key(Image(data=a.read_bytes())) == image_key(Image(data=a.read_bytes())) != image_key(Image(data=b.read_bytes()))
    combined = Image(parts=(Image(path=a), Image(path=b)))
    assert image_key(combined) != image_key(Image(parts=(Image(path=b), Image(path=a))))
    loader = ImageLoader(workers=1)
    assert loader.load(combined).size[0] > 4  # combined images are stitched, then cached like others
    loader.close()
