"""A conversation's shape in the state: how it is read and written back, and the names a step may use.

Shape in the state: a mapping with ``messages`` (each ``role``, ``content`` and
an optional ``name``), ``token_budget``, ``trim_policy`` and ``summary``; a
plain list of messages is accepted too and written back as a list. A key that
doesn't exist yet starts an empty conversation.

Part of the workflow format (the load-time checks read a file's conversations with it); continuing a
conversation, turn by turn, is :mod:`pytest_agentloom.engine._calls.conversation`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..._core.state_paths import MISSING
from ..._core.types import Message

__all__ = ["ROLES", "SPEAKER_PATTERN", "TRIM_POLICIES", "Conversation", "conversation_key", "read_conversation"]

ROLES = ("system", "user", "assistant", "tool")
TRIM_POLICIES = ("drop_oldest", "drop_pairs", "summarize_oldest")
SPEAKER_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_FIELDS = ("messages", "token_budget", "trim_policy", "summary")
_MESSAGE_FIELDS = ("role", "content", "name", "tool_call_id")


def conversation_key(ref: str) -> str:
    """The state path a step's ``conversation`` names: ``state.chat`` and ``chat`` are the same key."""
    text = ref.strip()
    return text[len("state."):] if text.startswith("state.") else text


@dataclass(frozen=True)
class Conversation:
    """A conversation as read from the state; ``as_list`` remembers a plain list, to write one back."""

    messages: tuple[dict[str, Any], ...] = ()
    token_budget: int | None = None
    trim_policy: str = "drop_oldest"
    summary: str | None = None
    as_list: bool = False
    policy_given: bool = False  # trim_policy was written out, so it is written back even as the default

    def to_state(self) -> Any:
        messages = [dict(message) for message in self.messages]
        if self.as_list and self.token_budget is None and self.summary is None:
            return messages
        data: dict[str, Any] = {"messages": messages}
        if self.token_budget is not None:
            data["token_budget"] = self.token_budget
        if self.trim_policy != "drop_oldest" or self.policy_given:
            data["trim_policy"] = self.trim_policy
        if self.summary is not None:
            data["summary"] = self.summary
        return data


def read_conversation(value: Any) -> Conversation:
    """A state value as a :class:`Conversation`; ``ValueError`` says what is wrong with it."""
    if value is MISSING or value is None:
        return Conversation()
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, (list, tuple)):
        return Conversation(messages=_read_messages(value, "messages"), as_list=True)
    if not isinstance(value, Mapping):
        raise ValueError(f"a conversation is a mapping with 'messages' or a list of messages, "
                         f"got {type(value).__name__}")
    unknown = [str(key) for key in value if key not in _FIELDS]
    if unknown:
        raise ValueError(f"unknown field '{unknown[0]}' (a conversation has {', '.join(_FIELDS)})")
    messages = value.get("messages") or []
    if not isinstance(messages, (list, tuple)):
        raise ValueError(f"'messages' must be a list, got {type(messages).__name__}")
    budget = value.get("token_budget")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0):
        raise ValueError(f"'token_budget' must be a positive whole number of tokens, got {budget!r}")
    policy = value.get("trim_policy") or "drop_oldest"
    if policy not in TRIM_POLICIES:
        raise ValueError(f"'trim_policy' must be one of {', '.join(TRIM_POLICIES)}, got {policy!r}")
    summary = value.get("summary")
    if summary is not None and not isinstance(summary, str):
        raise ValueError(f"'summary' must be text, got {type(summary).__name__}")
    return Conversation(messages=_read_messages(messages, "messages"), token_budget=budget, trim_policy=policy,
                        summary=summary or None, policy_given="trim_policy" in value)


def _read_messages(items: Sequence[Any], where: str) -> tuple[dict[str, Any], ...]:
    messages = []
    for index, item in enumerate(items):
        if isinstance(item, Message):
            item = item.to_dict()
        if not isinstance(item, Mapping):
            raise ValueError(f"{where}[{index}] must be a mapping with role and content, got {type(item).__name__}")
        unknown = [str(key) for key in item if key not in _MESSAGE_FIELDS]
        if unknown:
            raise ValueError(f"{where}[{index}] has unknown field '{unknown[0]}' (a message has role, content, name)")
        role = item.get("role")
        if role not in ROLES:
            raise ValueError(f"{where}[{index}].role must be one of {', '.join(ROLES)}, got {role!r}")
        content = item.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"{where}[{index}].content must be text, got {type(content).__name__}")
        message: dict[str, Any] = {"role": role, "content": content}
        for key in ("name", "tool_call_id"):
            if item.get(key) is not None:
                if not isinstance(item[key], str):
                    raise ValueError(f"{where}[{index}].{key} must be text, got {type(item[key]).__name__}")
                message[key] = item[key]
        messages.append(message)
    return tuple(messages)
