# VLMEvalKit's accuracy report of its multiple-choice datasets: of github.com/open-compass/VLMEvalKit at
# commit e8e78f05f3080fe28154f2130321f17951c3be94 (Apache License 2.0, Copyright 2023 VLMEvalKit
# Authors), verbatim below this header: MMB_abbrs and report_acc of
# vlmeval/dataset/utils/multiple_choice.py (what ImageMCQDataset.evaluate_heuristic in
# vlmeval/dataset/image_mcq.py calls on the scored rows; "Overall" is the mean of hit over every row of
# a split). The import lines are ours. A test reference only (run by tests, never by mmtasks).
from collections import defaultdict

import numpy as np
import pandas as pd

MMB_abbrs = {
    'coarse_perception': 'CP',
    'finegrained_perception (instance-level)': 'FP-S',
    'finegrained_perception (cross-instance)': 'FP-C',
    'logic_reasoning': 'LR',
    'relation_reasoning': 'RR',
    'attribute_reasoning': 'AR'
}


def report_acc(df):
    # assert group in [None, 'category', 'l2-category']
    res = defaultdict(list)

    if 'split' in df:
        splits = list(set(df['split']))
        res['split'] = splits
    else:
        df['split'] = ['none'] * len(df)
        res['split'] = ['none']

    for group in [None, 'l2-category', 'category']:
        if group is None:
            res['Overall'] = [np.mean(df[df['split'] == sp]['hit']) for sp in res['split']]
        elif group not in df:
            continue
        else:
            abilities = list(set(df[group]))
            abilities.sort()
            for ab in abilities:
                ab_name = MMB_abbrs[ab] if ab in MMB_abbrs else ab
                sub_df = df[df[group] == ab]
                res[ab_name] = [np.mean(sub_df[sub_df['split'] == sp]['hit']) for sp in res['split']]
    return pd.DataFrame(res)
