"""The ``rename`` kind: a renamed identifier carried to its other uses, within the scope
the name has (a function, a class, the file; ``rename_scopes.py`` reads it off the code)."""

from __future__ import annotations

import builtins
import difflib
import keyword
import re
from collections.abc import Callable, Iterable, Sequence

from model.code_text import PythonLiterals, code_spans, comment_marker
from model.next_edit.edit_patterns.builtin_generics import is_builtin_alias
from model.next_edit.edit_patterns.changes import MAX_CHAIN, RENAME, Change, PatternEdit
from model.next_edit.edit_patterns.rename_scopes import (
    DEFINED,
    KEYWORD,
    VARIABLE,
    binding_function,
    binds,
    block_after,
    enclosing_header,
    is_defined_name,
    is_parameter,
    method_class,
    name_pattern,
    own_attribute_scope,
    own_method,
    role,
    shadowed_rows,
)
from model.next_edit.edit_patterns.text import FUNCTION_HEADER, split_lines, tokens_of

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*\Z")
_BUILTIN_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls"}
# A name replaced by one of these is a value changed (`return c` → `return None`), not renamed.
_CONSTANTS = frozenset({"None", "True", "False", "NotImplemented", "Ellipsis", "__debug__"})
# ``from <module> import``: the part of an import line before the names it imports.
_FROM_IMPORT = re.compile(r"[ \t]*from[ \t]+[\w.]+[ \t]+import\b")


def renamed_identifier(old: str, new: str) -> tuple[str, str, bool] | None:
    """(old name, new name, after a dot) when every token change is that one replacement."""
    before, after = tokens_of(old), tokens_of(new)
    pair: tuple[str, str] | None = None
    dotted: bool | None = None
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op != "replace" or i2 - i1 != 1 or j2 - j1 != 1:
            return None
        a, b = before[i1], after[j1]
        if not (_IDENTIFIER.match(a) and _IDENTIFIER.match(b)) or pair not in (None, (a, b)):
            return None
        is_dotted = i1 > 0 and before[i1 - 1] == "."
        if dotted not in (None, is_dotted):
            return None
        pair, dotted = (a, b), is_dotted
    if pair is None or dotted is None:
        return None
    return pair[0], pair[1], dotted


def renamed_import(old: str, new: str) -> tuple[str, str, bool] | None:
    """(old name, new name, False) when both lines import names from a module and, the
    module's path aside, the one change is an imported name replaced by another
    (``from .cross import xrange`` → ``from .compat import range``): the name no longer
    imported is no longer defined, so its uses follow. Replayed commits of four packages in
    no corpus: a module moved with a name renamed, then its uses, is how
    ``funcy`` dropped Python 2. With the module changed, one name must hold the other
    (``xrange`` → ``range``, ``map`` → ``lmap``)."""
    before, after = _FROM_IMPORT.match(old), _FROM_IMPORT.match(new)
    if before is None or after is None:
        return None
    rename = renamed_identifier(old[before.end():], new[after.end():])
    # Another module and an unrelated name is another import (``from glob import glob`` →
    # ``from pathlib import Path``: replayed release diffs pair a removed import line with
    # an added one): none of the 4 such was right on 3,000 release pairs.
    if rename is None or not (rename[0] in rename[1] or rename[1] in rename[0]):
        return None
    return rename


def line_rename(old: str, new: str) -> tuple[str, str, bool, bool] | None:
    """A changed line's rename (``renamed_identifier``, else ``renamed_import``) and
    whether it is an import's."""
    if (rename := renamed_identifier(old, new)) is not None:
        return (*rename, False)
    if (rename := renamed_import(old, new)) is not None:
        return (*rename, True)
    return None


def is_rename(old: str, new: str) -> bool:
    """The change is one the rename pattern carries."""
    rename = line_rename(old, new)
    return rename is not None and _carries(*rename[:2], imported=rename[3])


def _carries(old_name: str, new_name: str, imported: bool = False) -> bool:
    """Whether a rename is carried elsewhere: not a builtin swapped (`list` → `Sequence` here
    says nothing about `list` there) unless the builtin's name was imported (``from
    .compat import map`` shadows the builtin), not a name replaced by a constant (a value
    changed)."""
    return (imported or old_name not in _BUILTIN_NAMES) and new_name not in _CONSTANTS


