"""Edits that repeat the newest change elsewhere, found without the network.

Most next edits a person makes right after a change are the same change again: a renamed
name still used below, the same argument added at the next call, the twin of a deleted or
rewritten line. These patterns are read off the edit log exactly (token diffs of the
newest change), so they are proposed at once and never invented; the network handles what
no pattern explains. Each proposal carries its ``kind``; its confidence is the precision
that kind reached on held-out real edits (``NextEditCalibration``).

Kinds:
- ``rename``: one identifier replaced by another (every changed token in the edit is that
  same replacement); other uses of the old name get the new one, on the edited line too,
  outside strings and comments (an f-string's fields are code). A parameter renamed in a
  ``def``/``function`` header is carried only through that function's body; a name the
  function around the change binds, through that function (header included; every use
  there is "near"); a name it only uses is a global, carried through the file. An
  attribute the class around the change sets (``self.name = …``), renamed through
  ``self.`` or ``cls.``, is carried through that class; a method it defines, renamed in
  its ``def`` or at a call through ``self.`` (to a name the class does not define), is
  carried to its ``def`` and its calls through any object in the file. Their uses through
  ``self.``, ``cls.`` or ``super().`` in the class are all "near" (another receiver's
  ``x.name`` may be another class's: as near as it is). A name
  keeps its role: a renamed variable leaves ``f(path=path)``'s keyword alone, a renamed
  keyword leaves variables, a parameter named like its function leaves the function. A
  use switched to another variable of the function (both names bound apart from the
  edited lines, and no earlier step of the same rename there) is not a rename.
- ``call_site``: the arguments of a call ``name(…)`` changed by appending, prepending,
  replacing or removing one argument; other calls of ``name`` with the old argument get
  the same change. Not for a rename: a variable renamed in a call is the rename's.
- ``same_line``: a whole line was rewritten or deleted; lines equal to its old text get
  the same rewrite (with their own indentation) or are deleted; a line wrapped over
  several (the same words) has its twins wrapped alike. Not for a rename, whose twin line
  in another function is another variable. When the newest change implies nothing at
  all, the twin lines of the change before it (``twins_of_previous_change``).
- ``builtin_generic``: typing modernised. The change writes typing's aliases of builtins
  as the builtins (PEP 585: ``List[int]`` → ``list[int]``, ``t.Dict[`` → ``dict[``) or
  ``Optional[X]`` / ``Union[A, B]`` as ``X | None`` / ``A | B`` (PEP 604), or drops them
  from a ``from typing import`` line; every other line using a name the change touched, or
  one the file no longer imports, is written the same way, and with PEP 604 the builtin
  aliases too (one sweep, by hand or a tool's fixes replayed hunk by hunk, does both).
- ``substitution``, only when none of the above applies: one line's change is one
  contiguous run of tokens replaced by another (``"%s" % x`` → ``str(x)``, ``.get(`` →
  ``.pop(``, ``, 0)`` → ``, None)``); other lines holding that run between the same
  neighbouring tokens get the same replacement.
- ``insertion``, likewise: one line's change is one run of tokens inserted (``def f():`` →
  ``def f() -> None:``); other lines with the same first word and the same
  ``INSERTION_CONTEXT`` words or symbols on each side of that place get the same run.
"""

from __future__ import annotations

import builtins
import difflib
import keyword
import re
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Protocol

from model.code_text import PythonLiterals, code_spans, comment_marker
from model.formats import lsp_lines_with_ends

RENAME = "rename"
CALL_SITE = "call_site"
SAME_LINE = "same_line"
SUBSTITUTION = "substitution"
BUILTIN_GENERIC = "builtin_generic"
INSERTION = "insertion"
KINDS = (RENAME, CALL_SITE, SAME_LINE, SUBSTITUTION, BUILTIN_GENERIC, INSERTION)
# Tokens on each side of a substituted run that must match as well. Replayed release diffs
# (session 10, proposals ≤ 30 lines below): 0 → 50% exact, 1 → 62%, 2 → 66% but a third fewer.
SUBSTITUTION_CONTEXT = 1
# Words or symbols on each side of an inserted run that must match as well (fewer at the
# line's edge). Replayed release diffs (session 35), near proposals right: 1 → 45 of 107,
# 2 → 44 of 73, 3 → 32 of 47.
INSERTION_CONTEXT = 2
NEAR_LINES = 30
# Lines looked at on each side of the change: bounds the work in a huge file.
WINDOW_LINES = 3_000
# Lines longer than this are data, not code a sweep rewrites: the token-level patterns
# skip them (a 1 MB line took them ~0.5 s to read).
LONGEST_LINE = 5_000
# A proposal's bucket is its kind and its distance from the change, above or below alike:
# release diffs replayed both ways (session 18) gave "near" 52-63% above and 50-61% below,
# "far" 19-41% above and 21-35% below.
CALIBRATION_KEYS = tuple(f"{kind}:{where}" for kind in KINDS for where in ("near", "far"))

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\s+|.", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*\Z")
_BUILTIN_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls"}
# A name replaced by one of these is a value changed (`return c` → `return None`), not renamed.
_CONSTANTS = frozenset({"None", "True", "False", "NotImplemented", "Ellipsis", "__debug__"})
_HEADER = re.compile(r"\s*(?:async\s+)?(?:def|function|fn|func)\b|.*\bfunction\s*\w*\s*\(|.*=>")
# Keystroke events on one line are chained into one change when they follow each other.
_MAX_CHAIN = 64


