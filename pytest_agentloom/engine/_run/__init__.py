"""One run (internal): :mod:`.loop` (layers of ready steps, run concurrently, written in file order),
:mod:`.dispatch` (the runner of each step type), :mod:`.slots` (``max_concurrent_steps``),
:mod:`.checkpoint_snapshot` (what a checkpoint saves of a run), :mod:`.skips` (which failed step a skip names).
"""
