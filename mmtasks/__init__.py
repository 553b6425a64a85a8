"""mmtasks: an evaluation harness for multimodal models on multi-image and
multi-turn conversation benchmarks."""

__version__ = "0.1.0"