@dataclass(frozen=True)
class Change:
    """One edit of the current document: whole lines ``old_text`` at ``start_line`` became ``new_text``."""

    start_line: int
    old_text: str
    new_text: str


@dataclass(frozen=True)
class PatternEdit:
    start_line: int  # lines [start_line, end_line) of the document are replaced by new_text
    end_line: int
    new_text: str
    kind: str
    lines_away: int = 0  # from the change: positive below it, negative above
    # A rename carried through the function around the change: every use in it is "near",
    # however long the function (the uses of one name are one edit to a person).
    in_function: bool = False

    @property
    def calibration_key(self) -> str:
        """The bucket whose measured precision is this edit's confidence."""
        near = abs(self.lines_away) <= NEAR_LINES or self.in_function
        return f"{self.kind}:{'near' if near else 'far'}"


def net_change(changes: list[Change]) -> Change | None:
    """The newest change, merged with the earlier ones that typed on the same line.

    The edit log merges keystrokes only within a second; a slow rename arrives as several
    events (``value`` → ``v`` → ``a`` → ``am`` …) whose sum is the rename."""
    return _merged(changes)[0] if changes else None


def _merged(changes: list[Change]) -> tuple[Change, int]:
    """The newest change with its keystrokes merged, and how many events that took."""
    merged = changes[-1]
    count = 1
    for earlier in reversed(changes[-_MAX_CHAIN:-1]):
        single = _line_count(earlier.old_text) == _line_count(earlier.new_text) == 1
        if not (single and earlier.start_line == merged.start_line and earlier.new_text == merged.old_text):
            break
        merged = Change(merged.start_line, earlier.old_text, merged.new_text)
        count += 1
    return merged, count


def previous_change(changes: list[Change]) -> Change | None:
    """The change before the newest (each with its keystrokes merged), its start moved to
    where its lines are now; None when there is none, or when a newer change rewrote its
    lines."""
    if not changes:
        return None
    _, count = _merged(changes)
    older, newer = changes[: len(changes) - count], changes[len(changes) - count :]
    if not older:
        return None
    previous, _ = _merged(older)
    start, size = previous.start_line, _line_count(previous.new_text)
    for change in newer:
        replaced = _line_count(change.old_text)
        if change.start_line + replaced <= start:
            start += _line_count(change.new_text) - replaced
        elif change.start_line < start + size:
            return None
    return replace(previous, start_line=start)


def twins_of_previous_change(lines: list[str], changes: list[Change]) -> list[PatternEdit]:
    """The twin lines of the change before the newest, away from the lines just edited.

    For when the newest change implies nothing: the same line rewritten in several places
    with another fix in between. Only twin lines: replayed on release diffs (session 35),
    the other kinds' near proposals from the change before were right 93 times in 230,
    twin lines near it 71 in 103."""
    previous, newest = previous_change(changes), net_change(changes)
    if previous is None or newest is None:
        return []
    just_edited = range(newest.start_line, newest.start_line + _line_count(newest.new_text))
    edited, window = _span(lines, previous)
    twins = [edit for edit in _same_lines(lines, previous, edited, window) if edit.start_line not in just_edited]
    return _placed(twins, previous, edited)


def travel(changes: list[Change]) -> int:
    """Which way the person is moving through the file: 1 down, -1 up, 0 not known.

    The newest change against the one before it, each with its keystrokes merged. Two
    steps of one rename are one edit, not a way: its uses on both sides are still to do."""
    if not changes:
        return 0
    newest, count = _merged(changes)
    if count == len(changes):
        return 0
    previous, _ = _merged(changes[: len(changes) - count])
    if previous.start_line == newest.start_line:
        return 0
    rename = _renamed_identifier(newest.old_text, newest.new_text)
    if rename is not None and rename == _renamed_identifier(previous.old_text, previous.new_text):
        return 0
    return 1 if newest.start_line > previous.start_line else -1


