"""A next edit as an item: the smallest replacement, never one that changes nothing."""

from lsp_server.documents import line_starts
from lsp_server.engine import ModelEdit
from lsp_server.next_edit import range_json, shown_edit, trimmed_edit


def test_an_edit_is_trimmed_to_the_characters_that_change() -> None:
    assert trimmed_edit("a = fetch(url)\n", 0, 15, "a = fetch(url, timeout=5)\n") == (13, 13, ", timeout=5")
    assert trimmed_edit("x\n", 0, 2, "x\n") == (2, 2, "")


def test_an_edit_that_changes_nothing_is_never_shown() -> None:
    text = "a = 1\nb = 2\n"
    starts = line_starts(text)
    assert shown_edit(text, starts, ModelEdit(1, 2, "b = 2\n", 0.9)) is None
    edit = shown_edit(text, starts, ModelEdit(1, 2, "b = 3\n", 0.9))
    assert edit is not None and (edit.new_text, edit.confidence) == ("3", 0.9)
    assert range_json(text, edit.start, edit.end, "utf-16", starts) == {
        "start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 5}}
