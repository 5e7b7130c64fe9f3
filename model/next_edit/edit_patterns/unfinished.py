"""A line still being typed: the change left it unparseable where it parsed before.

Editors ask for next edits while the user types (VS Code after each pause of 300 ms), and
a half-typed line implies nothing yet. Read as a change, ``f: Future = Future()`` on its
way to ``f = self._loop.create_future()`` made the patterns propose ``f = self._loop.`` at
its twin. Typing 245 real one-line changes word by word, 166 of 1,314
requests made along the way showed a proposal, most of them the half-typed text carried
elsewhere; with this rule, 75, and the same 43 proposals once each line was finished.

A line is judged alone, in the forms a Python line takes in a file (``model/line_forms.py``);
one that opens brackets is not closed for it, since it may be typed on. Only a line that
parsed in one of them before the change and in none after it is unfinished; of 6,938
one-line changes in real release diffs, 4 were (their new syntax or their context is
beyond these forms).
"""

from __future__ import annotations

from model.line_forms import MAX_JUDGED_LINE, parses_in_a_file
from model.next_edit.edit_patterns.changes import Change
from model.next_edit.edit_patterns.text import split_lines

PYTHON_SUFFIXES = (".py", ".pyi")


def unfinished(change: Change, path: str) -> bool:
    """A one-line change of a Python file that broke the line: typing is under way."""
    if not path.endswith(PYTHON_SUFFIXES):
        return False
    old, new = split_lines(change.old_text), split_lines(change.new_text)
    if not len(old) == len(new) == 1 or max(len(old[0]), len(new[0])) > MAX_JUDGED_LINE:
        return False
    return parses_in_a_file(old[0]) and not parses_in_a_file(new[0])
