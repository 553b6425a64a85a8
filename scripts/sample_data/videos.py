"""Tiny synthetic videos for the video benchmarks' samples: each frame a solid colour (optionally
with a white square at a moving place), so a question about the video has one right answer.

MP4s are H.264 written by PyAV with one encoder thread (the bitstream then depends only on the
x264 build, not on the machine's cores), GIFs by Pillow, frame folders as PNG. Each file is a
few KB.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

RGB = {"red": (220, 30, 30), "green": (30, 170, 60), "blue": (30, 60, 220), "yellow": (235, 210, 40),
       "purple": (140, 50, 180), "orange": (240, 130, 20), "black": (10, 10, 10), "white": (245, 245, 245),
       "grey": (128, 128, 128), "cyan": (30, 200, 210)}


def frames(colours: list[str], per_colour: int, size: int = 32, square: str | None = None) -> list[Image.Image]:
    """``per_colour`` frames of each colour in turn; ``square``: a white square moving ``left``->right or ``right``->left."""
    out = []
    total = len(colours) * per_colour
    for k in range(total):
        img = Image.new("RGB", (size, size), RGB[colours[k // per_colour]])
        if square is not None:
            step = (size - 8) * k // max(1, total - 1)
            x = step if square == "left" else size - 8 - step
            ImageDraw.Draw(img).rectangle([x, size // 2 - 4, x + 7, size // 2 + 3], fill=RGB["white"])
        out.append(img)
    return out


def write_mp4(path: Path, pictures: list[Image.Image], fps: int = 2) -> None:
    import av
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w", options={"fflags": "+bitexact"}) as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height = pictures[0].size
        stream.pix_fmt = "yuv420p"
        stream.options = {"threads": "1", "g": str(2 * fps), "preset": "medium", "crf": "30", "flags": "+bitexact"}
        for picture in pictures:
            for packet in stream.encode(av.VideoFrame.from_ndarray(np.asarray(picture), format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def write_gif(path: Path, pictures: list[Image.Image], fps: int = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pictures[0].save(path, save_all=True, append_images=pictures[1:], duration=1000 // fps, loop=0)


def write_frames(folder: Path, pictures: list[Image.Image]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for k, picture in enumerate(pictures):
        picture.save(folder / f"{k + 1:05d}.png", optimize=True)


def srt(cues: list[tuple[float, float, str]], font: bool = True) -> str:
    """A SubRip file; ``font``: each cue wrapped as Video-MME's are (``<font color="white" size=".72c">``)."""

    def stamp(t: float) -> str:
        ms = round(t * 1000)
        return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"

    blocks = []
    for k, (start, end, text) in enumerate(cues, 1):
        body = f'<font color="white" size=".72c">{text}</font>' if font else text
        blocks.append(f"{k}\n{stamp(start)} --> {stamp(end)}\n{body}\n")
    return "\n".join(blocks)


def write_zip(path: Path, members: dict[str, Path], folders: tuple[str, ...] = ()) -> None:
    """A zip archive holding each file ``members[name]`` as ``name`` (stored, not compressed: the
    videos are compressed already, and the bytes stay the same on every machine), with a folder
    entry for each of ``folders`` first, as archivers write them. Fixed dates and modes."""
    import zipfile

    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for folder in folders:
            info = zipfile.ZipInfo(folder.rstrip("/") + "/", date_time=(2024, 6, 13, 0, 0, 0))
            info.external_attr = (0o40755 << 16) | 0x10
            zf.writestr(info, b"")
        for name, source in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 6, 13, 0, 0, 0))
            info.external_attr = 0o100644 << 16
            zf.writestr(info, source.read_bytes())