def pattern_edits(lines: list[str], change: Change, path: str = "",
                  earlier: Sequence[Change] = ()) -> list[PatternEdit]:
    """Every line of ``lines`` (with their endings) that the change's pattern would rewrite.

    ``change`` has already been applied to ``lines``; ``earlier``: the document's changes
    before it, oldest first (a rename made in several steps is told by them). Proposals
    come nearest to the change first, lines below it before lines above at the same distance."""
    found: dict[int, PatternEdit] = {}
    edited, window = _span(lines, change)
    literals = cache(lambda: PythonLiterals(lines))  # read once, and only by a pattern that needs it
    for edit in (*_renames(lines, change, edited, window, path, earlier, literals),
                 *_call_sites(lines, change, edited, window), *_same_lines(lines, change, edited, window),
                 *_builtin_generics(lines, change, window, path, literals)):
        found.setdefault(edit.start_line, edit)
    if not found:  # the most general patterns, only when no specific one explains the change
        found = {edit.start_line: edit for edit in (
            *_one_line_rewrites(lines, change, edited, window, _substitution, SUBSTITUTION),
            *_one_line_rewrites(lines, change, edited, window, _insertion, INSERTION))}
    return _placed(found.values(), change, edited)


def _span(lines: list[str], change: Change) -> tuple[range, range]:
    """The lines the change wrote, and the window looked at around them."""
    edited = range(change.start_line, change.start_line + _line_count(change.new_text))
    return edited, range(max(0, change.start_line - WINDOW_LINES), min(len(lines), edited.stop + WINDOW_LINES))


def _placed(edits: Iterable[PatternEdit], change: Change, edited: range) -> list[PatternEdit]:
    """Consecutive edits merged, each told how far it is from the change, nearest first."""
    def away(edit: PatternEdit) -> int:
        if edit.start_line >= edited.stop:
            return edit.start_line - edited.stop + 1
        return edit.start_line - change.start_line  # negative: above the change

    placed = [replace(e, lines_away=away(e)) for e in _merge_adjacent(sorted(edits, key=_start))]
    return sorted(placed, key=lambda e: 2 * e.lines_away if e.lines_away >= 0 else -2 * e.lines_away + 1)


def _start(edit: PatternEdit) -> int:
    return edit.start_line


def _merge_adjacent(edits: list[PatternEdit]) -> list[PatternEdit]:
    """Edits of consecutive lines become one: people fix a run of lines in one go."""
    merged: list[PatternEdit] = []
    for edit in edits:
        last = merged[-1] if merged else None
        if last is not None and last.end_line == edit.start_line and last.kind == edit.kind:
            merged[-1] = replace(last, end_line=edit.end_line, new_text=last.new_text + edit.new_text)
        else:
            merged.append(edit)
    return merged


def _line_count(text: str) -> int:
    return len(_split(text))


def _split(text: str) -> list[str]:
    # LSP's line rule: str.splitlines would also break at form feed, \x85, \u2028…, and a
    # change to a line holding one would not line up with the document's lines.
    return lsp_lines_with_ends(text)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


# --- rename ----------------------------------------------------------------------------


def _renamed_identifier(old: str, new: str) -> tuple[str, str, bool] | None:
    """(old name, new name, after a dot) when every token change is that one replacement."""
    before, after = _tokens(old), _tokens(new)
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


def _is_rename(old: str, new: str) -> bool:
    """The change is one the rename pattern carries."""
    rename = _renamed_identifier(old, new)
    return rename is not None and _carries(rename[0], rename[1])


def _carries(old_name: str, new_name: str) -> bool:
    """Whether a rename is carried elsewhere: not a builtin swapped (`list` → `Sequence` here
    says nothing about `list` there), not a name replaced by a constant (a value changed)."""
    return old_name not in _BUILTIN_NAMES and new_name not in _CONSTANTS


