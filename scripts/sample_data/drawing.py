"""Pillow drawing helpers: coloured shapes and pixel text on small JPEG cards.

Text uses Pillow's built-in bitmap font (ASCII only, no FreeType), scaled up
with nearest-neighbour, so the pixels do not depend on the fonts or the
FreeType version of the machine. The images carry Latin text and digits only:
there is no CJK font to rely on, the Chinese lives in the records' text.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

#: colour id -> (Chinese name, English name, RGB)
COLORS: dict[str, tuple[str, str, tuple[int, int, int]]] = {
    "red": ("红色", "red", (214, 48, 49)),
    "blue": ("蓝色", "blue", (41, 98, 214)),
    "green": ("绿色", "green", (46, 160, 67)),
    "yellow": ("黄色", "yellow", (240, 196, 25)),
    "purple": ("紫色", "purple", (138, 63, 180)),
    "orange": ("橙色", "orange", (240, 128, 32)),
    "pink": ("粉色", "pink", (236, 120, 172)),
    "black": ("黑色", "black", (34, 34, 34)),
}

#: shape id -> (Chinese name, English name)
SHAPES: dict[str, tuple[str, str]] = {
    "circle": ("圆形", "circle"),
    "square": ("正方形", "square"),
    "triangle": ("三角形", "triangle"),
    "diamond": ("菱形", "diamond"),
    "star": ("星形", "star"),
}

BACKGROUNDS: list[tuple[int, int, int]] = [
    (250, 248, 240), (236, 242, 248), (244, 236, 228), (232, 244, 232), (246, 246, 246),
]
INK = (28, 28, 28)
JPEG_QUALITY = 70

_FONT_LOADER = getattr(ImageFont, "load_default_imagefont", ImageFont.load_default)
_FONT = _FONT_LOADER()
GLYPH_WIDTH = 6  # pixels per character of the bitmap font, before scaling
GLYPH_HEIGHT = 11


@dataclass(frozen=True)
class Shape:
    """A filled shape inside the box (x0, y0, x1, y1); "rect" fills the whole box."""

    kind: str
    color: str
    box: tuple[int, int, int, int]


@dataclass(frozen=True)
class Label:
    """Text placed at (x, y), for charts and plans."""

    x: int
    y: int
    text: str
    scale: int = 1


@dataclass
class Card:
    """One image: background, shapes, then lines of text from the top left."""

    width: int
    height: int
    background: tuple[int, int, int] = BACKGROUNDS[0]
    shapes: list[Shape] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    text_scale: int = 2
    text_color: tuple[int, int, int] = INK
    border: bool = True

    def render(self) -> Image.Image:
        image = Image.new("RGB", (self.width, self.height), self.background)
        draw = ImageDraw.Draw(image)
        if self.border:
            draw.rectangle((0, 0, self.width - 1, self.height - 1), outline=(160, 160, 160))
        for shape in self.shapes:
            draw_shape(draw, shape)
        y = 6
        for line in self.lines:
            draw_text(image, (6, y), line, self.text_color, self.text_scale)
            y += (GLYPH_HEIGHT + 2) * self.text_scale
        for label in self.labels:
            draw_text(image, (label.x, label.y), label.text, self.text_color, label.scale)
        return image

    def jpeg_bytes(self) -> bytes:
        buffer = io.BytesIO()
        self.render().save(buffer, format="JPEG", quality=JPEG_QUALITY)
        return buffer.getvalue()

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.jpeg_bytes())


def text_width(text: str, scale: int = 2) -> int:
    return len(text) * GLYPH_WIDTH * scale


def draw_text(image: Image.Image, xy: tuple[int, int], text: str,
              color: tuple[int, int, int], scale: int = 2) -> None:
    """Paste ``text`` in the bitmap font, enlarged ``scale`` times without smoothing."""
    if not text:
        return
    mask = Image.new("L", (text_width(text, 1), GLYPH_HEIGHT), 0)
    ImageDraw.Draw(mask).text((0, 0), text, font=_FONT, fill=255)
    mask = mask.resize((mask.width * scale, mask.height * scale), Image.Resampling.NEAREST)
    image.paste(Image.new("RGB", mask.size, color), xy, mask)


def draw_shape(draw: ImageDraw.ImageDraw, shape: Shape) -> None:
    rgb = COLORS[shape.color][2]
    x0, y0, x1, y1 = shape.box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    outline = (20, 20, 20)
    if shape.kind == "circle":
        draw.ellipse(shape.box, fill=rgb, outline=outline)
    elif shape.kind in ("square", "rect"):
        draw.rectangle(shape.box, fill=rgb, outline=outline)
    elif shape.kind == "triangle":
        draw.polygon([(cx, y0), (x1, y1), (x0, y1)], fill=rgb, outline=outline)
    elif shape.kind == "diamond":
        draw.polygon([(cx, y0), (x1, cy), (cx, y1), (x0, cy)], fill=rgb, outline=outline)
    elif shape.kind == "star":
        radius = min(x1 - x0, y1 - y0) / 2
        points = []
        for k in range(10):  # alternate outer and inner corners
            r = radius if k % 2 == 0 else radius * 0.45
            angle = math.pi * k / 5 - math.pi / 2
            points.append((cx + r * math.cos(angle), cy + r * math.sin(angle)))
        draw.polygon(points, fill=rgb, outline=outline)
    else:
        raise ValueError(f"unknown shape {shape.kind!r}")


def centered_box(width: int, height: int, top: int = 0, margin: int = 14) -> tuple[int, int, int, int]:
    """The largest square box centred in the card below ``top``."""
    side = max(16, min(width, height - top) - 2 * margin)
    x0 = (width - side) // 2
    y0 = top + (height - top - side) // 2
    return (x0, y0, x0 + side, y0 + side)


def shapes_row(shapes: list[tuple[str, str]], *, size: int, gap: int, top: int, background: int = 0,
               labels: list[Label] | None = None) -> Card:
    """Shapes (kind, colour) of side ``size`` in a row, ``gap`` apart, ``top`` pixels down a 96-pixel-high card."""
    drawn = [Shape(kind, color, (gap + k * (size + gap), top, gap + k * (size + gap) + size, top + size))
             for k, (kind, color) in enumerate(shapes)]
    return Card(max(96, gap + len(shapes) * (size + gap)), 96, background=BACKGROUNDS[background], shapes=drawn,
                labels=labels or [])


def shape_card(kind: str, colour: str, background: int = 0, size: int = 64) -> Card:
    """One shape on a square card of side ``size``, inset by 3/16 of it on every side."""
    inset = size * 3 // 16
    return Card(size, size, background=BACKGROUNDS[background], shapes=[Shape(kind, colour, (inset, inset, size - inset, size - inset))])


def info_card(lines: list[str], *, shape: str | None = None, color: str | None = None,
              background: tuple[int, int, int] = BACKGROUNDS[0], scale: int = 2) -> Card:
    """Lines of text at the top, optionally one shape below them."""
    line_height = (GLYPH_HEIGHT + 2) * scale
    width = max(120, max(text_width(line, scale) for line in lines) + 14)
    text_bottom = 6 + len(lines) * line_height
    height = max(96, text_bottom + (70 if shape else 12))
    shapes = []
    if shape:
        assert color is not None, "a shape needs a colour"
        shapes.append(Shape(shape, color, centered_box(width, height, text_bottom, margin=8)))
    return Card(width, height, background=background, shapes=shapes, lines=lines, text_scale=scale)
