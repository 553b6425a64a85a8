"""Hand-written model replies and judge replies for the 10 questions of the HallusionBench sample.

doc id (the authors' per-question name) -> (model reply, judge reply, the authors' verdict 0/1/2,
correct by assign_correctness). Shared by the replay test and the conformance test.
"""

from __future__ import annotations

REPLIES: dict[str, tuple[str, str, int, int]] = {
    "VD_illusion_0_0_0": ("Yes, they are the same size.", "correct", 1, 1),
    "VD_illusion_0_0_1": ("No.", "Correct.", 1, 1),
    "VD_illusion_0_1_0": ("Yes, both circles are equal.", "incorrect", 0, 0),
    "VD_illusion_0_1_1": ("No, the right shape is a square.", "The prediction is CORRECT", 1, 1),
    "VS_chart_0_0_0": ("I cannot know without the chart.", "unclear", 2, 1),       # VS without its figure: 2 counts
    "VS_chart_0_0_1": ("Yes.", "It is not incorrect", 0, 0),                          # "incorrect" in it: 0
    "VS_chart_0_1_0": ("Yes, 14 against 10.", "correct", 1, 1),
    "VS_chart_0_1_1": ("Maybe.", "unclear", 2, 0),                                    # with its figure: 2 is wrong
    "VS_map_1_0_0": ("Yes, Paris is the capital of France.", "correct", 1, 1),
    "VS_map_1_1_0": ("No, the image says Lyon.", "Output: correct", 1, 1),
}

#: by hand. aAcc: 7 of 10. fAcc (VS figure 0 left out): VD_illusion_0_0 all right, VD_illusion_0_1 no,
#: VS_chart_0_1 no, VS_map_1_1 all right: 2 of 4. qAcc: VD q0 (1, 0) no, VD q1 (1, 1) yes, VS chart q0
#: (1, 1) yes, VS chart q1 (0, 0) no, VS map q0 (1, 1) yes: 3 of 5.
AUTHORS = {"aAcc": 70.0, "fAcc": 50.0, "qAcc": 60.0}
#: lmms-eval, the image split only (VS_chart_0_0_*, VS_map_1_0_0 not asked): aAcc 5 of 7; the same
#: figures; qAcc over the same five questions, each now by its figures only: 3 of 5
LMMS_EVAL = {"aAcc": 500 / 7, "fAcc": 50.0, "qAcc": 60.0}
#: VLMEvalKit (variant vlmevalkit), the image split only, its yes/no rule in place of the judge: "Yes, they
#: are the same size." Yes (right), "No." No (right), "Yes, both circles are equal." Yes (wrong), "No, the
#: right shape ..." No (right), "Yes, 14 against 10." Yes (right), "Maybe." Unknown (wrong), "No, the image
#: says Lyon." No (right): aAcc 5 of 7; figures VD_illusion_0_0 yes, VD_illusion_0_1 no, VS_chart_0_1 no,
#: VS_map_1_1 yes: 2 of 4; questions VD q0 (right, wrong) no, VD q1 yes, VS chart q0 yes, VS chart q1 no,
#: VS map q0 yes: 3 of 5 (the judge's figures on the same split, by another reading of each reply)
VLMEVALKIT = {"aAcc": 500 / 7, "fAcc": 50.0, "qAcc": 60.0}
