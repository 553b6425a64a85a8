"""Core types at the bottom layer: conversations, requests and replies, samples.

Nothing here imports any other part of mmtasks except ``mmtasks.errors``."""
