import threading

from lsp_server.edit_log import EditEvent, EditLog

URI = "file:///work/project/pkg/mod.py"
OTHER = "file:///work/project/pkg/other.py"


def type_chars(log: EditLog, uri: str, text: str, offset: int, chars: str, start: float, step: float = 0.1) -> str:
    """Type ``chars`` one keystroke at a time at ``offset``; returns the final text."""
    for i, ch in enumerate(chars):
        after = text[: offset + i] + ch + text[offset + i :]
        log.record(uri, text, after, now=start + i * step)
        text = after
    return text


def test_keystrokes_on_one_line_merge_into_one_event() -> None:
    log = EditLog()
    text = "def f(a):\n    return a\n"
    after = type_chars(log, URI, text, text.index("a)"), "bb, ", start=10.0)
    events = log.events(now=11.0)
    assert len(events) == 1
    assert events[0].start_line == 0
    assert events[0].old_text == "def f(a):\n"
    assert events[0].new_text == "def f(bb, a):\n"
    assert after == "def f(bb, a):\n    return a\n"
    assert events[0].time == 10.0 + 3 * 0.1


def test_typing_on_adjacent_lines_merges_into_one_event() -> None:
    log = EditLog()
    text = "a = 1\nb = 2\nc = 3\n"
    text = type_chars(log, URI, text, text.index("1") + 1, "0", start=1.0)
    type_chars(log, URI, text, text.index("2") + 1, "0", start=1.2)
    [event] = log.events(now=2.0)
    assert (event.start_line, event.old_text, event.new_text) == (0, "a = 1\nb = 2\n", "a = 10\nb = 20\n")


def test_after_a_suggestion_is_accepted_or_dismissed_the_next_change_is_its_own_event() -> None:
    log = EditLog()
    text = "def add(a, b):\n    return a\n"
    text = type_chars(log, URI, text, text.index("a\n") + 1, " + b", start=1.0)  # then a suggestion is dismissed
    log.end_burst()
    renamed = text.replace("(a,", "(first,")
    log.record(URI, text, renamed, now=1.6)  # the rename on the line above, within the merge window
    events = log.events(now=2.0)
    assert [(e.start_line, e.new_text) for e in events] == [(1, "    return a + b\n"), (0, "def add(first, b):\n")]


def test_edits_far_apart_are_separate_events() -> None:
    log = EditLog()
    text = "".join(f"line {i}\n" for i in range(20))
    text = type_chars(log, URI, text, text.index("line 2") + 6, "x", start=1.0)
    type_chars(log, URI, text, text.index("line 15") + 7, "y", start=1.1)
    events = log.events(now=2.0)
    assert [(e.start_line, e.new_text) for e in events] == [(2, "line 2x\n"), (15, "line 15y\n")]


def test_edits_after_the_merge_window_are_separate_events() -> None:
    log = EditLog(merge_window_s=1.0)
    text = "x = 1\n"
    text = type_chars(log, URI, text, 5, "2", start=1.0)
    type_chars(log, URI, text, 6, "3", start=2.5)
    events = log.events(now=3.0)
    assert [(e.old_text, e.new_text) for e in events] == [("x = 1\n", "x = 12\n"), ("x = 12\n", "x = 123\n")]


def test_edits_in_another_file_or_from_disk_close_the_group() -> None:
    log = EditLog()
    log.record(URI, "a\n", "ab\n", now=1.0)
    log.record(OTHER, "z\n", "zz\n", now=1.1)
    log.record(URI, "ab\n", "abc\n", now=1.2)
    log.record(URI, "abc\n", "abcd\n", source="disk", now=1.3)
    assert [(e.uri, e.source, e.new_text) for e in log.events(now=2.0)] == [
        (URI, "editor", "ab\n"),
        (OTHER, "editor", "zz\n"),
        (URI, "editor", "abc\n"),
        (URI, "disk", "abcd\n"),
    ]


