"""``mmtasks cache info|clear``."""

from __future__ import annotations

import argparse

from mmtasks.cache.response_cache import ResponseCache, default_cache_dir


def cache_command(args: argparse.Namespace) -> int:
    directory = args.cache_dir or default_cache_dir()
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
