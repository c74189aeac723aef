"""Prices of common models, in US dollars per million tokens.

The figures are list prices for standard (non-batch) use and will drift; a
provider that reports a cost itself wins over this table. Input tokens read
from a provider's prompt cache (``Usage.cached_input_tokens``) cost the
model's ``cached_input`` rate, and tokens written to it
(``Usage.cache_write_tokens``, Anthropic's cache creation) its
``cache_write`` rate; a model with no such rate bills them as plain input. A model
missing from the table costs 0 and the run records ``priced: false`` on the
step, so a budget is never enforced on made-up numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._core.types import Usage

__all__ = ["PRICES", "Price", "cost_of", "price_for"]


@dataclass(frozen=True)
class Price:
    """Dollars per million input and output tokens; reasoning bills as output.

    ``cached_input`` and ``cache_write`` are the rates of cache reads and cache writes, when the provider
    has them: OpenAI bills cached input at a discount and writes for free, Anthropic bills reads at a
    tenth of the input rate and (5-minute) writes at 1.25 times it, Gemini bills cached input at a quarter.
    """

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None


def _openai(input: float, output: float, cached: float) -> Price:
    return Price(input, output, cached_input=cached, cache_write=input)


def _anthropic(input: float, output: float) -> Price:
    return Price(input, output, cached_input=round(input * 0.1, 6), cache_write=round(input * 1.25, 6))


def _gemini(input: float, output: float) -> Price:
    return Price(input, output, cached_input=round(input * 0.25, 6), cache_write=input)


PRICES: dict[str, Price] = {
    # OpenAI
    "gpt-4o": _openai(2.50, 10.00, 1.25),
    "gpt-4o-mini": _openai(0.15, 0.60, 0.075),
    "gpt-4.1": _openai(2.00, 8.00, 0.50),
    "gpt-4.1-mini": _openai(0.40, 1.60, 0.10),
    "gpt-4.1-nano": _openai(0.10, 0.40, 0.025),
    "gpt-5": _openai(1.25, 10.00, 0.125),
    "gpt-5-mini": _openai(0.25, 2.00, 0.025),
    "gpt-5-nano": _openai(0.05, 0.40, 0.005),
    "o1": _openai(15.00, 60.00, 7.50),
    "o3": _openai(2.00, 8.00, 0.50),
    "o3-mini": _openai(1.10, 4.40, 0.55),
    "o4-mini": _openai(1.10, 4.40, 0.275),
    # OpenAI embeddings: input tokens only
    "text-embedding-3-small": Price(0.02, 0.0),
    "text-embedding-3-large": Price(0.13, 0.0),
    # Anthropic
    "claude-opus-4": _anthropic(15.00, 75.00),
    "claude-sonnet-4": _anthropic(3.00, 15.00),
    "claude-sonnet-4-5": _anthropic(3.00, 15.00),
    "claude-3-7-sonnet": _anthropic(3.00, 15.00),
    "claude-3-5-sonnet": _anthropic(3.00, 15.00),
    "claude-haiku-4-5": _anthropic(1.00, 5.00),
    "claude-3-5-haiku": _anthropic(0.80, 4.00),
    "claude-3-haiku": _anthropic(0.25, 1.25),
    # Google
    "gemini-2.5-pro": _gemini(1.25, 10.00),
    "gemini-2.5-flash": _gemini(0.30, 2.50),
    "gemini-2.0-flash": _gemini(0.10, 0.40),
    "gemini-1.5-pro": _gemini(1.25, 5.00),
    "gemini-1.5-flash": _gemini(0.075, 0.30),
}


def price_for(model: str) -> Price | None:
    """The price of ``model``, matching dated versions (``gpt-4o-2024-08-06``) by longest prefix.

    A prefix counts when the name goes on with ``-`` or ``@`` after it, so the prefixes tried are the
    name cut before each of those, longest first: one lookup per separator, where a scan of the whole
    table per call cost a quarter of a scripted step for a model named with its date.
    """
    price = PRICES.get(model)
    if price is not None:
        return price
    for end in range(len(model) - 1, 0, -1):
        if model[end] in "-@" and (price := PRICES.get(model[:end])) is not None:
            return price
    return None


def cost_of(model: str, usage: Usage) -> float | None:
    """The cost of one call, or ``None`` when the model has no known price."""
    price = PRICES.get(model) or price_for(model)  # most calls name a model of the table as it is
    if price is None:
        return None
    output = usage.output_tokens + usage.reasoning_tokens
    cached, written = usage.cached_input_tokens, usage.cache_write_tokens
    plain = max(usage.input_tokens - cached - written, 0)
    read_rate = price.input if price.cached_input is None else price.cached_input
    write_rate = price.input if price.cache_write is None else price.cache_write
    dollars = plain * price.input + cached * read_rate + written * write_rate + output * price.output
    return round(dollars / 1_000_000, 10)