def _renames(lines: list[str], change: Change, edited: range, window: range, path: str,
             earlier: Sequence[Change], python_literals: Callable[[], PythonLiterals]) -> Iterable[PatternEdit]:
    old_lines, new_lines = _split(change.old_text), _split(change.new_text)
    if len(old_lines) != len(new_lines):
        return
    found: tuple[str, str, bool] | None = None
    header_row = None
    for offset, (old, new) in enumerate(zip(old_lines, new_lines, strict=True)):
        if old == new:
            continue
        rename = _renamed_identifier(old, new)
        if rename is None or found not in (None, rename):
            return
        found = rename
        if _HEADER.match(new):
            if not _is_parameter(new, rename[1]) and not _is_defined_name(new, rename[1]):
                return  # an annotation or a default changed: nothing to carry elsewhere
            if _is_parameter(new, rename[1]):
                header_row = change.start_line + offset
    if found is None:
        return
    old_name, new_name, dotted = found
    if not _carries(old_name, new_name):
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
        return any(_name_pattern(new_name).search(line, start, end) for start, end in spans)

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
        rows = _block_after(lines, header_row, in_strings)
    elif dotted:  # an attribute of the class around the change: through that class
        members_near = _own_attribute_scope(lines, change.start_line, old_name, new_name, new_lines, in_strings)
        if members_near is not None:
            rows = members_near
        elif (method := _own_method(lines, change.start_line, old_name, new_name, new_lines, in_strings)) is not None:
            members_near, method_row = method  # its calls anywhere in the file, and its `def`
    elif (method_class := _method_class(lines, change, new_lines, new_name, in_strings)) is not None:
        # A method renamed where it is defined: its uses are calls through an object
        # (`self.old(…)`, `client.old(…)`), anywhere in the file.
        dotted, members_near = True, method_class
    else:  # a name the function around the change binds: only that function
        enclosing = _enclosing_header(lines, change.start_line, in_strings)
        if enclosing is not None:  # the header too: a parameter renamed at one of its uses
            function = range(enclosing, _block_after(lines, enclosing, in_strings).stop)
            # Bound there under either name: a rename half done binds the new one (`def f(w)`
            # while `width` is still used below), its first step may have been the binding.
            if _binds(lines, function, old_name) or _binds(lines, function, new_name) or \
                    _binds(old_lines, range(len(old_lines)), old_name):
                rows = function
            # Both names bound apart from the edited lines, and no earlier step of this same
            # rename: two variables, and the person switched one use from the one to the
            # other (`f(data)` → `f(cleaned)`). Replayed release diffs: such "renames" were
            # right 5 times in 18.
            unedited = ["" if row in edited else lines[row] for row in function]
            if _binds(unedited, range(len(unedited)), old_name) and _binds(unedited, range(len(unedited)), new_name) \
                    and not _renamed_before(earlier, old_name, new_name, function):
                return
    in_function = rows is not window
    through_self = re.compile(rf"\b(self|cls|super\(\))\.{re.escape(old_name)}\b")
    # The renamed name's role: a variable renamed in `f(path=path)` keeps the keyword, and a
    # keyword renamed at one call is renamed at the other calls, not in the variables.
    roles = {_role(lines, row, match.start(), new_name) for row in edited if row < len(lines)
             for match in _name_pattern(new_name).finditer(lines[row])} or {_VARIABLE, _KEYWORD}
    if _DEFINED in roles:  # a renamed function or class: its uses are variables
        roles.add(_VARIABLE)
    # The edited lines count too: `value` renamed once in `f(value) or g(value)` is renamed twice.
    using = [row for row in (*edited, *range(max(rows.start, window.start), min(rows.stop, window.stop)))
             if row < len(lines) and old_name in lines[row]]
    using = list(dict.fromkeys(using if method_row is None else [*using, method_row]))
    for row in using:
        code = code_of(row)
        rewritten = _replace_name(lines, row, old_name, new_name, dotted, code, roles)
        if row == method_row:
            rewritten = _replace_name(lines, row, old_name, new_name, False, code, {_DEFINED})
        if rewritten != lines[row]:
            if members_near is None:
                near = in_function
            else:
                near = row in members_near and (row == method_row or
                                                rewritten == through_self.sub(rf"\1.{new_name}", lines[row]))
            yield PatternEdit(row, row + 1, rewritten, RENAME, in_function=near)


def _class_around(lines: list[str], row: int, in_strings: Container[int]) -> tuple[int, range, int] | None:
    """(header row, body, its members' indentation) of the nearest class ``row`` stands
    under, if any."""
    header = next((r for r in _outer_rows(lines, row, in_strings) if lines[r].lstrip().startswith("class ")), None)
    if header is None:
        return None
    body = _block_after(lines, header, in_strings)
    member_indent = next((_indent_of(lines[r]) for r in body if lines[r].strip()), None)
    return None if member_indent is None else (header, body, member_indent)


def _own_attribute_scope(lines: list[str], row: int, old_name: str, new_name: str, new_lines: list[str],
                         in_strings: Container[int]) -> range | None:
    """The class around ``row`` when the rename is of an attribute that class sets
    (``self.old = …`` or a class-level ``old = …``, under either name) and the edited lines
    use it through ``self.`` or ``cls.``: every use in that class is one edit to a person,
    however far apart its methods are. None otherwise: a method renamed at one call
    (``self.assertEqual`` → ``self.assertListEqual``) switches to another, it renames nothing."""
    through_self = re.compile(rf"\b(?:self|cls)\.{re.escape(new_name)}\b(?!\s*\()")
    if not any(through_self.search(line) for line in new_lines):
        return None
    around = _class_around(lines, row, in_strings)
    if around is None:
        return None
    header, body, member_indent = around
    names = f"(?:{re.escape(old_name)}|{re.escape(new_name)})"
    sets = re.compile(rf"\b(?:self|cls)\.{names}\s*(?::[^=\n]*)?=(?!=)")
    class_level = re.compile(rf"\s{{{member_indent}}}{names}\s*(?::[^=\n]*)?=(?!=)")
    if any(r not in in_strings and (sets.search(lines[r]) or class_level.match(lines[r])) for r in body):
        return range(header, body.stop)
    return None


