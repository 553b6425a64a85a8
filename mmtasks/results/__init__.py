"""Writing what a run produced: samples (streamed) and results.json (lm-evaluation-harness layout)."""
