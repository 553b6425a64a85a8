"""The built-in protocols, registered in :data:`mmtasks.registry.protocols` by their
modules' ``@protocol`` decorators when this module is imported."""

from __future__ import annotations

from mmtasks.dialogues import multi_turn, replay_probe, single_turn  # noqa: F401  (register)
