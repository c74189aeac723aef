"""The small languages inside a workflow file (internal): :mod:`.templates` (prompts and arguments),
:mod:`.expressions` (router conditions), :mod:`.paths` (state paths), :mod:`.sizes` (text lengths).
"""
