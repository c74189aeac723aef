"""One module per step type (internal): ``run_<type>(step, ctx)`` each, dispatched on by
:mod:`pytest_agentloom.engine._run.dispatch`. What a step receives and returns is in
:mod:`pytest_agentloom.engine._outcome.step_context`; how a step talks to a model, in
:mod:`pytest_agentloom.engine._calls`.

This package imports nothing itself, so importing one step module never loads them all.
"""
