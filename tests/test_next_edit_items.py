"""A next edit as an item: the smallest replacement, never one that changes nothing."""

from lsp_server.documents import Document
from lsp_server.engine import ModelEdit
from lsp_server.next_edit import NextEditService, trimmed_edit


def test_an_edit_is_trimmed_to_the_characters_that_change() -> None:
    assert trimmed_edit("a = fetch(url)\n", 0, 15, "a = fetch(url, timeout=5)\n") == (13, 13, ", timeout=5")
    assert trimmed_edit("x\n", 0, 2, "x\n") == (2, 2, "")


def test_an_edit_that_changes_nothing_is_never_an_item() -> None:
    document = Document("file:///same.py", "a = 1\nb = 2\n", 3)
    assert NextEditService._item(document, ModelEdit(1, 2, "b = 2\n", 0.9), "utf-16") is None
    item = NextEditService._item(document, ModelEdit(1, 2, "b = 3\n", 0.9), "utf-16")
    assert item is not None and item["textDocument"] == {"uri": "file:///same.py", "version": 3}
    assert item["edit"] == {"range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 5}},
                            "newText": "3"}
