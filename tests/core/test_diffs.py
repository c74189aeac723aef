"""Path-by-path differences: the one renderer of snapshots, cassette mismatches and assert explanations."""

from __future__ import annotations

from pytest_agentloom.core.diffs import path_diff, render_path


def test_diff_lines_are_sorted_paths_and_cut_at_the_limit() -> None:
    old = {"state": {"b": 1, "a": "x", "gone": True, "items": [1, 2]}}
    new = {"state": {"b": 2, "a": "y", "new": None, "items": [1, 2, 3]}}
    assert path_diff(old, new) == [
        "state.a: 'x' -> 'y'",
        "state.b: 1 -> 2",
        "state.gone: removed True",
        "state.items[2]: added 3",
        "state.new: added None",
    ]
    many = path_diff({f"k{i:02d}": i for i in range(30)}, {f"k{i:02d}": -i for i in range(1, 30)}, limit=5)
    assert many == ["k00: removed 0", "k01: 1 -> -1", "k02: 2 -> -2", "k03: 3 -> -3", "... and 26 more differences"]


def test_paths_name_plain_keys_with_dots_and_odd_keys_in_brackets() -> None:
    assert render_path(["state", "reply", 0, "text"]) == "state.reply[0].text"
    assert render_path(["state", "a b"]) == "state['a b']"
    assert render_path([], "body") == "body" and render_path([]) == "(root)"
    assert path_diff({"a": 1}, {"a": 2}, root="body") == ["body.a: 1 -> 2"]


def test_equal_values_have_no_difference_and_long_values_are_cut() -> None:
    assert path_diff({"a": [1]}, {"a": [1]}) == []
    line = path_diff({"a": "x" * 100}, {"a": "y"}, width=20)[0]
    assert line == "a: '" + "x" * 16 + "... -> 'y'"  # 20 characters of repr, the last three '...'
