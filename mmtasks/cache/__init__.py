"""The response cache: every successful model and judge reply, keyed by the full request."""
