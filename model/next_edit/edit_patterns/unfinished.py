"""A line still being typed: the change left it unparseable where it parsed before.

Editors ask for next edits while the user types (VS Code after each pause of 300 ms), and
a half-typed line implies nothing yet. Read as a change, ``f: Future = Future()`` on its
way to ``f = self._loop.create_future()`` made the patterns propose ``f = self._loop.`` at
its twin. Typing 245 real one-line changes word by word (session 66), 166 of 1,314
requests made along the way showed a proposal, most of them the half-typed text carried
elsewhere; with this rule, 75, and the same 43 proposals once each line was finished.

A line is judged alone, in the forms a Python line takes in a file: a statement, a block's
header, a line of a call's arguments, of a dict, of a ``def``'s parameters or an import's
names, an ``else``/``except`` branch, a decorator, the closing line of brackets opened
above. Only a line that parsed in one of them before the change and in none after it is
unfinished; of 6,938 one-line changes in real release diffs, 4 were (their new syntax or
their context is beyond these forms).
"""

from __future__ import annotations

from model.code_text import code_spans
from model.fim import candidate_parse
from model.next_edit.edit_patterns.changes import Change
from model.next_edit.edit_patterns.text import split_lines

PYTHON_SUFFIXES = (".py", ".pyi")
# Longer lines are not judged: parsing one in every form would cost the request milliseconds.
MAX_JUDGED_LINE = 1_000
# The body goes on its own line: a trailing comment would swallow it on the same line.
_FORMS = (
    "{}",
    "{}\n    pass",
    "_(\n{}\n)",
    "{{\n{}\n}}",
    "def _(\n{}\n): pass",
    "from _ import (\n{}\n)",
    "if _: pass\n{}\n    pass",
    "try: pass\n{}\n    pass",
    "def _(\n{}\n    pass",
    "{}\ndef _(): pass",
)
_OPENER = {")": "(", "]": "[", "}": "{"}
_TRIPLE_QUOTES = ('"""', "'''")


def parses(line: str) -> bool:
    """The line parses as Python in one of the forms a line takes in a file."""
    code = line.strip()
    if not code or any(code.count(quotes) % 2 for quotes in _TRIPLE_QUOTES):
        return True  # blank, or opening or closing a multi-line string: no judging it alone
    codes = [code]
    closers = _unmatched_closers(code)
    if closers:  # the last line of a call, a list or a signature: open what it closes
        codes.append("x = " + "".join("_(" if c == ")" else _OPENER[c] for c in reversed(closers)) + "\n" + code)
    # The FIM calibrators' parse: its warnings about odd code are dropped process-wide by
    # name, and deep nesting counts as not parsing.
    return any(candidate_parse.parses(form.format(candidate)) for candidate in codes for form in _FORMS)


def _unmatched_closers(code: str) -> str:
    """The closing brackets of ``code`` that close nothing opened in it, in order (strings
    and the comment skipped)."""
    depth, unmatched = 0, []
    for start, end in code_spans(code, "#"):
        for char in code[start:end]:
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth:
                    depth -= 1
                else:
                    unmatched.append(char)
    return "".join(unmatched)


def unfinished(change: Change, path: str) -> bool:
    """A one-line change of a Python file that broke the line: typing is under way."""
    if not path.endswith(PYTHON_SUFFIXES):
        return False
    old, new = split_lines(change.old_text), split_lines(change.new_text)
    if not len(old) == len(new) == 1 or max(len(old[0]), len(new[0])) > MAX_JUDGED_LINE:
        return False
    return parses(old[0]) and not parses(new[0])
