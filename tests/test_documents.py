import random

import pytest
from lsprotocol import types

from lsp_server.documents import (
    Document,
    DocumentStore,
    line_starts,
    offset_at,
    position_at,
    unchanged_edge_lines,
    updated_line_starts,
)

UTF16 = types.PositionEncodingKind.Utf16
UTF8 = types.PositionEncodingKind.Utf8


def change(text: str, start: tuple[int, int], end: tuple[int, int]) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(*start), types.Position(*end)), text=text
    )


def test_lines_end_only_at_lsp_line_breaks() -> None:
    text = "a\x0cb\u2028c\rd\r\ne\nf"
    assert line_starts(text) == [0, 6, 9, 11]
    assert offset_at(text, types.Position(1, 0), UTF16) == 6


def test_utf16_positions_count_surrogate_pairs_as_two_units() -> None:
    text = "x = '😀é'\ny"
    assert offset_at(text, types.Position(0, 7), UTF16) == 6  # after the emoji
    assert position_at(text, 7, UTF16) == types.Position(0, 8)
    assert position_at(text, 7, UTF8) == types.Position(0, 11)


def test_positions_past_the_line_end_clamp_to_the_line_end() -> None:
    assert offset_at("ab\ncd", types.Position(0, 99), UTF16) == 2
    assert offset_at("ab\r\ncd", types.Position(0, 99), UTF16) == 2
    assert offset_at("ab\ncd", types.Position(9, 0), UTF16) == 5


def test_incremental_changes_apply_at_the_right_place() -> None:
    document = Document("file:///x.py", "def f():\n    return 1\n")
    document.apply_change(change("answer", (0, 4), (0, 5)), UTF16)
    document.apply_change(change("42", (1, 11), (1, 12)), UTF16)
    assert document.text == "def answer():\n    return 42\n"


def test_change_after_a_form_feed_line_lands_where_the_editor_put_it() -> None:
    document = Document("file:///x.py", "a = 1\x0c b = 2\nc = 3\n")
    document.apply_change(change("C", (1, 0), (1, 1)), UTF16)
    assert document.text == "a = 1\x0c b = 2\nC = 3\n"


@pytest.mark.parametrize("odd", ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_characters_splitlines_breaks_at_are_not_lsp_line_breaks(odd: str) -> None:
    text = f"a{odd}b\nc{odd}d"
    assert line_starts(text) == [0, 4]
    assert offset_at(text, types.Position(1, 2), types.PositionEncodingKind.Utf16) == 6
    assert position_at(text, 7, types.PositionEncodingKind.Utf16) == types.Position(1, 3)


def test_line_starts_updated_for_a_change_equal_a_full_rescan() -> None:
    rng = random.Random(7)
    pieces = ["a", "é", "😀", " ", "\n", "\r", "\r\n"]
    for _ in range(20_000):
        before = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        start = rng.randint(0, len(before))
        end = rng.randint(start, len(before))
        after = before[:start] + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4))) + before[end:]
        assert updated_line_starts(before, line_starts(before), start, end, after) == line_starts(after), \
            (before, start, end, after)


def test_a_document_s_language_is_the_editor_s_word_or_else_its_name_s() -> None:
    from model.languages import JAVASCRIPT, PYTHON, TSX, TYPESCRIPT

    assert Document("file:///a/b.py", "").language is PYTHON and Document("file:///a/b.pyi", "").language is PYTHON
    assert Document("untitled:Untitled-1", "", language_id="python").language is PYTHON
    assert Document("file:///a/b.ts", "").language is TYPESCRIPT and Document("file:///a/b.tsx", "").language is TSX
    for name in ("b.js", "b.mjs", "b.cjs", "b.jsx"):
        assert Document(f"file:///a/{name}", "").language is JAVASCRIPT
    assert Document("untitled:1", "", language_id="javascriptreact").language is JAVASCRIPT
    assert Document("untitled:1", "", language_id="typescriptreact").language is TSX
    # Not served: a language Redraft has no parser for, a file set to plain text, no name at all.
    assert Document("file:///a/b.go", "", language_id="go").language is None
    assert Document("file:///a/b.py", "", language_id="plaintext").language is None
    assert Document("file:///a/b.rs", "").language is None and Document("untitled:1", "").language is None


