"""Judged assertions (internal): :mod:`.judge` (a model grades a text) and :mod:`.verdicts` (its answers
kept as snapshots).
"""
