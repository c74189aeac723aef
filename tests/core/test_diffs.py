"""Path-by-path differences: the one renderer of snapshots, cassette mismatches and assert explanations."""

from __future__ import annotations

from pytest_agentloom._core.diffs import diff_report, path_diff, render_path


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
    assert many == ["k00: removed 0", "k01: 1 -> -1", "k02: 2 -> -2", "k03: 3 -> -3",
                    "... 26 more lines (pytest -vv shows all)"]


def test_paths_name_plain_keys_with_dots_and_odd_keys_in_brackets() -> None:
    assert render_path(["state", "reply", 0, "text"]) == "state.reply[0].text"
    assert render_path(["state", "a b"]) == "state['a b']"
    assert render_path([], "body") == "body" and render_path([]) == "(root)"
    assert path_diff({"a": 1}, {"a": 2}, root="body") == ["body.a: 1 -> 2"]


def test_equal_values_have_no_difference_and_long_values_are_cut() -> None:
    assert path_diff({"a": [1]}, {"a": [1]}) == []
    line = path_diff({"a": ["x" * 100]}, {"a": "y"}, width=20)[0]
    assert line == "a: ['" + "x" * 15 + "... -> 'y'"  # 20 characters of repr, the last three '...'


LETTER = ("Dear customer, thank you for reaching out about your order. We have looked into it and the parcel "
          "left our warehouse on Monday; it should reach you within {} working days.")


def test_a_change_near_the_end_of_a_long_line_is_shown_in_a_window_marked_on_both_versions() -> None:
    lines = path_diff({"reply": LETTER.format("three")}, {"reply": LETTER.format("four")})
    assert lines == [
        "reply: strings differ at character 156 (length 174 -> 173):",
        "    - ...y; it should reach you within three working days.'",
        "    + ...y; it should reach you within four working days.'",
        "                                       ^",
    ]
    start = LETTER.format("x")[:40]
    head = path_diff({"a": start + "A" + "z" * 80}, {"a": start + "B" + "z" * 80})
    assert head[1] == "    - ..." + start[-30:] + "A" + "z" * 30 + "..."  # cut on both sides
    assert head[3].index("^") == head[1].index("A")
    tabs = path_diff({"a": "x" * 70 + "\tb"}, {"a": "x" * 70 + "\tc"})
    assert tabs[3].index("^") == tabs[1].index("b") and "\\t" in tabs[1]  # control characters escaped


def test_multi_line_text_is_a_unified_diff_with_context() -> None:
    lines = path_diff({"a": "one\ntwo\nthree\nfour\nfive\nsix"}, {"a": "one\ntwo\n3\nfour\nfive\nsix"})
    assert lines == ["a: text changed (- old, + new):", "    @@ -1,5 +1,5 @@", "     one", "     two",
                     "    -three", "    +3", "     four", "     five"]


def test_a_mirrored_step_output_is_shown_once() -> None:
    def run(text: str) -> dict:
        return {"state": {"reply": text, "steps": {"draft": {"output": text, "status": "success"}}},
                "steps": {"draft": {"output": text, "status": "success"}}}

    report = diff_report(run(LETTER.format("three")), run(LETTER.format("four")))
    assert report.count == 1 and len(report.lines) == 4
    assert report.lines[0].startswith("state.reply (same change at steps.draft.output): strings differ")
    small = path_diff({"steps": {"a": 1, "b": 1}}, {"steps": {"a": 2, "b": 2}})
    assert small == ["steps.a (same change at steps.b): 1 -> 2"]
    many = path_diff({f"k{i}": LETTER for i in range(6)}, {f"k{i}": LETTER + "!" for i in range(6)})
    assert many[0].startswith("k0 (same change at k1, k2, k3 and 2 more places): strings differ")
    status = path_diff(run("x") | {"status": "ok"}, {**run("x"), "state": {"reply": "x", "steps": {
        "draft": {"output": "x", "status": "failed"}}}, "steps": {"draft": {"output": "x", "status": "failed"}}})
    assert status == ["status: removed 'ok'", "steps.draft.status: 'success' -> 'failed'"]


def test_verbose_shows_every_line_and_whole_values() -> None:
    old = {f"k{i:02d}": f"{i}" + "v" * 100 for i in range(50)}
    new = {f"k{i:02d}": f"{i}" + "w" * 100 for i in range(50)}
    assert len(path_diff(old, new)) == 30
    full = path_diff(old, new, verbose=2)
    assert len(full) == 50 and "v" * 100 in full[0] and "w" * 100 in full[0]  # whole values, one line each
