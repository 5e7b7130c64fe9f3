"""The ``rename`` kind: a renamed identifier carried to its other uses, within the scope
the name has (a function, a class, the file)."""

from __future__ import annotations

import builtins
import difflib
import keyword
import re
from collections.abc import Callable, Container, Iterable, Iterator, Sequence

from model.code_text import PythonLiterals, code_spans, comment_marker
from model.next_edit.edit_patterns.changes import MAX_CHAIN, RENAME, Change, PatternEdit
from model.next_edit.edit_patterns.text import FUNCTION_HEADER, indent_of, split_lines, tokens_of

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*\Z")
_BUILTIN_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls"}
# A name replaced by one of these is a value changed (`return c` → `return None`), not renamed.
_CONSTANTS = frozenset({"None", "True", "False", "NotImplemented", "Ellipsis", "__debug__"})


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


def is_rename(old: str, new: str) -> bool:
    """The change is one the rename pattern carries."""
    rename = renamed_identifier(old, new)
    return rename is not None and _carries(rename[0], rename[1])


def _carries(old_name: str, new_name: str) -> bool:
    """Whether a rename is carried elsewhere: not a builtin swapped (`list` → `Sequence` here
    says nothing about `list` there), not a name replaced by a constant (a value changed)."""
    return old_name not in _BUILTIN_NAMES and new_name not in _CONSTANTS


def rename_edits(lines: list[str], change: Change, edited: range, window: range, path: str,
             earlier: Sequence[Change], python_literals: Callable[[], PythonLiterals]) -> Iterable[PatternEdit]:
    old_lines, new_lines = split_lines(change.old_text), split_lines(change.new_text)
    if len(old_lines) != len(new_lines):
        return
    found: tuple[str, str, bool] | None = None
    header_row = None
    for offset, (old, new) in enumerate(zip(old_lines, new_lines, strict=True)):
        if old == new:
            continue
        rename = renamed_identifier(old, new)
        if rename is None or found not in (None, rename):
            return
        found = rename
        if FUNCTION_HEADER.match(new):
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
    member_indent = next((indent_of(lines[r]) for r in body if lines[r].strip()), None)
    return None if member_indent is None else (header, body, member_indent)


def _own_attribute_scope(lines: list[str], row: int, old_name: str, new_name: str, new_lines: list[str],
                         in_strings: Container[int]) -> range | None:
    """The class around ``row`` when the rename is of an attribute that class sets
    (``self.old = …`` or a class-level ``old = …``, under either name) and the edited lines
    use it through ``self.`` or ``cls.``: every use in that class is one edit to a person,
    however far apart its methods are. None otherwise: a method renamed at one call
    (``self.assertEqual`` → ``self.assertListEqual``) switches to another, it renames nothing."""
    through_self = re.compile(rf"\b(?:self|cls)\.{re.escape(new_name)}\b(?!\s*\()")
    around = _class_used_through(through_self, lines, row, new_lines, in_strings)
    if around is None:
        return None
    header, body, member_indent = around
    names = f"(?:{re.escape(old_name)}|{re.escape(new_name)})"
    sets = re.compile(rf"\b(?:self|cls)\.{names}\s*(?::[^=\n]*)?=(?!=)")
    class_level = re.compile(rf"\s{{{member_indent}}}{names}\s*(?::[^=\n]*)?=(?!=)")
    if any(r not in in_strings and (sets.search(lines[r]) or class_level.match(lines[r])) for r in body):
        return range(header, body.stop)
    return None


def _class_used_through(use: re.Pattern[str], lines: list[str], row: int, new_lines: list[str],
                        in_strings: Container[int]) -> tuple[int, range, int] | None:
    """``_class_around(row)`` when the edited lines use the new name as ``use`` matches
    (through ``self.`` and the like); None otherwise."""
    if not any(use.search(line) for line in new_lines):
        return None
    return _class_around(lines, row, in_strings)


