"""What a scheduler counts: waves, and requests sent, served from the cache and failed, per target."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SchedulerStats:
    #: rounds of requests: the wave scheduler's waves; without a barrier, the rounds on the
    #: deepest chain (equal to the wave count when every dialogue is live at once)
    waves: int = 0
    sent: dict[str, int] = field(default_factory=dict)
    cached: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)

    def add(self, bucket: dict[str, int], target: str, n: int = 1) -> None:
        bucket[target] = bucket.get(target, 0) + n
