"""A progress bar over finished documents, with rate and ETA (tqdm, on stderr)."""

from __future__ import annotations

import sys

from tqdm import tqdm

from mmtasks.core.sample import Sample


class ProgressBar:
    def __init__(self, total: int, enabled: bool = True) -> None:
        self._bar = tqdm(total=total, unit="doc", dynamic_ncols=True, file=sys.stderr,
                         disable=not enabled, smoothing=0.1, mininterval=0.5)
        self._current_task = ""

    def advance(self, sample: Sample) -> None:
        if sample.task != self._current_task:
            self._current_task = sample.task
            self._bar.set_description(sample.task, refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()
