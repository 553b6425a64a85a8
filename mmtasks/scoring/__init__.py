"""Answer parsers, metrics, judges and aggregation."""
