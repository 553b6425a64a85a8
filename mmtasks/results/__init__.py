"""Writing what a run produced: samples (streamed) and results.json (lm-evaluation-harness layout).

:class:`ResultsFile` is results.json's one schema; :func:`read_results` reads a file through it.
"""

from mmtasks.results.schema import ResultsFile, read_results

__all__ = ["ResultsFile", "read_results"]
