"""The plugin's settings (internal): :mod:`.option_table` (one table, one precedence rule) and :mod:`.live`
(``--agentloom-live`` and repetitions, checked together).
"""
