"""Generators of the synthetic sample data under ``data/sample/``.

Run through ``scripts/make_sample_data.py``. Everything is drawn with Pillow
from fixed seeds, so a rerun writes byte-identical files.
"""