def test_typed_then_deleted_leaves_no_event() -> None:
    log = EditLog()
    text = "print(x)\n"
    typed = type_chars(log, URI, text, 6, "abc", start=1.0)
    for i in range(3):
        log.record(URI, typed, typed[: 8 - i] + typed[9 - i :], now=1.5 + i * 0.1)
        typed = typed[: 8 - i] + typed[9 - i :]
    assert typed == text
    assert log.events(now=2.0) == []
    assert len(log.events_for(URI, now=2.0)) == 0


def test_a_changed_text_between_keystrokes_starts_a_new_event() -> None:
    log = EditLog()
    log.record(URI, "a\n", "ab\n", now=1.0)
    # The editor's text no longer matches what the log saw last: no snapshot re-diff.
    log.record(URI, "q\nab\n", "q\nabc\n", now=1.1)
    assert [e.new_text for e in log.events(now=2.0)] == ["ab\n", "abc\n"]


def test_count_bound_drops_the_oldest_events() -> None:
    log = EditLog(max_events=3, merge_window_s=0.0)
    for i in range(5):
        log.record(f"file:///f{i}.py", "", f"v{i}\n", now=float(i))
    assert [e.new_text for e in log.events(now=5.0)] == ["v2\n", "v3\n", "v4\n"]
    assert len(log.events(now=5.0)) == 3


def test_byte_bound_drops_the_oldest_events() -> None:
    log = EditLog(max_bytes=250)
    for i in range(4):
        log.record(f"file:///f{i}.py", "", "x" * 99 + "\n", now=float(i))
    assert [e.uri for e in log.events(now=4.0)] == ["file:///f2.py", "file:///f3.py"]


def test_age_bound_drops_old_events_on_access() -> None:
    log = EditLog(max_age_s=10.0)
    log.record(URI, "", "old\n", now=0.0)
    log.record(OTHER, "", "new\n", now=8.0)
    assert len(log.events(now=9.0)) == 2
    assert [e.new_text for e in log.events(now=15.0)] == ["new\n"]


def test_a_huge_event_is_skipped() -> None:
    log = EditLog(max_event_bytes=16_000)
    log.record(URI, "", "x = 1\n" * 5000, now=1.0)
    assert log.events(now=1.0) == []
    log.record(URI, "a\n", "b\n", now=1.5)
    assert [e.new_text for e in log.events(now=1.5)] == ["b\n"]


def test_form_feed_and_unicode_line_separators_do_not_split_lines() -> None:
    log = EditLog()
    before = "a = 1\nb = '\x0c\u2028\x1c' + c\nd = 2\n"
    after = before.replace("+ c", "+ cc")
    log.record(URI, before, after, now=1.0)
    [event] = log.events(now=1.0)
    assert event.start_line == 1
    assert event.old_text == "b = '\x0c\u2028\x1c' + c\n"
    assert event.new_text == "b = '\x0c\u2028\x1c' + cc\n"
    assert event.as_diff().count("\n") == 5


def test_crlf_and_lone_cr_are_line_breaks() -> None:
    log = EditLog(merge_window_s=0.0)
    log.record(URI, "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", now=1.0)
    log.record(OTHER, "a\rb\rc", "a\rb\rC", now=2.0)
    log.record("file:///t.py", "a\r\nb", "a\rb", now=3.0)
    first, second, third = log.events(now=3.0)
    assert (first.start_line, first.old_text, first.new_text) == (1, "b\r\n", "B\r\n")
    assert (second.start_line, second.old_text, second.new_text) == (2, "c", "C")
    assert (third.start_line, third.old_text, third.new_text) == (0, "a\r\n", "a\r")


def test_inserting_and_deleting_whole_lines_gives_one_sided_hunks() -> None:
    log = EditLog(merge_window_s=0.0)
    log.record(URI, "a\nc\n", "a\nb\nc\n", now=1.0)
    log.record(URI, "a\nb\nc\n", "a\nc\n", now=2.0)
    inserted, deleted = log.events(now=2.0)
    assert (inserted.start_line, inserted.old_text, inserted.new_text) == (1, "", "b\n")
    assert (deleted.start_line, deleted.old_text, deleted.new_text) == (1, "b\n", "")


