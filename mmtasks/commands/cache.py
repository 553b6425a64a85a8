"""``mmtasks cache info|clear``: neither creates a cache that does not exist."""

from __future__ import annotations

import argparse

from mmtasks.cache.response_cache import ResponseCache, default_cache_dir

#: the database file a :class:`ResponseCache` keeps in its folder
CACHE_FILE = "responses.sqlite"


def cache_command(args: argparse.Namespace) -> int:
    directory = args.cache_dir or default_cache_dir()
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
