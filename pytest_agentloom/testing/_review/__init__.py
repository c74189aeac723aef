"""What a session shows a reviewer (internal): :mod:`.coverage`, :mod:`.review` (what is kept for it),
:mod:`.report` (Markdown or HTML), :mod:`.timeline`.
"""
