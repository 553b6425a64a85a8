"""Hand-written replies to the 18 questions of the POPE sample, and what each rule reads.

Each split's questions 1, 3, 5 are answered yes in the data, 2, 4, 6 no. Columns: the reply, the
authors' reading (evaluate.py), lmms-eval's (the reply lower-cased and stripped; None: empty).
Shared by the replay test and the conformance test.
"""

from __future__ import annotations

#: split -> question_id -> (gold, reply, authors' reading, lmms-eval's reading)
REPLIES: dict[str, dict[str, tuple[str, str, str, str | None]]] = {
    "adversarial": {
        "1": ("yes", "Yes, there is a circle in the image.", "yes", "yes, there is a circle in the image."),
        "2": ("no", "No, there is no triangle.", "no", "no, there is no triangle."),
        "3": ("yes", "yes", "yes", "yes"),
        "4": ("no", "There is a diamond. No wait.", "yes", "there is a diamond. no wait."),  # first sentence only
        "5": ("yes", "I do not see one", "no", "i do not see one"),                          # "not"
        "6": ("no", "no", "no", "no"),
    },
    "popular": {
        "1": ("yes", "Yes.", "yes", "yes."),
        "2": ("no", "Not in this picture.", "yes", "not in this picture."),  # "Not" is none of them: yes
        "3": ("yes", "NO", "yes", "no"),        # "NO" is none of No, not, no: yes for the authors
        "4": ("no", "Yes", "yes", "yes"),
        "5": ("yes", "Yes", "yes", "yes"),
        "6": ("no", "Nope", "yes", "nope"),     # no word No/not/no: yes
    },
    "random": {
        "1": ("yes", "Sure", "yes", "sure"),
        "2": ("no", "No", "no", "no"),
        "3": ("yes", "Yes", "yes", "yes"),
        "4": ("no", "no, no.", "no", "no, no."),
        "5": ("yes", "There is no doubt, yes.", "no", "there is no doubt, yes."),  # the word "no"
        "6": ("no", "No.", "no", "no."),
    },
}

#: by hand: split -> (f1, acc, precision, recall, yes_ratio), the authors' rule
#: adversarial TP 1,3 FP 4 FN 5 TN 2,6; popular TP 1,3,5 FP 2,4,6 (all read yes); random TP 1,3 FN 5 TN 2,4,6
AUTHORS = {
    "adversarial": (200 / 3, 200 / 3, 200 / 3, 200 / 3, 50.0),
    "popular": (200 / 3, 50.0, 50.0, 100.0, 100.0),
    "random": (80.0, 500 / 6, 100.0, 200 / 3, 100 / 3),
}
#: lmms-eval: only whole "yes"/"no" count; its yes ratio is the answers' (3 of 6)
#: adversarial right 3,6, yes 3 (TP); popular right 5, yes 4 (FP), 5 (TP), no 3 (FN); random right 2,3, yes 3
LMMS_EVAL = {
    "adversarial": (100.0, 100 / 3, 100.0, 100.0, 50.0),
    "popular": (50.0, 100 / 6, 50.0, 50.0, 50.0),
    "random": (100.0, 100 / 3, 100.0, 100.0, 50.0),
}
METRICS = ("f1", "acc", "precision", "recall", "yes_ratio")

#: VLMEvalKit (YOrN_Extraction; POPE_rating): split -> question_id -> reading (None: Unknown)
VLMEVALKIT_READINGS: dict[str, dict[str, str | None]] = {
    "adversarial": {"1": "yes", "2": "no", "3": "yes", "4": "no", "5": None, "6": "no"},
    "popular": {"1": "yes", "2": None, "3": "no", "4": "yes", "5": "yes", "6": None},
    "random": {"1": None, "2": "no", "3": "yes", "4": "no", "5": None, "6": "no"},  # q5 holds yes and no
}
#: (f1, acc, precision, recall, yes_ratio): an Unknown yes-question is a false negative.
#: adversarial TP 1,3 FN 5 TN 2,4,6; popular TP 1,5 FP 4 FN 3 (no), wrong 2, 6 (Unknown);
#: random TP 3 FN 1,5 (Unknown) TN 2,4,6
VLMEVALKIT = {
    "adversarial": (80.0, 500 / 6, 100.0, 200 / 3, 100 / 3),
    "popular": (200 / 3, 100 / 3, 200 / 3, 200 / 3, 50.0),
    "random": (50.0, 200 / 3, 100.0, 100 / 3, 100 / 6),
}
