# lmms-eval's group aggregation: of github.com/EvolvingLMMs-Lab/lmms-eval at commit
# 75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3 (MIT License, Copyright (c) 2025 LMMs-Lab), verbatim below
# this header: the class AggMetricConfig of lmms_eval/api/group.py (a group's aggregate_metric_list
# entry, weight_by_size False unless the group's YAML sets it) and aggregate_subtask_metrics of
# lmms_eval/api/metrics.py (what lmms_eval/evaluator_utils.py consolidate_group_results calls with
# the subtasks' metrics, their "samples" counts and metric_config["weight_by_size"]). The import lines
# are ours. A test reference only (run by tests, never by mmtasks).
from dataclasses import dataclass
from typing import Optional, Union


@dataclass
class AggMetricConfig(dict):
    metric: Optional[str] = None
    aggregation: Optional[str] = "mean"
    weight_by_size: Optional[str] = False
    # list of filter names which should be incorporated into the aggregated metric.
    filter_list: Optional[Union[str, list]] = "none"

    def __post_init__(self):
        if self.aggregation != "mean" and not callable(self.aggregation):
            raise ValueError(f"Currently, 'mean' is the only pre-defined aggregation across groups' subtasks. Got '{self.aggregation}'.")

        if isinstance(self.filter_list, str):
            self.filter_list = [self.filter_list]



def aggregate_subtask_metrics(metrics, sizes, weight_by_size=True):
    # A helper function that is used to aggregate
    # subtask scores cross-task.
    # TODO: does not hold for non-mean aggregations
    if not weight_by_size:
        sizes = [1] * len(sizes)

    assert len(metrics) == len(sizes)

    return sum([metric * size for metric, size in zip(metrics, sizes)]) / sum(sizes)

