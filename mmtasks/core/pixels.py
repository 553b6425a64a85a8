"""Decoding images (the one place pixels are made) and the combined-image grid.

It sits with the core types (PIL only) so that :meth:`Image.load` needs nothing above them."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from PIL import Image as PILImageModule
from PIL import UnidentifiedImageError

from mmtasks.errors import DataError

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

    from mmtasks.core.conversation import Image

# Long screenshots (1080x3500) are normal in RealBench; only refuse absurd sizes.
PILImageModule.MAX_IMAGE_PIXELS = 200_000_000


def decode_image(image: "Image") -> "PILImage":
    if image.parts:
        return combine([decode_image(p) for p in image.parts])
    data = image.read_bytes()
    try:
        with PILImageModule.open(io.BytesIO(data)) as img:
            img.load()
            return img.convert("RGB")
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise DataError(f"corrupt or unreadable image: {exc}", file=image.path, doc_id=image.doc_id, field="images") from None


def combine(images: "list[PILImage]", *, columns: int | None = None, gap: int = 8, max_side: int = 4096) -> "PILImage":
    """Stitch images into one grid image (RealBench's combined-image mode, paper Table 3).

    Row-major grid of ``columns`` (default: ceil(sqrt(n))) cells, each cell the
    size of the largest image, on a white background; scaled down so the
    longest side is at most ``max_side``.
    """
    if not images:
        raise ValueError("nothing to combine")
    n = len(images)
    cols = columns or max(1, int(-(-n**0.5 // 1)))
    rows = -(-n // cols)
    cell_w = max(i.width for i in images)
    cell_h = max(i.height for i in images)
    canvas = PILImageModule.new("RGB", (cols * cell_w + (cols - 1) * gap, rows * cell_h + (rows - 1) * gap), "white")
    for k, img in enumerate(images):
        r, c = divmod(k, cols)
        canvas.paste(img, (c * (cell_w + gap), r * (cell_h + gap)))
    longest = max(canvas.size)
    if longest > max_side:
        scale = max_side / longest
        canvas = canvas.resize((max(1, int(canvas.width * scale)), max(1, int(canvas.height * scale))))
    return canvas
