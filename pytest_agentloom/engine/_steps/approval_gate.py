"""The ``approval_gate`` step: pause the run until a person decides.

The first time a run reaches a gate, the gate posts its webhook (``notify``),
and the runner pauses the run (``status`` ``paused``, ``reason``
``awaiting_approval``) and saves a checkpoint. Resuming the checkpoint with a
decision writes ``approved`` or ``rejected`` to the gate's ``output``, to
``steps.<id>.output`` and to ``_approval.<id>``, and the run continues.

``timeout_seconds`` is measured from the pause to the resume. With a virtual
clock (tests) both ends are read from the run's clock; otherwise from the wall
clock, since a resume usually happens in another process. Once the timeout has
passed, ``on_timeout`` decides (``approve``, ``reject`` or ``fail``) whatever
decision the resume brought.

Webhook URLs must be ``http``/``https``. A host that is, or resolves to, an
address that is not public (the rule of :mod:`pytest_agentloom._core.addresses`,
shared with ``http_request`` and attachment downloads) is refused unless
``config.sandbox.allow_internal_targets`` is true, so a workflow file cannot
make the engine probe an internal network (or a cloud metadata service).
Upstream's ``allow_internal_webhook_targets: true`` opens less, and for webhooks
only: loopback and private networks, never link-local nor a metadata address
(:func:`~pytest_agentloom._core.addresses.is_local_network_address`).
The post connects only to an address it checked, so DNS rebinding between the
check and the connection is refused too.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from ..._core.addresses import is_ip_literal, public_only_transport, refused_address, resolve_host
from ...errors import StepError, render_message
from .._evaluate.templates import render, render_args
from .._format.model import ApprovalGateStep, WebhookNotify
from .._outcome.step_context import PauseOutcome, StepContext, StepOutcome

__all__ = ["DECISIONS", "check_webhook_target", "run_approval_gate"]

DECISIONS = ("approved", "rejected")
_ON_TIMEOUT = {"approve": "approved", "reject": "rejected"}


async def run_approval_gate(step: ApprovalGateStep, ctx: StepContext) -> StepOutcome:
    """Pause (first visit, or a resume without a decision), or settle the gate's decision."""
    ctx.attempts = 1
    awaiting = ctx.run.awaiting(step.id)
    if awaiting is None:
        ctx.event("approval_requested", message=step.message, timeout_seconds=step.timeout_seconds)
        if step.notify is not None:
            await _notify(step, step.notify, ctx)
        return PauseOutcome(value=None)
    pending, decision = awaiting.pending, awaiting.decision
    waited = ctx.clock.now() - pending.clock if ctx.clock.is_virtual else ctx.run.wall_time() - pending.wall
    if step.timeout_seconds is not None and waited >= step.timeout_seconds:
        data: dict[str, Any] = {"waited": round(waited, 6), "on_timeout": step.on_timeout}
        if decision:
            data["ignored_decision"] = decision
        ctx.event("approval_timeout", None, **data)
        if step.on_timeout == "fail":
            raise StepError(
                render_message(f"approval gate '{step.id}' timed out: no decision within {step.timeout_seconds:g}s "
                               f"(waited {waited:g}s).",
                               hint="resume sooner, raise 'timeout_seconds', or set "
                                    "'on_timeout: approve' or 'reject'.", inline=True),
                code="approval_timeout",
            )
        decided = _ON_TIMEOUT[step.on_timeout]
        ctx.event("approval_decision", decision=decided, by="timeout")
        return StepOutcome(value=decided)
    if decision is None:
        ctx.event("approval_waiting", waited=round(waited, 6))
        return PauseOutcome(value=None)
    if decision not in DECISIONS:
        raise StepError(f"approval decision must be one of {', '.join(DECISIONS)}, got {decision!r}",
                        code="approval_decision")
    ctx.event("approval_decision", decision=decision, by="resume")
    return StepOutcome(value=decision)


