"""Test harness: one rank of a torchrun launch in its own folder, as on its own node.

``python rank_in_folder.py NODES_ROOT ARGS...`` changes into ``NODES_ROOT/node$RANK`` (each
node's own data, weights and cache, reached by relative paths) and runs ``mmtasks ARGS``.
With ``HANG_RANK=R``, rank R stops itself (SIGSTOP, after writing its pid to ``NODES_ROOT/hung.pid``)
when it has finished its documents, just before the ranks gather: a hung node.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

root = Path(sys.argv[1]).resolve()
rank = os.environ["RANK"]
os.chdir(root / f"node{rank}")
os.environ["MMTASKS_CACHE_DIR"] = str(root / f"node{rank}" / "cache")

from mmtasks import distributed  # noqa: E402
from mmtasks.cli import main  # noqa: E402

if os.environ.get("HANG_RANK") == rank:
    real_gather = distributed.gather

    def hang_then_gather(*args, **kwargs):  # type: ignore[no-untyped-def]
        (root / "hung.pid").write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGSTOP)
        return real_gather(*args, **kwargs)

    distributed.gather = hang_then_gather  # type: ignore[assignment]

sys.exit(main(sys.argv[2:]))
