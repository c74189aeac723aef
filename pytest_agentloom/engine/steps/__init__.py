"""How each step runs: one module per step type (``run_<type>(step, ctx)``), the table the run dispatches
on (:mod:`.runners`), what steps receive and return (:mod:`.base`), and the helpers several types share:
:mod:`.retry` (the retry table of model calls), :mod:`.tool_loop`, :mod:`.structured`, :mod:`.agent_loop`.

This package imports nothing itself, so importing one step module never loads them all.
"""
