"""Prices of common models, in US dollars per million tokens.

The figures are list prices for standard (non-batch, non-cached) use and will
drift; a provider that reports a cost itself wins over this table. A model
missing from the table costs 0 and the run records ``priced: false`` on the
step, so a budget is never enforced on made-up numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.types import Usage

__all__ = ["PRICES", "Price", "cost_of", "price_for"]


@dataclass(frozen=True)
class Price:
    """Dollars per million input and output tokens; reasoning bills as output."""

    input: float
    output: float


PRICES: dict[str, Price] = {
    # OpenAI
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    "o1": Price(15.00, 60.00),
    "o3": Price(2.00, 8.00),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    # OpenAI embeddings: input tokens only
    "text-embedding-3-small": Price(0.02, 0.0),
    "text-embedding-3-large": Price(0.13, 0.0),
    # Anthropic
    "claude-opus-4": Price(15.00, 75.00),
    "claude-sonnet-4": Price(3.00, 15.00),
    "claude-sonnet-4-5": Price(3.00, 15.00),
    "claude-3-7-sonnet": Price(3.00, 15.00),
    "claude-3-5-sonnet": Price(3.00, 15.00),
    "claude-haiku-4-5": Price(1.00, 5.00),
    "claude-3-5-haiku": Price(0.80, 4.00),
    "claude-3-haiku": Price(0.25, 1.25),
    # Google
    "gemini-2.5-pro": Price(1.25, 10.00),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.0-flash": Price(0.10, 0.40),
    "gemini-1.5-pro": Price(1.25, 5.00),
    "gemini-1.5-flash": Price(0.075, 0.30),
}


def price_for(model: str) -> Price | None:
    """The price of ``model``, matching dated versions (``gpt-4o-2024-08-06``) by longest prefix."""
    if model in PRICES:
        return PRICES[model]
    candidates = [name for name in PRICES if model.startswith(name + "-") or model.startswith(name + "@")]
    return PRICES[max(candidates, key=len)] if candidates else None


def cost_of(model: str, usage: Usage) -> float | None:
    """The cost of one call, or ``None`` when the model has no known price."""
    price = price_for(model)
    if price is None:
        return None
    output = usage.output_tokens + usage.reasoning_tokens
    return round((usage.input_tokens * price.input + output * price.output) / 1_000_000, 10)