def _own_method(lines: list[str], row: int, old_name: str, new_name: str, new_lines: list[str],
                in_strings: Container[int]) -> tuple[range, int] | None:
    """(the class around ``row``, the row of its ``def old_name``) when a use through
    ``self.``, ``cls.`` or ``super().`` of a method that class defines was renamed to a name
    it does not define: the method itself is being renamed, not switched for another
    (``self.assertEqual`` → ``self.assertListEqual`` defines neither)."""
    through_self = re.compile(rf"\b(?:self|cls|super\(\))\.{re.escape(new_name)}\b")
    if not any(through_self.search(line) for line in new_lines):
        return None
    around = _class_around(lines, row, in_strings)
    if around is None:
        return None
    header, body, member_indent = around
    defining = {name: re.compile(rf"\s{{{member_indent}}}(?:async\s+)?def\s+{re.escape(name)}\b")
                for name in (old_name, new_name)}
    found = next((r for r in body if r not in in_strings and defining[old_name].match(lines[r])), None)
    if found is None or any(r not in in_strings and defining[new_name].match(lines[r]) for r in body):
        return None
    return range(header, body.stop), found


def _method_class(lines: list[str], change: Change, new_lines: list[str], new_name: str,
                  in_strings: Container[int]) -> range | None:
    """The class (header and body) whose method the change renamed in its ``def`` line:
    the first line above the ``def`` that is indented less is that class's header (for a
    function nested in a method it is not, and its uses are plain names)."""
    offset = next((k for k, line in enumerate(new_lines) if _HEADER.match(line) and _is_defined_name(line, new_name)),
                  None)
    if offset is None:
        return None
    row = change.start_line + offset
    if row >= len(lines) or _indent_of(lines[row]) == 0:
        return None
    above = next(_outer_rows(lines, row, in_strings), None)
    if above is None or not lines[above].lstrip().startswith("class "):
        return None
    return range(above, _block_after(lines, above, in_strings).stop)


def _renamed_before(earlier: Sequence[Change], old_name: str, new_name: str, rows: range) -> bool:
    """Whether one of the last changes before this one, among ``rows``, renamed ``old_name``
    to ``new_name`` too (a rename made use by use, or accepted proposal by proposal)."""
    for change in earlier[-_MAX_CHAIN:]:
        if change.start_line in rows and len(change.old_text) + len(change.new_text) < 4_000 \
                and new_name in change.new_text:
            rename = _renamed_identifier(change.old_text, change.new_text)
            if rename is not None and rename[:2] == (old_name, new_name):
                return True
    return False


def _binds(lines: list[str], rows: range, name: str) -> bool:
    """Some row binds ``name``: a parameter of a header among the rows, an assignment, a
    loop, ``as`` or ``:=`` target. A name a function uses without binding it is a global:
    its other uses are anywhere in the file."""
    if rows and _HEADER.match(lines[rows.start]):
        header = ""
        for row in range(rows.start, min(rows.stop, rows.start + 20)):
            header += lines[row]
            if lines[row].rstrip().endswith((":", "{")):
                break
        if _is_parameter(" ".join(header.split()), name):
            return True
    word = re.escape(name)
    binding = re.compile(
        rf"(?:^\s*|[(,*]\s*){word}\s*(?::[^=\n]*)?(?:[-+*/%@&|^]|//|<<|>>|\*\*)?=(?!=)"  # x = 1, x: int = 1, x += 1
        rf"|^\s*(?:[\w.\[\]]+\s*,\s*)*{word}\s*(?:,\s*[\w.\[\]]+\s*)*=(?!=)"  # a, x = …
        rf"|\bfor\s+(?:[\w\s,()]*[\s,(])?{word}\b[\w\s,()]*\bin\b"  # for x in, for a, x in
        rf"|\bas\s+{word}\b|\b{word}\s*:=|\b(?:def|class)\s+{word}\b")
    for row in rows:
        line = lines[row]
        if name not in line:
            continue
        for match in binding.finditer(line):
            at = _name_pattern(name).search(line, match.start())
            if at is not None and _role([line], 0, at.start(), name) != _KEYWORD:  # f(x=…) binds nothing here
                return True
    return False


_VARIABLE, _KEYWORD, _DEFINED = "variable", "keyword", "defined"
_DEFINING = re.compile(r"(?:\bdef|\bclass|\bfunction|\bfn|\bfunc)\s+\Z")


def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(name)}(?!\w)")


