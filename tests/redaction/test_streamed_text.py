"""StreamedTextRedactor: text printed as it streams, with secrets replaced even when split across pieces."""

from __future__ import annotations

from pytest_agentloom._redaction.streamed_text import StreamedTextRedactor


def shown(scrubber: StreamedTextRedactor, pieces: list[str]) -> list[str]:
    return [scrubber.feed(piece) for piece in pieces] + [scrubber.flush()]


def test_a_secret_split_over_pieces_is_replaced_and_only_its_possible_start_waits() -> None:
    scrubber = StreamedTextRedactor([("correct horse battery", "<R>"), ("sk-abcdefgh", "<K>")])
    out = shown(scrubber, ["hello cor", "rect horse ", "batt", "ery! and sk-", "abc", "defgh. bye c", "orr"])
    assert out == ["hello ", "", "", "<R>! and ", "", "<K>. bye ", "", "corr"]
    assert "".join(out) == "hello <R>! and <K>. bye corr"


def test_text_that_cannot_start_a_secret_is_never_held_back() -> None:
    scrubber = StreamedTextRedactor([("zebra-secret", "<Z>")])
    assert shown(scrubber, ["plain text, ", "nothing to hide."]) == ["plain text, ", "nothing to hide.", ""]
    assert shown(StreamedTextRedactor([]), ["a", "b"]) == ["a", "b", ""]


def test_a_false_start_is_released_when_the_next_piece_shows_it_is_not_a_secret() -> None:
    scrubber = StreamedTextRedactor([("secret-value", "<S>")])
    assert shown(scrubber, ["a secr", "et of mine", " secret-val", "ue"]) == ["a ", "secret of mine", " ", "<S>", ""]