def _own_method(lines: list[str], row: int, old_name: str, new_name: str, new_lines: list[str],
                in_strings: Container[int]) -> tuple[range, int] | None:
    """(the class around ``row``, the row of its ``def old_name``) when a use through
    ``self.``, ``cls.`` or ``super().`` of a method that class defines was renamed to a name
    it does not define: the method itself is being renamed, not switched for another
    (``self.assertEqual`` → ``self.assertListEqual`` defines neither)."""
    through_self = re.compile(rf"\b(?:self|cls|super\(\))\.{re.escape(new_name)}\b")
    around = _class_used_through(through_self, lines, row, new_lines, in_strings)
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
    offset = next((k for k, line in enumerate(new_lines)
                   if FUNCTION_HEADER.match(line) and _is_defined_name(line, new_name)), None)
    if offset is None:
        return None
    row = change.start_line + offset
    if row >= len(lines) or indent_of(lines[row]) == 0:
        return None
    above = next(_outer_rows(lines, row, in_strings), None)
    if above is None or not lines[above].lstrip().startswith("class "):
        return None
    return range(above, _block_after(lines, above, in_strings).stop)


def _renamed_before(earlier: Sequence[Change], old_name: str, new_name: str, rows: range) -> bool:
    """Whether one of the last changes before this one, among ``rows``, renamed ``old_name``
    to ``new_name`` too (a rename made use by use, or accepted proposal by proposal)."""
    for change in earlier[-MAX_CHAIN:]:
        if change.start_line in rows and len(change.old_text) + len(change.new_text) < 4_000 \
                and new_name in change.new_text:
            rename = renamed_identifier(change.old_text, change.new_text)
            if rename is not None and rename[:2] == (old_name, new_name):
                return True
    return False


def _binds(lines: list[str], rows: range, name: str) -> bool:
    """Some row binds ``name``: a parameter of a header among the rows, an assignment, a
    loop, ``as`` or ``:=`` target. A name a function uses without binding it is a global:
    its other uses are anywhere in the file."""
    if rows and FUNCTION_HEADER.match(lines[rows.start]):
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
    if not re.match(r"\s*=(?!=)", line[start + len(name):]) or FUNCTION_HEADER.match(line):
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
    indent = indent_of(lines[header_row])
    row = header_row + 1
    # A header split over several lines ends at the first line that ends with ':' or '{'.
    while row < len(lines) and lines[header_row].rstrip().endswith((",", "(")) and row - header_row < 20:
        if lines[row].rstrip().endswith((":", "{")):
            row += 1
            break
        row += 1
    end = row
    while end < len(lines) and (not lines[end].strip() or indent_of(lines[end]) > indent or end in in_strings):
        end += 1
    return range(header_row + 1, end)


def _outer_rows(lines: list[str], row: int, in_strings: Container[int] = ()) -> Iterator[int]:
    """The code lines above ``row`` that each indent less than the one before, starting
    from ``row``'s indentation: the headers ``row`` may stand under, innermost first."""
    if row >= len(lines):
        return
    indent = indent_of(lines[row])
    for above in range(row - 1, -1, -1):
        line = lines[above]
        if not line.strip() or indent_of(line) >= indent or above in in_strings:
            continue
        yield above
        indent = indent_of(line)
        if indent == 0:
            return


def _enclosing_header(lines: list[str], row: int, in_strings: Container[int] = ()) -> int | None:
    """The nearest function header above ``row`` that ``row`` is indented under."""
    for above in _outer_rows(lines, row, in_strings):
        line = lines[above]
        if FUNCTION_HEADER.match(line):
            return above
        if line.lstrip().startswith(")") and line.rstrip().endswith(":"):
            # `) -> None:` closes a header split over lines: its first line is the header.
            opening = next((row for row in range(above - 1, max(-1, above - 40), -1)
                            if indent_of(lines[row]) == indent_of(line) and lines[row].strip()), None)
            if opening is not None and FUNCTION_HEADER.match(lines[opening]):
                return opening
    return None


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
