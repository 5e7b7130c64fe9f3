"""What of a suggestion the text after the cursor already holds."""

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
