"""What passes between the run and its steps, and out of the run (internal).

:mod:`.step_context` (what a step receives and hands back), :mod:`.result` (what a run returns),
:mod:`.result_assertions` (``WorkflowResult.assert_*``), :mod:`.trace`, :mod:`.pricing`.
"""
