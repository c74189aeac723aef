"""The ground of the package: neutral types, clocks and small helpers that every layer may use.

Nothing here imports the engine, the providers, the tools, replay or pytest code:
``lint-imports`` (contracts in ``pyproject.toml``) keeps it that way.

- :mod:`.types`: the requests and responses that cross the provider boundary.
- :mod:`.clock`: injected time and run ids.
- :mod:`.state_paths`: state paths (``items[0].name``), read and written.
- :mod:`.plain`: JSON-ready data from anything a run holds.
- :mod:`.files`: atomic writes.
- :mod:`.addresses`: which network addresses count as internal.
- :mod:`.diffs`: path-by-path differences between two values.
- :mod:`.suggest`: "did you mean" for names.
- :mod:`.yaml_io`: the one reader of YAML (duplicate keys, alias bombs, depth and size refused).
- :mod:`.json_io`: the strict reader of JSON we did not write in this process.
- :mod:`.walk`: depth-first walks without recursion.
"""
