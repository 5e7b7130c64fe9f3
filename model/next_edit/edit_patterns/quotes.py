"""The ``quotes`` kind: string literals requoted (``'x'`` → ``"x"``, a formatter's sweep),
requoted alike on the other lines.

A change that did nothing but requote every one-line string literal it could, from one
quote to the other, is a sweep; the other lines' literals that can be requoted so (no
quote of the other kind inside, nor an escaped one of its own) get the same. Comments, and
the inside of triple-quoted strings, are left alone; a literal's prefix (``f``, ``rb``)
stays. Replayed commits of packages in no corpus: the hunk after a hunk that
only requoted only requoted 80 times in 3,527 replays (Black adopted, a file at a time).
"""

from __future__ import annotations

from collections.abc import Iterable

from model.code_text import PYTHON_LITERAL
from model.next_edit.edit_patterns.changes import QUOTES, Change, PatternEdit
from model.next_edit.edit_patterns.one_line_rewrites import LONGEST_LINE, MAX_REWRITTEN_LINES


def requoted(text: str, quote: str) -> str:
    """``text`` with every one-line string literal in the other quote that can take
    ``quote`` instead requoted so."""
    other = "'" if quote == '"' else '"'
    pieces, at = [], 0
    for match in PYTHON_LITERAL.finditer(text):
        literal = match.group()
        body = literal[1:-1]
        if len(literal) >= 2 and literal[0] == literal[-1] == other and not literal.startswith(other * 3) \
                and quote not in body and "\\" + other not in body and "\n" not in literal:
            pieces += [text[at:match.start()], quote, body, quote]
            at = match.end()
    pieces.append(text[at:])
    return "".join(pieces)


def requoting(old: str, new: str) -> str | None:
    """The quote the change requoted every literal it could to, when that is all it did."""
    if old == new or len(old) != len(new):
        return None
    for quote in ('"', "'"):
        if requoted(old, quote) == new:
            return quote
    return None


def quote_edits(lines: list[str], change: Change, edited: range, window: range) -> Iterable[PatternEdit]:
    if max(change.old_text.count("\n"), change.new_text.count("\n")) > MAX_REWRITTEN_LINES:
        return
    quote = requoting(change.old_text, change.new_text)
    if quote is None:
        return
    # The window requoted as one text, so that a triple-quoted string's lines are known as
    # such; a requoted literal keeps its length, so each line is where it was.
    rewritten = requoted("".join(lines[window.start:window.stop]), quote)
    at = 0
    for row in window:
        line = lines[row]
        new, at = rewritten[at:at + len(line)], at + len(line)
        if new != line and row not in edited and len(line) <= LONGEST_LINE:
            yield PatternEdit(row, row + 1, new, QUOTES)
