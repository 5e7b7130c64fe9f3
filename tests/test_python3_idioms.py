"""The ``python3_idiom`` kind: Python 2's leftovers written the Python 3 way on every other line."""

from model.next_edit.edit_patterns import PYTHON3_IDIOM, Change, pattern_edits


def proposed(text: str, change: Change) -> list[tuple[int, str]]:
    edits = pattern_edits(text.splitlines(keepends=True), change, "m.py")
    assert all(edit.kind == PYTHON3_IDIOM for edit in edits)
    return [(e.start_line, e.new_text) for e in edits]


DOC = ('class A:\n    def __init__(self):\n        super().__init__()\n\n\n'
       'class B(object):\n    def __init__(self, x):\n        super(B, self).__init__(x)\n'
       '        self.s = u"caf"  # u"x"\n        other = super(A, self)\n    """super(B, self), u"doc"."""\n'
       '\n\nclass C(object):\n    @classmethod\n    def make(cls):\n        return super(C, cls).make()\n')


def test_super_s_arguments_dropped_in_a_method_of_the_class_they_name_only() -> None:
    change = Change(2, "        super(A, self).__init__()\n", "        super().__init__()\n")
    # Not `super(A, self)` in B (another class: super() there means B), nor in a docstring.
    assert proposed(DOC, change) == [(7, "        super().__init__(x)\n"), (16, "        return super().make()\n")]


def test_object_bases_and_u_prefixes_each_repeat_their_own_sweep() -> None:
    text = DOC.replace("class A:", "class A(Base):")
    another_base = pattern_edits(text.splitlines(keepends=True), Change(0, "class A(object):\n", "class A(Base):\n"))
    assert all(edit.kind != PYTHON3_IDIOM for edit in another_base)  # not an idiom dropped
    objects = DOC.replace("class B(object):", "class B:")
    assert proposed(objects, Change(5, "class B(object):\n", "class B:\n")) == [(13, "class C:\n")]
    prefixes = DOC.replace('self.s = u"caf"', 'self.s = "caf"') + 'y = U"é"\n'
    change = Change(8, '        self.s = u"caf"  # u"x"\n', '        self.s = "caf"  # u"x"\n')
    assert proposed(prefixes, change) == [(17, 'y = "é"\n')]


def test_a_line_that_changed_otherwise_too_is_no_sweep() -> None:
    change = Change(7, "        super(B, self).__init__(y)\n", "        super().__init__(x)\n")
    assert all(edit.kind != PYTHON3_IDIOM for edit in pattern_edits(DOC.splitlines(keepends=True), change, "m.py"))
