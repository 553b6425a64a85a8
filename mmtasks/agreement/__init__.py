"""Judges you can check: agreement between two runs' verdicts on the same samples
(two judges, or a judge against human ratings), per dimension or ability.

``mmtasks judge agreement RUN_A RUN_B`` (:mod:`mmtasks.commands.judge`) pairs the
verdicts (:mod:`.verdicts`) and reports Pearson, Spearman, Kendall and Cohen's
weighted kappa with bootstrap confidence intervals (:mod:`.stats`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from mmtasks.agreement.stats import Agreement, Weights, agreement
from mmtasks.agreement.verdicts import pair, read_verdicts
from mmtasks.errors import ConfigError


class QuantityAgreement(BaseModel):
    model_config = ConfigDict(frozen=True)

    task: str
    quantity: str
    agreement: Agreement


class AgreementReport(BaseModel):
    """What ``mmtasks judge agreement`` reports (also written with ``--json``)."""

    model_config = ConfigDict(frozen=True)

    run_a: str
    run_b: str
    #: items judged by both runs (all quantities together)
    n_items: int
    #: items judged (validly) by only one of the runs
    only_a: int
    only_b: int
    quantities: list[QuantityAgreement]


def compare_runs(run_a: Path, run_b: Path, *, n_resamples: int = 1000, level: float = 0.95,
                 seed: int = 1234, weights: Weights = "quadratic") -> AgreementReport:
    try:
        import scipy  # noqa: F401
    except ImportError:
        raise ConfigError("judge agreement needs scipy, which is not installed", field="judge agreement",
                          hint="pip install 'mmtasks[stats]'") from None
    a, b = read_verdicts(run_a), read_verdicts(run_b)
    rows = [QuantityAgreement(task=p.task, quantity=p.quantity,
                              agreement=agreement(p.a, p.b, n_resamples=n_resamples, level=level, seed=seed, weights=weights))
            for p in pair(a, b)]
    return AgreementReport(run_a=str(run_a), run_b=str(run_b), n_items=len(a.keys() & b.keys()),
                           only_a=len(a.keys() - b.keys()), only_b=len(b.keys() - a.keys()), quantities=rows)
