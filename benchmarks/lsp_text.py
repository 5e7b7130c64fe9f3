"""Documents as the benchmarks see them over LSP: offsets and positions in each position
encoding, and what the server's first inline-completion item does to the document."""

from __future__ import annotations

import bisect
import re
from typing import Any

_NEWLINE = re.compile(r"\r\n|\r|\n")  # the line breaks LSP recognises


def code_units(text: str, encoding: str = "utf-16") -> int:
    """Length of ``text`` in the code units of an LSP position encoding."""
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _lines(text: str) -> tuple[list[int], list[int]]:
    """Start and end (before the line break) offsets of every line."""
    starts, ends = [0], []
    for match in _NEWLINE.finditer(text):
        ends.append(match.start())
        starts.append(match.end())
    ends.append(len(text))
    return starts, ends


def offset_to_position(text: str, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    """LSP (line, character) of a str offset."""
    starts, _ = _lines(text)
    line = bisect.bisect_right(starts, offset) - 1
    return line, code_units(text[starts[line] : offset], encoding)


def position_to_offset(text: str, line: int, character: int, encoding: str = "utf-16") -> int:
    """str offset of an LSP position; past the end of a line or the text clamps to that end."""
    starts, ends = _lines(text)
    if line >= len(starts):
        return len(text)
    offset, units = starts[max(line, 0)], 0
    while offset < ends[line] and units < character:
        units += code_units(text[offset], encoding)
        offset += 1
    return offset


def first_item(result: Any) -> dict[str, Any] | None:
    """The first InlineCompletionItem of a raw result (list, item array or null)."""
    items = result.get("items") if isinstance(result, dict) else result
    if isinstance(items, list) and items and isinstance(items[0], dict):
        return items[0]
    return None


def item_text(item: dict[str, Any]) -> str:
    text = item.get("insertText", "")
    if isinstance(text, dict):  # a StringValue (snippet); the benchmark scores its raw value
        text = text.get("value", "")
    return text if isinstance(text, str) else ""


def apply_item(document: str, cursor: int, item: dict[str, Any], encoding: str = "utf-16") -> str:
    """The document after the item's edit: its range replaced, or an insertion at ``cursor``."""
    start = end = cursor
    edit_range = item.get("range")
    if isinstance(edit_range, dict):
        first, last = edit_range["start"], edit_range["end"]
        start = position_to_offset(document, first["line"], first["character"], encoding)
        end = position_to_offset(document, last["line"], last["character"], encoding)
    return document[:start] + item_text(item) + document[end:]
