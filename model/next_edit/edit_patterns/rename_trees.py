"""The ``rename`` kind in the languages read through a tree (JavaScript, TypeScript): a
renamed identifier carried to the other references of the binding it resolves to, which
the language layer finds (``model/languages/js_scopes.py``) where Python's kind reads
scopes off the lines (``rename_scopes.py``)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

from model.languages.js_scopes import Binding, read_scopes
from model.next_edit.edit_patterns.changes import RENAME, Change, PatternEdit
from model.next_edit.edit_patterns.rename import renamed_before, renamed_identifier
from model.next_edit.edit_patterns.text import split_lines, tokens_of

_WORD = re.compile(r"[\w$]*")
# Names a script uses without declaring them: one replaced at a use is a switch to
# another object (`console` → `logger`), not a rename, unless the file declares it.
_GLOBALS = frozenset({
    "console", "window", "document", "globalThis", "global", "self", "navigator", "process", "require", "module",
    "exports", "Math", "JSON", "Object", "Array", "String", "Number", "Boolean", "Symbol", "BigInt", "Promise",
    "Error", "TypeError", "RangeError", "Map", "Set", "WeakMap", "WeakSet", "Date", "RegExp", "Reflect", "Proxy",
    "Intl", "setTimeout", "clearTimeout", "setInterval", "clearInterval", "fetch", "undefined", "NaN", "Infinity",
    "arguments", "parseInt", "parseFloat", "isNaN", "Buffer"})
# A name replaced by one of these is a value changed, not renamed.
_CONSTANTS = frozenset({"null", "undefined", "true", "false", "this", "NaN", "Infinity", "void"})


def renamed_columns(old: str, new: str) -> list[int]:
    """Where in ``new`` the replaced tokens stand (str columns)."""
    before, after = tokens_of(old), tokens_of(new)
    columns = []
    for op, _, _, j1, _ in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if op != "equal":
            columns.append(sum(len(token) for token in after[:j1]))
    return columns


def tree_rename_edits(lines: list[str], change: Change, edited: range, window: range, path: str,
                      earlier: Sequence[Change]) -> Iterable[PatternEdit]:
    old_lines, new_lines = split_lines(change.old_text), split_lines(change.new_text)
    if len(old_lines) != len(new_lines):
        return
    found: tuple[str, str, bool] | None = None
    places: list[tuple[int, int]] = []
    for offset, (old, new) in enumerate(zip(old_lines, new_lines, strict=True)):
        if old == new:
            continue
        rename = renamed_identifier(old, new)
        if rename is None or found not in (None, rename):
            return
        found = rename
        places += [(change.start_line + offset, column) for column in renamed_columns(old, new)]
    if found is None:
        return
    # After a dot or not, the tree tells: a property's name (which objects have it, no
    # tree tells) resolves to no binding, a spread's (`...name`) is a name.
    old_name, new_name, _ = found
    if new_name in _CONSTANTS:
        return
    scopes = read_scopes(lines, path)
    if scopes is None:
        return
    # Both names read as one: a rename half made has the binding under one and uses under the other.
    binding = next((b for row, column in places if (b := scopes.binding(row, column, (old_name, new_name)))), None)
    # A constructor's parameter property (or a use of that parameter) is the class's member too.
    parameter_of = None if binding is None else scopes.parameter_property_class(binding)
    if parameter_of is not None:
        yield from _renamed(lines, scopes.members(parameter_of, (old_name, new_name)), old_name, new_name, edited,
                            window)
        return
    if binding is None:
        # A member of the class around the change, renamed through `this.` or where it is
        # defined: its places in that class.
        member = next((b for row, column in places if (b := scopes.member(row, column, (old_name, new_name)))), None)
        if member is not None:
            yield from _renamed(lines, member, old_name, new_name, edited, window)
        return  # else no name changed: another object's property, a word in a string or a comment
    if binding.declared_at is None and old_name in _GLOBALS:
        return
    row, column = places[0]
    declared = [scopes.declaration_of(row, column, name) for name in (old_name, new_name)]
    if _two_variables(declared[0], declared[1], edited) and not renamed_before(earlier, old_name, new_name,
                                                                                range(len(lines))):
        return
    yield from _renamed(lines, binding, old_name, new_name, edited, window)


def _two_variables(old: tuple[int, int] | None, new: tuple[int, int] | None, edited: range) -> bool:
    """Each name alone, at the renamed place, refers to a binding of its own, declared apart
    from the edited lines: the person switched a use from one variable to another
    (`f(data)` → `f(cleaned)`). Replayed Python release diffs: such "renames" were right 5
    times in 18."""
    if old is None or new is None:
        return False
    return old != new and old[0] not in edited and new[0] not in edited


def _word_at(line: str, column: int) -> str:
    found = _WORD.match(line, column)
    return found[0] if found else ""


def _renamed(lines: list[str], binding: Binding, old_name: str, new_name: str, edited: range,
             window: range) -> Iterable[PatternEdit]:
    """Each line holding a reference under the old name, with those renamed."""
    by_row: dict[int, list[int]] = {}
    for row, column in binding.references:
        if (row in window or row in edited) and _word_at(lines[row], column) == old_name:
            by_row.setdefault(row, []).append(column)
    for row, columns in by_row.items():
        line = lines[row]
        for column in sorted(columns, reverse=True):
            line = line[:column] + new_name + line[column + len(old_name):]
        # A binding the file declares, however far its references: the tree, not a guess,
        # says they are one variable, and its uses are one edit to a person.
        yield PatternEdit(row, row + 1, line, RENAME, in_function=binding.declared_at is not None)
