"""The ``quotes`` kind: string literals requoted, requoted alike on the other lines."""

from model.next_edit.edit_patterns import QUOTES, Change, pattern_edits
from model.next_edit.edit_patterns.quotes import requoted, requoting


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def test_every_literal_that_can_take_the_new_quote_is_requoted_and_nothing_else() -> None:
    text = "y = 'b' + 'it\\'s'  # don't\nz = f'{x}' + rb'q' + 'say \"hi\"'\n"
    assert requoted(text, '"') == "y = \"b\" + 'it\\'s'  # don't\nz = f\"{x}\" + rb\"q\" + 'say \"hi\"'\n"
    # Inside a triple-quoted string nothing is a literal of its own.
    assert requoted("s = '''\n'not me'\n'''\n", '"') == "s = '''\n'not me'\n'''\n"
    assert requoted('a = "x"\n', "'") == "a = 'x'\n"


def test_only_a_change_that_requoted_all_it_could_is_a_requoting() -> None:
    assert requoting("f('a', 'b')\n", 'f("a", "b")\n') == '"'
    assert requoting("f('a', 'b')\n", "f(\"a\", 'b')\n") is None  # a literal left as it was
    assert requoting("f('a')\n", 'g("a")\n') is None  # a word changed too
    assert requoting('f("a")\n', "f('a')\n") == "'"


def test_a_requoted_line_has_the_other_lines_requoted_alike() -> None:
    text = ('x = "a"\ny = "c"\n\n\ndef f():\n    """Doc: \'quoted\' stays."""\n'
            "    return g('k', key='v')  # 'c'\nw = 'say \"hi\"'\n")
    edits = pattern_edits(lines_of(text), Change(0, "x = 'a'\n", 'x = "a"\n'), "m.py")
    assert [(e.start_line, e.end_line, e.new_text, e.kind) for e in edits] == [
        (6, 7, "    return g(\"k\", key=\"v\")  # 'c'\n", QUOTES)]
