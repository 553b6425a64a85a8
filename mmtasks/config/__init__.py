"""Typed configuration: task YAML (TaskConfig) and the run (RunConfig)."""
