"""What of a suggestion the document already holds: the text after the cursor (trimmed
from it), the lines next to the cursor, a top-level definition (then it is not offered)."""

from __future__ import annotations


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


def _lines_around(prefix: str, text: str, suffix: str) -> tuple[list[str], int, int]:
    """The document's lines around the cursor once ``text`` (trimmed as above) is in: up to
    two lines above, the lines it writes to, up to two below, each right-stripped (also of
    a "\r" left by "\r\n"); and ``first``, ``end``: the lines the answer writes to are
    ``lines[first:end]``. A first or last line that only holds what was already there (the
    answer starts or ends with a line break) is not one of them."""
    text = trim_suffix_overlap(text, suffix)
    head, _, line_start = prefix.rpartition("\n")
    line_rest, _, tail = suffix.partition("\n")
    above = head.rsplit("\n", 2)[-2:] if "\n" in prefix else []  # maxsplit: the document may be long
    below = tail.split("\n", 2)[:2] if "\n" in suffix else []
    written = (line_start + text + line_rest).split("\n")
    pieces = text.split("\n")
    first = len(above) + (len(pieces) > 1 and pieces[0] == "")
    end = len(above) + len(written) - (len(pieces) > 1 and pieces[-1] == "")
    return [line.rstrip() for line in [*above, *written, *below]], first, end


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
    lines, first, end = _lines_around(prefix, text, suffix)
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
    lines, first, end = _lines_around(prefix, text, suffix)
    new = {line for line in lines[first:end] if line.startswith(_DEFINITIONS)}
    if not new:
        return False
    head, tail = prefix.rpartition("\n")[0], suffix.partition("\n")[2]  # without the cursor's line
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
