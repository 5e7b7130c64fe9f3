"""The ``python3_idiom`` kind: Python 2's leftovers written the Python 3 way (a sweep,
by hand or pyupgrade's fixes replayed hunk by hunk), on every other line they are left on.

Three idioms, each rewritten exactly: ``super(Name, self)`` → ``super()`` (``cls`` too,
and only in a method of the class ``Name`` itself, where the two mean the same),
``class Name(object):`` → ``class Name:``, and a string's ``u`` prefix dropped
(``u"x"`` → ``"x"``). A change that is those idioms rewritten, and nothing else, has the
same idioms rewritten on the other lines; comments and strings are left alone.

Replayed release diffs of the corpus: after a hunk that dropped ``super``'s
arguments, the next hunk dropped them too 26 times in 36; a ``u`` prefix, 19 in 31.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import cache

from model.code_text import PYTHON_LITERAL, PythonLiterals
from model.next_edit.edit_patterns.changes import PYTHON3_IDIOM, Change, PatternEdit
from model.next_edit.edit_patterns.one_line_rewrites import LONGEST_LINE, MAX_REWRITTEN_LINES
from model.next_edit.edit_patterns.text import indent_of, split_lines

_SUPER = re.compile(r"(?<![\w.])super\(\s*(\w+)\s*,\s*(?:self|cls)\s*\)")
_OBJECT_BASE = re.compile(r"^([ \t]*class[ \t]+\w+)\(\s*object\s*\)([ \t]*:)", re.MULTILINE)
_CLASS = re.compile(r"[ \t]*class[ \t]+(\w+)")
_U_PREFIX = re.compile(r"(?<![\w])[uU]$")


def _without_super_arguments(text: str, class_of: Callable[[int], str | None]) -> str:
    """``super(Name, self)`` → ``super()`` where ``class_of(offset)`` says the code at that
    offset is in class ``Name``."""
    return _SUPER.sub(lambda m: "super()" if class_of(m.start()) == m.group(1) else m.group(), text)


def _without_object_base(text: str) -> str:
    return _OBJECT_BASE.sub(r"\1\2", text)


def _without_u_prefix(text: str) -> str:
    pieces, at = [], 0
    for match in PYTHON_LITERAL.finditer(text):
        if match.group().startswith(("'", '"')) and _U_PREFIX.search(text, max(0, match.start() - 2), match.start()):
            pieces.append(text[at:match.start() - 1])
            at = match.start()
    pieces.append(text[at:])
    return "".join(pieces)


def _in_code(text: str, rewritten: str) -> bool:
    """The rewrite touched only code: the comments and strings read the same."""
    return [m.group() for m in PYTHON_LITERAL.finditer(text)] == [m.group() for m in PYTHON_LITERAL.finditer(rewritten)]


def _enclosing_class(lines: Sequence[str], row: int) -> str | None:
    """The name of the class whose body holds ``row``: the nearest ``class`` line above it
    at a lesser indentation than the lines between (a method's ``def`` on the way)."""
    indent = indent_of(lines[row]) if lines[row].strip() else 1 << 30
    for above in range(row - 1, -1, -1):
        line = lines[above]
        if not line.strip() or indent_of(line) >= indent:
            continue
        found = _CLASS.match(line)
        if found is not None:
            return found.group(1)
        indent = indent_of(line)
        if indent == 0:
            return None
    return None


def _class_at(lines: Callable[[], Sequence[str]], row: int) -> Callable[[int], str | None]:
    """``class_of`` for a line: every offset of it is in the class around ``row``, looked
    up once, and only if a ``super(…)`` asks (most lines have none)."""
    name = cache(lambda: _enclosing_class(lines(), row))
    return lambda _: name()


# Each idiom's rewrite of a text, told which class the code at an offset of it is in.
_Rewrite = Callable[[str, Callable[[int], "str | None"]], str]
IDIOMS: dict[str, _Rewrite] = {
    "super": _without_super_arguments,
    "object": lambda text, _: _without_object_base(text),
    "u": lambda text, _: _without_u_prefix(text),
}


# Text a line holds if an idiom may be on it: most lines are passed over at once.
_MARKS = {"super": "super(", "object": "object", "u": ""}


def _rewritten(text: str, idioms: Iterable[str], class_of: Callable[[int], str | None]) -> str:
    for name in idioms:
        text = IDIOMS[name](text, class_of)
    return text


def python3_idiom_edits(lines: list[str], change: Change, edited: range, window: range,
                        literals: Callable[[], PythonLiterals]) -> Iterable[PatternEdit]:
    old_lines, new_lines = split_lines(change.old_text), split_lines(change.new_text)
    if not old_lines or len(old_lines) != len(new_lines) or len(old_lines) > MAX_REWRITTEN_LINES:
        return
    # Before the change its lines were where they are now, in the same class.
    before = cache(lambda: [*lines[:change.start_line], *old_lines, *lines[edited.stop:]])
    made: set[str] = set()
    for offset, (old, new) in enumerate(zip(old_lines, new_lines, strict=True)):
        if old == new:
            continue
        class_of = _class_at(before, change.start_line + offset)
        idioms = [name for name in IDIOMS if IDIOMS[name](old, class_of) != old]
        if not idioms or _rewritten(old, idioms, class_of) != new:
            return  # not these idioms alone: the line changed otherwise too
        made.update(idioms)
    if not made:
        return
    python = literals()
    inside_strings = python.rows_inside_strings()
    for row in window:
        line = lines[row]
        if row in edited or row in inside_strings or len(line) > LONGEST_LINE:
            continue
        if not any(_MARKS[name] in line for name in made):
            continue
        rewritten = _rewritten(line, (name for name in IDIOMS if name in made), _class_at(lambda: lines, row))
        if rewritten != line and _in_code(line, rewritten):
            yield PatternEdit(row, row + 1, rewritten, PYTHON3_IDIOM)
