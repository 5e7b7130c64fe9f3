"""What of a suggestion the document already holds: the text after the cursor (trimmed
from it), the lines next to the cursor, a top-level definition (then it is not offered)."""

from __future__ import annotations

from dataclasses import dataclass


def trim_suffix_overlap(text: str, suffix: str) -> str:
    """Drop the end of ``text`` that the suffix already holds: a line break when the cursor
    is at the end of a line, and what the rest of the cursor's line holds, e.g. a closing
    bracket the editor auto-inserted: "f(x)" before ")" becomes "f(x"."""
    if suffix.startswith(("\n", "\r")) and text.endswith(("\n", "\r")):
        text = text.rstrip("\r\n")
    line_rest = _line_at(suffix, 0).rstrip("\r")
    for size in range(min(len(text), len(line_rest)), 0, -1):
        overlap = line_rest[:size]
        if overlap.strip() and text.endswith(overlap):
            return text[:-size]
    return text


def _line_at(text: str, start: int) -> str:
    """The line of ``text`` that starts at ``start``, without its line break; sliced, not
    split: the prefix and suffix are the whole document, which may be long."""
    end = text.find("\n", start)
    return text[start:end if end >= 0 else len(text)]


@dataclass(frozen=True)
class _Around:
    """The document's lines around the cursor once an answer is in: up to two lines above,
    the lines it writes to, up to two below, each right-stripped (also of a "\r" left by
    "\r\n"). The answer writes to ``lines[first:end]``: a first or last line that only
    holds what was already there (the answer starts or ends with a line break) is not one
    of them. ``cursor_line_start`` / ``cursor_line_end``: where the cursor's line starts in
    the prefix and ends in the suffix, so the rest of the document can be searched in place."""

    lines: list[str]
    first: int
    end: int
    cursor_line_start: int
    cursor_line_end: int


def _around(prefix: str, text: str, suffix: str) -> _Around:
    text = trim_suffix_overlap(text, suffix)
    cut = prefix.rfind("\n")  # -1: the cursor is on the first line
    above: list[str] = []
    start = cut
    while start >= 0 and len(above) < 2:
        previous = prefix.rfind("\n", 0, start)
        above.insert(0, prefix[previous + 1:start])
        start = previous
    line_end = suffix.find("\n")  # -1: the cursor is on the last line
    below: list[str] = []
    at = line_end
    while at >= 0 and len(below) < 2:
        below.append(_line_at(suffix, at + 1))
        at = suffix.find("\n", at + 1)
    line_rest = suffix[:line_end] if line_end >= 0 else suffix
    written = (prefix[cut + 1:] + text + line_rest).split("\n")
    pieces = text.split("\n")
    first = len(above) + (len(pieces) > 1 and pieces[0] == "")
    end = len(above) + len(written) - (len(pieces) > 1 and pieces[-1] == "")
    lines = [line.rstrip() for line in [*above, *written, *below]]
    return _Around(lines, first, end, cut + 1, line_end if line_end >= 0 else len(suffix))


def repeats_a_neighbour(prefix: str, text: str, suffix: str) -> bool:
    """Whether inserting ``text`` at the cursor makes a non-blank line the same as the line
    just above or below it, or two of its own lines the same. A neighbour that already
    repeats the line beyond it (a run such as three identical ``assertEqual`` lines) may
    repeat once more.

    The network's likeliest mistake at the start of a line is to write the line that is
    already there: on HumanEval single-line infilling (cursor at the start of the line
    after the gap) 91 of 1,033 first answers repeated the line below the cursor and 24 the
    line above; 4 of those 115 passed the tests. In held-out code, 0.04% of non-blank lines
    equal the line after them (10 of 24,230), so such an answer is nearly always wrong."""
    return _repeats_a_neighbour(_around(prefix, text, suffix))


def _repeats_a_neighbour(around: _Around) -> bool:
    lines, first, end = around.lines, around.first, around.end
    for i in range(max(first - 1, 0), min(end, len(lines) - 1)):
        if not lines[i].strip() or lines[i] != lines[i + 1]:
            continue
        if i == first - 1 and i > 0 and lines[i - 1] == lines[i]:
            continue  # the line above is in a run already
        if i + 1 == end and i + 2 < len(lines) and lines[i + 2] == lines[i + 1]:
            continue  # the line below is in a run already
        return True
    return False


_DEFINITIONS = ("def ", "async def ", "class ")


def repeats_a_definition(prefix: str, text: str, suffix: str) -> bool:
    """Whether inserting ``text`` writes a top-level ``def``/``class`` line that the
    document already has, word for word: a second definition of the same name, which the
    first would then never be. In held-out code no top-level definition line repeated
    within its file (0 of 913); on HumanEval single-line infilling 40 first answers did,
    in function bodies, and 2 of them passed."""
    return _repeats_a_definition(_around(prefix, text, suffix), prefix, suffix)


def _repeats_a_definition(around: _Around, prefix: str, suffix: str) -> bool:
    new = {line for line in around.lines[around.first:around.end] if line.startswith(_DEFINITIONS)}
    # The rest of the document, without the cursor's line: the prefix before it, the suffix after it.
    return any(_holds_line(prefix, line, 0, max(around.cursor_line_start - 1, 0))
               or _holds_line(suffix, line, around.cursor_line_end + 1, len(suffix)) for line in new)


def _holds_line(text: str, line: str, start: int, stop: int) -> bool:
    """Whether ``text[start:stop]`` has ``line`` as a whole line (trailing whitespace aside),
    searched in place."""
    at = text.find(line, start, stop)
    while at >= 0:
        end = at + len(line)
        line_end = text.find("\n", end, stop)
        if (at == start or text[at - 1] == "\n") and not text[end:line_end if line_end >= 0 else stop].strip():
            return True
        at = text.find(line, at + 1, stop)
    return False


def repeats_the_document(prefix: str, text: str, suffix: str) -> bool:
    """Either repetition above (the lines around the cursor read once): such a suggestion
    is not offered at all."""
    around = _around(prefix, text, suffix)
    return _repeats_a_neighbour(around) or _repeats_a_definition(around, prefix, suffix)