async def _notify(step: ApprovalGateStep, notify: WebhookNotify, ctx: StepContext) -> None:
    sandbox = ctx.workflow.config.sandbox
    allow_internal, local_ok = sandbox.allow_internal_targets, sandbox.allow_internal_webhook_targets
    await check_webhook_target(notify.url, allow_internal=allow_internal, local_ok=local_ok, step_id=step.id)
    redacted_state = ctx.run.redactor.redact_state(ctx.state)
    if notify.body_template is not None:
        body = render(notify.body_template, redacted_state, on_missing=ctx.missing_key)
    else:
        body = json.dumps({"run_id": ctx.run.run_id, "workflow": ctx.workflow.name, "step_id": step.id,
                           "message": step.message}, sort_keys=True)
    headers = {str(key): str(value) for key, value in render_args(notify.headers, ctx.state,
                                                                  on_missing=ctx.missing_key).items()}
    if not any(key.lower() == "content-type" for key in headers):
        headers["Content-Type"] = "application/json" if _is_json(body) else "text/plain; charset=utf-8"
    import httpx

    try:
        transport = None if allow_internal else public_only_transport(  # connects where it checked
            lambda host, address: _internal_target(step.id, host, address, local_ok=local_ok), local_ok=local_ok)
        async with httpx.AsyncClient(timeout=notify.timeout, follow_redirects=False, trust_env=False,
                                     transport=transport) as client:
            response = await client.request(notify.method, notify.url, content=body.encode("utf-8"), headers=headers)
    except httpx.HTTPError as exc:
        ctx.event("webhook", url=notify.url, ok=False, error=f"{type(exc).__name__}: {exc}")
        raise StepError(f"approval gate '{step.id}' could not post its webhook to {notify.url}: "
                        f"{type(exc).__name__}: {exc}", code="webhook_failed") from exc
    ok = response.is_success
    ctx.event("webhook", url=notify.url, ok=ok, status=response.status_code)
    if not ok:
        raise StepError(f"approval gate '{step.id}': webhook {notify.url} answered HTTP {response.status_code}",
                        code="webhook_failed")


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


async def check_webhook_target(url: str, *, allow_internal: bool, local_ok: bool = False,
                               step_id: str = "?") -> None:
    """Refuse non-HTTP URLs and, unless allowed, hosts at internal addresses. Raises :class:`StepError`.

    ``local_ok`` (``allow_internal_webhook_targets``) lets loopback and private addresses through, and a
    ``localhost`` name is then resolved like any other.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise StepError(f"approval gate '{step_id}': webhook URL must be http(s)://host/..., got {url!r}",
                        code="webhook_refused")
    if allow_internal:
        return
    host = parts.hostname
    try:
        addresses = [host] if is_ip_literal(host) else await resolve_host(host, parts.port or 443)
    except OSError as exc:
        raise StepError(f"approval gate '{step_id}': cannot resolve webhook host {host!r}: {exc}",
                        code="webhook_failed") from exc
    for address in addresses:
        if refused_address(address, local_ok=local_ok):
            raise _internal_target(step_id, host, address, local_ok=local_ok)


def _internal_target(step_id: str, host: str, address: str, *, local_ok: bool = False) -> StepError:
    if local_ok:  # the opt-in was given, and this address is not one it opens
        return StepError(
            render_message(
                f"approval gate '{step_id}': webhook host {host!r} is at {address}, which "
                "allow_internal_webhook_targets does not open (it opens loopback and private networks only; "
                "link-local and cloud metadata addresses stay refused); refused.",
                hint="point the webhook at a loopback or private address, or at a public URL.", inline=True),
            code="webhook_refused",
        )
    return StepError(
        render_message(
            f"approval gate '{step_id}': webhook host {host!r} is an internal address ({address}: not a public "
            "address); refused.",
            hint="use a public URL, or set config.sandbox.allow_internal_targets: true (or, for webhooks to "
                 "loopback and private networks only, allow_internal_webhook_targets: true) if "
                 "this workflow is meant to call a service on your own network.", inline=True),
        code="webhook_refused",
    )
