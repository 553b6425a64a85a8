"""Deciding between two models: paired statistics over the documents two runs share
(:mod:`mmtasks.comparison.paired`) and the comparison of two runs (:mod:`mmtasks.comparison.runs`)."""