def test_whole_lines_sent_unchanged_at_a_change_s_edges_are_counted() -> None:
    # A `git diff -U3` hunk: three lines of context on each side, fewer at the file's start.
    assert unchanged_edge_lines("a\nb\nc\nx\nd\ne\nf\n", "a\nb\nc\ny\nd\ne\nf\n") == 3
    assert unchanged_edge_lines("x\nd\ne\n", "y\nz\nd\ne\n") == 2
    assert unchanged_edge_lines("x\r\nd\r\n", "y\r\nd\r\n") == 1
    assert unchanged_edge_lines("x\n", "y\n") == 0
    assert unchanged_edge_lines("a\n", "a\n") == 0
    # Through the document: only a change of whole lines counts, and only one per notification.
    store = DocumentStore()
    store.open(types.TextDocumentItem("file:///h.py", "python", 1, "a\nb\nc\nd\n"))

    def sent(*changes: types.TextDocumentContentChangePartial) -> int:
        params = types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri="file:///h.py"), list(changes))
        applied = store.change(params, UTF16)
        assert applied is not None and len(applied) == 1
        return applied[0].context_lines

    assert sent(change("a\nB\nc\n", (0, 0), (3, 0))) == 1
    assert sent(change("a\nb2\nc\nd\n", (0, 0), (4, 0))) == 2  # to the end of the text: `c`, `d`
    assert sent(change("x", (1, 0), (1, 1))) == 0  # a keystroke
    # Two hunks in one notification: each counted on its own (`logged one by one` below).
    params = types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=2, uri="file:///h.py"),
                                               [change("a\nb\n", (0, 0), (2, 0)), change("C", (2, 0), (2, 1))])
    assert [step.context_lines for step in store.change(params, UTF16) or []] == [1, 0]


def test_whole_line_changes_of_one_notification_are_logged_one_by_one() -> None:
    store = DocumentStore()
    store.open(types.TextDocumentItem("file:///h.py", "python", 1, "a\nb\nc\nd\n"))

    def sent(*changes: types.TextDocumentContentChangePartial) -> list[tuple[str, str]]:
        params = types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri="file:///h.py"), list(changes))
        applied = store.change(params, UTF16)
        assert applied is not None
        return [(step.before, step.after) for step in applied]

    # A diff's hunks applied in one go: each replaced whole lines, each is logged alone.
    assert sent(change("A\n", (0, 0), (1, 0)), change("", (2, 0), (3, 0))) == [
        ("a\nb\nc\nd\n", "A\nb\nc\nd\n"), ("A\nb\nc\nd\n", "A\nb\nd\n")]
    # Multiple cursors typing, at line starts too: one change of the whole notification.
    assert sent(change("#", (0, 0), (0, 0)), change("#", (2, 0), (2, 0))) == [("A\nb\nd\n", "#A\nb\n#d\n")]
    assert sent(change("", (0, 0), (0, 1)), change("x", (1, 1), (1, 1))) == [("#A\nb\n#d\n", "A\nbx\n#d\n")]
    # Lines replaced up to the end of the last one's content, as some tools send a hunk.
    assert sent(change("a\nB", (0, 0), (1, 2)), change("D", (2, 0), (2, 2))) == [
        ("A\nbx\n#d\n", "a\nB\n#d\n"), ("a\nB\n#d\n", "a\nB\nD\n")]
    # The document's last line, without a line break, replaced whole.
    store.open(types.TextDocumentItem("file:///e.py", "python", 1, "a\nb"))
    params = types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=2, uri="file:///e.py"),
                                               [change("A\n", (0, 0), (1, 0)), change("B", (1, 0), (1, 1))])
    assert [(step.before, step.after) for step in store.change(params, UTF16) or []] == [
        ("a\nb", "A\nb"), ("A\nb", "A\nB")]
