"""A next-edit request's recent edits read into the history the language server's edit log
would hold: typed edits undone from the content, unified diffs read by hand."""

from __future__ import annotations

from typing import Any

import pytest

from lsp_server.engine import EditRecord
from lsp_server.http_api.errors import ApiError
from lsp_server.http_api.recent_edits import parse_recent_edits, recent_history
from lsp_server.http_api.unified_diff import DiffError, parse_unified_diff


def history(content: str, path: str, edits: list[Any]) -> list[tuple[str, int, str, str, bool, int]]:
    return [(r.path, r.start_line, r.old_text, r.new_text, r.in_document, r.context_lines)
            for r in recent_history(content, path, parse_recent_edits(edits))]


def typed(line: int, start: int, end: int, new_text: str, old_text: str | None = None) -> dict[str, Any]:
    edit: dict[str, Any] = {"range": {"start": {"line": line, "character": start},
                                      "end": {"line": line, "character": end}}, "newText": new_text}
    if old_text is not None:
        edit["oldText"] = old_text
    return edit


def test_keystrokes_at_one_place_are_one_event_as_the_edit_log_merges_them() -> None:
    # `count` → `n`: deleted, then typed, as an editor reports it.
    edits = [typed(0, 8, 13, "", "count"), typed(0, 8, 8, "n")]
    assert history("total = n + 1\nprint(count)\n", "a.py", edits) == [
        ("a.py", 0, "total = count + 1\n", "total = n + 1\n", True, 0)]


def test_positions_count_utf16_code_units() -> None:
    # 😀 is two UTF-16 units: the quote typed after it is at character 7, not 6.
    assert history("s = '😀'\n", "s.py", [typed(0, 7, 7, "'")]) == [
        ("s.py", 0, "s = '😀\n", "s = '😀'\n", True, 0)]


def test_a_git_diff_with_context_gives_each_hunk_as_its_changed_lines() -> None:
    before = "".join(f"line{i}\n" for i in range(20))
    after = before.replace("line2\n", "LINE2\n").replace("line15\n", "LINE15\n")
    diff = ("diff --git a/src/f.txt b/src/f.txt\nindex 1234567..89abcde 100644\n--- a/src/f.txt\n+++ b/src/f.txt\n"
            "@@ -1,6 +1,6 @@\n line0\n line1\n-line2\n+LINE2\n line3\n line4\n line5\n"
            "@@ -13,7 +13,7 @@\n line12\n line13\n line14\n-line15\n+LINE15\n line16\n line17\n line18\n")
    # The path the request names ends with the diff's: the same file. Git's three context lines are told.
    assert history(after, "/home/me/project/src/f.txt", [diff]) == [
        ("f.txt", 2, "line2\n", "LINE2\n", True, 3), ("f.txt", 15, "line15\n", "LINE15\n", True, 3)]


def test_another_files_diff_is_history_but_not_undone_from_the_content() -> None:
    other = "--- a/box.py\n+++ b/box.py\n@@ -4,3 +4,3 @@\n class Box:\n-    size = 1\n+    size = 2\n \n"
    assert history("x = 1\n", "main.py", [other]) == [("box.py", 4, "    size = 1\n", "    size = 2\n", False, 1)]


def test_crlf_text_and_a_last_line_without_a_break_are_undone_exactly() -> None:
    content = "a = 1\r\nb = 3"
    open_end = "\\ No newline at end of file\n"
    diff = f"--- a/c.py\n+++ b/c.py\n@@ -2 +2 @@\n-b = 2\n{open_end}+b = 3\n{open_end}"
    assert history(content, "c.py", [diff]) == [("c.py", 1, "b = 2", "b = 3", True, 0)]
    # A typed edit older than the diff is placed in the text before the diff.
    assert history(content, "c.py", [typed(0, 4, 5, "1", "0"), diff])[0][1:4] == (0, "a = 0\r\n", "a = 1\r\n")


@pytest.mark.parametrize(("edit", "says"), [
    (typed(0, 0, 3, "abc"), "no 'oldText'"),
    (typed(0, 0, 0, "zzz"), "its newText is not at its range's start"),
    (typed(0, 0, 1, "a", "xyz"), "its range does not span its oldText"),
    (typed(0, 3, 1, "a"), "its range ends before it starts"),
    (typed(4, 0, 0, ""), "its range starts past the end"),
    ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-abc\n+zzz\n", "does not match content"),
])
def test_edits_that_do_not_lead_to_the_content_are_refused_by_index(edit: Any, says: str) -> None:
    with pytest.raises(ApiError) as refused:
        history("abc\n", "x", [typed(0, 0, 0, ""), edit])
    assert refused.value.status == 400 and "'recent_edits[1]'" in refused.value.message
    assert says in refused.value.message


@pytest.mark.parametrize(("text", "says"), [
    ("nothing here", "line 1 is neither a header nor in a hunk"),
    ("--- a/x\n+++ b/x\n", "holds no hunk"),
    ("@@ -1,2 +1 @@\n-a\n+b\n", "ends 1 old and 0 new lines short"),
    ("@@ -1 +1 @@\n-a\n+b\n+c\n", "line 4 is neither a header"),
    ("@@ one @@\n", "a hunk header must read"),
    ("@@ -1 +1 @@\n*a\n", "line 2 does not fit the hunk"),
])
def test_a_malformed_diff_says_where(text: str, says: str) -> None:
    with pytest.raises(DiffError) as refused:
        parse_unified_diff(text)
    assert says in str(refused.value)


def test_a_hunk_adding_lines_names_the_line_they_follow() -> None:
    (hunk,) = parse_unified_diff("@@ -3,0 +4,2 @@\n+x = 1\n+y = 2\n")
    assert (hunk.at, hunk.old_lines, hunk.new_lines) == (3, [], ["x = 1", "y = 2"])
    assert recent_history("a\nb\nc\nx = 1\ny = 2\n", "a.py", parse_recent_edits([
        "@@ -3,0 +4,2 @@\n+x = 1\n+y = 2\n"])) == (
            EditRecord("a.py", 3, "", "x = 1\ny = 2\n", True, 0, whole_lines=True),)
