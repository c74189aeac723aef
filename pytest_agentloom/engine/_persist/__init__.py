"""What a run leaves on disk, and how it is read back (internal).

:mod:`.redacted_writes` (every file a run writes, redacted first), :mod:`.checkpoints`,
:mod:`.records` (one JSON record per run).
"""
