"""Scenario tables (internal): :mod:`.table` (one row per run) and :mod:`.yaml_tests` (tables collected
from ``*.agentloom.yaml`` files).
"""
