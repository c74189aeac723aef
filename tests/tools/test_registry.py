"""The tool registry: decorator, classes, plain callables, schemas from type hints."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar, Literal

import pytest
from pydantic import BaseModel

from pytest_agentloom.errors import UsageError
from pytest_agentloom.tools import BaseTool, Tool, ToolRegistry, as_tool, schema_for_function, schema_for_type, tool


def test_the_decorator_makes_a_tool_that_still_works_as_a_function() -> None:
    @tool
    def lookup_ticket(ticket_id: str, include_history: bool = False) -> dict[str, Any]:
        """Look a ticket up by id.

        Longer notes that the model does not need.
        """
        return {"id": ticket_id, "history": include_history}

    assert isinstance(lookup_ticket, Tool)
    assert lookup_ticket.name == "lookup_ticket"
    assert lookup_ticket.description == "Look a ticket up by id."
    assert lookup_ticket.parameters == {
        "type": "object",
        "properties": {"ticket_id": {"type": "string"}, "include_history": {"type": "boolean", "default": False}},
        "required": ["ticket_id"],
        "additionalProperties": False,
    }
    assert lookup_ticket.side_effects is False
    assert lookup_ticket("T-1") == {"id": "T-1", "history": False}


def test_the_decorator_takes_a_name_description_parameters_and_side_effects() -> None:
    schema = {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}

    @tool(name="send_email", description="Send an email.", parameters=schema, side_effects=True)
    async def send(to: str) -> str:
        return f"sent to {to}"

    assert (send.name, send.description, send.parameters, send.side_effects) == (
        "send_email", "Send an email.", schema, True)
    assert send.spec().model_dump() == {"name": "send_email", "description": "Send an email.", "parameters": schema}
    assert asyncio.run(send.invoke({"to": "a@example.org"})) == "sent to a@example.org"


def test_a_class_tool_takes_its_schema_from_run() -> None:
    class Weather(BaseTool):
        name = "weather"
        description = "Today's weather in a city."

        def run(self, city: str, unit: Literal["C", "F"] = "C") -> str:
            return f"{city}: 20{unit}"

    registry = ToolRegistry([Weather])
    made = registry["weather"]
    assert made.description == "Today's weather in a city."
    assert made.parameters["properties"] == {"city": {"type": "string"}, "unit": {"enum": ["C", "F"], "default": "C"}}
    assert made.parameters["required"] == ["city"]
    assert asyncio.run(made.invoke({"city": "Lisbon"})) == "Lisbon: 20C"


def test_a_class_tool_instance_and_its_own_parameters() -> None:
    class Counter(BaseTool):
        name = "count"
        description = "Count calls."
        parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
        side_effects = True

        def __init__(self) -> None:
            self.calls = 0

        def run(self) -> int:
            self.calls += 1
            return self.calls

    counter = Counter()
    made = ToolRegistry([counter])["count"]
    assert made.parameters == {"type": "object", "properties": {}}
    assert made.side_effects is True
    assert asyncio.run(made.invoke({})) == 1
    assert counter.calls == 1


def test_plain_callables_are_registered_under_their_mapping_name() -> None:
    def fetch(url: str) -> str:
        return url

    registry = ToolRegistry({"get_page": fetch})
    assert list(registry) == ["get_page"]
    assert registry["get_page"].parameters["required"] == ["url"]


def test_a_later_registration_replaces_an_earlier_one() -> None:
    registry = ToolRegistry({"t": lambda: 1})
    registry.register(lambda: 2, name="t")
    assert len(registry) == 1
    assert registry["t"]() == 2


def test_registration_errors_say_how_to_fix() -> None:
    with pytest.raises(UsageError, match="a tool needs a name"):
        as_tool(lambda: 1)
    with pytest.raises(UsageError, match="not a tool class: it needs a 'name' and a 'run' method"):
        ToolRegistry([type("Nameless", (BaseTool,), {})])
    with pytest.raises(UsageError, match=r"(?s)ToolRegistry\(\): argument tools got 'file_read'.*a list of tools"):
        ToolRegistry("file_read")


class Address(BaseModel):
    city: str


@pytest.mark.parametrize(
    ("hint", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (dict[str, Any], {"type": "object"}),
        (Literal["a", "b"], {"enum": ["a", "b"]}),
        (str | None, {"type": "string"}),
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (Any, {}),
    ],
    ids=lambda value: repr(value) if not isinstance(value, dict) else "",
)
def test_schema_for_type(hint: Any, schema: dict[str, Any]) -> None:
    assert schema_for_type(hint) == schema


def test_schema_for_a_pydantic_model_parameter_and_optional_parameters() -> None:
    def ship(address: Address, note: str | None, *args: Any, ctx: Any = None, **kwargs: Any) -> None:
        return None

    schema = schema_for_function(ship)
    assert list(schema["properties"]) == ["address", "note"]
    assert schema["properties"]["address"]["properties"]["city"] == {"title": "City", "type": "string"}
    assert schema["required"] == ["address"]  # None is accepted, so 'note' may be left out


def test_a_registry_made_from_another_takes_its_tools_as_they_are_and_changes_apart_from_it() -> None:
    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    kept = ToolRegistry([lookup])
    copy = ToolRegistry(kept)
    assert copy["lookup"] is kept["lookup"] and list(copy) == ["lookup"]
    copy.register(len, name="count")
    copy.register(str.upper, name="lookup")
    assert list(kept) == ["lookup"] and kept["lookup"].function is lookup
