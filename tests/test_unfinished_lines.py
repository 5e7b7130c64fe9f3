"""A line left half-typed implies no next edit yet (``edit_patterns/unfinished.py``)."""

import pytest

from model.line_forms import parses_in_a_file as parses
from model.next_edit.edit_patterns import Change
from model.next_edit.edit_patterns.unfinished import unfinished
from model.next_edit.edit_record import EditRecord
from model.next_edit.editor import pattern_proposals


@pytest.mark.parametrize("line", [
    "x = compute(a, b)", "def task_id(self):  # kept for compatibility", "else:", "except KeyError:",
    "'wheel', 'sdist',", "timeout: float = None,", "\"key\": value,", "Record as RecordInterface,",
    ")", "], key=len)", ") -> None:", "})", '"""A docstring that goes on', "# a comment (", "",
    "return", "@decorator(name)", "async with lock as held:",
])
def test_lines_that_a_python_file_holds_parse(line: str) -> None:
    assert parses(line)


@pytest.mark.parametrize("line", [
    "f = self._loop.", "timeout: Optional[ = None,", "pool = Pool(parser_class=**options)",
    "if comment is:", "writer.write(await f.read", "x = foo(",
])
def test_half_typed_lines_do_not(line: str) -> None:
    assert not parses(line)


def test_only_a_python_line_broken_by_the_change_is_unfinished() -> None:
    half = Change(3, "    f: Future = Future()\n", "    f = self._loop.\n")
    assert unfinished(half, "m.py")
    assert not unfinished(half, "m.js")  # another language: not judged
    assert not unfinished(Change(3, "    x = foo(\n", "    x = bar(\n"), "m.py")  # broken before too
    assert not unfinished(Change(3, "    f: Future = Future()\n", "    f = self._loop.create_future()\n"), "m.py")
    assert not unfinished(Change(3, "a\nb\n", "a.\nb\n"), "m.py")  # several lines: not judged
    long_line = "x = [" + "1, " * 500 + "]\n"
    assert not unfinished(Change(3, long_line, long_line.replace("]", "")), "m.py")  # too long to judge


def test_the_twin_of_a_half_typed_line_waits_for_the_line_to_be_finished() -> None:
    twin = "    f: Future = Future()\n"
    text = f"def a(self):\n{twin}    return f\n\n\ndef b(self):\n{twin}    return f\n"

    def proposed(typed: str) -> list[tuple[int, str]]:
        lines = text.replace(twin, f"    {typed}\n", 1).splitlines(keepends=True)
        history = [EditRecord("m.py", 1, twin, f"    {typed}\n")]
        return [(p.start_line, p.new_text) for p in pattern_proposals(lines, history)]

    assert proposed("f = self._loop.") == []
    assert proposed("f = self._loop.create_future()") == [(6, "    f = self._loop.create_future()\n")]
