"""Every error pytest-agentloom raises, in one place, and the one list of their codes.

::

    AgentloomError                         base of every public error; ``code`` says which (ErrorCode)
    ├── DefinitionError                    something written before the run is invalid (found before it runs)
    │   ├── WorkflowError (ValueError)     a workflow file is invalid: file, step, field, all problems at once
    │   ├── ScenarioTableError (ValueError)  a scenario table is invalid: file, row, field
    │   ├── MarkerError (ValueError)       an agentloom marker has an argument it does not take
    │   ├── FileNameClashError             two tests would write one snapshot, cassette or tool tape file
    │   ├── CheckpointError (ValueError)   a checkpoint cannot be found, read or resumed
    │   ├── ExpressionSyntaxError (ValueError)  a router expression does not compile (found at load time)
    │   ├── ScriptDataError (ValueError)   a scripted reply written as data has no reply's form
    │   └── UnreadDecisionWarning (UserWarning)  an approval gate's decision is read by no router
    ├── DataFileError                      a file read from disk is not data we accept
    │   ├── DataReadError (ValueError)     unreadable, too big, or data we refuse (file, line)
    │   │   ├── YamlReadError              YAML we refuse: duplicate keys, alias bombs, too deep, invalid
    │   │   └── JsonReadError              JSON we refuse: duplicate keys, too deep, invalid
    │   └── ArtifactError (ValueError)     a saved file (snapshot, tool tape, salt) is corrupted: file, fix
    ├── RunError                           something failed while a workflow ran
    │   ├── StepError                      a step failed; ``retryable`` tells the retry loop
    │   │   ├── TemplateError              a template cannot be rendered
    │   │   ├── ToolError                  a tool step's tool is missing or raised
    │   │   │   └── SandboxRefusal         a built-in tool's call broke a config.sandbox rule
    │   │   ├── OutputPathError            a step's output cannot be written to its state path
    │   │   ├── AgentStopped               an agent loop stopped for a reason that fails its step
    │   │   └── ModelRefused               the model refused to answer (``finish_reason: refusal``): never retried
    │   ├── ProviderError                  a model call failed; ``status`` is the HTTP status, if any
    │   │   ├── ProviderConfigError        no API key, base URL or loadable credentials: never retried
    │   │   ├── UnusableResponseError      the provider answered, but the SDK refused the answer: never retried
    │   │   ├── MidStreamError             a stream broke after its first chunk: no fallback to another provider
    │   │   └── AttachmentRefused          a provider cannot take an attachment; nothing was sent
    │   ├── ScriptError                    a scripted provider has no reply for a request: never retried
    │   ├── EvaluationError (ValueError)   a router expression failed on the state it was given
    │   │   └── ExpressionBudgetError      it would take more operations than a condition may spend
    │   └── MissingTemplateKeyWarning (UserWarning)  a placeholder rendered empty: its state key is missing
    ├── ReplayError                        a cassette or tool tape cannot be used as asked (``path``)
    │   ├── CassetteNotFoundError          replay needs a cassette the test does not have yet
    │   ├── CassetteExpiredError           the cassette is older than its max age, and on_expiry says fail
    │   ├── CassetteFormatError            the cassette is unreadable, or of a format_version we don't know
    │   ├── CassetteMismatchError          a request the cassette has no unused recording for: fails the step
    │   │                                  like a StepError (``retryable`` is false; see STEP_FAILURES)
    │   ├── RecordingRefusedError          recording asked for under CI=true, but not on the command line
    │   │   └── LiveRefusedError           --agentloom-live under CI=true, but not on the command line
    │   ├── UnusedInteractionsError (AssertionError)  the replay left recorded interactions unused
    │   ├── RequestNotInterceptedError     vcrpy did not intercept a replayed request: stopped, nothing sent
    │   ├── UnrecordableResponseError      a live response cannot be recorded: too large once decompressed, or
    │   │                                  of an encoding that cannot be decoded to be scrubbed
    │   ├── ToolReplayMissError            a tool with side effects was called with arguments the tape lacks
    │   └── ToolDriftError                 a tool run for real over a replay returned something else than recorded
    ├── OutcomeError                       a test's outcome is wrong or cannot be judged
    │   ├── UnusedRepliesError (AssertionError)  a test ended with scripted replies nobody asked for
    │   ├── JudgeError                     agentloom.judge() got no verdict: a malformed answer, a failed call
    │   ├── VerdictStaleError (AssertionError)  a recorded verdict judged another text, rubric or model
    │   └── DriftError                     a drift check cannot run as asked, or a live provider gave no answer
    └── UsageError (TypeError)             the Python API was called with arguments it cannot use

Every class keeps the built-in bases shown, so ``except ValueError`` (or ``TypeError``, ``AssertionError``)
clauses written before the branches existed keep working. The branches add no codes of their own.

Three exceptions are internal signals, never raised to users, and stay private
to their modules: ``cli._Usage`` (a command-line mistake, printed with exit
status 2), ``providers._http.HTTPStatusFailure`` (an error status inside
``http_errors``, which turns it into a :class:`ProviderError` on the spot) and
``_core.yaml_io._NeedsNodes`` (a document the reader builds from a node tree
instead, caught in the same module).

Messages have one shape, written by :func:`render_message`: a headline saying
what failed, context lines (``  file: ...``, ``  step: ...``), then a line
starting ``How to fix:`` when there is one. Each error carries a ``code`` that
programs and tests can match on, and :class:`ErrorCode` lists every code the
package produces; a failed or skipped step's ``StepResult.error_code`` is one
of them.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [  # noqa: RUF022  (plain sorted order, as tests/test_public_api.py keeps every __all__)
    "AgentStopped",
    "AgentloomError",
    "ArtifactError",
    "AttachmentRefused",
    "CassetteExpiredError",
    "CassetteFormatError",
    "CassetteMismatchError",
    "CassetteNotFoundError",
    "CheckpointError",
    "DataFileError",
    "DataReadError",
    "DefinitionError",
    "DriftError",
    "ErrorCode",
    "EvaluationError",
    "ExpressionBudgetError",
    "ExpressionSyntaxError",
    "FileNameClashError",
    "HINT_PREFIX",
    "JsonReadError",
    "JudgeError",
    "LiveRefusedError",
    "MarkerError",
    "MidStreamError",
    "MissingTemplateKeyWarning",
    "ModelRefused",
    "OutcomeError",
    "OutputPathError",
    "ProviderConfigError",
    "ProviderError",
    "RecordingRefusedError",
    "ReplayError",
    "RequestNotInterceptedError",
    "RunError",
    "STEP_FAILURES",
    "SandboxRefusal",
    "ScenarioTableError",
    "ScriptDataError",
    "ScriptError",
    "StepError",
    "TemplateError",
    "ToolDriftError",
    "ToolError",
    "ToolReplayMissError",
    "UnreadDecisionWarning",
    "UnrecordableResponseError",
    "UnusableResponseError",
    "UnusedInteractionsError",
    "UnusedRepliesError",
    "UsageError",
    "VerdictStaleError",
    "WorkflowError",
    "YamlReadError",
    "render_message",
]


class ErrorCode(enum.StrEnum):
    """Every ``code`` the package produces: on an error, a step result's ``error_code``, a trace event.

    The "Error codes" table of docs/errors.md lists the same members (a test compares them), and a test fails
    on a ``code="..."`` literal anywhere in the package that is not here. Your own ``StepError``
    subclasses (a tool's error) may carry codes of their own.
    """

    # -- any error
    ERROR = "error"  # an AgentloomError that has no more specific code
    USAGE_ERROR = "usage_error"  # the Python API was called with arguments it cannot use

    # -- before anything runs
    INVALID_WORKFLOW = "invalid_workflow"  # a workflow file does not load
    INVALID_SCENARIO_TABLE = "invalid_scenario_table"  # a scenario table does not load
    INVALID_MARKER = "invalid_marker"  # an agentloom marker has an argument it does not take
    FILE_NAME_CLASH = "file_name_clash"  # two tests would write the same snapshot, cassette or tool tape file
    INVALID_EXPRESSION = "invalid_expression"  # a router expression does not compile
    CHECKPOINT_ERROR = "checkpoint_error"  # a checkpoint cannot be found, read or resumed
    INVALID_SCRIPT = "invalid_script"  # a scripted reply (in Scripted(), --script, a scenario row) has no reply's form
    UNREADABLE_FILE = "unreadable_file"  # a file is not a regular UTF-8 file under the size cap
    INVALID_YAML = "invalid_yaml"  # a file is not readable YAML, or YAML we refuse (duplicate keys, alias bombs)
    INVALID_JSON_DATA = "invalid_json_data"  # a JSON file or value is invalid, has a duplicate key or is too deep
    CORRUPTED_FILE = "corrupted_file"  # a saved file (snapshot, tool tape, salt) cannot be used as it is
    UNREAD_DECISION = "unread_decision"  # an approval gate's decision is read by no router (a warning)

    # -- a step that failed: any step
    STEP_ERROR = "step_error"  # a StepError that has no more specific code
    TIMEOUT = "timeout"  # a step attempt passed its timeout (retried); or, on a skipped step, the run's timeout
    TEMPLATE_ERROR = "template_error"  # a template has broken braces or a format spec that does not fit
    MISSING_TEMPLATE_KEY = "missing_template_key"  # a {state.x} placeholder rendered empty (fails a test's run)
    MISSING_STATE_KEY = "missing_state_key"  # a tool argument 'state.x' names a key the state lacks
    OUTPUT_PATH = "output_path"  # a step's output cannot be written to its state path

    # -- llm_call, embed and agent steps
    NO_PROMPT = "no_prompt"  # an llm_call has neither a prompt nor a conversation
    NO_MODEL = "no_model"  # no model on the step, the agent or config
    NO_PROVIDER = "no_provider"  # the run was given no provider
    UNKNOWN_PARAMETER = "unknown_parameter"  # params holds a name no provider adapter knows
    INVALID_RESPONSE_SCHEMA = "invalid_response_schema"  # response_schema cannot be used (import, shape)
    INVALID_OUTPUT = "invalid_output"  # no reply fit response_schema after the re-asks (agents: output_schema)
    CONVERSATION_INVALID = "conversation_invalid"  # the conversation in the state is malformed
    CONVERSATION_BUDGET = "conversation_budget"  # the new user turn alone is over the conversation's budget
    CONVERSATION_NO_USER_TURN = "conversation_no_user_turn"  # no prompt and the conversation has no turn to answer
    ATTACHMENT_INVALID = "attachment_invalid"  # an attachment cannot be read, decoded or typed
    ATTACHMENT_REFUSED = "attachment_refused"  # the sandbox refused an attachment's path or URL
    ATTACHMENT_UNSUPPORTED = "attachment_unsupported"  # no provider for the model can take the attachment
    BAD_INPUT = "bad_input"  # an embed step's inputs are not a state path or not text
    MISSING_INPUT = "missing_input"  # an embed step's inputs point at nothing
    EMBED_UNSUPPORTED = "embed_unsupported"  # the provider has no embeddings API
    UNKNOWN_AGENT = "unknown_agent"  # an agent step names an agent the workflow does not define

    # -- tools
    UNKNOWN_TOOL = "unknown_tool"  # a step or an agent names a tool that is not registered (an agent's: before the run)
    TOOL_ERROR = "tool_error"  # a tool raised
    SANDBOX_REFUSED = "sandbox_refused"  # a built-in tool's call broke a config.sandbox rule
    OUTPUT_LIMIT = "output_limit"  # shell_command's output passed its byte cap: the command was stopped

    # -- routers, subworkflows, approval gates
    ROUTER_NO_MATCH = "router_no_match"  # no condition matched and the router has no default
    EXPRESSION_ERROR = "expression_error"  # a router expression failed on the state
    EXPRESSION_BUDGET = "expression_budget"  # a router expression would take more operations than its budget
    MISSING_RETURN_KEY = "missing_return_key"  # a child workflow did not write a key of return_keys
    APPROVAL_TIMEOUT = "approval_timeout"  # no decision came within the gate's timeout_seconds
    APPROVAL_DECISION = "approval_decision"  # a decision other than approved, rejected or cancelled
    WEBHOOK_FAILED = "webhook_failed"  # the gate's webhook could not be posted, or answered an error
    WEBHOOK_REFUSED = "webhook_refused"  # the webhook URL is not http(s) or is an internal address

    # -- providers
    PROVIDER_ERROR = "provider_error"  # a model call failed (an HTTP status, a timeout, a dropped connection)
    PROVIDER_STREAM_ERROR = "provider_stream_error"  # a stream broke after its first chunk
    PROVIDER_CRASHED = "provider_crashed"  # a provider raised something that is not a provider error (a bug)
    MISSING_CREDENTIALS = "missing_credentials"  # a provider has no API key or base URL, or cannot load credentials
    PROVIDER_MISCONFIGURED = "provider_misconfigured"  # the SDK refused the call for its settings (client side)
    UNUSABLE_RESPONSE = "unusable_response"  # the SDK refused what the provider sent
    OUTPUT_TRUNCATED = "output_truncated"  # the reply was cut at the token limit before the SDK could parse it
    CONTENT_FILTERED = "content_filtered"  # the provider's content filter stopped the reply
    REFUSED = "refused"  # the model refused to answer (a refusal part or stop reason), and the step says to fail
    UNKNOWN_PROVIDER = "unknown_provider"  # config.provider names a provider the gateway does not have
    NO_ROUTE = "no_route"  # no gateway route matches the model
    FALLBACKS_EXHAUSTED = "fallbacks_exhausted"  # a call and every fallback it was allowed failed
    SCRIPT_EXHAUSTED = "script_exhausted"  # a scripted provider has no reply for the request
    UNUSED_REPLIES = "unused_replies"  # a test ended with scripted replies that no request used

    # -- record and replay
    REPLAY_ERROR = "replay_error"  # a ReplayError that has no more specific code
    CASSETTE_NOT_FOUND = "cassette_not_found"  # replay needs a cassette that does not exist
    CASSETTE_EXPIRED = "cassette_expired"  # the cassette is older than its max age (on_expiry: fail)
    CASSETTE_FORMAT = "cassette_format"  # the cassette file is unreadable or of an unknown format_version
    CASSETTE_MISMATCH = "cassette_mismatch"  # a request the cassette has no unused recording for
    RECORDING_REFUSED = "recording_refused"  # recording under CI=true without the flag on the command line
    LIVE_REFUSED = "live_refused"  # --agentloom-live under CI=true without the flag on the command line
    UNUSED_INTERACTIONS = "unused_interactions"  # the replay left recorded interactions unused
    REQUEST_NOT_INTERCEPTED = "request_not_intercepted"  # vcrpy did not intercept a replayed request (not sent)
    RESPONSE_UNRECORDABLE = "response_unrecordable"  # a live response too large to record, or not decodable
    TOOL_REPLAY_MISS = "tool_replay_miss"  # a tool with side effects was called with arguments the tape lacks
    TOOL_DRIFT = "tool_drift"  # a tool run for real over a replay returned something else than its recording

    # -- judged assertions (agentloom.judge)
    INVALID_JUDGE_ANSWER = "invalid_judge_answer"  # the judge's answer is not a score and a reason
    JUDGE_FAILED = "judge_failed"  # the judge's model call failed (provider error, cassette mismatch, no reply)
    VERDICT_STALE = "verdict_stale"  # the recorded verdict judged another text, rubric or model: re-record it

    # -- the drift check (--agentloom-drift, agentloom drift)
    DRIFT_NOTHING_TO_COMPARE = "drift_nothing_to_compare"  # no selected test has a committed cassette
    DRIFT_FOLDER_REFUSED = "drift_folder_refused"  # the scratch folder could cost a committed file
    DRIFT_ADOPT_REFUSED = "drift_adopt_refused"  # a drift check's live files cannot be adopted as asked
    LIVE_PROVIDER_UNAVAILABLE = "live_provider_unavailable"  # a live model call got no answer: key, host, status

    # -- skipped steps (StepResult.error_code of a step that did not run)
    NOT_CHOSEN = "not_chosen"  # no router that ran chose the step
    DEPENDENCY_FAILED = "dependency_failed"  # a step it depends on failed
    DEPENDENCIES_SKIPPED = "dependencies_skipped"  # every step it depends on was skipped
    RUN_FAILED = "run_failed"  # the run stopped after another step failed
    BUDGET_EXCEEDED = "budget_exceeded"  # the run stopped at config.budget_usd

    # -- agent stops that fail the step (also the step's finish_reason)
    STEP_BUDGET = "step_budget"  # max_steps model calls were used
    TIME_BUDGET = "time_budget"  # max_seconds passed
    COST_BUDGET = "cost_budget"  # the next call could pass max_cost_usd
    REPEATED_CALL = "repeated_call"  # the same tool with the same arguments again (also a check code)
    STUCK = "stuck"  # max_stuck steps in a row without a successful tool run or answer
    DENIED = "denied"  # a person rejected a call that needed approval
    CANCELLED = "cancelled"  # the run was cancelled while a call waited for approval (cancels the run)

    # -- agent checks and tool runs (the ``code`` of agent_check and tool_call trace events)
    OK = "ok"  # the check passed, or the tool ran: the one code that is not a failure
    NOT_ALLOWED = "not_allowed"  # the tool is outside the agent's allowlist, or does not exist
    INVALID_JSON = "invalid_json"  # a call's arguments are not a JSON object
    INVALID_ARGUMENTS = "invalid_arguments"  # a call's arguments do not fit the tool's parameters
    NEEDS_APPROVAL = "needs_approval"  # the tool is in approval_required: the run pauses
    EMPTY_ANSWER = "empty_answer"  # the reply has neither tool calls nor an answer
    UNSUPPORTED_ANSWER = "unsupported_answer"  # an answer before any successful tool run (require_evidence)


def render_message(headline: str, context: Sequence[tuple[str, object]] = (), hint: str | None = None,
                   details: Sequence[str] = (), *, inline: bool = False) -> str:
    """Headline, ``  name: value`` context lines, indented details, then ``How to fix:``.

    ``inline`` puts the hint at the end of the last line, after a space: for messages kept on one line
    (a step's error in a results table, a tool result the model reads, a lint finding).
    """
    lines = [headline]
    lines.extend(f"  {name}: {value}" for name, value in context if value is not None and value != "")
    lines.extend(details)
    if hint:
        if inline:
            lines[-1] = f"{lines[-1]} {HINT_PREFIX} {hint}"
        else:
            lines.append(f"{HINT_PREFIX} {hint}")
    return "\n".join(lines)


HINT_PREFIX = "How to fix:"
"""What starts the hint in every message; code that reads a message back (the judge, the drift check) uses it."""


# -- the base --------------------------------------------------------------------------------------------------


class AgentloomError(Exception):
    """Base class of every error pytest-agentloom raises; ``except AgentloomError`` catches them all."""

    code: str = ErrorCode.ERROR.value

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A class body says ``code = ErrorCode.X``; keep the plain string, since YAML's safe dumper
        # (snapshots, tool tapes, checkpoints) refuses str subclasses such as enum members.
        super().__init_subclass__(**kwargs)
        if isinstance(cls.__dict__.get("code"), ErrorCode):
            cls.code = cls.__dict__["code"].value


# -- the branches: catch one to catch a kind of failure --------------------------------------------------------


class DefinitionError(AgentloomError):
    """Something written before the run is invalid: a workflow, a table, a marker, a checkpoint, a script.

    Found before (or instead of) running: a workflow file, a scenario table, an ``agentloom`` marker, a
    router expression's syntax, a checkpoint file, a scripted reply written as data.
    """


class DataFileError(AgentloomError):
    """A file read from disk is not data we accept: YAML, JSON, or a file the package wrote earlier."""


class RunError(AgentloomError):
    """Something failed while a workflow ran: a step, a tool, a template, a provider, an expression's value."""


class OutcomeError(AgentloomError):
    """A test's outcome is wrong or cannot be judged: unused replies, a stale or missing verdict, drift."""


# -- before anything runs --------------------------------------------------------------------------------------


class WorkflowError(DefinitionError, ValueError):
    """A workflow file is invalid; raised by the loader before anything runs."""

    code: str = ErrorCode.INVALID_WORKFLOW

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        step_id: str | None = None,
        field: str | None = None,
        hint: str | None = None,
        problems: list[WorkflowError] | None = None,
        line: int | None = None,
    ) -> None:
        self.headline = message
        self.file = file
        self.step_id = step_id
        self.field = field
        self.hint = hint
        self.problems = problems or []
        self.line = line
        super().__init__(self._render())

    def at_line(self, line: int | None) -> None:
        """Name the line of the file the problem was written on (found after the fact: see the loader)."""
        if line is not None and self.file is not None:
            self.line = line
            self.args = (self._render(),)

    def _render(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else self.file
        return render_message(self.headline, [("file", where), ("step", self.step_id), ("field", self.field)],
                              hint=self.hint)


class ScenarioTableError(DefinitionError, ValueError):
    """A scenario table cannot be used; names the file (and line), the row and the field, at collection."""

    code: str = ErrorCode.INVALID_SCENARIO_TABLE

    def __init__(self, message: str, *, file: Path, row: str | None = None, field: str | None = None,
                 line: int | None = None, hint: str | None = None) -> None:
        self.file, self.row, self.field, self.line = file, row, field, line
        where = f"{file}:{line}" if line else str(file)
        super().__init__(render_message(f"Invalid scenario table: {message}",
                                        [("file", where), ("row", row), ("field", field)], hint=hint))


class MarkerError(DefinitionError, ValueError):
    """An ``agentloom`` marker has an argument it does not take; fails the test that carries it."""

    code: str = ErrorCode.INVALID_MARKER


class UnreadDecisionWarning(DefinitionError, UserWarning):
    """An approval gate's decision is read by no router condition, so a rejected run goes on as an approved one.

    Warned when the workflow loads (and listed by ``agentloom validate``); ``-W
    error::pytest_agentloom.UnreadDecisionWarning`` makes it fail the test that loads the file.
    """

    code: str = ErrorCode.UNREAD_DECISION


class FileNameClashError(DefinitionError):
    """Two tests would write the same snapshot, cassette or tool tape file; neither may overwrite the other."""

    code: str = ErrorCode.FILE_NAME_CLASH


class UsageError(AgentloomError, TypeError):
    """The Python API was called with arguments it cannot use."""

    code: str = ErrorCode.USAGE_ERROR


class CheckpointError(DefinitionError, ValueError):
    """A checkpoint cannot be found, read, or resumed."""

    code: str = ErrorCode.CHECKPOINT_ERROR


class ExpressionSyntaxError(DefinitionError, ValueError):
    """An expression cannot be compiled: bad Python syntax or a construct outside the allowlist.

    Raised at load time so a broken router is reported before any step runs.
    ``column`` is 1-based (``None`` when Python did not say).
    """

    code: str = ErrorCode.INVALID_EXPRESSION

    def __init__(self, message: str, *, expression: str, column: int | None = None) -> None:
        super().__init__(message)
        self.expression = expression
        self.column = column


class EvaluationError(RunError, ValueError):
    """A valid expression failed on the state it was given (e.g. ``None < 1``)."""

    code: str = ErrorCode.EXPRESSION_ERROR

    def __init__(self, expression: str, detail: str) -> None:
        super().__init__(f"router expression {expression!r} could not be evaluated: {detail}")
        self.expression = expression
        self.detail = detail


class ExpressionBudgetError(EvaluationError):
    """A router expression would do more work than a condition may (comparing huge values, say).

    The work is counted in operations (items visited), not timed, so the answer is the same on any
    machine; ``budget`` is the limit it passed.
    """

    code: str = ErrorCode.EXPRESSION_BUDGET

    def __init__(self, expression: str, budget: int) -> None:
        super().__init__(expression, f"it needs more than {budget:,} operations (items compared, "
                                     "scanned or built), the most one condition may spend")
        self.budget = budget


class ScriptDataError(DefinitionError, ValueError):
    """A scripted reply written as data has a form no reply has; ``where`` says which, ``hint`` the fix.

    Raised by ``Scripted.from_data`` for ``agentloom run --script`` files and scenario tables alike.
    """

    code: str = ErrorCode.INVALID_SCRIPT

    def __init__(self, message: str, *, where: str, hint: str | None = None) -> None:
        self.headline = message
        self.where = where
        self.hint = hint
        super().__init__(render_message(f"{where}: {message}.", hint=hint, inline=True) if hint
                         else f"{where}: {message}")


class DataReadError(DataFileError, ValueError):
    """A file we read is not data we accept; names the file and, when known, the line and column.

    ``problem`` is the bare description and ``where`` the ``file:line:column`` text, so a caller with an error
    of its own (a workflow, a scenario table, a cassette) can wrap it.
    """

    code: str = ErrorCode.UNREADABLE_FILE

    def __init__(self, problem: str, *, file: str, line: int | None = None, column: int | None = None,
                 hint: str | None = None) -> None:
        self.problem, self.file, self.line, self.column, self.hint = problem, file, line, column, hint
        self.where = file + (f":{line}" if line else "") + (f":{column}" if line and column else "")
        super().__init__(render_message(f"Cannot read {file}: {problem}", [("line", line)], hint=hint))

    @property
    def at_line(self) -> str:
        """`` at line N, column M`` (or nothing), for messages that name the file elsewhere."""
        if self.line is None:
            return ""
        return f" at line {self.line}" + (f", column {self.column}" if self.column else "")


class ArtifactError(DataFileError, ValueError):
    """A file the package wrote earlier (a snapshot, a tool tape, the salt) cannot be used as it is now.

    Names the file, what is wrong and how to fix it; the file is left as it is.
    """

    code: str = ErrorCode.CORRUPTED_FILE

    def __init__(self, what: str, problem: str, *, file: str, hint: str) -> None:
        self.file, self.problem, self.hint = file, problem, hint
        super().__init__(render_message(f"{what} {file} cannot be used: {problem}", hint=hint))


class YamlReadError(DataReadError):
    """YAML we refuse: invalid syntax, a duplicate key, an alias bomb, nesting too deep.

    Raised by :mod:`pytest_agentloom._core.yaml_io`, the one reader of YAML in the package.
    """

    code: str = ErrorCode.INVALID_YAML


class JsonReadError(DataReadError):
    """JSON we refuse: invalid syntax, a duplicate key, nesting too deep, a number too long to read.

    Raised by :mod:`pytest_agentloom._core.json_io`.
    """

    code: str = ErrorCode.INVALID_JSON_DATA


# -- while a step runs -----------------------------------------------------------------------------------------


class StepError(RunError):
    """A step failed at run time. ``retryable`` tells the retry loop what to do."""

    code: str = ErrorCode.STEP_ERROR

    def __init__(self, message: str, *, code: str | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        if code is not None:
            self.code = str(code)  # a plain string, as the class attributes are (see AgentloomError)
        self.retryable = retryable


class TemplateError(StepError):
    """A template has broken braces or a format spec that does not fit its value."""

    code: str = ErrorCode.TEMPLATE_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


class ToolError(StepError):
    """A tool step could not run its tool, or the tool raised."""

    code: str = ErrorCode.TOOL_ERROR


class SandboxRefusal(ToolError):
    """A built-in tool's call broke a sandbox rule; ``rule`` is the ``config.sandbox`` setting."""

    code: str = ErrorCode.SANDBOX_REFUSED

    def __init__(self, tool: str, rule: str, why: str, fix: str) -> None:
        self.tool = tool
        self.rule = rule
        super().__init__(render_message(f"sandbox refused {tool}: rule '{rule}': {why}.", hint=fix, inline=True),
                         code=self.code)


class OutputPathError(StepError):
    """A step output could not be written; retrying the step would hit the same wall."""

    code: str = ErrorCode.OUTPUT_PATH

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write output '{path}': {reason}", code=self.code, retryable=False)


class _TokenCounts(Protocol):
    """The token counts an error carries: a :class:`pytest_agentloom.providers.Usage`, named here by its fields
    because this module is the bottom layer and imports nothing of the package."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def reasoning_tokens(self) -> int: ...


class AgentStopped(StepError):
    """An agent loop stopped for a reason that fails its step; ``finish_reason`` is that reason.

    Carries what the loop spent before it stopped, so the failed step still reports tokens and cost.
    """

    def __init__(self, message: str, *, reason: str, usage: _TokenCounts, cost_usd: float) -> None:
        super().__init__(message, code=reason, retryable=False)
        self.finish_reason = reason
        self.usage = usage
        self.cost_usd = cost_usd


class ModelRefused(StepError):
    """The model refused the request (OpenAI's ``refusal``, Anthropic's ``stop_reason: refusal``).

    A refusal is an answer, not a failure of the call: the same request would be refused again, so it is
    never retried, and with ``response_schema`` it is never re-asked. ``refusal`` is the model's text;
    ``finish_reason`` is always ``refusal``. Carries what the refused call spent.
    """

    code: str = ErrorCode.REFUSED

    def __init__(self, message: str, *, refusal: str, usage: _TokenCounts, cost_usd: float) -> None:
        super().__init__(message, retryable=False)
        self.refusal = refusal
        self.finish_reason = "refusal"
        self.usage = usage
        self.cost_usd = cost_usd


# -- providers -------------------------------------------------------------------------------------------------


class ProviderError(RunError):
    """A model call failed. ``status`` is the HTTP status, if any.

    ``retryable`` is what the kind of failure says about a retry. ``None`` (the
    default) leaves it to the status, per the step's retry table: no status (a
    dropped connection, a timeout) is retried; a status is retried when
    ``retryable_status_codes`` lists it. ``False`` means the same request would
    fail the same way: never retried, and no reason for the gateway to try
    another provider.
    """

    code: str = ErrorCode.PROVIDER_ERROR
    retryable: bool | None = None

    def __init__(self, message: str, *, status: int | None = None, provider: str | None = None,
                 code: str | None = None) -> None:
        self.status = status
        self.provider = provider
        self.message = message
        if code is not None:
            self.code = str(code)
        super().__init__(self._text())

    def _text(self) -> str:
        label = f"HTTP {self.status}" if self.status is not None else "no status"
        return f"provider error ({label}): {self.message}" if self.message else f"provider error ({label})"


class ProviderConfigError(ProviderError):
    """A provider lacks what it needs to send anything: an API key, a base URL, credentials it can load.

    Found before a request leaves, and the same on every attempt: never retried.
    """

    code: str = ErrorCode.MISSING_CREDENTIALS
    retryable = False

    def _text(self) -> str:
        return self.message  # it names the provider, what is missing and how to fix it


class UnusableResponseError(ProviderError):
    """The provider answered, but the SDK refused the answer: cut at the token limit, filtered, unverifiable.

    The same request would get the same answer: never retried.
    """

    code: str = ErrorCode.UNUSABLE_RESPONSE
    retryable = False


class MidStreamError(ProviderError):
    """A stream broke after its first chunk: the gateway must not fall back to another provider."""

    code: str = ErrorCode.PROVIDER_STREAM_ERROR


class AttachmentRefused(ProviderError):
    """A provider can't take one of a request's attachments; raised before any request is sent.

    The gateway moves on to the model's next provider; the step fails without a retry when none can take it.
    """

    code: str = ErrorCode.ATTACHMENT_UNSUPPORTED


class ScriptError(RunError):
    """A scripted provider received a request it has no reply for. Never retried."""

    code: str = ErrorCode.SCRIPT_EXHAUSTED


class UnusedRepliesError(OutcomeError, AssertionError):
    """A test ended with scripted replies that no request used: the workflow did less than the test expects."""

    code: str = ErrorCode.UNUSED_REPLIES


class MissingTemplateKeyWarning(RunError, UserWarning):
    """A ``{state.x}`` placeholder rendered empty because the state lacks the key (fails a test's run, or warns)."""

    code: str = ErrorCode.MISSING_TEMPLATE_KEY


# -- record and replay -----------------------------------------------------------------------------------------


class ReplayError(AgentloomError):
    """A cassette could not be used as asked; ``path`` is the cassette's file."""

    code: str = ErrorCode.REPLAY_ERROR

    def __init__(self, message: str, *, path: str | None = None, headline: str | None = None) -> None:
        self.path = path
        self.headline = headline or message.splitlines()[0]
        super().__init__(message)


class CassetteNotFoundError(ReplayError):
    """Replay (the default) needs a cassette, and the test has none yet."""

    code: str = ErrorCode.CASSETTE_NOT_FOUND


class CassetteExpiredError(ReplayError):
    """The cassette was recorded longer ago than ``agentloom_cassette_max_age``, and ``on_expiry`` is ``fail``."""

    code: str = ErrorCode.CASSETTE_EXPIRED


class CassetteFormatError(ReplayError):
    """The cassette file cannot be read: broken YAML, missing keys, or a ``format_version`` we don't know."""

    code: str = ErrorCode.CASSETTE_FORMAT


class RecordingRefusedError(ReplayError):
    """Recording was asked for under ``CI=true`` without the flag on the command line itself."""

    code: str = ErrorCode.RECORDING_REFUSED


class LiveRefusedError(RecordingRefusedError):
    """``--agentloom-live`` was asked for under ``CI=true`` without the flag on the command line itself.

    A kind of :class:`RecordingRefusedError`: both refuse calls to live providers that CI did not ask for.
    """

    code: str = ErrorCode.LIVE_REFUSED


class UnusedInteractionsError(ReplayError, AssertionError):
    """The test finished without replaying every interaction of its cassette."""

    code: str = ErrorCode.UNUSED_INTERACTIONS


class RequestNotInterceptedError(ReplayError):
    """A replayed request that the installed vcrpy did not intercept; it was not sent, and the replay stops.

    It reached the providers' offline transport (see :mod:`pytest_agentloom._core.offline`): that vcrpy
    does not patch the HTTP library the SDK uses.
    """

    code: str = ErrorCode.REQUEST_NOT_INTERCEPTED


class UnrecordableResponseError(ReplayError):
    """A live response too large to record (over 32 MiB decompressed) or of an encoding that cannot be scrubbed.

    ``br`` without the ``brotli`` package is such an encoding. Nothing is written; the step fails with it
    like a :class:`CassetteMismatchError`, never retried.
    """

    code: str = ErrorCode.RESPONSE_UNRECORDABLE


class CassetteMismatchError(ReplayError):
    """A request that the cassette has no unused recording for. Fails the step; never retried.

    A :class:`ReplayError` only, but the engine fails the step with it as it does with a :class:`StepError`
    whose ``retryable`` is false (``STEP_FAILURES`` names both).
    """

    code: str = ErrorCode.CASSETTE_MISMATCH
    retryable = False  # read by the retry loop, as on a StepError

    def __init__(self, message: str, *, reason: str, path: str | None = None, step_id: str | None = None,
                 turn: int | None = None) -> None:
        super().__init__(message, path=path)
        self.reason = reason
        self.step_id = step_id
        self.turn = turn


class ToolReplayMissError(ReplayError):
    """A tool with side effects was called during replay with arguments the recording doesn't have.

    It fails the step like an unmatched model request; it is not handed to the model as a tool error.
    """

    code: str = ErrorCode.TOOL_REPLAY_MISS


class ToolDriftError(ReplayError):
    """A tool run for real over a replay (``--agentloom-live-tools``) returned something else than recorded.

    The first divergence, by step, turn and call, before the next model turn mismatches. It fails the step
    like :class:`ToolReplayMissError`; it is not handed to the model as a tool error.
    """

    code: str = ErrorCode.TOOL_DRIFT


# -- judged assertions -----------------------------------------------------------------------------------------


class JudgeError(OutcomeError):
    """``agentloom.judge()`` got no verdict: the answer had another shape, or the model call failed.

    ``code`` is ``invalid_judge_answer`` or ``judge_failed``; the message names the judge call and the fix.
    """

    code: str = ErrorCode.JUDGE_FAILED

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = str(code)


class VerdictStaleError(OutcomeError, AssertionError):
    """A verdict snapshot was recorded for another judged text, rubric or model: the test says how to re-record."""

    code: str = ErrorCode.VERDICT_STALE


# -- the drift check -----------------------------------------------------------------------------------------


class DriftError(OutcomeError):
    """A drift check (``--agentloom-drift``) cannot run as asked, or a live provider gave no answer.

    ``code`` says which: nothing to compare, a scratch folder that could cost a committed file, or a live
    model call with no answer (no key, no connection, an error status).
    """

    code: str = ErrorCode.DRIFT_FOLDER_REFUSED

    def __init__(self, message: str, *, code: str | None = None) -> None:
        if code is not None:
            self.code = str(code)
        super().__init__(message)


STEP_FAILURES: tuple[type[StepError] | type[CassetteMismatchError], ...] = (StepError, CassetteMismatchError)
"""The errors that fail a step as they are (message, code, ``retryable``); any other error is wrapped."""