def test_a_line_deleted_or_inserted_before_one_with_the_same_indentation_is_a_hunk_of_that_line_alone() -> None:
    log = EditLog(merge_window_s=0.0)
    before = "def f():\n    a = 1\n    b = 2\n"
    log.record(URI, before, "def f():\n    b = 2\n", now=1.0)
    log.record(URI, "def f():\n    b = 2\n", before, now=2.0)
    log.record(URI, before, "def f():\n    a = 1\n    a = 1\n    b = 2\n", now=3.0)  # a line duplicated
    deleted, inserted, duplicated = log.events(now=3.0)
    assert (deleted.start_line, deleted.old_text, deleted.new_text) == (1, "    a = 1\n", "")
    assert (inserted.start_line, inserted.old_text, inserted.new_text) == (1, "", "    a = 1\n")
    assert (duplicated.start_line, duplicated.old_text, duplicated.new_text) == (2, "", "    a = 1\n")
    # Typing inside a line still makes a hunk of that line, however much of it repeats below.
    log = EditLog(merge_window_s=0.0)
    log.record(URI, "    x = 1\n    x = 1\n", "    x = 12\n    x = 1\n", now=1.0)
    (typed,) = log.events(now=1.0)
    assert (typed.start_line, typed.old_text, typed.new_text) == (0, "    x = 1\n", "    x = 12\n")


def test_as_diff_renders_a_unified_hunk_named_after_the_file() -> None:
    event = EditEvent(URI, 4, "x = 1\ny = 2\n", "x = 10\n", time=0.0, source="editor")
    assert event.as_diff() == "--- a/mod.py\n+++ b/mod.py\n@@ -5,2 +5,1 @@\n-x = 1\n-y = 2\n+x = 10\n"
    assert event.as_diff(name="pkg/mod.py").startswith("--- a/pkg/mod.py\n+++ b/pkg/mod.py\n")
    insertion = EditEvent(URI, 4, "", "z\n", time=0.0, source="disk")
    assert "@@ -4,0 +5,1 @@\n+z\n" in insertion.as_diff()
    assert not insertion.is_empty
    assert EditEvent(URI, 0, "a\n", "a\n", time=0.0, source="editor").is_empty


def test_forget_drops_a_files_events() -> None:
    log = EditLog()
    log.record(URI, "", "a\n", now=1.0)
    log.record(OTHER, "", "b\n", now=1.1)
    log.forget(URI)
    assert [e.uri for e in log.events(now=2.0)] == [OTHER]
    assert log.events_for(URI, now=2.0) == []


def test_records_from_many_threads_are_all_kept() -> None:
    log = EditLog(max_events=1000, max_bytes=10**6)

    def write(n: int) -> None:
        for i in range(50):
            log.record(f"file:///t{n}.py", "", f"{i}\n", now=float(i))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(log.events(now=60.0)) == 200


def test_a_hunk_always_rebuilds_the_new_text_from_whole_old_lines() -> None:
    import random
    import re

    rng = random.Random(3)
    breaks = re.compile(r"\r\n|\r|\n")
    for _ in range(2000):
        before = "".join(rng.choice("ab\r\n\x0c") for _ in range(rng.randint(0, 12)))
        after = "".join(rng.choice("ab\r\n\x0c") for _ in range(rng.randint(0, 12)))
        if before == after:
            continue
        log = EditLog()
        log.record(URI, before, after, now=0.0)
        [event] = log.events(now=0.0)
        starts = [0, *(m.end() for m in breaks.finditer(before))]
        at = starts[event.start_line]
        assert before[at : at + len(event.old_text)] == event.old_text
        assert before[:at] + event.new_text + before[at + len(event.old_text) :] == after
        # The hunk ends where a line ends in both texts (or at the end of the text).
        tail = before[at + len(event.old_text) :]
        assert not tail or event.old_text == "" or event.old_text[-1] in "\r\n"
        assert not (event.old_text.endswith("\r") and tail.startswith("\n"))
        assert not (event.new_text.endswith("\r") and tail.startswith("\n"))
