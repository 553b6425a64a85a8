"""Images from files that are not pictures (issue 27): an animated GIF, PNG or WebP, or a video
file given as an image is refused, naming the video input, never sent as one frame without a
word. Checked from the header (the GIF's blocks walked by their lengths: no pixel decoded)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from mmtasks.cli import main
from mmtasks.documents.image_header import image_bytes_problem, image_file_problem


def frames(n: int) -> list[Image.Image]:
    return [Image.new("RGB", (8, 8), (40 * k, 0, 0)) for k in range(n)]


def saved(fmt: str, n: int, **kwargs: object) -> bytes:
    out = io.BytesIO()
    first, *rest = frames(n)
    if rest:
        first.save(out, fmt, save_all=True, append_images=rest, **kwargs)
    else:
        first.save(out, fmt)
    return out.getvalue()


MP4 = b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isommp41" + b"\x00" * 64
WEBM = b"\x1a\x45\xdf\xa3" + b"\x00" * 64


@pytest.mark.parametrize("data, kind", [
    (saved("GIF", 3, duration=100, loop=0), "an animated GIF (more than one frame)"),
    (saved("GIF", 2, duration=100), "an animated GIF (more than one frame)"),
    (saved("PNG", 2), "an animated PNG (more than one frame)"),
    (saved("WEBP", 2), "an animated WebP"),
    (MP4, "an MP4/MOV video"),
    (WEBM, "a WebM/MKV video"),
])
def test_a_file_that_moves_is_not_an_image(tmp_path: Path, data: bytes, kind: str) -> None:
    path = tmp_path / "x"
    path.write_bytes(data)
    for problem in (image_file_problem(path), image_bytes_problem(data)):
        assert problem is not None and problem.startswith(f"{kind}, not one picture: give it as a video: dataset.video")


@pytest.mark.parametrize("fmt", ["GIF", "PNG", "WEBP", "JPEG"])
def test_a_still_image_of_every_format_is_one(tmp_path: Path, fmt: str) -> None:
    data = saved(fmt, 1)
    path = tmp_path / "x"
    path.write_bytes(data)
    assert image_file_problem(path) is None and image_bytes_problem(data) is None


def test_a_gif_with_a_colour_table_and_extensions_is_walked_to_its_second_frame(tmp_path: Path) -> None:
    # an application extension (loop), a comment in several sub-blocks (600 bytes), two frames
    first, second = Image.new("RGB", (8, 8), (255, 0, 0)), Image.new("RGB", (8, 8), (0, 0, 255))
    out = io.BytesIO()
    first.save(out, "GIF", save_all=True, append_images=[second], comment=b"x" * 600, loop=0, duration=[10, 20])
    assert image_bytes_problem(out.getvalue()) is not None
    one = io.BytesIO()
    first.save(one, "GIF", comment=b"x" * 600)
    assert image_bytes_problem(one.getvalue()) is None


def test_check_names_the_file_and_the_video_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "gifs.yaml").write_text(
        "task: gifs\ndataset: {local: {dir: gifs, file: d.jsonl}}\nprompt: {user: '{{ image(0) }}What happens?'}\n",
        encoding="utf-8")
    data = tmp_path / "data" / "gifs"
    data.mkdir(parents=True)
    (data / "a.gif").write_bytes(saved("GIF", 4, duration=50))
    (data / "b.mp4").write_bytes(MP4)
    (data / "c.png").write_bytes(saved("PNG", 1))
    (data / "d.jsonl").write_text("".join(json.dumps({"id": i, "images": [f], "answer": "x"}) + "\n"
                                          for i, f in enumerate(["a.gif", "b.mp4", "c.png"])), encoding="utf-8")
    code = main(["check", "--tasks", "gifs", "--include-path", str(tmp_path / "tasks"), "--data-dir", str(tmp_path / "data")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "document '0'" in err and "an animated GIF (more than one frame), not one picture" in err
    assert "document '1'" in err and "an MP4/MOV video, not one picture" in err
    assert "document '2'" not in err and "{{ video(i) }}" in err
