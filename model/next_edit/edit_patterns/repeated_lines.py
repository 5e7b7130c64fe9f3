"""The ``repeated_line`` kind: one line's change, read as a token-level transformation,
made again on the lines of the same shape next to it.

A person editing a run of similar lines (the entries of a literal, a block of assignments,
a column of calls) makes one change and then the same change on each line:
``"name": row[0],`` → ``"name": str(row[0]),`` and then ``"age": row[1],`` →
``"age": str(row[1]),``. The lines differ in their names, numbers and strings, so the
literal patterns (``same_line``, ``substitution``, ``insertion``) miss them.

A line's *shape* is its sequence of tokens with every name read as a slot and every number
or string as another (one entry's value may be a number, the next one's a string), and
keywords, symbols and the names of functions called as themselves. The change is the token
diff of the edited line; on a line of the same shape it is applied position by position:
- what the change kept is the other line's own tokens;
- what it replaced or deleted must be the same tokens there too (a callee ``foo`` swapped
  for ``bar`` is not a reason to swap ``baz``);
- what it inserted is inserted, except that a name or string the edited line had at a
  slot stands for the other line's token at that slot (``f(a)`` → ``f(a, a)`` makes
  ``f(b)`` → ``f(b, b)``).
Only the unbroken run of lines around the edit with the old line's indentation and shape
(or already the new line's: done) is looked at, above and below: a line of that shape
further away is another list's.
"""

from __future__ import annotations

import difflib
import keyword
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from model.next_edit.edit_patterns.changes import REPEATED_LINE, Change, PatternEdit
from model.next_edit.edit_patterns.text import split_lines

# One-line strings (either quote, escapes inside), names (JavaScript's ``$`` too), numbers,
# and any other single character; whitespace is kept apart as the gap before a token.
_TOKEN = re.compile(r"""(\s*)("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[A-Za-z_$][\w$]*|\d[\w.]*|\S)""")
_JS_KEYWORDS = frozenset({
    "await", "break", "case", "catch", "class", "const", "continue", "default", "delete", "do", "else",
    "export", "extends", "false", "finally", "for", "function", "if", "import", "in", "instanceof", "let",
    "new", "null", "of", "return", "static", "super", "switch", "this", "throw", "true", "try", "typeof",
    "undefined", "var", "void", "while", "yield",
})
# Words that are part of a line's shape, not slots: the languages' keywords and literals.
_FIXED_WORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | _JS_KEYWORDS | {"self", "cls"}
# Lines shorter than this (``pass``, ``x = 1``) are too alike to say the change repeats.
MIN_LINE = 6
# A change to more tokens than this is a rewrite, not an edit made again line by line.
MAX_CHANGED_TOKENS = 12
LONGEST_LINE = 400
# Lines changed alike in one change that still read as a person's steps, not a sweep's hunk.
MAX_LINES_ALIKE = 8
# Each import line names another module: a name added to one is rarely wanted by the next
# (typed replays of release diffs: most of this kind's wrong proposals were imports).
IMPORTS = frozenset({"import", "from"})


@dataclass(frozen=True)
class _Line:
    gaps: list[str]  # the whitespace before each token (the first: the indentation)
    tokens: list[str]
    tail: str  # whitespace after the last token

    @property
    def shape(self) -> tuple[str, ...]:
        """The tokens, each name, number or string as its slot; but a name called (``fetch(``)
        is itself: what one call's change says is not for another function's."""
        called = [i + 1 < len(self.tokens) and self.tokens[i + 1] == "(" for i in range(len(self.tokens))]
        return tuple(token if calls else _slot(token) or token
                     for token, calls in zip(self.tokens, called, strict=True))

    def text(self) -> str:
        return "".join(gap + token for gap, token in zip(self.gaps, self.tokens, strict=True)) + self.tail


def _slot(token: str) -> str | None:
    """The slot a token fills in its line's shape (a name, a number, a string), or None
    for a keyword or symbol, which is the shape itself."""
    first = token[0]
    if first in "\"'" or first.isdigit():  # a literal: one entry's number is another's string
        return "<literal>"
    if (first.isalpha() or first in "_$") and token not in _FIXED_WORDS:
        return "<name>"
    return None


def _read(line: str) -> _Line | None:
    body = line.rstrip("\r\n")
    gaps, tokens, end = [], [], 0
    for match in _TOKEN.finditer(body):
        gaps.append(match.group(1))
        tokens.append(match.group(2))
        end = match.end()
    if not tokens:
        return None
    return _Line(gaps, tokens, body[end:])