def _role(lines: list[str], row: int, start: int, name: str) -> str:
    """``_DEFINED`` for the name a ``def`` or ``class`` defines; ``_KEYWORD`` for a call's
    keyword argument (``name=`` inside a call's parentheses on the line, or at depth 0 on a
    continuation line of a call); else ``_VARIABLE`` (parameters, assignments, uses)."""
    line = lines[row]
    if _DEFINING.search(line, 0, start):
        return _DEFINED
    if not re.match(r"\s*=(?!=)", line[start + len(name):]) or _HEADER.match(line):
        return _VARIABLE
    before = line[:start]
    depth = sum(before.count(ch) for ch in "([{") - sum(before.count(ch) for ch in ")]}")
    if depth > 0:
        return _KEYWORD
    if before.strip() and not before.rstrip().endswith(","):
        return _VARIABLE
    above = next((lines[r] for r in range(row - 1, max(-1, row - 20), -1) if lines[r].strip()), "")
    if not above.rstrip().endswith(("(", ",")):
        return _VARIABLE
    header = _enclosing_header(lines, row)
    if header is not None and all(lines[r].rstrip().endswith(("(", ",")) for r in range(header, row)
                                  if lines[r].strip()):
        return _VARIABLE  # a parameter with a default, in a header split over lines
    return _KEYWORD


def _is_parameter(header: str, name: str) -> bool:
    """``name`` stands as a parameter name between the header's parentheses."""
    inside = header[header.find("(") + 1 :] if "(" in header else ""
    return re.search(rf"(?:^|[(,*])\s*{re.escape(name)}\s*(?:[:=,)]|$)", inside) is not None


def _is_defined_name(header: str, name: str) -> bool:
    """``name`` is the function's own name (its callers follow)."""
    return re.search(rf"\b(?:def|function|fn|func)\s+{re.escape(name)}\b", header) is not None


def _block_after(lines: list[str], header_row: int, in_strings: Container[int] = ()) -> range:
    """The lines indented deeper than a header (blank lines and the insides of multi-line
    strings included)."""
    indent = _indent_of(lines[header_row])
    row = header_row + 1
    # A header split over several lines ends at the first line that ends with ':' or '{'.
    while row < len(lines) and lines[header_row].rstrip().endswith((",", "(")) and row - header_row < 20:
        if lines[row].rstrip().endswith((":", "{")):
            row += 1
            break
        row += 1
    end = row
    while end < len(lines) and (not lines[end].strip() or _indent_of(lines[end]) > indent or end in in_strings):
        end += 1
    return range(header_row + 1, end)


def _outer_rows(lines: list[str], row: int, in_strings: Container[int] = ()) -> Iterator[int]:
    """The code lines above ``row`` that each indent less than the one before, starting
    from ``row``'s indentation: the headers ``row`` may stand under, innermost first."""
    if row >= len(lines):
        return
    indent = _indent_of(lines[row])
    for above in range(row - 1, -1, -1):
        line = lines[above]
        if not line.strip() or _indent_of(line) >= indent or above in in_strings:
            continue
        yield above
        indent = _indent_of(line)
        if indent == 0:
            return


def _enclosing_header(lines: list[str], row: int, in_strings: Container[int] = ()) -> int | None:
    """The nearest function header above ``row`` that ``row`` is indented under."""
    for above in _outer_rows(lines, row, in_strings):
        line = lines[above]
        if _HEADER.match(line):
            return above
        if line.lstrip().startswith(")") and line.rstrip().endswith(":"):
            # `) -> None:` closes a header split over lines: its first line is the header.
            opening = next((row for row in range(above - 1, max(-1, above - 40), -1)
                            if _indent_of(lines[row]) == _indent_of(line) and lines[row].strip()), None)
            if opening is not None and _HEADER.match(lines[opening]):
                return opening
    return None


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _replace_name(lines: list[str], row: int, old: str, new: str, dotted: bool, code: list[tuple[int, int]],
                  roles: set[str]) -> str:
    """Line ``row`` with ``old`` replaced where it stands as a name (after a dot or not, as
    ``dotted`` says) within the ``code`` spans, in one of the ``roles``."""
    line = lines[row]
    pieces, last = [], 0
    for a, b in code:
        for match in _name_pattern(old).finditer(line, a, b):
            after_dot = line[: match.start()].rstrip().endswith(".")
            if after_dot != dotted or _role(lines, row, match.start(), old) not in roles:
                continue
            pieces.append(line[last : match.start()] + new)
            last = match.end()
    return "".join(pieces) + line[last:] if pieces else line


# --- call sites -------------------------------------------------------------------------

_CALL = re.compile(r"([A-Za-z_][\w.]*)\(")


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


