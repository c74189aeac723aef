"""Redaction: what keeps a secret out of every file and output (internal).

Built from plain settings (patterns, salt, lengths), never from the engine's types, so the engine,
the tools, the providers, replay and the pytest side all use it from below.

- :mod:`.redactor`: state keys matched by pattern become ``<REDACTED:sha256=...>`` markers.
- :mod:`.salt`: the per-project salt that keys the markers.
- :mod:`.api_keys`: the ``*_API_KEY`` values of the environment, which become ``<SCRUBBED>``.
- :mod:`.http_traffic`: requests and responses redacted before a cassette is matched or written.
- :mod:`.streamed_text`: text printed as it arrives, redacted piece by piece.
"""
