"""Protocols that turn a document into a dialogue: the requests to send and the finished sample."""
