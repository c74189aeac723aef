"""One test's cassette: replay recorded HTTP calls of real providers, or record them.

:class:`CassetteSession` owns the cassette of one test (one file). It is
opened once, used by every run of the test through :meth:`CassetteSession.wrap`,
and closed at the end of the test, which writes the file when recording.
vcrpy does the HTTP interception (it patches ``httpx``/``httpx2``, which the
SDKs use); this module adds what vcrpy leaves to its users:

- the readable file format of :mod:`._cassette_file`, written atomically;
- scrubbing (:mod:`.._redaction.http_traffic`) before anything is matched or written;
- matching as data (:mod:`._matchers`), identical requests in recorded order;
- a mismatch that fails its *step* with the test, step id, turn, a short diff
  against the closest recording and the command to re-record
  (:class:`~pytest_agentloom.errors.CassetteMismatchError`, never retried);
- the interactions a replay left unused, and provenance with a stale flag;
- a request that got no response while recording (dropped connection, timeout), recorded with
  status 0 and replayed as the same kind of transport error.

The step id and turn reach the HTTP layer through :data:`current_call`, a
context variable that :class:`ReplayProvider` sets around each provider call:
nothing is passed through the SDKs.

Usable without pytest (the CLI's ``--replay``/``--record`` use it)::

    with CassetteSession(CassetteConfig(path="flow.cassette.yaml", mode=RecordMode.NONE)) as cassette:
        provider = cassette.wrap(default_gateway(config, api_key_placeholder=...))
        result = run_workflow(workflow, provider=provider)
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .._core.arguments import bad_argument, check_positive_number
from .._core.files import one_to_one_name
from .._core.offline import SOCKET_TRANSPORT, Seal, enter_seal, leave_seal
from .._core.types import EmbedRequest, EmbedResponse, LLMRequest, LLMResponse, Provider
from .._redaction.api_keys import noted_keys_version
from .._redaction.http_traffic import HttpRedactor, api_keys_from_env
from ..engine._entry.running import RunningWorkflow, running_workflow
from ..errors import (
    CassetteFormatError,
    CassetteMismatchError,
    CassetteNotFoundError,
    RequestNotInterceptedError,
    ToolDriftError,
    UnrecordableResponseError,
    UnusedInteractionsError,
    render_message,
)
from ..providers._faults import pending_fault
from ._cassette_file import dumps, interaction_document, read_cassette, write_atomic
from ._fault_responses import fault_response
from ._match_index import RequestIndex
from ._matchers import DEFAULT_MATCH_ON, body_data, body_diff, body_difference_count, matcher_names, resolve_matchers
from ._modes import RecordMode
from ._provenance import Provenance, format_time, stale_workflows, utc_now, workflow_hash, workflow_meaning_hash
from ._response_filters import DEFAULT_RESPONSE_IGNORE, ResponseHook, apply_hook, same_but_volatile

if TYPE_CHECKING:
    from vcr.request import Request

    from ..engine._format.model import Workflow

__all__ = ["CallInfo", "CassetteConfig", "CassetteSession", "ReplayProvider", "current_call"]


@dataclass
class CallInfo:
    """The provider call in progress: what the HTTP layer needs to name it in an error."""

    request: LLMRequest | EmbedRequest
    #: the request the cassette could not answer: a cassette mismatch, or (``--agentloom-live-tools=all``)
    #: the tool whose real result made it differ from the recording
    mismatch: CassetteMismatchError | ToolDriftError | None = None
    #: a request of this call that vcrpy did not intercept (see :meth:`CassetteSession.not_intercepted`)
    unsent: RequestNotInterceptedError | None = None
    #: a live response of this call too large (or of an encoding too unknown) to record
    unrecordable: UnrecordableResponseError | None = None
    #: requests sent to a live provider during this call and not answered yet, with the position their
    #: interaction takes in the cassette (see :meth:`CassetteSession._record_unanswered`)
    pending: list[tuple[Any, int]] = field(default_factory=list)


R = TypeVar("R", LLMResponse, EmbedResponse)

#: The provider call in progress in this task (set by :class:`ReplayProvider`).
current_call: ContextVar[CallInfo | None] = ContextVar("agentloom_current_call", default=None)


@dataclass(frozen=True)
class CassetteConfig:
    """Where a cassette lives and how to use it.

    ``test_id`` and ``record_command`` only shape messages; ``root`` is the
    folder that workflow paths in the provenance (and ``display_path``) are
    relative to; ``api_keys`` are extra raw keys to scrub besides ``*_API_KEY``
    environment variables. ``ignore`` are body paths the ``body`` matcher leaves out.
    ``before_record_response`` runs on each response after scrubbing, before it is matched or written.
    """

    path: Path
    mode: RecordMode = RecordMode.NONE
    test_id: str = ""
    record_command: str | None = None
    root: Path | None = None
    match_on: tuple[Any, ...] = DEFAULT_MATCH_ON
    ignore: tuple[str, ...] = ()
    #: response fields a re-recording may change and still keep the interaction on disk (besides
    #: :data:`._response_filters.DEFAULT_RESPONSE_IGNORE`), and vcrpy's ``before_record_response`` hook
    response_ignore: tuple[str, ...] = ()
    before_record_response: ResponseHook | None = None
    api_keys: tuple[str, ...] = ()
    env: Mapping[str, str] | None = field(default=None, repr=False)
    #: the clock of ``recorded_at`` (and of a cassette's age); inject one for a deterministic time
    clock: Callable[[], datetime] = field(default=utc_now, repr=False)
    #: seconds a cassette may age: a re-recording of an older one is written with a new ``recorded_at``
    #: even when nothing else changed (else it would stay expired however often it is re-recorded)
    max_age: float | None = None

    def __post_init__(self) -> None:
        """Check each argument where it was written (a wrong one would fail much later, in another step),
        taking the forms a caller naturally writes: a string path, a mode's name, a list for a tuple."""
        _set = object.__setattr__
        _set(self, "path", _path_argument("path", self.path))
        if self.root is not None:
            _set(self, "root", _path_argument("root", self.root))
        _set(self, "mode", _mode_argument(self.mode))
        for name in ("match_on", "ignore", "response_ignore", "api_keys"):
            _set(self, name, _tuple_argument(name, getattr(self, name), texts_only=name != "match_on"))
        if not isinstance(self.test_id, str):
            raise bad_argument(_CALL, "test_id", self.test_id, "a string (the test's node id)")
        if self.record_command is not None and not isinstance(self.record_command, str):
            raise bad_argument(_CALL, "record_command", self.record_command, "a string, or None")
        if self.before_record_response is not None and not callable(self.before_record_response):
            raise bad_argument(_CALL, "before_record_response", self.before_record_response,
                               "a function taking and returning a vcrpy response dict, or None")
        if not callable(self.clock):
            raise bad_argument(_CALL, "clock", self.clock, "a function returning an aware datetime")
        if self.max_age is not None:
            check_positive_number(_CALL, "max_age", self.max_age)
        if self.env is not None and not isinstance(self.env, Mapping):
            raise bad_argument(_CALL, "env", self.env, "a mapping of variable names to values, or None (os.environ)")

    @property
    def display_path(self) -> str:
        return _relative(self.path, self.root)

    @property
    def how_to_record(self) -> str:
        if self.record_command:
            return self.record_command
        return f"re-run with --agentloom-record to record {self.display_path} against live providers"