@dataclass(frozen=True)
class _Transformation:
    old: _Line
    new: _Line
    opcodes: Sequence[tuple[str, int, int, int, int]]

    @property
    def renames(self) -> bool:
        """Every change is one name put for another: the rename kind's, which knows the
        name's scope (a line of the same shape elsewhere may hold another variable)."""
        changed = [(self.old.tokens[i1:i2], self.new.tokens[j1:j2]) for tag, i1, i2, j1, j2 in self.opcodes
                   if tag != "equal"]
        return all(len(old) == len(new) == 1 and _slot(old[0]) == _slot(new[0]) == "<name>" for old, new in changed)

    def apply(self, other: _Line) -> str | None:
        """``other`` (of the old line's shape) with the change made the same way, or None
        where it can't be (the tokens the change replaced are not there)."""
        old, new = self.old, self.new
        gaps: list[str] = []
        tokens: list[str] = []
        for tag, i1, i2, j1, j2 in self.opcodes:
            if tag == "equal":
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    # A gap the change respaced is the new one; any other, the line's own.
                    gaps.append(other.gaps[i] if new.gaps[j] == old.gaps[i] else new.gaps[j])
                    tokens.append(other.tokens[i])
                continue
            if other.tokens[i1:i2] != old.tokens[i1:i2]:
                return None
            for j in range(j1, j2):
                gaps.append(new.gaps[j])
                tokens.append(self._inserted(new.tokens[j], other))
        return _Line(gaps, tokens, other.tail).text()

    def _inserted(self, token: str, other: _Line) -> str:
        """An inserted token as ``other`` has it: a slot's value the old line held once
        stands for ``other``'s token at that slot."""
        at = self._slot_held(token)
        return token if at is None else other.tokens[at]

    def _slot_held(self, token: str) -> int | None:
        """Where the old line holds ``token``, a name or string, once (a number written
        is a number: ``or 0`` after an entry holding ``0`` is not that entry's own)."""
        if _slot(token) is None or token[0].isdigit():
            return None
        at = [i for i, mine in enumerate(self.old.tokens) if mine == token]
        return at[0] if len(at) == 1 else None

    @property
    def signature(self) -> tuple[object, ...]:
        """What two lines' changes share when they are the same change: the old shape, where
        each edit falls, and what it writes (a slot's value as where it was taken from)."""
        edits = tuple((tag, i1, i2, tuple(self._slot_held(token) if self._slot_held(token) is not None else token
                                          for token in self.new.tokens[j1:j2]))
                      for tag, i1, i2, j1, j2 in self.opcodes if tag != "equal")
        replaced = tuple(tuple(self.old.tokens[i1:i2]) for tag, i1, i2, _, _ in self.opcodes if tag != "equal")
        return self.old.shape, edits, replaced


def as_transformation(old_text: str, new_text: str) -> _Transformation | None:
    """The token diff of a one-line change, when it is small enough to be made again."""
    old, new = _read(old_text), _read(new_text)
    if old is None or new is None or old.tokens == new.tokens:
        return None
    matcher = difflib.SequenceMatcher(None, old.tokens, new.tokens, autojunk=False)
    opcodes = matcher.get_opcodes()
    changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")
    if changed > MAX_CHANGED_TOKENS:
        return None
    return _Transformation(old, new, opcodes)


def _change_made(change: Change) -> tuple[_Transformation, bool] | None:
    """The transformation the change made, and whether it made it on more than one line:
    a line changed, or several in a row changed alike (typed within a second of each
    other, the edit log holds them as one change)."""
    old_lines, new_lines = split_lines(change.old_text), split_lines(change.new_text)
    if len(old_lines) != len(new_lines) or not 1 <= len(old_lines) <= MAX_LINES_ALIKE:
        return None
    made = []
    for old_line, new_line in zip(old_lines, new_lines, strict=True):
        if len(old_line.strip()) < MIN_LINE or len(old_line) > LONGEST_LINE:
            return None
        transformation = as_transformation(old_line, new_line)
        if transformation is None or transformation.renames or transformation.old.tokens[0] in IMPORTS:
            return None
        made.append(transformation)
    if any(other.signature != made[0].signature for other in made[1:]):
        return None
    return made[0], len(made) > 1


def repeated_line_edits(lines: list[str], change: Change, edited: range, window: range) -> Iterable[PatternEdit]:
    made = _change_made(change)
    if made is None:
        return
    transformation, repeated = made
    shape, done_shape = transformation.old.shape, transformation.new.shape
    indent = transformation.old.gaps[0]
    for step in (1, -1):  # the run below the edited lines, then above them
        row = edited.stop if step > 0 else edited.start - 1
        while row in window:
            line = _read(lines[row]) if len(lines[row]) <= LONGEST_LINE else None
            if line is None or line.gaps[0] != indent:
                break
            if line.shape != shape:
                if line.shape == done_shape:
                    row += step
                    continue
                break
            rewritten = transformation.apply(line)
            if rewritten is not None and rewritten != lines[row].rstrip("\r\n"):
                ending = lines[row][len(lines[row].rstrip("\r\n")):]
                yield PatternEdit(row, row + 1, rewritten + ending, REPEATED_LINE, again=repeated)
            row += step
