"""MMRC (shared/specs/mmrc.md), a plugin file of the MMRC tasks (``plugins: [mmrc.py]``):
everything the generic ``replay_probe`` protocol leaves to the benchmark.

- ``abilities.py``: the six abilities, written once (:data:`ABILITIES`): their
  codes, metric names, long names (for the Hub adapter) and the verdict fields
  the judge must give.
- ``record.py``: the record (the local format): turns and evaluation questions,
  checked and normalised by the dataset adapter ``mmrc`` (local files) or
  ``mmrc_hf`` (the Hugging Face release, PROVISIONAL).
- ``answers.py``: parsing an answer for exact match (``answer.parser:
  mmrc_answer``: the option letter of a choice question, true/false of a tf
  question, the text of an open one) and the metric ``mmrc_exact_match``.
- ``verdicts.py``: the judge's verdict (``judge.parser: mmrc_judge``): the
  reply's last JSON object, with the fields the question's ability requires.
- ``scoring.py``: the ``mmrc`` aggregator: per-ability judge scores, overall,
  the precision metrics EP / IMP / RP, exact match, and the length / category /
  updates breakdowns.

The task YAML lists this file (``plugins: [mmrc.py]``); importing it imports the
others, whose decorators register their names for the tasks that list it.

Every value is computed per question (one sample is a conversation holding its
questions in ``extra["questions"]``, see mmtasks/dialogues/replay_probe.py) and
averaged over questions:

- ``ie cr iu im mr ar``: mean judge score (0-5) of the ability's questions;
  ``overall`` = mean of the six ability means (None unless all six are scored).
- ``ep`` (0-1): mean over IE questions of matched_items / model_items, 0 when
  the answer states no item.
- ``imp`` (0-1): mean over IM questions of |named ∩ gold| / |gold|, gold = the
  question's ``images`` (a question without gold images has no IMP).
- ``rp`` (percent): 100 x share of the AR questions expecting a refusal that the
  judge says the model refused. Every AR question expects one (paper section 3.1)
  unless its record says ``refuse: false``. ``n-samples`` reports ``rp_questions``
  (AR questions expecting a refusal) and ``rp_scored`` (those judged): ``rp`` is
  null only when ``rp_scored`` is 0, and ``coverage`` says why.
- ``exact_match`` (0-1): choice and true/false questions, the parsed answer
  against the gold letter / truth value (unparsable: 0, and counted as unparsed).

A judge failure or a failed model request leaves the question unscored: it is
counted as a problem (by the generic counter), never scored as 0 in the headline
metrics (the paper's definitions, over the scored questions). Every metric also
has an ``_all`` variant over every question of the data it applies to, those
without a score counted as 0, and ``coverage`` says how many questions were
scored and why the others were not.
"""

from __future__ import annotations

from . import abilities, answers, record, scoring, verdicts  # noqa: F401  (their decorators register)

__all__ = ["abilities", "answers", "record", "scoring", "verdicts"]