def _split_arguments(text: str) -> list[str]:
    """Top-level comma-separated arguments, stripped."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [] if parts == [""] else parts


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
    old_calls = {name: old[a:b] for name, a, b in _calls(old)}
    changed = [(name, old_calls[name], new[a:b]) for name, a, b in _calls(new)
               if name in old_calls and old_calls[name] != new[a:b]]
    if len(changed) != 1:
        return None
    name, before, after = changed[0]
    outside_old = old.replace(before, "", 1)
    outside_new = new.replace(after, "", 1)
    if outside_old != outside_new:  # more changed than the arguments of one call
        return None
    return _ArgumentChange(name, tuple(_split_arguments(before)), tuple(_split_arguments(after)))


def _call_sites(lines: list[str], change: Change, edited: range, window: range) -> Iterable[PatternEdit]:
    old_lines, new_lines = _split(change.old_text), _split(change.new_text)
    if len(old_lines) != 1 or len(new_lines) != 1 or _HEADER.match(new_lines[0]):
        return
    if _is_rename(old_lines[0], new_lines[0]):
        return  # a renamed variable passed to a call: the rename knows where else it is used
    argument_change = _argument_change(old_lines[0], new_lines[0])
    if argument_change is None:
        return
    called = argument_change.name + "("
    for row in window:
        line = lines[row]
        if row in edited or called not in line:
            continue
        for name, a, b in reversed(_calls(line)):
            if name != argument_change.name:
                continue
            arguments = argument_change.apply(_split_arguments(line[a:b]))
            if arguments is not None:
                line = line[:a] + ", ".join(arguments) + line[b:]
        if line != lines[row]:
            yield PatternEdit(row, row + 1, line, CALL_SITE)


# --- same line --------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """The tokens that are neither whitespace nor commas (a wrap adds a trailing comma)."""
    return [token for token in _tokens(text) if not token.isspace() and token != ","]


def _same_lines(lines: list[str], change: Change, edited: range, window: range) -> Iterable[PatternEdit]:
    old_lines, new_lines = _split(change.old_text), _split(change.new_text)
    if len(old_lines) != 1:
        return
    old = old_lines[0].strip()
    if len(old) < 6:  # short lines (`pass`, `else:`) repeat by coincidence
        return
    if len(new_lines) == 1 and _is_rename(old_lines[0], new_lines[0]):
        return  # a rename: the rename pattern knows its scope, a twin line elsewhere may be out of it
    # A line rewritten as several keeps each new line's indentation relative to the old
    # line's, so its twin is rewritten at its own; only a wrap (the same words, commas
    # aside: a formatter's or a person's), since what a rewrite adds around one line is
    # that place's (replayed, session 35: wraps right 8 times in 10, other rewrites 38 in 93).
    old_indent = old_lines[0][: _indent_of(old_lines[0])]
    if len(new_lines) > 1 and (_words(change.old_text) != _words(change.new_text) or any(
            line.strip() and not line.startswith(old_indent) for line in new_lines)):
        return
    for row in window:
        line = lines[row]
        if row in edited or old not in line or line.strip() != old:
            continue
        if not new_lines:
            yield PatternEdit(row, row + 1, "", SAME_LINE)
            continue
        body = line.rstrip("\r\n")
        ending = line[len(body):] or "\n"
        indent = line[: _indent_of(line)]
        if len(new_lines) == 1:
            rewritten = [indent + new_lines[0].strip()]
        else:
            rewritten = [indent + new.rstrip("\r\n")[len(old_indent):] if new.strip() else "" for new in new_lines]
        yield PatternEdit(row, row + 1, ending.join(rewritten) + line[len(body):], SAME_LINE)


# --- substitution -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Substitution:
    left: list[str]  # context tokens before the run
    run: list[str]  # the tokens replaced
    replacement: list[str]
    right: list[str]  # context tokens after the run

    @property
    def needle(self) -> str:
        return "".join(self.run)

    def apply(self, line: str) -> str:
        """``line`` with every occurrence of the run in the same context replaced."""
        tokens, size = _tokens(line), len(self.run)
        out: list[str] = []
        at = 0
        while at < len(tokens):
            if tokens[at:at + size] == self.run and out[len(out) - len(self.left):] == self.left \
                    and tokens[at + size:at + size + len(self.right)] == self.right:
                out += self.replacement
                at += size
            else:
                out.append(tokens[at])
                at += 1
        return "".join(out)


def _common_ends(before: Sequence[str], after: Sequence[str]) -> tuple[int, int]:
    """How many tokens the two lines share at their start, and then at their end."""
    shortest = min(len(before), len(after))
    head = 0
    while head < shortest and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < shortest - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return head, tail


def _substitution(old: str, new: str) -> _Substitution | None:
    """The one contiguous run of ``old``'s tokens that ``new`` replaced (common token prefix
    and suffix set aside), with ``SUBSTITUTION_CONTEXT`` tokens of context on each side."""
    before, after = _tokens(old), _tokens(new)
    head, tail = _common_ends(before, after)
    run, replacement = before[head:len(before) - tail], after[head:len(after) - tail]
    if not "".join(run).strip():  # pure insertions and whitespace changes say nothing about other lines
        return None
    left = before[max(0, head - SUBSTITUTION_CONTEXT):head]
    right = before[len(before) - tail:len(before) - tail + SUBSTITUTION_CONTEXT]
    return _Substitution(left, run, replacement, right)


class _OneLineRewrite(Protocol):
    """A rewrite read off one line's change, for the other lines: a substitution or an insertion."""

    @property
    def needle(self) -> str: ...  # text a line must hold for the rewrite to apply

    def apply(self, line: str) -> str: ...


