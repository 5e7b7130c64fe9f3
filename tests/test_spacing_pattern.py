"""The ``spacing`` kind: the same words spaced anew, spaced so again where the same two words meet."""

from model.next_edit.edit_patterns import SPACING, Change, pattern_edits
from model.next_edit.edit_patterns.spacing import as_respacing


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def proposed(text: str, change: Change) -> list[tuple[int, int, str]]:
    edits = pattern_edits(lines_of(text), change, "m.py")
    assert all(edit.kind == SPACING for edit in edits)
    return [(e.start_line, e.end_line, e.new_text) for e in edits]


def test_a_stub_body_joined_to_its_header_is_joined_so_at_every_other_stub() -> None:
    text = ("class A:\n    def f(self) -> int: ...\n    def g(self, x: str) -> str:\n        ...\n\n\n"
            "def h(a: int) -> None:\n    ...\n\n\ndef i() -> None:\n    return None\n")
    change = Change(1, "    def f(self) -> int:\n        ...\n", "    def f(self) -> int: ...\n")
    # Any indentation after the line break; a body that is not `...` is left alone.
    assert proposed(text, change) == [
        (2, 4, "    def g(self, x: str) -> str: ...\n"), (6, 8, "def h(a: int) -> None: ...\n")]


def test_a_continuation_indented_anew_keeps_its_indentation_relative_to_the_line_above() -> None:
    text = "class A:\n    x = f(a,\n          b)\n\n\ny = f(a,\n    b)\n"
    change = Change(1, "    x = f(a,\n      b)\n", "    x = f(a,\n          b)\n")
    assert proposed(text, change) == [(5, 7, "y = f(a,\n      b)\n")]


def test_a_line_broken_in_two_is_typing_not_a_sweep() -> None:
    text = 'def a():\n    """\n    Return x.\n    """\n\n\ndef b():\n    """ Return y.\n    """\n'
    assert as_respacing('    """ Return x.\n', '    """\n    Return x.\n') is None
    assert proposed(text, Change(1, '    """ Return x.\n', '    """\n    Return x.\n')) == []


def test_only_a_change_of_blanks_alone_made_one_way_is_a_respacing() -> None:
    assert as_respacing("x = [ ]\n", "x = []\n") is not None
    assert as_respacing("x = [ ]\n", "y = []\n") is None  # a word changed too
    assert as_respacing("f(i-1)\n", "f(i - 1)\n") is None  # two pairs of words spaced anew
    assert as_respacing("x = 1\n", "x = 1\n") is None
    # The pair must meet the old way: `[ ]` again, not `[ x ]`; and as whole words: `foo (`, not `barfoo (`.
    text = "x = []\ny = [ ]\nz = [ x ]\nw = f([ ])\n"
    assert proposed(text, Change(0, "x = [ ]\n", "x = []\n")) == [(1, 2, "y = []\n"), (3, 4, "w = f([])\n")]
    text = "foo(1)\nbarfoo (2)\nfoo (3)\n"
    assert proposed(text, Change(0, "foo (1)\n", "foo(1)\n")) == [(2, 3, "foo(3)\n")]


def test_a_change_that_changed_words_is_left_to_the_other_kinds() -> None:
    text = "a = f(x,y)\nb = f(x,y)\n"
    edits = pattern_edits(lines_of(text), Change(0, "a = f(x,y)\n", "a = g(x, y)\n"), "m.py")
    assert all(edit.kind != SPACING for edit in edits)


def test_the_blank_after_a_docstrings_opening_quotes_is_respaced_in_every_docstring() -> None:
    text = ('def a():\n    """ Return x."""\n\n\nclass B:\n    r""" Hold y.\n\n    More.\n    """\n'
            "    def c(self):\n        ''' Call z.'''\n        s = \"\"\" not a docstring\"\"\"\n"
            '    def d(self):\n        """ """\n')
    change = Change(1, '    """ Return x."""\n', '    """Return x."""\n')
    # Whatever the first word, with a prefix or not; the same quotes only; not quotes mid-line,
    # nor a blank docstring.
    assert proposed(text, change) == [(5, 6, '    r"""Hold y.\n')]
    single = Change(10, "        ''' Call z.'''\n", "        '''Call z.'''\n")
    assert proposed(text, single) == []
    # A docstring's quotes and the same first word: still the docstring sweep.
    assert as_respacing('    """ Return x.\n', '    """Return x.\n') == as_respacing('""" Hold.\n', '"""Hold.\n')
