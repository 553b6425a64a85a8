"""No output line depends on how fast the machine is: the preflight's summary was logged at INFO
only when the check took 1 s or more, so on a loaded machine a one-line error became two lines
(``test_cli_offline.py::test_offline_judge_is_reported_under_judge`` failed there)."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest

import mmtasks
from mmtasks import runner
from tests.cli_process import SAMPLE


@pytest.mark.parametrize("seconds", [0.01, 30.0])
def test_the_preflight_line_is_the_same_at_any_speed(monkeypatch, caplog, seconds):
    real_check = runner.check

    def check_that_took(*args, **kwargs):  # the check as it returns on a fast or a slow machine
        return replace(real_check(*args, **kwargs), seconds=seconds)

    monkeypatch.setattr(runner, "check", check_that_took)
    with caplog.at_level(logging.INFO, logger="mmtasks"):
        mmtasks.evaluate(tasks="realbench_ranking_easy", model="random", data_dir=SAMPLE, use_cache=False)
    shown = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO and "preflight" in r.getMessage()]
    assert shown == []
