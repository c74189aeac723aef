"""Golden snapshots (internal): :mod:`.compare` (what goes in, how it is written, how a change is
explained), :mod:`.volatile` (values kept out of the comparison), :mod:`.sent` (the requests a run sent),
:mod:`.assertrepr` (``assert result_a == result_b`` explained).
"""
