"""The ``call_site`` kind: one argument changed at one call of a function, made at its
other calls."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from model.languages.js_scopes import scoped_by_tree
from model.next_edit.edit_patterns.changes import CALL_SITE, Change, PatternEdit
from model.next_edit.edit_patterns.rename import is_rename
from model.next_edit.edit_patterns.text import DEFINING, FUNCTION_HEADER, split_arguments, split_lines

_CALL = re.compile(r"([A-Za-z_][\w.]*)\(")
# A JavaScript or TypeScript method's header (`async load(url) {`, `get size(): number {`):
# what stands before its name, and after its parameters.
_METHOD_BEFORE = re.compile(r"\s*(?:(?:async|static|get|set|public|private|protected|override)\s+)*\*?\s*\Z")
_METHOD_AFTER = re.compile(r"\s*(?::[^{;=]*)?\{")


def _defines(line: str, name_start: int, arguments_end: int) -> bool:
    """The call-like ``name(…)`` at ``name_start`` is a definition's header: ``def
    fetch(url)``, ``function fetch(url)``, or a method's ``fetch(url) {``; it takes no
    argument added at a call."""
    if DEFINING.search(line, 0, name_start):
        return True
    return bool(_METHOD_BEFORE.match(line[:name_start]) and _METHOD_AFTER.match(line, arguments_end + 1))


def _calls(line: str) -> list[tuple[str, int, int]]:
    """(name, start of the arguments, end of the arguments) of calls closed on the line."""
    found = []
    for match in _CALL.finditer(line):
        depth, i = 1, match.end()
        while i < len(line) and depth:
            depth += {"(": 1, ")": -1}.get(line[i], 0)
            i += 1
        if depth == 0:
            found.append((match.group(1), match.end(), i - 1))
    return found


@dataclass(frozen=True)
class _ArgumentChange:
    name: str
    old: tuple[str, ...]  # the arguments before and after, at one call
    new: tuple[str, ...]

    def apply(self, arguments: list[str]) -> list[str] | None:
        """The same change for another call's arguments; None when it doesn't fit."""
        old, new = list(self.old), list(self.new)
        if len(new) == len(old) + 1 and new[: len(old)] == old:  # appended
            added = new[-1]
            return None if added in arguments else [*arguments, added]
        if len(new) == len(old) + 1 and new[1:] == old:  # prepended
            return None if new[0] in arguments else [new[0], *arguments]
        if len(new) == len(old) and sum(a != b for a, b in zip(old, new, strict=True)) == 1:
            index = next(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b)
            if index < len(arguments) and arguments[index] == old[index]:
                return [*arguments[:index], new[index], *arguments[index + 1 :]]
            keyword = old[index].split("=", 1)[0] if "=" in old[index] else None
            if keyword and old[index] in arguments:
                at = arguments.index(old[index])
                return [*arguments[:at], new[index], *arguments[at + 1 :]]
            return None
        if len(new) == len(old) - 1:  # one argument removed
            removed = next((i for i in range(len(old)) if old[:i] + old[i + 1 :] == new), None)
            if removed is not None and old[removed] in arguments:
                return [a for a in arguments if a != old[removed]]
        return None


def _argument_change(old: str, new: str) -> _ArgumentChange | None:
    """The one call whose arguments alone changed, everything around them as it was. The
    innermost first: a call nested in another's arguments (``items.map(x => load(x))``)
    changes the outer call's arguments too."""
    old_calls = _calls(old)
    for name, start, end in sorted(_calls(new), key=lambda call: call[2] - call[1]):
        for old_name, old_start, old_end in old_calls:
            if old_name == name and old[:old_start] == new[:start] and old[old_end:] == new[end:] \
                    and old[old_start:old_end] != new[start:end]:
                return _ArgumentChange(name, tuple(split_arguments(old[old_start:old_end])),
                                       tuple(split_arguments(new[start:end])))
    return None


def _written(inside: str, before: list[str], after: list[str]) -> str:
    """The call's new arguments, as its own were written: an argument added at either end
    leaves the others' spacing as it was (``f(4.0,9.0)`` gets ``, x`` and keeps ``4.0,9.0``)."""
    if before and after[: len(before)] == before and len(after) == len(before) + 1:
        kept = inside.rstrip()
        return kept + (" " if kept.endswith(",") else ", ") + after[-1] + inside[len(kept):]
    if before and after[1:] == before:
        kept = inside.lstrip()
        return inside[: len(inside) - len(kept)] + after[0] + ", " + kept
    return ", ".join(after)


def call_site_edits(lines: list[str], change: Change, edited: range, window: range,
                    path: str = "") -> Iterable[PatternEdit]:
    old_lines, new_lines = split_lines(change.old_text), split_lines(change.new_text)
    if len(old_lines) != 1 or len(new_lines) != 1:
        return
    # JavaScript's header forms also match lines that are calls (`.*=>`: a callback passed
    # on the line): there, a header is told by the changed call itself being one.
    if FUNCTION_HEADER.match(new_lines[0]) and not scoped_by_tree(path):
        return
    if is_rename(old_lines[0], new_lines[0]):
        return  # a renamed variable passed to a call: the rename knows where else it is used
    argument_change = _argument_change(old_lines[0], new_lines[0])
    if argument_change is None or any(name == argument_change.name and _defines(new_lines[0], a - len(name) - 1, b)
                                      for name, a, b in _calls(new_lines[0])):
        return
    called = argument_change.name + "("
    for row in window:
        line = lines[row]
        if row in edited or called not in line:
            continue
        for name, a, b in reversed(_calls(line)):
            if name != argument_change.name or _defines(line, a - len(name) - 1, b):
                continue
            inside = line[a:b]
            arguments = argument_change.apply(split_arguments(inside))
            if arguments is not None:
                line = line[:a] + _written(inside, split_arguments(inside), arguments) + line[b:]
        if line != lines[row]:
            yield PatternEdit(row, row + 1, line, CALL_SITE)