def rename_edits(lines: list[str], change: Change, edited: range, window: range, path: str,
             earlier: Sequence[Change], python_literals: Callable[[], PythonLiterals]) -> Iterable[PatternEdit]:
    old_lines, new_lines = split_lines(change.old_text), split_lines(change.new_text)
    if len(old_lines) != len(new_lines):
        return
    found: tuple[str, str, bool, bool] | None = None
    header_row = None
    for offset, (old, new) in enumerate(zip(old_lines, new_lines, strict=True)):
        if old == new:
            continue
        rename = line_rename(old, new)
        if rename is None or (found is not None and found[:3] != rename[:3]):
            return
        found = rename if found is None else (*rename[:3], found[3] or rename[3])
        if FUNCTION_HEADER.match(new):
            if not is_parameter(new, rename[1]) and not is_defined_name(new, rename[1]) \
                    and not _goes_on_renaming(earlier, *rename[:2], len(lines)):
                return  # an annotation or a default changed: nothing to carry elsewhere
            if is_parameter(new, rename[1]):
                header_row = change.start_line + offset
    if found is None:
        return
    old_name, new_name, dotted, imported = found
    if not _carries(old_name, new_name, imported):
        return
    comment = comment_marker(path)
    literals = python_literals() if comment == "#" else None

    def code_of(row: int) -> list[tuple[int, int]]:
        return literals.code_spans(row) if literals is not None else code_spans(lines[row], comment)

    # A word changed inside a string or a comment (`get("etag")` → `get("ETag")`) renames
    # nothing: the new name must be code on a changed line (read in the document, where
    # a docstring's lines are known, when the line is there).
    def names_in_code(offset: int, line: str) -> bool:
        row = change.start_line + offset
        spans = code_of(row) if row < len(lines) and lines[row] == line else code_spans(line, comment)
        return any(name_pattern(new_name).search(line, start, end) for start, end in spans)

    if not any(names_in_code(offset, new) for offset, (old, new) in enumerate(zip(old_lines, new_lines, strict=True))
               if old != new):
        return
    in_strings = literals.rows_inside_strings() if literals is not None else set()
    rows: range = window
    # Rows where a use through `self.`, `cls.` or `super().` is surely the renamed member of
    # the class around the change, so near however far; another receiver's `error.old` may
    # be another class's, and keeps the confidence its distance gives it.
    members_near: range | None = None
    method_row: int | None = None  # the `def` of a method renamed at one of its calls
    if header_row is not None:  # a parameter: only its function's body
        rows = block_after(lines, header_row, in_strings)
    elif dotted:  # an attribute of the class around the change: through that class
        members_near = own_attribute_scope(lines, change.start_line, old_name, new_name, new_lines, in_strings)
        if members_near is not None:
            rows = members_near
        elif (method := own_method(lines, change.start_line, old_name, new_name, new_lines, in_strings)) is not None:
            members_near, method_row = method  # its calls anywhere in the file, and its `def`
    elif (defining_class := method_class(lines, change, new_lines, new_name, in_strings)) is not None:
        # A method renamed where it is defined: its uses are calls through an object
        # (`self.old(…)`, `client.old(…)`), anywhere in the file.
        dotted, members_near = True, defining_class
    else:  # a name the function around the change binds: only that function
        enclosing = enclosing_header(lines, change.start_line, in_strings)
        if enclosing is not None:  # the header too: a parameter renamed at one of its uses
            function = range(enclosing, block_after(lines, enclosing, in_strings).stop)
            # Bound there (`def f(w)` while `width` is still used below) or in a function
            # around it, whose variable a nested function uses.
            binding = binding_function(lines, change.start_line, (old_name, new_name), old_lines, in_strings)
            if binding is not None:
                rows = function = binding
            # Both names bound apart from the edited lines, and no earlier step of this same
            # rename: two variables, and the person switched one use from the one to the
            # other (`f(data)` → `f(cleaned)`). Replayed release diffs: such "renames" were
            # right 5 times in 18.
            unedited = ["" if row in edited else lines[row] for row in function]
            if binds(unedited, range(len(unedited)), old_name) and binds(unedited, range(len(unedited)), new_name) \
                    and not renamed_before(earlier, old_name, new_name, function):
                return
    in_function = rows is not window
    # A function nested in the scope that binds the old name itself has a variable of its own.
    shadowed = shadowed_rows(lines, rows, rows.start if header_row is None else header_row, old_name, edited,
                             in_strings) if in_function and members_near is None else set()
    through_self = re.compile(rf"\b(self|cls|super\(\))\.{re.escape(old_name)}\b")
    # The renamed name's role: a variable renamed in `f(path=path)` keeps the keyword, and a
    # keyword renamed at one call is renamed at the other calls, not in the variables.
    roles = {role(lines, row, match.start(), new_name) for row in edited if row < len(lines)
             for match in name_pattern(new_name).finditer(lines[row])} or {VARIABLE, KEYWORD}
    if DEFINED in roles:  # a renamed function or class: its uses are variables
        roles.add(VARIABLE)
    # The edited lines count too: `value` renamed once in `f(value) or g(value)` is renamed twice.
    using = [row for row in (*edited, *range(max(rows.start, window.start), min(rows.stop, window.stop)))
             if row < len(lines) and old_name in lines[row] and row not in shadowed]
    using = list(dict.fromkeys(using if method_row is None else [*using, method_row]))
    for row in using:
        code = code_of(row)
        rewritten = _replace_name(lines, row, old_name, new_name, dotted, code, roles)
        if row == method_row:
            rewritten = _replace_name(lines, row, old_name, new_name, False, code, {DEFINED})
        if rewritten != lines[row]:
            if members_near is None:
                near = in_function
            else:
                near = row in members_near and (row == method_row or
                                                rewritten == through_self.sub(rf"\1.{new_name}", lines[row]))
            yield PatternEdit(row, row + 1, rewritten, RENAME, in_function=near)


