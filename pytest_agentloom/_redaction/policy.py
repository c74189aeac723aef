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

import base64
import hashlib
import hmac
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import quote, quote_plus

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
    #: environment variables whose name ends so (any case) hold API keys (never passed to ``shell_command``)
    api_key_suffix: str = "_API_KEY"
    #: environment variables whose name ends in one of these (any case) hold credentials: their values are
    #: scrubbed like API keys (``TEAM_OPENAI_KEY``, ``GITHUB_TOKEN``, ``CLIENT_SECRET``, ``DB_PASSWORD``)
    secret_env_suffixes: tuple[str, ...] = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
    #: API key values shorter than this are not searched for (a placeholder such as "x" would match everywhere)
    min_api_key_length: int = 8
    #: secret values shorter than this are redacted where their key matches, but not searched for inside other
    #: strings: replacing every "42" in every prompt would make traces unreadable
    min_secret_text_length: int = 4
    #: what every marker becomes before two request bodies are compared in replay
    replay_marker: str = "<REDACTED>"
    #: ``exact`` here makes tool tapes and snapshots compare markers by their digest (two different secrets
    #: then differ); unset or anything else: any two markers are alike (a dummy secret replays a real one)
    exact_markers_env: str = "AGENTLOOM_SECRET_MARKERS"
    #: base64 forms shorter than this are not searched for (a short run of letters is no evidence)
    min_base64_fragment: int = 8
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

    def alike(self, value: object) -> object:
        """A copy of JSON-like data with :meth:`same_in_replay` applied to every string, keys included: what
        tool tapes and snapshots compare, so a secret's value never decides whether a replay matches."""
        if isinstance(value, str):
            return self.same_in_replay(value)
        if isinstance(value, Mapping):
            return {self.alike(key): self.alike(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.alike(item) for item in value]
        return value

    def exact_markers(self, env: Mapping[str, str] | None = None) -> bool:
        """Whether markers compare by digest (``AGENTLOOM_SECRET_MARKERS=exact``), read at each call."""
        return (os.environ if env is None else env).get(self.exact_markers_env, "").strip().lower() == "exact"

    # -- values searched for in text --------------------------------------------------------------------------

    def searched_in_text(self, text: str) -> bool:
        """Whether a secret value's text is long enough to be replaced inside other strings."""
        return len(text) >= self.min_secret_text_length and not self.is_marker(text)

    def is_api_key_name(self, name: str) -> bool:
        """Whether an environment variable called ``name`` holds an API key."""
        return name.upper().endswith(self.api_key_suffix)

    def is_secret_variable_name(self, name: str) -> bool:
        """Whether the value of an environment variable called ``name`` is scrubbed like an API key."""
        return name.upper().endswith(self.secret_env_suffixes)

    def api_key_pairs(self, keys: Iterable[str]) -> list[tuple[str, str]]:
        """``(key, api_key_marker)`` for each API key value."""
        return [(key, self.api_key_marker) for key in keys]

    @staticmethod
    def written_forms(value: str) -> list[str]:
        """``value`` as written, then as JSON writes it inside a string (quotes and backslashes escaped,
        non-ASCII escaped or not): the forms a file may hold it in, so each must be replaced or searched."""
        forms = [value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]]
        return [form for form in dict.fromkeys(forms) if form]

    def encoded_forms(self, value: str) -> tuple[str, ...]:
        """Every form a value is replaced and searched in: :meth:`written_forms`, then URL-encoded
        (``%20`` and ``+`` spaces), then base64 (standard and URL-safe, whole, and the part that stays the
        same wherever the value sits inside a longer base64 text). Raw first, longest encodings after."""
        return _encoded_forms(value, self.min_base64_fragment)

    def form_pairs(self, pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """Each ``(raw, replacement)`` with the same replacement for each of the raw value's
        :meth:`encoded_forms`: all raw values first (in the order given), then their other forms."""
        given = list(pairs)
        extra = [(form, new) for raw, new in given for form in self.encoded_forms(raw)[1:]]
        return given + extra


@lru_cache(maxsize=4096)
def _encoded_forms(value: str, shortest_fragment: int) -> tuple[str, ...]:
    """See :meth:`RedactionPolicy.encoded_forms` (cached: a run asks for the same secrets' forms often)."""
    if not value:
        return ()
    forms = RedactionPolicy.written_forms(value)
    forms += [quote(value, safe=""), quote(value, safe="/"), quote_plus(value)]
    raw = value.encode("utf-8")
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode("ascii")
        forms += [form for form in (whole, whole.rstrip("=")) if len(form) >= shortest_fragment]
        for shift, dropped in ((0, 0), (1, 2), (2, 3)):  # the value after 0, 1 or 2 other bytes
            padded = encode(b"\0" * shift + raw).decode("ascii")
            fragment = padded[dropped:(shift + len(raw)) // 3 * 4]  # chars that hold only the value's bytes
            if len(fragment) >= shortest_fragment:
                forms.append(fragment)
    return tuple(form for form in dict.fromkeys(forms) if form)


#: the rules every run uses; runs add their patterns and salt with :meth:`RedactionPolicy.for_run`
POLICY = RedactionPolicy()
