"""The small languages inside a workflow file (internal): :mod:`.templates` (prompts and arguments),
:mod:`.expressions` (router conditions), :mod:`.sizes` (text lengths); the state paths both use are
:mod:`pytest_agentloom._core.state_paths`.
"""
