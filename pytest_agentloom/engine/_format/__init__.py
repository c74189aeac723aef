"""The workflow file as typed data: read, checked, linted and drawn (internal).

:mod:`.model` (one pydantic model per step type), :mod:`.loader` (a file into a ``Workflow``),
:mod:`.graph` (dependencies, cycles), :mod:`.load_checks` (what could never work at run time),
:mod:`.lint` (``agentloom validate``), :mod:`.diagram`, :mod:`.reads` (the state paths a step reads).
"""
