"""The property tests' inputs, counted by outcome instead of asserted: run it against any checkout.

    PYTHONPATH=<checkout> python bench/properties_census.py

For each property of ``tests/reliability/test_properties.py`` that older checkouts can run (the loader,
templates, expressions, scenario tables), it draws the same examples (derandomized) and counts: success, the
named error, another AgentloomError, a raw exception (by type), and examples slower than 5 s. A script, not a test.
"""

from __future__ import annotations

import collections
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
PROPERTIES = [
    "test_any_yaml_document_loads_or_is_a_workflow_error",
    "test_a_mutated_workflow_loads_or_is_a_workflow_error",
    "test_any_text_loads_or_is_a_workflow_error",
    "test_a_template_renders_or_is_a_template_error",
    "test_an_expression_evaluates_or_is_an_evaluation_error",
    "test_any_text_compiles_or_is_refused",
    "test_a_yaml_table_of_any_rows_loads_or_is_a_table_error",
    "test_any_bytes_as_a_table_load_or_are_a_table_error",
    "test_any_csv_loads_or_is_a_table_error",
]


def main() -> None:
    import pytest_agentloom
    from pytest_agentloom.errors import AgentloomError

    print(f"package: {Path(pytest_agentloom.__file__).parent}")
    spec = importlib.util.spec_from_file_location("properties", HERE / "tests" / "reliability" / "test_properties.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in PROPERTIES:
        test = getattr(module, name)
        counts: collections.Counter[str] = collections.Counter()
        inner = test.hypothesis.inner_test

        def counted(*args: Any, _inner: Any = inner, _counts: Any = counts, **kwargs: Any) -> None:
            started = time.perf_counter()
            try:
                _inner(*args, **kwargs)
                outcome = "ok (success or its named error)"
            except AgentloomError as exc:
                outcome = f"other named error {type(exc).__name__}"
            except (AssertionError, Exception, RecursionError) as exc:
                outcome = f"raw {type(exc).__name__}"
            if time.perf_counter() - started > 5:
                outcome += " (slow)"
            _counts[outcome] += 1

        test.hypothesis.inner_test = counted
        test()
        total = sum(counts.values())
        print(f"{name}: {total} inputs: " + ", ".join(f"{n} {k}" for k, n in counts.most_common()))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
