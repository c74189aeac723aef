"""Starting and resuming a run (internal): :mod:`.run_workflow`, :mod:`.resume_workflow`,
:mod:`.options` (their keyword options), :mod:`.sync` (a coroutine run from synchronous code).
"""
