"""Hand-written replies to the 30 questions of the MME sample, and what each rule reads in them.

Each image has a question answered Yes (``:yes``) and one answered No (``:no``). The columns: the
reply, what the authors' calculation.py reads (None: "other"), what lmms-eval's parse_pred_ans
reads. Shared by the replay test and the conformance test.
"""

from __future__ import annotations

#: (question_id, gold) -> (reply, authors' reading, lmms-eval's reading)
REPLIES: dict[tuple[str, str], tuple[str, str | None, str | None]] = {
    ("existence/000000000001.jpg", "yes"): ("Yes", "yes", "yes"),
    ("existence/000000000001.jpg", "no"): ("No", "no", "no"),
    ("existence/000000000002.jpg", "yes"): ("yes, there is a star.", "yes", "yes"),
    ("existence/000000000002.jpg", "no"): ("Yes.", "yes", "yes"),                    # wrong
    ("count/000000000003.jpg", "yes"): ("YES", "yes", "yes"),
    ("count/000000000003.jpg", "no"): ("no", "no", "no"),
    ("position/000000000004.jpg", "yes"): ("The triangle is below.", None, None),   # "the " holds neither
    ("position/000000000004.jpg", "no"): ("No.", "no", "no"),
    ("color/000000000005.jpg", "yes"): (" yes", "yes", "yes"),                      # " yes" is the first four
    ("color/000000000005.jpg", "no"): ("Not at all", "no", "no"),                   # "not " holds "no"
    ("posters/tt0000006.jpg", "yes"): ("Y", None, "yes"),                           # lmms-eval reads a lone y/n
    ("posters/tt0000006.jpg", "no"): ("N", None, "no"),
    ("celebrity/tt0000007_shot_0001_img_0.jpg", "yes"): ("Yes.", "yes", "yes"),
    ("celebrity/tt0000007_shot_0001_img_0.jpg", "no"): ("nope", "no", "no"),
    ("scene/Places365_val_00000008.jpg", "yes"): ("I think yes", None, None),       # "i th"
    ("scene/Places365_val_00000008.jpg", "no"): ("No", "no", "no"),
    ("landmark/0000000000000009.jpg", "yes"): ("yes", "yes", "yes"),
    ("landmark/0000000000000009.jpg", "no"): ("yes", "yes", "yes"),                  # wrong
    ("artwork/10010.jpg", "yes"): ("no", "no", "no"),                                # wrong
    ("artwork/10010.jpg", "no"): ("no", "no", "no"),
    ("OCR/0011.jpg", "yes"): ("\nYes", "yes", "yes"),                                # the newline deleted / stripped
    ("OCR/0011.jpg", "no"): ("None", "no", "no"),                                    # "none" holds "no"
    ("commonsense_reasoning/0012.png", "yes"): ("Yes", "yes", "yes"),
    ("commonsense_reasoning/0012.png", "no"): ("No", "no", "no"),
    ("numerical_calculation/0013.png", "yes"): ("yes", "yes", "yes"),
    ("numerical_calculation/0013.png", "no"): ("Unknown", None, None),               # "unkn"
    ("text_translation/0014.png", "yes"): ("y.", None, "yes"),                       # lmms-eval drops the "."
    ("text_translation/0014.png", "no"): ("No", "no", "no"),
    ("code_reasoning/0015.png", "yes"): ("Knowing the code, yes", "no", "no"),       # "know" holds "no": wrong
    ("code_reasoning/0015.png", "no"): ("no", "no", "no"),
}

#: VLMEvalKit's YOrN_Extraction of each reply (yes or no a whole word, not both; None: Unknown)
VLMEVALKIT: dict[tuple[str, str], str | None] = {
    **{k: a for k, (_, a, _) in REPLIES.items()},
    ("color/000000000005.jpg", "no"): None,                       # "not at all": no word yes or no
    ("celebrity/tt0000007_shot_0001_img_0.jpg", "no"): None,     # "nope"
    ("scene/Places365_val_00000008.jpg", "yes"): "yes",           # "i think yes"
    ("OCR/0011.jpg", "no"): None,                                 # "none"
    ("code_reasoning/0015.png", "yes"): "yes",                    # "knowing the code yes"
}
#: VLMEvalKit: existence 125, count 200, position 50, color 50, posters 0, celebrity 50, scene 200,
#: landmark 50, artwork 50, OCR 50; commonsense 200, numerical 50, text_translation 50, code 200;
#: 19 of 30 questions, 5 of 15 images (existence 1, count, scene, commonsense, code)
VLMEVALKIT_SUMS = {"perception": 825.0, "cognition": 500.0, "mme_sum": 1325.0}

#: by hand, the authors' rule: subtask -> (acc, acc+, score)
AUTHORS = {
    "existence": (75.0, 50.0, 125.0), "count": (100.0, 100.0, 200.0), "position": (50.0, 0.0, 50.0),
    "color": (100.0, 100.0, 200.0), "posters": (0.0, 0.0, 0.0), "celebrity": (100.0, 100.0, 200.0),
    "scene": (50.0, 0.0, 50.0), "landmark": (50.0, 0.0, 50.0), "artwork": (50.0, 0.0, 50.0),
    "OCR": (100.0, 100.0, 200.0), "commonsense_reasoning": (100.0, 100.0, 200.0),
    "numerical_calculation": (50.0, 0.0, 50.0), "text_translation": (50.0, 0.0, 50.0),
    "code_reasoning": (50.0, 0.0, 50.0),
}
#: perception 125 + 200 + 50 + 200 + 0 + 200 + 50 + 50 + 50 + 200; cognition 200 + 50 + 50 + 50
AUTHORS_SUMS = {"perception": 1125.0, "cognition": 350.0, "mme_sum": 1475.0}
#: lmms-eval: posters and text_translation read right (200 each)
LMMS_EVAL_SUMS = {"perception": 1325.0, "cognition": 500.0, "mme_sum": 1825.0}


def doc_id(question_id: str, gold: str) -> str:
    return f"{question_id}:{gold}"
