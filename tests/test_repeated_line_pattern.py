"""The ``repeated_line`` kind: one line's change made again, token by token, on the run of
lines of the same shape around it."""

from model.next_edit.edit_patterns import REPEATED_LINE, Change, pattern_edits
from model.next_edit.edit_patterns.repeated_lines import as_transformation


def edited(text: str, row: int, new_line: str) -> tuple[list[str], Change]:
    """``text``'s lines with line ``row`` changed to ``new_line``, and that change."""
    lines = text.splitlines(keepends=True)
    change = Change(row, lines[row], new_line + "\n")
    lines[row] = new_line + "\n"
    return lines, change


def proposed(text: str, row: int, new_line: str, path: str = "m.py") -> list[tuple[int, str, str]]:
    lines, change = edited(text, row, new_line)
    return [(e.start_line, e.new_text, e.kind) for e in pattern_edits(lines, change, path, (), -1)]


def test_a_value_wrapped_in_a_call_is_wrapped_at_each_entry_of_the_literal() -> None:
    text = 'record = {\n    "name": row[0],\n    "age": row[1],\n    "city": row[12],\n}\n'
    assert proposed(text, 1, '    "name": str(row[0]),') == [
        (2, '    "age": str(row[1]),\n', REPEATED_LINE), (3, '    "city": str(row[12]),\n', REPEATED_LINE)]


def test_the_run_goes_on_both_sides_nearest_first_and_stops_at_another_shape() -> None:
    text = "def f(a, b, c, d):\n    self.a = a\n    self.b = b\n    self.c = c\n    log(d)\n    self.d = d\n"
    assert proposed(text, 2, "    self.b = b or None") == [
        (3, "    self.c = c or None\n", REPEATED_LINE), (1, "    self.a = a or None\n", REPEATED_LINE)]


def test_lines_already_changed_are_passed_over_and_the_run_goes_on() -> None:
    text = "x = get(a)\ny = get(b)\nz = get(c)\n"
    lines, change = edited(text, 0, "x = get(a).strip()")
    lines[1] = "y = get(b).strip()\n"
    found = pattern_edits(lines, Change(1, "y = get(b)\n", lines[1]), "m.py", (change,), -1)
    assert [(e.start_line, e.new_text) for e in found] == [(2, "z = get(c).strip()\n")]


def test_a_name_the_edited_line_held_stands_for_the_other_lines_own() -> None:
    text = "    first = data['first']\n    second = data['second']\n"
    assert proposed(text, 0, "    first = data.get('first', first)") == [
        (1, "    second = data.get('second', second)\n", REPEATED_LINE)]


def test_a_replaced_token_must_be_the_same_on_the_other_line() -> None:
    # `"k"` replaced says nothing about `"j"`.
    text = 'a = cfg[1]["k"]\nb = cfg[2]["j"]\nc = cfg[3]["k"]\n'
    assert proposed(text, 0, 'a = cfg[1]["key"]') == [(2, 'c = cfg[3]["key"]\n', REPEATED_LINE)]


def test_other_indentation_and_lines_beyond_a_gap_are_another_run() -> None:
    text = "x = f(a)\n    y = f(b)\n\nz = f(c)\n"
    assert proposed(text, 0, "x = f(a) + 1") == []


def test_javascript_lines_are_read_alike_and_another_function_called_is_another_shape() -> None:
    text = "const a = load('a');\nconst b = load('b');\nconst $c = load('c');\nconst d = save('d');\n"
    assert proposed(text, 0, "const a = await load('a');", "m.js") == [
        (1, "const b = await load('b');\n", REPEATED_LINE), (2, "const $c = await load('c');\n", REPEATED_LINE)]


def test_the_blanks_the_change_wrote_are_kept_and_the_lines_own_elsewhere() -> None:
    text = "x = [a,b]\ny = [c,  d]\n"
    assert proposed(text, 0, "x = [a,b, 0]") == [(1, "y = [c,  d, 0]\n", REPEATED_LINE)]


def test_short_lines_renames_and_big_rewrites_are_not_repeated() -> None:
    assert proposed("x = 1\ny = 2\n", 0, "x = 10") == []
    assert as_transformation("x = load(a, b)\n", "x = something_else_entirely(1, 2, 3, 4, 5, 6, 7)\n") is None
    assert as_transformation("x = load(a)\n", "x = load(a)\n") is None


def test_two_lines_changed_alike_in_one_change_are_the_change_made_again() -> None:
    # Typed within a second, the edit log holds both lines as one change.
    text = "x = get(a)\ny = get(b)\nz = get(c)\n"
    lines = text.splitlines(keepends=True)
    change = Change(0, "x = get(a)\ny = get(b)\n", "x = get(a).strip()\ny = get(b).strip()\n")
    lines[:2] = ["x = get(a).strip()\n", "y = get(b).strip()\n"]
    found = pattern_edits(lines, change, "m.py", (), -1)
    assert [(e.start_line, e.new_text, e.kind, e.again) for e in found] == [
        (2, "z = get(c).strip()\n", REPEATED_LINE, True)]
    # Two different changes are not one made again.
    change = Change(0, "x = get(a)\ny = get(b)\n", "x = get(a).strip()\ny = get(b).lower()\n")
    lines[:2] = ["x = get(a).strip()\n", "y = get(b).lower()\n"]
    assert [e.kind for e in pattern_edits(lines, change, "m.py", (), -1)] == []
