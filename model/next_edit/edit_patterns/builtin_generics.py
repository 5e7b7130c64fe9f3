"""The ``builtin_generic`` kind: typing's aliases written as builtins (PEP 585) and
``Optional``/``Union`` as ``|`` (PEP 604), on every line the same sweep would reach."""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable

from model.code_text import PythonLiterals, comment_marker
from model.next_edit.edit_patterns.changes import BUILTIN_GENERIC, Change, PatternEdit
from model.next_edit.edit_patterns.text import split_arguments, split_lines

# PEP 585: typing's aliases that the builtins replace, subscripted.
_BUILTIN_ALIASES = {"List": "list", "Dict": "dict", "Set": "set", "FrozenSet": "frozenset", "Tuple": "tuple",
                    "Type": "type"}
# PEP 604: ``Optional[X]`` → ``X | None``, ``Union[A, B]`` → ``A | B``; usually in the same sweep.
_UNIONS = ("Optional", "Union")
_TYPING_USE = re.compile(r"(?<![\w.])(?:(?:typing|t)\.)?(List|Dict|Set|FrozenSet|Tuple|Type|Optional|Union)\[")
_TYPING_IMPORT = re.compile(r"\s*from\s+typing\s+import\s+([^#]*)")


def is_builtin_alias(old_name: str, new_name: str) -> bool:
    """``new_name`` is the builtin that replaces typing's alias ``old_name`` (``List`` → ``list``)."""
    return _BUILTIN_ALIASES.get(old_name) == new_name


def _typing_imports(lines: Iterable[str]) -> set[str]:
    """The names ``from typing import`` lines among ``lines`` import (a parenthesised import
    read up to its closing bracket)."""
    names: set[str] = set()
    listed: str | None = None  # the names of a parenthesised import still open
    for line in lines:
        found = _TYPING_IMPORT.match(line)
        if found is not None:
            listed = found.group(1)
        elif listed is not None:
            listed = line.split("#", 1)[0]
        else:
            continue
        names.update(name.split(" as ")[0].strip(" ()\\\r\n") for name in listed.split(","))
        if (found is not None and "(" not in listed) or ")" in listed:
            listed = None
    return names - {""}


def _typing_uses(lines: Iterable[str]) -> list[str]:
    return [m.group(1) for line in lines for m in _TYPING_USE.finditer(line)]


def _closing_bracket(text: str, opened: int) -> int | None:
    """The index of the ``]`` that closes the ``[`` just before ``opened``."""
    depth = 1
    for at in range(opened, len(text)):
        depth += {"[": 1, "(": 1, "{": 1, "]": -1, ")": -1, "}": -1}.get(text[at], 0)
        if depth == 0:
            return at if text[at] == "]" else None
    return None


def _modernised(text: str, names: Container[str]) -> str:
    """``text`` with the subscripted typing ``names`` written the modern way (a string
    forward reference in ``Optional["X"]`` is left: ``"X" | None`` fails at runtime)."""
    out, last = [], 0
    for match in _TYPING_USE.finditer(text):
        if match.start() < last or match.group(1) not in names:
            continue
        name = match.group(1)
        if name in _BUILTIN_ALIASES:
            out.append(text[last:match.start()] + _BUILTIN_ALIASES[name] + "[")
            last = match.end()
            continue
        end = _closing_bracket(text, match.end())
        if end is None:
            continue
        arguments = [_modernised(part, names) for part in split_arguments(text[match.end():end])]
        if not arguments or any(part.startswith(("'", '"')) for part in arguments):
            continue
        out.append(text[last:match.start()] + " | ".join([*arguments, "None"] if name == "Optional" else arguments))
        last = end + 1
    return "".join(out) + text[last:]


def builtin_generic_edits(lines: list[str], change: Change, window: range, path: str,
                      python_literals: Callable[[], PythonLiterals]) -> Iterable[PatternEdit]:
    if comment_marker(path) != "#":
        return
    old_lines, new_lines = split_lines(change.old_text), split_lines(change.new_text)
    old_uses, new_uses = _typing_uses(old_lines), _typing_uses(new_lines)

    def written_anew(name: str) -> bool:  # fewer uses of `name`, more of what replaces it
        if new_uses.count(name) >= old_uses.count(name):
            return False
        modern = (_BUILTIN_ALIASES[name] + "[",) if name in _BUILTIN_ALIASES else ("|",)
        return sum(line.count(modern[0]) for line in new_lines) > sum(line.count(modern[0]) for line in old_lines)

    replaced = {name for name in old_uses if written_anew(name)}
    dropped = (_typing_imports(old_lines) - _typing_imports(new_lines)) & {*_BUILTIN_ALIASES, *_UNIONS}
    if not replaced and not dropped:
        return
    # Also the names the file uses but no longer imports (the same sweep, begun earlier), and
    # with `X | None` (Python 3.10) every builtin alias (3.9): the sweep that writes one
    # writes the other, and fixes its import lines last.
    touched = replaced | dropped
    names = touched | ({*_BUILTIN_ALIASES, *_UNIONS} - _typing_imports(lines))
    if touched & set(_UNIONS):
        names |= set(_BUILTIN_ALIASES)
    literals = python_literals()
    for row in window:
        line = lines[row]
        if "[" not in line:
            continue
        spans = literals.code_spans(row)
        code = [(a, b) for a, b in spans if "[" in line[a:b]]
        rewritten = line
        for a, b in reversed(code):
            rewritten = rewritten[:a] + _modernised(rewritten[a:b], names) + rewritten[b:]
        if rewritten != line:
            yield PatternEdit(row, row + 1, rewritten, BUILTIN_GENERIC)