def _one_line_rewrites(lines: list[str], change: Change, edited: range, window: range,
                       read: Callable[[str, str], _OneLineRewrite | None], kind: str) -> Iterable[PatternEdit]:
    """The rewrite ``read`` finds in a one-line change, at every other line it changes."""
    old_lines, new_lines = _split(change.old_text), _split(change.new_text)
    if len(old_lines) != 1 or len(new_lines) != 1:
        return
    rewrite = read(old_lines[0], new_lines[0])
    if rewrite is None:
        return
    needle = rewrite.needle
    for row in window:
        line = lines[row]
        if row in edited or len(line) > LONGEST_LINE or needle not in line:
            continue
        rewritten = rewrite.apply(line)
        if rewritten != line:
            yield PatternEdit(row, row + 1, rewritten, kind)


# --- insertion ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Insertion:
    first: str  # the edited line's first word: what a `def` line got, another `def` line gets
    left: tuple[str, ...]  # the tokens just before the insertion, back to a word or symbol
    inserted: tuple[str, ...]
    right: tuple[str, ...]  # the tokens just after it, up to a word or symbol

    @property
    def needle(self) -> str:
        return self.first

    def apply(self, line: str) -> str:
        """``line`` with the run inserted wherever the same tokens surround the same place."""
        tokens = _tokens(line)
        if _first_word(tokens) != self.first:
            return line
        out: list[str] = []
        for at in range(len(tokens) + 1):
            if tuple(tokens[max(0, at - len(self.left)):at]) == self.left \
                    and tuple(tokens[at:at + len(self.right)]) == self.right \
                    and tuple(tokens[at:at + len(self.inserted)]) != self.inserted:
                out += self.inserted
            if at < len(tokens):
                out.append(tokens[at])
        return "".join(out)


def _first_word(tokens: Sequence[str]) -> str | None:
    return next((token for token in tokens if not token.isspace()), None)


def _context(tokens: Sequence[str]) -> tuple[str, ...] | None:
    """The tokens from the start of ``tokens`` up to and including the
    ``INSERTION_CONTEXT``-th that is not whitespace (fewer at the line's edge); None when
    there is none (the insertion sits at the line's edge)."""
    seen = 0
    for at, token in enumerate(tokens):
        seen += not token.isspace()
        if seen == INSERTION_CONTEXT:
            return tuple(tokens[:at + 1])
    return tuple(tokens) if seen else None


def _insertion(old: str, new: str) -> _Insertion | None:
    """``new`` is ``old`` with one run of tokens inserted between two words or symbols
    (``def f(self):`` → ``def f(self) -> None:``, ``request)`` → ``request: Fixture)``)."""
    before, after = _tokens(old), _tokens(new)
    if len(after) <= len(before):
        return None
    head, tail = _common_ends(before, after)
    if head + tail != len(before):
        return None  # something was replaced too: a substitution's or another pattern's
    inserted = tuple(after[head:len(after) - tail])
    left, right = _context(before[:head][::-1]), _context(before[head:])
    first = _first_word(before)
    if not "".join(inserted).strip() or left is None or right is None or first is None:
        return None
    return _Insertion(first, left[::-1], inserted, right)


# --- builtin generics -------------------------------------------------------------------

# PEP 585: typing's aliases that the builtins replace, subscripted.
_BUILTIN_ALIASES = {"List": "list", "Dict": "dict", "Set": "set", "FrozenSet": "frozenset", "Tuple": "tuple",
                    "Type": "type"}
# PEP 604: ``Optional[X]`` → ``X | None``, ``Union[A, B]`` → ``A | B``; usually in the same sweep.
_UNIONS = ("Optional", "Union")
_TYPING_USE = re.compile(r"(?<![\w.])(?:(?:typing|t)\.)?(List|Dict|Set|FrozenSet|Tuple|Type|Optional|Union)\[")
_TYPING_IMPORT = re.compile(r"\s*from\s+typing\s+import\s+([^#]*)")


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
        arguments = [_modernised(part, names) for part in _split_arguments(text[match.end():end])]
        if not arguments or any(part.startswith(("'", '"')) for part in arguments):
            continue
        out.append(text[last:match.start()] + " | ".join([*arguments, "None"] if name == "Optional" else arguments))
        last = end + 1
    return "".join(out) + text[last:]


def _builtin_generics(lines: list[str], change: Change, window: range, path: str,
                      python_literals: Callable[[], PythonLiterals]) -> Iterable[PatternEdit]:
    if comment_marker(path) != "#":
        return
    old_lines, new_lines = _split(change.old_text), _split(change.new_text)
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