_CALL = "CassetteConfig()"


def _path_argument(name: str, value: object) -> Path:
    if isinstance(value, (str, os.PathLike)) and str(value):
        return Path(value)
    raise bad_argument(_CALL, name, value, "a path (str or pathlib.Path), not empty")


def _mode_argument(value: object) -> RecordMode:
    try:
        return RecordMode(value)
    except ValueError:
        raise bad_argument(_CALL, "mode", value, "a RecordMode or one of "
                           + ", ".join(repr(mode.value) for mode in RecordMode)) from None


def _tuple_argument(name: str, value: object, *, texts_only: bool) -> tuple[Any, ...]:
    accepted = "a list or tuple of strings" if texts_only else "a list or tuple of matcher names or functions"
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise bad_argument(_CALL, name, value, accepted)
    for item in value:
        if not isinstance(item, str) and (texts_only or not callable(item)):
            raise bad_argument(_CALL, name, value, f"{accepted} ({item!r} is not one)")
    return tuple(value)


def _relative(path: Path, root: Path | None) -> str:
    try:
        return Path(os.path.relpath(Path(path).resolve(), (root or Path.cwd()).resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()


def _cassette_class(session: CassetteSession) -> Any:
    """A vcrpy ``Cassette`` that looks requests up in ``session``'s index and tells it of a request it cannot play.

    It overrides only public methods, the ones vcrpy's httpx stubs call: ``can_play_response_for``
    (which asks ``request in cassette``), ``play_response`` and ``append``
    (``tests/replay/test_vcr_contract.py`` fails if vcrpy stops calling them). Built for each session
    rather than cached, so it always comes from the vcrpy modules currently imported (pytester's
    in-process runs re-import them).
    """
    from vcr.cassette import Cassette
    from vcr.errors import UnhandledHTTPRequestError

    class AgentloomCassette(Cassette):  # type: ignore[misc]
        def __contains__(self, request: Any) -> bool:
            """Whether an unplayed recording matches ``request`` (filtered already, as vcrpy asks it)."""
            return self._next(request) is not None

        def _next(self, request: Any) -> int | None:
            """The position of the first recording that matches ``request`` and may still be played."""
            for position in session._index.matches(request, self.data):
                if self.play_counts[position] == 0 or self.allow_playback_repeats:
                    return position
            return None

        def can_play_response_for(self, request: Any) -> bool:
            playable = bool(super().can_play_response_for(request))
            if not playable and session._redact_request(request) is not None:  # a provider call's request
                if self.write_protected:
                    session._unmatched(request)
                else:  # about to be sent live: note it, to record it even if no response comes
                    session._sent(request)
            return playable

        def append(self, request: Any, response: Any) -> None:
            session._answered(request)
            super().append(request, response)

        def play_response(self, request: Any) -> Any:
            """vcrpy's answer, found through the index (see :mod:`._match_index`) rather than a scan."""
            redacted = session._redact_request(request)
            position = None if redacted is None else self._next(redacted)
            if position is None:
                raise UnhandledHTTPRequestError(
                    f"The cassette ({session.config.display_path}) doesn't contain the request asked for")
            injected = session._injected(redacted)
            if injected is not None:
                return injected
            self.play_counts[position] += 1
            response = self.data[position][1]
            status = response.get("status") or {}
            if status.get("code") == NO_RESPONSE_STATUS:
                raise _replayed_transport_error(str(status.get("message") or ""))
            return response

    return AgentloomCassette


#: The status of a recorded interaction that got no response (a dropped connection, a timeout): HTTP has
#: no status 0. Its ``reason`` says which; replaying it raises the same kind of transport error again.
NO_RESPONSE_STATUS = 0
_NO_RESPONSE_TIMEOUT = "no response: the request timed out"
_NO_RESPONSE_DROPPED = "no response: the connection was dropped"


def _replayed_transport_error(reason: str, injected: str | None = None) -> Exception:
    """An error of both ``httpx`` and ``httpx2`` (whichever the client uses), as the transport raises it."""
    import httpx

    timeout = reason == _NO_RESPONSE_TIMEOUT
    bases: list[type] = [httpx.ReadTimeout if timeout else httpx.RemoteProtocolError]
    try:
        import httpx2
    except ImportError:  # an SDK version still on httpx
        pass
    else:
        bases.append(httpx2.ReadTimeout if timeout else httpx2.RemoteProtocolError)
    kind = type("ReplayedTimeout" if timeout else "ReplayedDroppedConnection", tuple(bases), {})
    if injected is not None:
        return kind(f"{reason} ({injected})")
    return kind(f"replayed from the cassette: {reason} when it was recorded")


def _is_timeout(exc: BaseException | None) -> bool:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if "timeout" in type(exc).__name__.lower() or "timed out" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


class _ReadResponse(dict):  # type: ignore[type-arg]
    """A response as the file gave it, held by no one else: vcrpy deep-copies every response it appends, to
    keep a live one from being changed under the client; for these the copy protects nothing (and cost a
    third of loading a 1,000-interaction cassette). The scrub that follows builds a plain dict anyway."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _ReadResponse:
        return self


class _Persister:
    """vcrpy's persister interface, reading and writing our format for one session."""

    def __init__(self, session: CassetteSession) -> None:
        self._session = session

    def load_cassette(self, cassette_path: Any, serializer: Any) -> tuple[Any, ...]:
        from vcr.persisters.filesystem import CassetteNotFoundError as VcrNotFound

        loaded = self._session._loaded
        if loaded is None:
            raise VcrNotFound()
        return loaded[1], [_ReadResponse(response) for response in loaded[2]]

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        pass  # the session writes the file itself, once, at close()


class CassetteSession:
    """The cassette of one test (or one CLI run). See the module docs.

    Use as a context manager, or call :meth:`open` and :meth:`close`.
    """

    def __init__(self, config: CassetteConfig) -> None:
        if not isinstance(config, CassetteConfig):
            raise bad_argument("CassetteSession()", "config", config,
                               "a CassetteConfig, e.g. CassetteSession(CassetteConfig(path='cassettes/t.yaml'))")
        self.config = config
        self.mode = config.mode
        self._loaded: tuple[Provenance | None, list[Any], list[dict[str, Any]]] | None = None
        self._cassette: Any = None
        self._scrubber = HttpRedactor(api_keys=[*api_keys_from_env(config.env), *config.api_keys])
        self._noted = noted_keys_version()
        self._secrets: set[str] = set()
        self._workflows: dict[str, str] = {}  # workflow file (relative to the root) -> its meaning hash
        self._workflow_files: dict[str, Path] = {}
        self._vcr_context: Any = None
        self._index = RequestIndex(resolve_matchers(config.match_on, config.ignore))
        self._loading = False
        self._last_redacted: tuple[Request, HttpRedactor, Request | None] | None = None
        self.mismatches: list[CassetteMismatchError | ToolDriftError] = []
        #: ``--agentloom-live-tools=all``: a request that differs from its closest recording only in tool
        #: results is reported as the tool that drifted (:mod:`._tool_results`), not as a mismatch
        self.compare_tool_results = False
        self.unsent: list[RequestNotInterceptedError] = []  # requests vcrpy let through in a replay: none sent
        #: a fault was injected into a request of this session: its path may leave recordings unused
        self.faulted = False
        self.seal = Seal(self.not_intercepted)
        self.loaded_count = 0
        self.opened = False
        self.removed = False  # set by write(): a re-recording that sent no request removed the old file

    @property
    def _http_redactor(self) -> HttpRedactor:
        """What scrubs this cassette's traffic: the keys of the environment when the session began, the
        runs' secrets, and the keys of every provider built since (a provider made inside the session,
        ``OpenAIProvider(api_key_env="TEAM_KEY")``, notes its variable when it is built)."""
        noted = noted_keys_version()
        if noted != self._noted:
            self._noted = noted
            self._scrubber = self._scrubber.with_api_keys(api_keys_from_env(self.config.env))
        return self._scrubber

    # -- lifecycle ------------------------------------------------------------------------------------------

    @property
    def exists(self) -> bool:
        return self.config.path.is_file()

    @property
    def provenance(self) -> Provenance | None:
        """The provenance of the cassette as loaded (``None`` when nothing was loaded)."""
        return self._loaded[0] if self._loaded is not None else None

    def open(self) -> CassetteSession:
        """Load the cassette (unless re-recording everything) and put vcrpy's interception in place until
        :meth:`close`: vcrpy's public context manager (``Cassette.use``), entered once.

        While it is in place, only the requests of a provider call made through :meth:`wrap` are played or
        recorded: for any other request (the test's own HTTP, a tool's request to a local server) the
        request filter answers ``None``, which vcrpy lets through untouched and unrecorded.
        """
        if self.opened:
            return self
        from vcr.record_mode import RecordMode as VcrMode

        if self.mode is not RecordMode.ALL:
            self._loaded = read_cassette(self.config.path)
        self._vcr_context = _cassette_class(self).use(
            path=str(self.config.path), persister=_Persister(self), record_mode=VcrMode(self.mode.value),
            match_on=self._matchers(), before_record_request=self._redact_request,
            before_record_response=self._redact_response, allow_playback_repeats=False,
        )
        self._loading = True  # the recordings vcrpy appends as it loads pass the filter
        try:
            self._cassette = self._vcr_context.__enter__()
        finally:
            self._loading = False
        self._index.follow(self._cassette.data)  # keys computed while loading, not on the first call
        self.loaded_count = len(self._cassette.data)
        self.opened = True
        return self

    @property
    def replays_only(self) -> bool:
        """Whether every request must be answered from the cassette (mode ``none``, or ``once`` with a
        cassette on disk): the providers' HTTP clients are then sealed (:mod:`pytest_agentloom._core.offline`)."""
        return self.opened and bool(self._cassette.write_protected)

    def _matchers(self) -> list[Any]:
        return resolve_matchers(self.config.match_on, self.config.ignore)

    def require_cassette(self) -> None:
        """Raise :class:`CassetteNotFoundError` when replay (mode ``none``) has no file to replay."""
        __tracebackhide__ = True
        if self.mode is RecordMode.NONE and not self.exists:
            raise CassetteNotFoundError(self._missing_message(), path=str(self.config.path))

    def _missing_message(self) -> str:
        who = f"Test {self.config.test_id}" if self.config.test_id else "This run"
        root = self.config.root
        context: list[tuple[str, object]] = [
            ("looked for", Path(self.config.path).resolve()),
            ("resolved against", f"{root} (the rootdir)" if root is not None else None),
            ("record mode", f"{self.mode.value} (replay only)"),
        ]
        details = [f"  note: {note}" for note in _rootdir_doubts(root, self.config.path)]
        return render_message(
            f"{who} has no cassette to replay: {self.config.display_path} does not exist.", context,
            details=details,
            hint=f"record it once against live providers (API keys needed), then commit the file:\n"
                 f"  {self.config.how_to_record}\n"
                 "or give the run a provider, e.g. "
                 "agentloom.run(path, provider=agentloom.scripted(step_id='reply text')).",
        )

    def close(self, *, keep: bool = True) -> bool:
        """Write the cassette when this session recorded something (or re-recorded it whole) and ``keep``
        says the recording is good; answer whether the file was written.

        ``keep=False`` (a test that failed while recording, a run that raised) drops the recording: the
        cassette on disk, if any, stays as it was.
        """
        if not self.opened:
            return False
        try:
            written = keep and self.needs_write() and self.write()
        finally:
            self.opened = False
            context, self._vcr_context = self._vcr_context, None
            context.__exit__(None, None, None)  # vcrpy's interception ends (its save goes to our no-op persister)
        return written

    def __enter__(self) -> CassetteSession:
        return self.open()

    def __exit__(self, exc_type: object, *exc_info: object) -> None:
        self.close(keep=exc_type is None)

    def needs_write(self) -> bool:
        """Whether :meth:`close` will write the file: something was recorded, or everything is re-recorded."""
        if not self.opened or self.mode is RecordMode.NONE:
            return False
        if self.mode is RecordMode.ALL:
            return bool(self._cassette.data) or self.exists  # write it, or remove a file nothing needs now
        return bool(self._cassette.dirty)

    def write(self) -> bool:
        """Write every interaction of the cassette, with fresh provenance, atomically; answer whether it did.

        A re-recording whose file would differ from the one on disk only in
        ``recorded_at`` leaves that file untouched, so it shows no diff. A re-recording (mode ``all``) that
        sent no request writes no file and removes the old one (:attr:`removed`): nothing would replay it.
        """
        if not self._cassette.data:  # re-recorded, and no request was sent: a run that needs no cassette
            self.config.path.unlink(missing_ok=True)
            self.removed = True
            return False
        text = self.render(self._unchurned())
        if _same_but_recorded_at(self.config.path, text) and not self._too_old_on_disk():
            return False
        write_atomic(self.config.path, text)
        return True

    def _unchurned(self) -> list[tuple[Any, Any]]:
        """The interactions to write: each one that equals the file's interaction at its place but for
        volatile response fields (:mod:`._response_filters`) is the file's own, so an unchanged answer
        leaves the file unchanged."""
        data = list(self._cassette.data)
        on_disk = self._on_disk()
        if on_disk is None:
            return data
        _, old_requests, old_responses = on_disk
        ignore = (*DEFAULT_RESPONSE_IGNORE, *self.config.response_ignore)
        kept = []
        for position, (request, response) in enumerate(data):
            if position < len(old_requests):
                before = (old_requests[position], old_responses[position])
                if same_but_volatile(interaction_document(*before), interaction_document(request, response), ignore):
                    kept.append(before)
                    continue
            kept.append((request, response))
        return kept

    def _too_old_on_disk(self) -> bool:
        """Whether the file on disk was recorded longer ago than ``max_age`` (or says not when)."""
        if self.config.max_age is None:
            return False
        from ._provenance import parse_time

        on_disk = self._on_disk()
        recorded = parse_time(on_disk[0].recorded_at) if on_disk is not None and on_disk[0] is not None else None
        return recorded is None or (self.config.clock() - recorded).total_seconds() > self.config.max_age

    def _on_disk(self) -> tuple[Provenance | None, list[Any], list[dict[str, Any]]] | None:
        """The cassette as the file holds it before this write (``None``: no file, or one that cannot be read)."""
        if self._loaded is not None:
            return self._loaded
        try:
            return read_cassette(self.config.path)
        except CassetteFormatError:  # a broken file is simply replaced
            return None

    def render(self, data: Sequence[tuple[Any, Any]] | None = None) -> str:
        """The cassette's text as :meth:`write` writes it (redacted), without writing it."""
        data = self._cassette.data if data is None else data
        workflows = dict(self.provenance.workflows) if self.provenance and self.mode is not RecordMode.ALL else {}
        workflows.update(self._workflows)
        provenance = Provenance.now(test=self.config.test_id, record_mode=self.mode.value, workflows=workflows,
                                    clock=lambda: format_time(self.config.clock()))
        text = dumps(provenance, [req for req, _ in data], [resp for _, resp in data])
        return self._http_redactor.text(text)

    # -- what a run tells the session -----------------------------------------------------------------------

    def add_run(self, workflow: Workflow, state: Mapping[str, Any] | None = None) -> None:
        """Note a run: its workflow file (for provenance) and the redacted values of its state (to scrub)."""
        if workflow.source is not None and Path(workflow.source).is_file():
            name = _relative(Path(workflow.source), self.config.root)
            self._workflows[name] = workflow_meaning_hash(workflow.source)
            self._workflow_files[name] = Path(workflow.source)
        from ..engine._format.redaction_patterns import redactor_for

        redactor = redactor_for(workflow, env=self.config.env)
        secrets = redactor.secret_values({**workflow.state, **dict(state or {})})
        keys = set(redactor.api_keys) - set(self._http_redactor.api_keys)  # those api_key_env names
        if (secrets and not set(secrets) <= self._secrets) or keys:
            self._secrets.update(secrets)
            self._scrubber = HttpRedactor(secrets=sorted(self._secrets), marker=redactor.marker,
                                          api_keys=[*self._http_redactor.api_keys, *keys], policy=redactor.policy)

    def redact_text(self, text: str) -> str:
        """``text`` with the secrets and API keys this session knows replaced, as in the cassette file."""
        return self._http_redactor.text(text)

    def stale_workflows(self) -> list[str]:
        """Workflow files run by this test whose hash differs from the one recorded in the cassette."""
        if self.mode is RecordMode.ALL or self.provenance is None:
            return []
        files = self._workflow_files
        return stale_workflows(self.provenance, self._workflows,
                               lambda name: workflow_hash(files[name]) if files[name].is_file() else None)

    def unused(self) -> list[int]:
        """Positions (0-based) of loaded interactions that this session never replayed."""
        if not self.opened and self._cassette is None:
            return []
        counts = self._cassette.play_counts
        return [index for index in range(self.loaded_count) if counts[index] == 0]

    def check_unused(self) -> None:
        """Raise :class:`UnusedInteractionsError` when the replay left recorded interactions unused (not after
        an injected fault: a step it failed, and those after it, leave their recordings unused on purpose)."""
        unused = self.unused()
        if not unused or self.faulted:
            return
        data = self._cassette.data
        lines = []
        for index in unused[:10]:
            req = data[index][0]
            lines.append(f"    #{index + 1} {req.method} {req.parsed_uri.path}{_body_summary(req)}")
        if len(unused) > 10:
            lines.append(f"    ... and {len(unused) - 10} more")
        who = f"Test {self.config.test_id}" if self.config.test_id else "The run"
        raise UnusedInteractionsError(
            render_message(
                f"{who} did not use {len(unused)} of the {self.loaded_count} recorded interactions "
                f"of its cassette: the workflow now calls the model fewer times than when it was recorded.",
                [("cassette", self.config.display_path)],
                hint=f"if the change is intended, re-record the cassette: {self.config.how_to_record}",
                details=["  unused:", *lines],
            ),
            path=str(self.config.path),
        )

    # -- providers ------------------------------------------------------------------------------------------

    def wrap(self, provider: Provider) -> ReplayProvider:
        """``provider`` with every call going through this cassette."""
        return ReplayProvider(provider, self)

    # -- vcrpy hooks ----------------------------------------------------------------------------------------

    def _redact_request(self, request: Request) -> Request | None:
        """The redacted copy of a provider call's ``request`` (``None`` for any other request, which vcrpy
        then lets through: see :meth:`open`); vcrpy asks for it up to three times per request, so the
        last answer is kept for the same request object and scrubber."""
        last = self._last_redacted
        if last is not None and last[0] is request and last[1] is self._http_redactor:
            return last[2]
        redacted = self._http_redactor.request(request) if self._loading or current_call.get() is not None else None
        self._last_redacted = (request, self._http_redactor, redacted)
        return redacted

    def _redact_response(self, response: dict[str, Any]) -> dict[str, Any]:
        try:
            redacted = self._http_redactor.response(response, live=not self._loading)
        except UnrecordableResponseError as exc:  # the SDK may wrap it: the call raises it as it is
            exc.path = str(self.config.path)
            call = current_call.get()
            if call is not None and call.unrecordable is None:
                call.unrecordable = exc
            raise
        return apply_hook(self.config.before_record_response, redacted)

    def _sent(self, request: Request) -> None:
        call = current_call.get()
        if call is not None:
            call.pending.append((request, len(self._cassette.data)))

    def _answered(self, request: Request) -> None:
        call = current_call.get()
        if call is not None:
            call.pending[:] = [item for item in call.pending if item[0] is not request]

    def _record_unanswered(self, call: CallInfo, error: BaseException | None) -> None:
        """Record the requests of ``call`` that got no response, each where it was sent, so that a replay
        fails them the same way (and the retry or fallback that followed replays as it ran live).
        """
        if not call.pending or self._cassette is None or self._cassette.write_protected:
            return
        reason = _NO_RESPONSE_TIMEOUT if _is_timeout(error) else _NO_RESPONSE_DROPPED
        for request, position in reversed(call.pending):
            redacted = self._http_redactor.request(request)
            response = {"status": {"code": NO_RESPONSE_STATUS, "message": reason}, "headers": {},
                        "body": {"string": b""}}
            self._cassette.data.insert(min(position, len(self._cassette.data)), (redacted, response))
            self._cassette.dirty = True
            self._index.invalidate()
        call.pending.clear()

    def not_intercepted(self, request: Any, transport: str) -> RequestNotInterceptedError:
        """The error for a request of a replay that reached the offline ``transport`` (vcrpy did not intercept
        it, so nothing answered it and nothing was sent), kept for the call and the test."""
        call = current_call.get()
        llm = call.request if call is not None else None
        library = transport.partition(".")[0]
        url = request.url
        port = f":{url.port}" if url.port else ""
        which = ("vcrpy 8.4 or later (8.2 is the first that patches httpx2)" if library == "httpx2"
                 else f"a vcrpy that patches {library}")
        through, fix = library, f"install {which}: pip install --upgrade vcrpy. The cassette itself is fine."
        if transport == SOCKET_TRANSPORT:  # the audit hook stopped a client of the provider's own
            through = "a socket (a client vcrpy does not patch)"
            transport = f"{request.event}: refused by the replay's socket guard"
            fix = ("give the provider an HTTP client vcrpy patches (httpx, httpx2, requests, aiohttp, ...); the "
                   "built-in providers' clients are. The cassette itself is fine.")
        else:
            transport = f"{transport}: the offline transport a replay gives the provider's HTTP client"
        error = RequestNotInterceptedError(render_message(
            f"Replay stopped: vcrpy {_vcrpy_version()} did not intercept a request sent through {through}, so "
            "the cassette could not answer it. The request was not sent.",
            [("cassette", f"{self.config.display_path} (record mode {self.mode.value}: replay only)"),
             ("test", self.config.test_id or None),
             ("step", f"'{llm.step_id}' (model {llm.model})" if llm is not None else None),
             ("request", f"{request.method} {url.scheme}://{url.host}{port}{url.path}"),
             ("transport", transport)],
            hint=fix,
        ), path=str(self.config.path))
        self.unsent.append(error)
        if call is not None and call.unsent is None:
            call.unsent = error
        return error

    def _injected(self, request: Request) -> Any:
        """The answer to an injected fault for ``request`` (a matched provider request), or ``None``.

        A status is answered with the provider's error response, a timeout raised as the transport's; a
        reply fault gets the recording (the provider changes it). Either way the recording is not used
        up, so the retry that follows replays it (see :mod:`..providers._faults`).
        """
        pending = pending_fault.get()
        if pending is None or pending.taken:
            return None
        pending.taken = True
        self.faulted = True
        fault = pending.fault
        if fault.kind == "timeout":
            raise _replayed_transport_error(_NO_RESPONSE_TIMEOUT, pending.message())
        if fault.kind == "status" and fault.status is not None:
            return fault_response(request.parsed_uri.path, fault.status, pending.message())
        position = self._cassette._next(request)
        return self._cassette.data[position][1]

    def _unmatched(self, request: Request) -> None:
        """vcrpy found no unused recording for ``request`` in a write-protected mode: build our error."""
        call = current_call.get()
        redacted = self._http_redactor.request(request)
        llm = call.request if call else None
        error: CassetteMismatchError | ToolDriftError = self._mismatch_error(redacted, llm)
        if self.compare_tool_results and isinstance(llm, LLMRequest):
            error = self._tool_drift(redacted, llm) or error
        self.mismatches.append(error)
        if call is not None and call.mismatch is None:
            call.mismatch = error

    def _mismatch_error(self, request: Request, llm: LLMRequest | EmbedRequest | None) -> CassetteMismatchError:
        cassette = self._cassette
        where = []
        if self.config.test_id:
            where.append(f"test {self.config.test_id}")
        if llm is not None:
            where.append(f"step '{llm.step_id}'")
            where.append(f"turn {getattr(llm, 'turn', 1)}")
        used = sum(1 for index in range(len(cassette.data)) if cassette.play_counts[index])
        context: list[tuple[str, object]] = [
            ("cassette", f"{self.config.display_path} (record mode {self.mode.value}; "
                         f"{len(cassette.data)} interactions, {used} used)"),
            ("request", f"{request.method} {request.parsed_uri.path}"
                        + (f" (attempt {llm.attempt}, model {llm.model})" if llm is not None else "")),
            ("matched on", matcher_names(self.config.match_on, self.config.ignore)),
        ]
        details: list[str] = []
        reason = "no_match"
        if not self.exists and not cassette.data:
            reason = "no_cassette"
            headline = (f"No cassette to replay for this request ({', '.join(where) or 'outside a test'}): "
                        f"{self.config.display_path} does not exist.")
            context.insert(1, ("looked for", Path(self.config.path).resolve()))
            hint = (f"record it once against live providers (API keys needed), then commit the file:\n"
                    f"  {self.config.how_to_record}")
        else:
            index, passed, played = self._closest(request)
            headline = f"Cassette has no recorded response for this request ({', '.join(where) or 'no step'})."
            if index is None:
                reason = "empty_cassette" if not cassette.data else "no_match"
                details.append("  the cassette has nothing with the same method and URL path")
            elif passed and played:
                reason = "already_played"
                details.append(
                    f"  interaction #{index + 1} matches it but was already used: the workflow now makes this "
                    "call more times than when it was recorded"
                )
            else:
                recorded = cassette.data[index][0]
                details.append(f"  closest recorded: interaction #{index + 1} "
                               f"({recorded.method} {recorded.parsed_uri.path}); differences (recorded -> now):")
                diff = self._describe_difference(recorded, request)
                details.extend(f"    {line}" for line in diff)
            hint = (f"if the change is intended, re-record this test against live providers:\n"
                    f"  {self.config.how_to_record}")
        message = render_message(headline, context, hint=hint, details=details)
        return CassetteMismatchError(message, reason=reason, path=str(self.config.path),
                                     step_id=llm.step_id if llm else None,
                                     turn=getattr(llm, "turn", 1) if llm else None)

    def _tool_drift(self, request: Request, llm: LLMRequest) -> ToolDriftError | None:
        """The tool whose real result is all that keeps ``request`` from its closest recording, if any."""
        from ._tool_results import tool_drift

        index, passed, _ = self._closest(request)
        if index is None or passed:
            return None
        ignore = self.config.ignore
        return tool_drift(body_data(self._cassette.data[index][0], ignore), body_data(request, ignore),
                          step=llm.step_id, turn=llm.turn,
                          recording=f"{self.config.display_path}, interaction #{index + 1} (the next model turn)",
                          path=str(self.config.path))

    def _closest(self, request: Request) -> tuple[int | None, bool, bool]:
        """The recorded request most like ``request``: (position, fully matches, already played)."""
        from vcr.matchers import get_matchers_results

        matchers = self._matchers()
        best: tuple[int, int, int] | None = None  # (passed matchers, -diff size, -index)
        best_index: int | None = None
        best_full = False
        for index, (stored, _) in enumerate(self._cassette.data):
            passed, failed = get_matchers_results(request, stored, matchers)
            if not passed:
                continue
            played = bool(self._cassette.play_counts[index])
            full = not failed
            ignore = self.config.ignore
            size = 0 if full else body_difference_count(body_data(stored, ignore), body_data(request, ignore))
            key = (len(passed) * 2 + (0 if played and full else 1), -size, -index)
            if best is None or key > best:
                best, best_index, best_full = key, index, full
        if best_index is None:
            return None, False, False
        return best_index, best_full, bool(self._cassette.play_counts[best_index])

    def _describe_difference(self, recorded: Request, request: Request) -> list[str]:
        lines = []
        if recorded.method.upper() != request.method.upper():
            lines.append(f"method: {recorded.method} -> {request.method}")
        if recorded.parsed_uri.path != request.parsed_uri.path or recorded.parsed_uri.query != request.parsed_uri.query:
            lines.append(f"url: {recorded.parsed_uri.path}?{recorded.parsed_uri.query} -> "
                         f"{request.parsed_uri.path}?{request.parsed_uri.query}")
        ignore = self.config.ignore
        lines.extend(body_diff(body_data(recorded, ignore), body_data(request, ignore)))
        from vcr.matchers import get_matchers_results

        _, failed = get_matchers_results(request, recorded, self._matchers())
        lines += [f"matcher '{name}': {reason}" for name, reason in failed if name not in ("method", "url", "body")]
        return lines or ["(no difference in method, URL or body: compare the headers of the recording)"]


def _vcrpy_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("vcrpy")
    except metadata.PackageNotFoundError:  # pragma: no cover - vcr importable without its metadata
        import vcr

        return str(getattr(vcr, "__version__", "(version unknown)"))


def _rootdir_doubts(root: Path | None, path: Path) -> list[str]:
    """Why the rootdir may be the wrong one: cassettes are found relative to it, and pytest picks it from
    the first ini file (or the common folder of the arguments) it finds.
    """
    if root is None:
        return []
    notes = []
    if not any((root / name).is_file() for name in ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")):
        notes.append(f"{root} holds no pytest.ini, pyproject.toml, tox.ini or setup.cfg, so pytest may have "
                     "guessed the rootdir: run pytest from the project's folder or pass --rootdir")
    cwd = Path.cwd().resolve()
    try:
        relative = Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return notes
    if cwd != root.resolve() and (cwd / relative).is_file():
        notes.append(f"the file exists under the current directory instead: {cwd / relative} "
                     f"(run pytest with --rootdir={cwd})")
    return notes


_RECORDED_AT = re.compile(r"^  recorded_at: .*$", re.MULTILINE)


def _same_but_recorded_at(path: Path, text: str) -> bool:
    """Whether the file at ``path`` holds ``text`` but for the provenance's ``recorded_at`` line."""
    try:
        existing = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return _RECORDED_AT.sub("", existing, count=1) == _RECORDED_AT.sub("", text, count=1)


def _body_summary(request: Any) -> str:
    data = body_data(request)
    if isinstance(data, dict):
        model = data.get("model")
        messages = data.get("messages") or data.get("contents") or []
        last = messages[-1] if isinstance(messages, list) and messages else None
        content = last.get("content") if isinstance(last, dict) else None
        if isinstance(content, list):
            content = next((part.get("text") for part in content if isinstance(part, dict) and "text" in part), None)
        text = f" model={model}" if model else ""
        if isinstance(content, str):
            short = content if len(content) <= 60 else content[:57] + "..."
            text += f" last message={short!r}"
        return text
    return ""


class ReplayProvider:
    """A provider whose calls go through a :class:`CassetteSession`.

    It opens the session (vcrpy's interception is then in place until the session
    closes), sets :data:`current_call` for the HTTP layer (only the requests of a
    call are played or recorded), and turns a request the cassette cannot answer into
    a :class:`~pytest_agentloom.errors.CassetteMismatchError` however the SDK wrapped it.
    """

    def __init__(self, inner: Provider, session: CassetteSession) -> None:
        if not callable(getattr(inner, "complete", None)):
            raise bad_argument("ReplayProvider()", "inner", inner,
                               "a provider (an object with an async complete(request) method), e.g. OpenAIProvider()")
        if not isinstance(session, CassetteSession):
            raise bad_argument("ReplayProvider()", "session", session, "a CassetteSession (open or not yet opened)")
        self.inner = inner
        self.session = session
        self.name = getattr(inner, "name", "replay")
        self._noted: RunningWorkflow | None = None  # the last run whose redacted values the session was told

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return await self._call(request, lambda: self.inner.complete(request))

    def _note_run(self) -> None:
        """Tell the session about the run this call belongs to, once per run, so its redacted values are
        scrubbed from the recording whoever built the session (see :mod:`...engine._entry.running`)."""
        running = running_workflow.get()
        if running is not None and running is not self._noted:
            self._noted = running  # each run sets a value of its own: the next run is noted again
            self.session.add_run(running.workflow, running.state)

    async def embed(self, request: EmbedRequest) -> EmbedResponse:
        """An ``embed`` step's call, recorded and replayed like a chat call (the engine refuses it if inner can't)."""
        inner: Any = self.inner
        if not callable(getattr(inner, "embed", None)):
            from ..errors import ErrorCode, StepError

            raise StepError(render_message(f"embed '{request.step_id}': provider {self.name} cannot embed.",
                                           hint="use a "
                                                "provider with embeddings (openai, google, ollama).",
                                                inline=True), code=ErrorCode.EMBED_UNSUPPORTED)
        return await self._call(request, lambda: inner.embed(request))

    async def _call(self, request: LLMRequest | EmbedRequest, send: Callable[[], Awaitable[R]]) -> R:
        self.session.open()
        self._note_run()
        call = CallInfo(request)
        token = current_call.set(call)
        sealed = enter_seal(self.session.seal) if self.session.replays_only else None  # no request may leave
        try:
            response = await send()
        except Exception as exc:
            if call.unrecordable is not None:
                raise call.unrecordable from exc
            if call.unsent is not None:
                raise call.unsent from exc
            if call.mismatch is not None:
                raise call.mismatch from exc
            self.session._record_unanswered(call, exc)
            raise
        else:
            self.session._record_unanswered(call, None)  # a fallback answered after a provider failed
        finally:
            if sealed is not None:
                leave_seal(sealed)
            current_call.reset(token)
        if call.unrecordable is not None:  # a fallback answered, but a response of the call was not recorded
            raise call.unrecordable
        if call.unsent is not None:  # a fallback answered, but a request of the call was not intercepted
            raise call.unsent
        if call.mismatch is not None:  # a fallback answered, but the replay already went off the recording
            raise call.mismatch
        return response


def cassette_name(parts: Sequence[str]) -> str:
    """A file-name-safe cassette name from node id parts (``TestX``, ``test_y[param]``), one-to-one: a
    name whose characters had to be replaced gets a short hash, so ``x/y``, ``x_y`` and ``x:y`` differ.
    """
    name = ".".join(parts)
    return one_to_one_name(name, re.sub(r"[\\/:*?\"<>|\x00-\x1f]", "_", name))
