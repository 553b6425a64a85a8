"""docs/authors/protocols.md documents every built-in protocol, every key of its
`protocol_args`, and every field of a sample record: a key or field added to the code without a
line on the page fails here."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mmtasks.core.sample import Sample
from mmtasks.documents.samples import SampleRecord
from mmtasks.registry import protocols

#: the repository root, wherever under tests/ this file sits
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
PAGE = ROOT / "docs" / "authors" / "protocols.md"


def test_every_built_in_protocol_and_its_args_are_documented() -> None:
    page = PAGE.read_text(encoding="utf-8")
    missing = []
    for name in protocols.names():
        spec = protocols.get(name)
        if f"## `{name}`" not in page:
            missing.append(f"protocol {name}")
        missing += [f"{name}.protocol_args.{key}" for key in spec.args.model_fields if f"| `{key}` |" not in page]
    assert not missing, f"document these in {PAGE.name}: {missing}"


def test_every_field_of_a_sample_record_is_documented() -> None:
    """Every field a run writes (``Sample``) and the one reader reads (``SampleRecord``)."""
    page = PAGE.read_text(encoding="utf-8")
    fields = [f.name for f in dataclasses.fields(Sample)] + list(SampleRecord.model_fields)
    missing = sorted({name for name in fields if f"`{name}`" not in page})
    assert not missing, f"document these sample fields in {PAGE.name}: {missing}"
