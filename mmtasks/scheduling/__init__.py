"""Requests and the scheduler that batches them across dialogues."""
