"""A Python line judged alone, in the forms a line takes in a file.

A line means little alone: ``'wheel', 'sdist',`` is an argument list's line, ``else:`` a
branch, ``) -> None:`` the end of a signature. So a line is tried as a statement, a block's
header, a line of a call's arguments, of a dict, of a ``def``'s parameters or an import's
names, an ``else``/``except`` branch, a decorator, the closing line of brackets opened
above: next edits wait while a line parses in none of them (a half-typed line,
``next_edit/edit_patterns/unfinished.py``). Leniently, also as a line joined to the lines
around it: one that parses in none of those is broken wherever it stands, and FIM does not
offer a colon that ends such a line (``languages/python_statement.py``).
"""

from __future__ import annotations

from model.code_text import code_spans
from model.languages.python_parse import parses

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
# A line that may go on over the lines around it: joined to them inside brackets by an
# operator, a dot, a comprehension's clause, a lambda's or a dict's colon; a try's header;
# a ``case``; before a backslash's continuation. Too lenient to tell a half-typed line
# (``f = self._loop.`` may go on inside a call), enough to tell a line that never can.
_JOINED_FORMS = (
    "{}\n    pass\nfinally:\n    pass",
    "_(_\n{}\n)",
    "_(\n{}\n_)",
    "_(_\n{}\n_)",
    "[_\n{}\n]",
    "{{\n{}\n_}}",
    "_(_ if _\n{}\n)",
    "match _:\n    {}\n        pass",
    "{}\n_",
)
_OPENER = {")": "(", "]": "[", "}": "{"}
_CLOSER = {"(": ")", "[": "]", "{": "}"}
_TRIPLE_QUOTES = ('"""', "'''")


def _unmatched(code: str) -> tuple[str, str]:
    """The closing brackets of ``code`` that close nothing opened in it, in order, and the
    opening ones it leaves open, in order (strings and the comment skipped)."""
    opened: list[str] = []
    closers: list[str] = []
    for start, end in code_spans(code, "#"):
        for char in code[start:end]:
            if char in _CLOSER:
                opened.append(char)
            elif char in _OPENER:
                if opened:
                    opened.pop()
                else:
                    closers.append(char)
    return "".join(closers), "".join(opened)


def parses_in_a_file(line: str, joined: bool = False) -> bool:
    """``line`` parses as Python in one of the forms a line takes in a file. With
    ``joined``, also as a line that goes on over the lines around it (``_JOINED_FORMS``),
    the brackets it opens closed by lines to come; without, a line that opens brackets
    never parses: ``x = foo(`` may still be being typed."""
    code = line.strip()
    if not code or len(code) > MAX_JUDGED_LINE or any(code.count(quotes) % 2 for quotes in _TRIPLE_QUOTES):
        return True  # blank, too long to judge, or opening or closing a multi-line string
    closers, openers = _unmatched(code)
    codes = [code]
    heads = [""]
    if closers:  # the last line of a call, a list or a signature: open what it closes
        heads.append("x = " + "".join("_(" if c == ")" else _OPENER[c] for c in reversed(closers)) + "\n")
    if joined:
        if openers:
            closing = "".join(_CLOSER[c] for c in reversed(openers))
            codes = [code + closing, code + "_" + closing, code + closing + ":"]  # `f(` `{"a":` `def f(`
        if closers:
            plain = "".join(_OPENER[c] for c in reversed(closers))
            heads += [heads[1][:-1] + "_,\n", f"x = {plain}_\n"] + ([f"def _{plain}\n"] if closers[0] == ")" else [])
    forms = _FORMS + _JOINED_FORMS if joined else _FORMS
    # The FIM calibrators' parse: its warnings about odd code are dropped process-wide by
    # name, and deep nesting counts as not parsing.
    return any(parses(form.format(head + text)) for head in heads for text in codes for form in forms)
