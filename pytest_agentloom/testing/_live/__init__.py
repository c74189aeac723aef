"""Live runs (internal): :mod:`.repetitions` (N runs and a pass rate) and the drift check: :mod:`.drift`,
:mod:`.trace_facts` (what is compared), :mod:`.drift_diff` (what changed), :mod:`.drift_verdicts` (the judge
verdicts it keeps), :mod:`.drift_report`.
"""
