"""mmtasks inside other tools' loops: the ``transformers`` Trainer callback (:mod:`mmtasks.integrations.trainer`)."""
