"""Paper-style columns and breakdown charts of each benchmark on the leaderboard.

The columns follow the papers' main tables (RealBench Table 1, MMDU Table 2,
MMRC Table 3), so our runs and the papers' reference rows line up; metric names
and scales are those of shared/specs.
"""

from __future__ import annotations

from mmtasks.leaderboard.schema import Chart, ChartOption, Column


class BenchmarkDef:
    """Everything about a benchmark that does not depend on the runs."""

    def __init__(
        self,
        id: str,
        title: str,
        description: str,
        headline: str,
        columns: list[Column],
        charts: list[Chart],
    ) -> None:
        self.id = id
        self.title = title
        self.description = description
        self.headline = headline
        self.columns = columns
        self.charts = charts

    @property
    def tasks(self) -> list[str]:
        """Tasks whose results feed this benchmark's columns, in column order."""
        seen: dict[str, None] = {}
        for column in self.columns:
            if column.task is not None:
                seen.setdefault(column.task, None)
        return list(seen)

    def column(self, key: str) -> Column:
        for column in self.columns:
            if column.key == key:
                return column
        raise KeyError(key)


def _realbench() -> BenchmarkDef:
    columns: list[Column] = []
    subtasks: list[str] = []
    metric_of = {"retrieval": "acc", "ranking": "acc", "extraction": "rouge_l", "reasoning": "rouge_l"}
    short = {"retrieval": "Retr.", "ranking": "Rank.", "extraction": "Extr.", "reasoning": "Reas."}
    for task, metric in metric_of.items():
        for level in ("easy", "hard"):
            key = f"{task}_{level}"
            subtasks.append(key)
            columns.append(
                Column(
                    key=key,
                    label=f"{short[task]} {level}",
                    title=f"{task.capitalize()}, {level}: {'accuracy' if metric == 'acc' else 'ROUGE-L F1'} (0-100)",
                    task=f"realbench_{key}",
                    metric=metric,
                    radar=True,
                )
            )
    columns.append(
        Column(key="average", label="Avg.", title="Plain mean of the 8 subtask scores (needs all 8)", mean_of=subtasks)
    )
    by_images = Chart(
        id="by_image_count",
        title="Score by number of images",
        dimension="n_images",
        x_label="Images per sample",
        y_label="Score (0-100)",
        style="bars",
        options=[
            ChartOption(label=f"{c.label} ({'acc' if c.metric == 'acc' else 'ROUGE-L'})", task=c.task, metric=c.metric)
            for c in columns
            if c.task is not None and c.metric is not None
        ],
    )
    return BenchmarkDef(
        id="realbench",
        title="RealBench",
        description="Chinese multi-image understanding on real user posts: 4 tasks x easy/hard. "
        "Retrieval and ranking: accuracy; extraction and reasoning: ROUGE-L. All 0-100.",
        headline="average",
        columns=columns,
        charts=[by_images],
    )


MMDU_DIMENSIONS = [
    ("creativity", "C", "Creativity"),
    ("richness", "R", "Richness"),
    ("visual_perception", "VP", "Visual Perception"),
    ("logical_coherence", "LC", "Logical Coherence"),
    ("answer_accuracy", "AA", "Answer Accuracy"),
    ("image_relationship_understanding", "IRU", "Image Relationship Understanding"),
]


def _mmdu() -> BenchmarkDef:
    columns = [
        Column(key=key, label=label, title=f"{name} (judge score, 0-100)", task="mmdu", metric=key, decimals=1, radar=True)
        for key, label, name in MMDU_DIMENSIONS
    ]
    columns.append(
        Column(
            key="overall",
            label="Avg.",
            title="The judge's Overall Score dimension (0-100), the paper's Avg. column",
            task="mmdu",
            metric="overall",
            decimals=1,
        )
    )
    options = [ChartOption(label="Overall", task="mmdu", metric="overall")] + [
        ChartOption(label=name, task="mmdu", metric=key) for key, _, name in MMDU_DIMENSIONS
    ]
    by_turn = Chart(
        id="by_turn",
        title="Score by turn position",
        dimension="turn",
        x_label="Turn",
        y_label="Judge score (0-100)",
        options=options,
    )
    return BenchmarkDef(
        id="mmdu",
        title="MMDU",
        description="Multi-turn, multi-image dialogues scored by an LLM judge on six dimensions "
        "plus an overall score, 0-100 (micro average over judged turns).",
        headline="overall",
        columns=columns,
        charts=[by_turn],
    )


MMRC_ABILITIES = [
    ("ie", "IE", "Information extraction"),
    ("cr", "CR", "Cross-turn reasoning"),
    ("iu", "IU", "Information update"),
    ("im", "IM", "Image management"),
    ("mr", "MR", "Memory recall"),
    ("ar", "AR", "Answer refusal"),
]


def _mmrc() -> BenchmarkDef:
    columns = [
        Column(key=key, label=label, title=f"{name} (judge score, 0-5)", task="mmrc", metric=key, scale_max=5.0, radar=True)
        for key, label, name in MMRC_ABILITIES
    ]
    columns += [
        Column(key="ep", label="EP", title="Extraction precision on IE questions (0-1)", task="mmrc", metric="ep",
               scale_max=1.0, decimals=3),
        Column(key="imp", label="IMP", title="Image management precision on IM questions (0-1)", task="mmrc",
               metric="imp", scale_max=1.0, decimals=3),
        Column(key="rp", label="RP", title="Refusal precision on AR questions (percent)", task="mmrc", metric="rp",
               unit="%"),
        Column(key="overall", label="Overall", title="Mean of the six ability scores (0-5)", task="mmrc",
               metric="overall", scale_max=5.0),
    ]
    ability_options = [ChartOption(label="Overall", task="mmrc", metric="overall", scale_max=5.0)] + [
        ChartOption(label=f"{label} {name.lower()}", task="mmrc", metric=key, scale_max=5.0)
        for key, label, name in MMRC_ABILITIES
    ]
    by_length = Chart(
        id="by_length",
        title="Score by conversation length",
        dimension="length",
        x_label="Conversation length (turns)",
        y_label="Judge score (0-5)",
        options=ability_options,
    )
    by_updates = Chart(
        id="by_updates",
        title="Information update by number of updates",
        dimension="updates",
        x_label="Information updates in the conversation",
        y_label="IU score (0-5)",
        options=[ChartOption(label="IU information update", task="mmrc", metric="iu", scale_max=5.0)],
    )
    return BenchmarkDef(
        id="mmrc",
        title="MMRC",
        description="Real-world conversations replayed, then probed on six abilities (judge score 0-5); "
        "EP/IMP are precisions (0-1), RP a refusal rate in percent.",
        headline="overall",
        columns=columns,
        charts=[by_length, by_updates],
    )


BENCHMARKS: list[BenchmarkDef] = [_realbench(), _mmdu(), _mmrc()]


def benchmark(id: str) -> BenchmarkDef:
    for bench in BENCHMARKS:
        if bench.id == id:
            return bench
    raise KeyError(id)