def renamed_variable_scope(lines: list[str], change: Change) -> range | None:
    """The rows of the function whose variable the change renamed (its token changes are
    one name replaced by another, not after a dot, and a function around binds it); None
    otherwise. The same swap outside it is another variable's: replayed, the general kinds'
    proposals there after such a rename were right 2 times in 97 (sweeps, below, apart)."""
    rename = renamed_identifier(change.old_text, change.new_text)
    if rename is None or rename[2] or _is_a_sweep(*rename[:2]):
        return None
    return binding_function(lines, change.start_line, rename[:2], split_lines(change.old_text))


def _is_a_sweep(old_name: str, new_name: str) -> bool:
    """A swap a person repeats in function after function, whatever variable it is: an
    unused name marked (``i`` → ``_``), a name written in snake case (``itemType`` →
    ``item_type``), a receiver swapped (``cls.instance`` → ``pendulum.instance``), a class
    or exception named anew (``TypeError`` → ``UsageError``)."""
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", old_name).lower()
    return new_name.startswith("_") or new_name == snake != old_name or old_name[:1].isupper() \
        or not {old_name, new_name}.isdisjoint({"self", "cls"})


def _goes_on_renaming(earlier: Sequence[Change], old_name: str, new_name: str, line_count: int) -> bool:
    """An annotation or default in a header changed as one of the last changes renamed the
    same name: the rename goes on (`def inner(x: T)` of an outer function's renamed `T`,
    `-> Date` → `-> Self` in method after method), except typing's alias replaced by its
    builtin, which the ``builtin_generic`` kind writes with the rest of its sweep. Over the
    replayed commits and release pairs: 31 next hunks right that were not, 2 lost."""
    return not is_builtin_alias(old_name, new_name) and renamed_before(earlier, old_name, new_name, range(line_count))


def renamed_before(earlier: Sequence[Change], old_name: str, new_name: str, rows: range) -> bool:
    """Whether one of the last changes before this one, among ``rows``, renamed ``old_name``
    to ``new_name`` too (a rename made use by use, or accepted proposal by proposal)."""
    for change in earlier[-MAX_CHAIN:]:
        if change.start_line in rows and len(change.old_text) + len(change.new_text) < 4_000 \
                and new_name in change.new_text:
            rename = renamed_identifier(change.old_text, change.new_text)
            if rename is not None and rename[:2] == (old_name, new_name):
                return True
    return False


def _replace_name(lines: list[str], row: int, old: str, new: str, dotted: bool, code: list[tuple[int, int]],
                  roles: set[str]) -> str:
    """Line ``row`` with ``old`` replaced where it stands as a name (after a dot or not, as
    ``dotted`` says) within the ``code`` spans, in one of the ``roles``."""
    line = lines[row]
    pieces, last = [], 0
    for a, b in code:
        for match in name_pattern(old).finditer(line, a, b):
            after_dot = line[: match.start()].rstrip().endswith(".")
            if after_dot != dotted or role(lines, row, match.start(), old) not in roles:
                continue
            pieces.append(line[last : match.start()] + new)
            last = match.end()
    return "".join(pieces) + line[last:] if pieces else line
