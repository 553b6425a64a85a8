"""The "send as is" decision of the image encoder, read from header bytes only.

Every image here is made by Pillow (or by hand, byte by byte, for the EXIF
block), so the expected header values are known: the size we asked for, the
orientation tag we wrote. Images that can go as they are must go without
Pillow opening them at all; the others are re-encoded as ``decode_image``
would decode them (no EXIF rotation, RGB).
"""

from __future__ import annotations

import base64
import io
import random
import struct

import pytest
from PIL import Image as PILImage

from mmtasks.core.conversation import Image
from mmtasks.errors import DataError
from mmtasks.models import image_encoding
from mmtasks.models.image_encoding import ImageEncoder, ImageEncoding, ImageHeader, _exif_orientation, read_header


def save(img: PILImage.Image, fmt: str, **kw: object) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format=fmt, **kw)
    return buf.getvalue()


def exif_with_orientation(value: int) -> PILImage.Exif:
    exif = PILImage.Exif()
    exif[0x0112] = value
    return exif


def decoded(url: str) -> tuple[bytes, PILImage.Image]:
    data = base64.b64decode(url.split(",", 1)[1])
    return data, PILImage.open(io.BytesIO(data))


RGB = PILImage.new("RGB", (40, 10), (200, 30, 60))


@pytest.fixture
def no_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail if the encoder opens the image with Pillow."""
    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("Pillow opened an image that its header decides")
    monkeypatch.setattr(image_encoding.PILImageModule, "open", refuse)


# -- read_header ------------------------------------------------------------
def test_plain_jpeg_header() -> None:
    assert read_header(save(RGB, "JPEG")) == ImageHeader("JPEG", 40, 10, plain_rgb=True, orientation=1)


def test_progressive_jpeg_header() -> None:
    assert read_header(save(RGB, "JPEG", progressive=True)) == ImageHeader("JPEG", 40, 10, True, 1)


@pytest.mark.parametrize("value", [1, 3, 6, 8])
def test_jpeg_exif_orientation(value: int) -> None:
    assert read_header(save(RGB, "JPEG", exif=exif_with_orientation(value))) == ImageHeader("JPEG", 40, 10, True, value)


def test_jpeg_exif_without_orientation_is_unrotated() -> None:
    exif = PILImage.Exif()
    exif[0x010F] = "camera maker"  # Make
    assert read_header(save(RGB, "JPEG", exif=exif)).orientation == 1  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["L", "CMYK"])
def test_jpeg_not_rgb(mode: str) -> None:
    header = read_header(save(RGB.convert(mode), "JPEG"))
    assert header is not None and (header.width, header.height, header.plain_rgb) == (40, 10, False)


def test_big_endian_exif_block_by_hand() -> None:
    # "MM", 42, IFD0 at offset 8; two entries: Make (0x010F, ASCII) and Orientation = 3 (SHORT)
    tiff = b"MM\x00*" + struct.pack(">I", 8) + struct.pack(">H", 2)
    tiff += struct.pack(">HHI4s", 0x010F, 2, 4, b"abc\x00")
    tiff += struct.pack(">HHIH2x", 0x0112, 3, 1, 3)
    assert _exif_orientation(tiff) == 3
    little = b"II*\x00" + struct.pack("<IH", 8, 1) + struct.pack("<HHIH2x", 0x0112, 3, 1, 6)
    assert _exif_orientation(little) == 6
    assert _exif_orientation(b"II*\x00" + struct.pack("<IH", 8, 0)) == 1  # no entries: not rotated
    assert _exif_orientation(b"XX*\x00....") == 0  # unreadable: never "as is"


def test_plain_png_header() -> None:
    assert read_header(save(RGB, "PNG")) == ImageHeader("PNG", 40, 10, True, 1)


@pytest.mark.parametrize("make", [
    lambda: RGB.convert("RGBA"),
    lambda: RGB.convert("L"),
    lambda: RGB.convert("P"),
    lambda: RGB.convert("I;16"),
])
def test_png_not_plain_rgb(make) -> None:  # type: ignore[no-untyped-def]
    header = read_header(save(make(), "PNG"))
    assert header is not None and header.format == "PNG" and not header.plain_rgb


def test_png_with_transparency_chunk() -> None:
    data = save(RGB, "PNG", transparency=(200, 30, 60))
    assert b"tRNS" in data
    assert read_header(data) == ImageHeader("PNG", 40, 10, False, 1)


def test_animated_png() -> None:
    frames = [RGB, PILImage.new("RGB", (40, 10), (0, 0, 0))]
    data = save(frames[0], "PNG", save_all=True, append_images=frames[1:])
    assert b"acTL" in data and not read_header(data).plain_rgb  # type: ignore[union-attr]


def test_png_exif_orientation() -> None:
    assert read_header(save(RGB, "PNG", exif=exif_with_orientation(8))) == ImageHeader("PNG", 40, 10, True, 8)


@pytest.mark.parametrize("data", [b"", b"GIF89a...", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff\xe0\x00", save(RGB, "PNG")[:20],
                                  save(RGB, "BMP"), save(RGB, "WEBP")])
def test_unknown_or_truncated_headers_are_left_to_pillow(data: bytes) -> None:
    assert read_header(data) is None


# -- the encoder's decision ----------------------------------------------------
@pytest.mark.parametrize("fmt,kw", [("JPEG", {}), ("PNG", {}), ("JPEG", {"exif": exif_with_orientation(1)})])
def test_sent_as_is_without_opening_the_image(fmt: str, kw: dict, no_pillow: None) -> None:
    data = save(RGB, fmt, **kw)
    url = ImageEncoder().data_url(Image(data=data))
    assert url == f"data:image/{fmt.lower()};base64," + base64.b64encode(data).decode()


def test_rotated_jpeg_is_reencoded_unrotated_without_exif() -> None:
    data = save(RGB, "JPEG", exif=exif_with_orientation(6))
    sent, img = decoded(ImageEncoder().data_url(Image(data=data)))
    assert sent != data and img.format == "JPEG" and img.size == (40, 10)
    assert img.getexif().get(0x0112) is None


def test_rotated_png_is_reencoded() -> None:
    data = save(RGB, "PNG", exif=exif_with_orientation(3))
    sent, img = decoded(ImageEncoder().data_url(Image(data=data)))
    assert sent != data and img.format == "PNG" and img.size == (40, 10) and img.getpixel((0, 0)) == (200, 30, 60)


def test_rgba_png_becomes_rgb_png() -> None:
    sent, img = decoded(ImageEncoder().data_url(Image(data=save(RGB.convert("RGBA"), "PNG"))))
    assert img.format == "PNG" and img.mode == "RGB" and img.getpixel((5, 5)) == (200, 30, 60)


def test_oversize_side_is_downscaled() -> None:
    data = save(RGB, "PNG")
    encoder = ImageEncoder(ImageEncoding(max_side=32))
    assert not encoder.can_send_as_is(read_header(data), len(data))  # type: ignore[arg-type]
    _, img = decoded(encoder.data_url(Image(data=data)))
    assert img.size == (32, 8)  # 40x10 scaled by 32/40


def test_longest_side_at_the_cap_is_sent_as_is(no_pillow: None) -> None:
    data = save(RGB, "PNG")
    assert ImageEncoder(ImageEncoding(max_side=40)).data_url(Image(data=data)).endswith(base64.b64encode(data).decode())


def test_oversize_bytes_are_reencoded() -> None:
    noise = PILImage.frombytes("RGB", (100, 100), random.Random(0).randbytes(100 * 100 * 3))
    data = save(noise, "PNG")
    encoder = ImageEncoder(ImageEncoding(max_bytes=len(data) - 1))
    assert not encoder.can_send_as_is(read_header(data), len(data))  # type: ignore[arg-type]
    assert encoder.can_send_as_is(read_header(data), len(data) - 1)  # type: ignore[arg-type]
    sent, _ = decoded(encoder.data_url(Image(data=data)))
    assert len(sent) < len(data)


def test_format_setting_excludes_the_other_format() -> None:
    header = read_header(save(RGB, "PNG"))
    assert not ImageEncoder(ImageEncoding(format="jpeg")).can_send_as_is(header, 100)  # type: ignore[arg-type]
    assert ImageEncoder(ImageEncoding(format="png")).can_send_as_is(header, 100)  # type: ignore[arg-type]


def test_header_decision_agrees_with_pillow() -> None:
    """The header decision and the Pillow-based one (which decodes) agree on every kind of file."""
    cases = [
        save(RGB, "JPEG"), save(RGB, "JPEG", progressive=True), save(RGB.convert("L"), "JPEG"),
        save(RGB.convert("CMYK"), "JPEG"), save(RGB, "PNG"), save(RGB.convert("RGBA"), "PNG"),
        save(RGB.convert("P"), "PNG"), save(RGB.convert("LA"), "PNG"), save(RGB, "PNG", transparency=(1, 2, 3)),
    ] + [save(RGB, f, exif=exif_with_orientation(v)) for f in ("JPEG", "PNG") for v in (1, 2, 6)]
    for settings in (ImageEncoding(), ImageEncoding(max_side=39), ImageEncoding(format="png")):
        encoder = ImageEncoder(settings)
        for data in cases:
            header = read_header(data)
            assert header is not None
            with PILImage.open(io.BytesIO(data)) as img:
                assert encoder.can_send_as_is(header, len(data)) == encoder._pillow_can_send_as_is(img, len(data))


def test_other_formats_still_go_through_pillow() -> None:
    _, img = decoded(ImageEncoder().data_url(Image(data=save(RGB, "BMP"))))
    assert img.format == "PNG" and img.size == (40, 10)


def test_corrupt_image_is_a_data_error() -> None:
    with pytest.raises(DataError, match="corrupt or unreadable image"):
        ImageEncoder().data_url(Image(data=b"GIF89a not really"))


def test_each_distinct_image_is_encoded_once() -> None:
    encoder = ImageEncoder()
    a, b = save(RGB, "PNG"), save(RGB.convert("RGBA"), "PNG")
    urls = [encoder.data_url(Image(data=d)) for d in (a, b, a, b, a)]
    assert encoder.encoded == 2 and urls[0] == urls[2] == urls[4] and urls[1] == urls[3]


def test_a_bomb_header_is_refused_before_the_as_is_decision(no_pillow: None) -> None:
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 20000, 20000, 8, 2, 0, 0, 0)  # 400 million pixels, a few bytes of PNG
    bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    assert read_header(bomb) == ImageHeader("PNG", 20000, 20000, True, 1)
    with pytest.raises(DataError, match="20000x20000"):
        ImageEncoder().data_url(Image(data=bomb, doc_id="d"))
    with pytest.raises(DataError, match="20000x20000"):  # the loop's cheap path refuses it the same way
        ImageEncoder().cheap_data_url(Image(data=bomb, doc_id="d"), 1 << 20)


def test_cheap_data_url_only_for_images_sent_as_they_are(no_pillow: None) -> None:
    encoder = ImageEncoder()
    plain, rgba = save(RGB, "PNG"), save(RGB.convert("RGBA"), "PNG")
    url = encoder.cheap_data_url(Image(data=plain), 1 << 20)
    assert url == "data:image/png;base64," + base64.b64encode(plain).decode() and encoder.encoded == 1
    assert encoder.cheap_data_url(Image(data=plain), 1 << 20) == url and encoder.encoded == 1  # cached
    assert encoder.cheap_data_url(Image(data=rgba), 1 << 20) is None  # must be decoded: a worker's job
    assert encoder.cheap_data_url(Image(data=save(RGB, "JPEG")), 10) is None  # over the byte budget
    assert encoder.encoded == 1
