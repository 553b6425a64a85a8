"""``mmtasks cache info|clear|prune``: neither creates a cache that does not exist. ``prune`` gives
back the disk of the Hub video archives' extracted files that no index references (see
:func:`mmtasks.documents.hub_files.prune_archives`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mmtasks.cache.response_cache import ResponseCache, default_cache_dir

#: the database file a :class:`ResponseCache` keeps in its folder
CACHE_FILE = "responses.sqlite"


def _run_identities(folder: Path) -> list[str]:
    """The identities of the models whose replies the run in ``folder`` used (model, judge, matcher, note taker)."""
    import json

    from mmtasks.errors import ConfigError
    from mmtasks.models.base import ModelSpec

    path = folder / "results.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8")).get("config") or {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the run's results.json: {exc}", file=path, field="--run") from None
    specs = [config.get(k) for k in ("model_spec", "judge_spec", "matcher_spec", "notetaker_spec")]
    return [ModelSpec.model_validate(spec).identity() for spec in specs if isinstance(spec, dict)]


def cache_command(args: argparse.Namespace) -> int:
    if args.action == "prune":
        return _prune(args.archives_dir)
    directory = args.cache_dir or default_cache_dir()
    if args.action in ("export", "import"):
        from mmtasks.errors import ConfigError

        if args.file is None:
            raise ConfigError(f"cache {args.action} needs a FILE", field="FILE",
                              hint=f"mmtasks cache {args.action} replies.sqlite")
        if args.action == "import":
            cache = ResponseCache(directory)
            try:
                added, present = cache.import_from(args.file)
            finally:
                cache.close()
            print(f"imported {added} replies into {directory / CACHE_FILE} ({present} were there already)")
            return 0
        if not (directory / CACHE_FILE).is_file():
            raise ConfigError("there is no response cache to export", file=directory / CACHE_FILE, field="--cache-dir")
        cache = ResponseCache(directory)
        try:
            models = _run_identities(args.run) if args.run is not None else None
            n = cache.export_to(args.file, models=models, contains=args.model)
        finally:
            cache.close()
        print(f"exported {n} replies to {args.file}")
        return 0
    if not (directory / CACHE_FILE).is_file():
        print(f"cache: {directory / CACHE_FILE} (does not exist)")
        print("entries: 0" if args.action == "info" else "nothing to clear")
        return 0
    cache = ResponseCache(directory)
    try:
        if args.action == "info":
            print(f"cache: {cache.path}")
            print(f"entries: {cache.count()}")
        else:
            n = cache.clear(args.model)
            print(f"removed {n} entries from {cache.path}")
    finally:
        cache.close()
    return 0


def _prune(folder: Path | None) -> int:
    from mmtasks.documents.hub_files import ARCHIVES_ENV, archives_root, prune_archives

    if folder is None:
        try:
            folder = archives_root()
        except ImportError:  # no huggingface_hub: no archive was ever read from the Hub here
            print(f"archives: none (set {ARCHIVES_ENV} or --archives-dir to name a folder)")
            return 0
    pruned = prune_archives(folder)
    print(f"archives: {folder}")
    print(f"removed {pruned.files} files ({pruned.bytes / 1e6:.1f} MB) that no index references")
    return 0
