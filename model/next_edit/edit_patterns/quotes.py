"""The ``quotes`` kind: string literals requoted (``'x'`` → ``"x"``, a formatter's sweep),
requoted alike on the other lines.

A change that did nothing but requote every one-line string literal it could, from one
quote to the other, is a sweep; the other lines' literals that can be requoted so (no
quote of the other kind inside, nor an escaped one of its own) get the same. Comments, and
the inside of triple-quoted strings, are left alone; a literal's prefix (``f``, ``rb``)
stays. Replayed commits of packages in no corpus (session 70): the hunk after a hunk that
only requoted only requoted 80 times in 3,527 replays (Black adopted, a file at a time).
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator

from model.code_text import PYTHON_LITERAL
from model.next_edit.edit_patterns.changes import QUOTES, Change, PatternEdit
from model.next_edit.edit_patterns.one_line_rewrites import LONGEST_LINE, MAX_REWRITTEN_LINES


def _requotable(text: str, quote: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, the literal requoted) for every one-line string literal of ``text`` in
    the other quote that can take ``quote`` instead."""
    other = "'" if quote == '"' else '"'
    for match in PYTHON_LITERAL.finditer(text):
        literal = match.group()
        body = literal[1:-1]
        if len(literal) >= 2 and literal[0] == literal[-1] == other and not literal.startswith(other * 3) \
                and quote not in body and "\\" + other not in body and "\n" not in literal:
            yield match.start(), match.end(), quote + body + quote


def requoted(text: str, quote: str) -> str:
    """``text`` with every literal that can take ``quote`` requoted so."""
    pieces, at = [], 0
    for start, end, literal in _requotable(text, quote):
        pieces += [text[at:start], literal]
        at = end
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
    # The window read as one text, so that a triple-quoted string's lines are known as such.
    starts = list(itertools.accumulate((len(lines[row]) for row in window), initial=0))
    by_row: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for start, end, literal in _requotable("".join(lines[window.start:window.stop]), quote):
        at = bisect.bisect_right(starts, start) - 1
        by_row[window.start + at].append((start - starts[at], end - starts[at], literal))
    for row, literals in sorted(by_row.items()):
        line = lines[row]
        if row in edited or len(line) > LONGEST_LINE:
            continue
        pieces, at = [], 0
        for start, end, literal in literals:
            pieces += [line[at:start], literal]
            at = end
        yield PatternEdit(row, row + 1, "".join(pieces) + line[at:], QUOTES)
