"""Writing a synthetic sample also as a Hugging Face dataset folder (the Hub layout).

The folder holds ``README.md`` (the dataset card's YAML header: ``configs`` and
``dataset_info.features``) and ``data/<split>-00000-of-00001.parquet``, as a
dataset repository on the Hub does, so ``datasets.load_dataset(FOLDER,
split=...)`` reads it offline exactly as it reads the real dataset by name.
Image columns are ``datasets.Image`` features holding the same encoded bytes
as the local copy's image files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _yaml_features(features: dict[str, str]) -> str:
    lines = []
    for name, kind in features.items():
        lines.append(f"  - name: {name}")
        if kind.startswith("list:"):
            inner = kind.split(":", 1)[1]
            lines.append(f"    {'list' if inner == 'image' else 'sequence'}: {inner}")
        else:
            lines.append(f"    dtype: {kind}")
    return "\n".join(lines)


def write_hub_folder(folder: Path, *, split: str, features: dict[str, str], rows: list[dict[str, Any]],
                     title: str, body: str) -> None:
    """Write ``rows`` as a one-split Hub-style dataset folder.

    ``features`` maps column name -> ``string``/``int8``/``int64``/``image``, or
    ``list:string``/``list:image`` for a sequence of them.
    """
    _write_parquet(folder / "data" / f"{split}-00000-of-00001.parquet", features, rows)
    _write_card(folder, split=split, features=features, configs={"default": "data"}, title=title, body=body)


def write_hub_configs(folder: Path, *, split: str, features: dict[str, str], configs: dict[str, list[dict[str, Any]]],
                      title: str, body: str, statistics: bool = True) -> None:
    """Write one Hub-style dataset folder with several configs (BLINK's subtasks): each config's
    rows in ``<config>/<split>-00000-of-00001.parquet``, read with
    ``datasets.load_dataset(FOLDER, CONFIG, split=...)`` as the real dataset is by name."""
    for name, rows in configs.items():
        _write_parquet(folder / name / f"{split}-00000-of-00001.parquet", features, rows, statistics=statistics)
    _write_card(folder, split=split, features=features, configs={name: name for name in configs}, title=title, body=body)


def _write_card(folder: Path, *, split: str, features: dict[str, str], configs: dict[str, str], title: str,
                body: str) -> None:
    """The folder's README.md: the features and ``configs`` (config name -> the folder of its parquet files)
    in the Hub's YAML header, then the title and body."""
    entries = "".join(f"- config_name: {name}\n  data_files:\n  - split: {split}\n    path: {sub}/{split}-*\n"
                      for name, sub in configs.items())
    card = (
        "---\n"
        "dataset_info:\n"
        "  features:\n"
        f"{_yaml_features(features)}\n"
        "configs:\n"
        f"{entries}"
        "---\n\n"
        f"# {title}\n\n{body.strip()}\n"
    )
    (folder / "README.md").write_text(card, encoding="utf-8", newline="\n")


def _write_parquet(path: Path, features: dict[str, str], rows: list[dict[str, Any]], *, statistics: bool = True) -> None:
    """``statistics=False``: no column statistics (their min/max of an image column are copies of
    image bytes, which would triple a small sample's size; readers do not need them)."""
    import datasets  # the [datasets] extra; only these writers need it

    datasets.disable_progress_bars()

    def feature(kind: str) -> Any:
        if kind.startswith("list:"):
            inner = feature(kind.split(":", 1)[1])
            return [inner] if isinstance(inner, datasets.Image) else datasets.Sequence(inner)
        return datasets.Image() if kind == "image" else datasets.Value(kind)

    spec = datasets.Features({name: feature(kind) for name, kind in features.items()})
    columns = {name: [row[name] for row in rows] for name in features}
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = {} if statistics else {"write_statistics": False}
    datasets.Dataset.from_dict(columns, features=spec).to_parquet(str(path), **extra)


def embedded(root: Path, rel: str) -> dict[str, Any]:
    """An ``Image`` feature value holding the bytes of the local file ``root/rel``."""
    return {"bytes": (root / rel).read_bytes(), "path": Path(rel).name}
