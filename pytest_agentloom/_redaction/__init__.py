"""Redaction: what keeps a secret out of every file and output (internal).

Built from plain settings (patterns, salt, lengths), never from the engine's types, so the engine,
the tools, the providers, replay and the pytest side all use it from below.

- :mod:`.redactor`: state keys matched by pattern become ``<REDACTED:sha256=...>`` markers.
- :mod:`.salt`: the per-project salt that keys the markers.
- :mod:`.api_keys`: the credentials of the environment (``*_API_KEY``, ``*_TOKEN``, ..., and those
  ``api_key_env`` names), which become ``<SCRUBBED>``.
- :mod:`.policy`: the rules, among them the encoded forms each value is replaced in.
- :mod:`.sorted_json`: a JSON text with sorted keys sorted again once a secret key is replaced.
- :mod:`.http_traffic`: requests and responses redacted before a cassette is matched or written.
- :mod:`.streamed_text`: text printed as it arrives, redacted piece by piece.
"""
