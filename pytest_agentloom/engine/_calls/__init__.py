"""Talking to a model (internal): :mod:`.retry`, :mod:`.structured` output, :mod:`.refusal`,
:mod:`.tool_loop`, :mod:`.agent_loop`, :mod:`.conversation`, :mod:`.attachments`.
"""
