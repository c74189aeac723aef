"""The redaction policy: the one place the rules of redaction are written down.

Every writer and printer (run records, checkpoints, cassettes, tool tapes, snapshots, reports, streamed
text) and the secrets scan of ``assert_no_secrets`` take their rules from a :class:`RedactionPolicy`:
how a marker is spelled and recognised, when two markers count as the same in replay, how long a value
must be before it is searched for inside other text, which environment variables hold API keys, and the
forms a value takes once written inside a JSON string. Keeping them in one frozen value means a rule
cannot drift between the file that writes a marker and the one that reads it back.

:data:`POLICY` holds the rules every run uses; a run's own patterns and salt are added with
:meth:`RedactionPolicy.for_run`, which returns a new value (the policy itself never changes).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["POLICY", "RedactionPolicy"]


@dataclass(frozen=True)
class RedactionPolicy:
    """What is redacted, and how its traces are spelled; built once (:data:`POLICY`) and shared."""

    #: the run's ``redact: true`` glob patterns (state keys), deduplicated in order
    patterns: tuple[str, ...] = ()
    #: the key of the markers, when given; ``None``: the project's salt, read the first time one is needed
    salt: bytes | None = None
    #: a marker is this prefix, :attr:`digest_length` hex digits of the value's salted HMAC-SHA256, and ``>``
    marker_prefix: str = "<REDACTED:sha256="
    digest_length: int = 16
    #: what every API key of the environment becomes
    api_key_marker: str = "<SCRUBBED>"
    #: environment variables whose name ends so (any case) hold API keys
    api_key_suffix: str = "_API_KEY"
    #: API key values shorter than this are not searched for (a placeholder such as "x" would match everywhere)
    min_api_key_length: int = 8
    #: secret values shorter than this are redacted where their key matches, but not searched for inside other
    #: strings: replacing every "42" in every prompt would make traces unreadable
    min_secret_text_length: int = 4
    #: what every marker becomes before two request bodies are compared in replay
    replay_marker: str = "<REDACTED>"
    marker_pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    any_marker_pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        prefix = re.escape(self.marker_prefix)
        object.__setattr__(self, "marker_pattern", re.compile(f"{prefix}[0-9a-f]{{{self.digest_length}}}>"))
        # replay: a marker of any digest length (one written under another length) is still a marker
        object.__setattr__(self, "any_marker_pattern", re.compile(f"{prefix}[0-9a-f]+>"))

    def for_run(self, patterns: Iterable[str], salt: bytes | None) -> RedactionPolicy:
        """This policy with one run's patterns and salt (the rules and their compiled patterns shared).

        What ``dataclasses.replace`` gives, without building the patterns again: every run and subworkflow
        makes one, and ``replace`` cost three times what the rest of a redactor's setup does.
        """
        copy = object.__new__(RedactionPolicy)
        copy.__dict__.update(self.__dict__, patterns=tuple(dict.fromkeys(patterns)), salt=salt)
        return copy

    # -- markers ----------------------------------------------------------------------------------------------

    def marker(self, canonical: str, *, salt: bytes) -> str:
        """The marker of a value whose canonical text is ``canonical``, keyed with ``salt``."""
        digest = hmac.new(salt, canonical.encode("utf-8"), hashlib.sha256).hexdigest()
        return f"{self.marker_prefix}{digest[:self.digest_length]}>"

    def is_marker(self, text: str) -> bool:
        """Whether ``text`` is exactly one marker (so redacting it again changes nothing)."""
        return self.marker_pattern.fullmatch(text) is not None

    def same_in_replay(self, text: str) -> str:
        """``text`` with every marker made alike: any two markers match in replay (a CI job's dummy secret
        gives another marker than the one recorded)."""
        return self.any_marker_pattern.sub(self.replay_marker, text) if self.marker_prefix in text else text

    # -- values searched for in text --------------------------------------------------------------------------

    def searched_in_text(self, text: str) -> bool:
        """Whether a secret value's text is long enough to be replaced inside other strings."""
        return len(text) >= self.min_secret_text_length and not self.is_marker(text)

    def is_api_key_name(self, name: str) -> bool:
        """Whether an environment variable called ``name`` holds an API key."""
        return name.upper().endswith(self.api_key_suffix)

    def api_key_pairs(self, keys: Iterable[str]) -> list[tuple[str, str]]:
        """``(key, api_key_marker)`` for each API key value."""
        return [(key, self.api_key_marker) for key in keys]

    @staticmethod
    def written_forms(value: str) -> list[str]:
        """``value`` as written, then as JSON writes it inside a string (quotes and backslashes escaped,
        non-ASCII escaped or not): the forms a file may hold it in, so each must be replaced or searched."""
        forms = [value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]]
        return [form for form in dict.fromkeys(forms) if form]


#: the rules every run uses; runs add their patterns and salt with :meth:`RedactionPolicy.for_run`
POLICY = RedactionPolicy()
