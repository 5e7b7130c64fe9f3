"""Where a renamed name reaches, read off the lines of code: the block under a header, the
headers a row stands under, the class around a change and the members it sets or defines,
whether rows bind a name, and the role one use of a name plays (defined, keyword, variable)."""

from __future__ import annotations

import re
from collections.abc import Container, Iterator

from model.code_text import code_spans
from model.next_edit.edit_patterns.changes import Change
from model.next_edit.edit_patterns.text import DEFINING, FUNCTION_HEADER, indent_of


def _class_around(lines: list[str], row: int, in_strings: Container[int]) -> tuple[int, range, int] | None:
    """(header row, body, its members' indentation) of the nearest class ``row`` stands
    under, if any."""
    header = next((r for r in _outer_rows(lines, row, in_strings) if lines[r].lstrip().startswith("class ")), None)
    if header is None:
        return None
    body = block_after(lines, header, in_strings)
    member_indent = next((indent_of(lines[r]) for r in body if lines[r].strip()), None)
    return None if member_indent is None else (header, body, member_indent)


def own_attribute_scope(lines: list[str], row: int, old_name: str, new_name: str, new_lines: list[str],
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


def own_method(lines: list[str], row: int, old_name: str, new_name: str, new_lines: list[str],
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


def method_class(lines: list[str], change: Change, new_lines: list[str], new_name: str,
                  in_strings: Container[int]) -> range | None:
    """The class (header and body) whose method the change renamed in its ``def`` line:
    the first line above the ``def`` that is indented less is that class's header (for a
    function nested in a method it is not, and its uses are plain names)."""
    offset = next((k for k, line in enumerate(new_lines)
                   if FUNCTION_HEADER.match(line) and is_defined_name(line, new_name)), None)
    if offset is None:
        return None
    row = change.start_line + offset
    if row >= len(lines) or indent_of(lines[row]) == 0:
        return None
    above = next(_outer_rows(lines, row, in_strings), None)
    if above is None or not lines[above].lstrip().startswith("class "):
        return None
    return range(above, block_after(lines, above, in_strings).stop)


def binds(lines: list[str], rows: range, name: str) -> bool:
    """Some row binds ``name``: a parameter of a header among the rows, an assignment, a
    loop, ``as`` or ``:=`` target. A name a function uses without binding it is a global:
    its other uses are anywhere in the file."""
    if rows and FUNCTION_HEADER.match(lines[rows.start]):
        header = ""
        for row in range(rows.start, min(rows.stop, rows.start + 20)):
            header += lines[row]
            if code_of(lines[row]).endswith((":", "{")):
                break
        if is_parameter(" ".join(header.split()), name):
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
            at = name_pattern(name).search(line, match.start())
            if at is not None and role([line], 0, at.start(), name) != KEYWORD:  # f(x=…) binds nothing here
                return True
    return False


VARIABLE, KEYWORD, DEFINED = "variable", "keyword", "defined"


def name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(name)}(?!\w)")


def role(lines: list[str], row: int, start: int, name: str) -> str:
    """``DEFINED`` for the name a ``def`` or ``class`` defines; ``KEYWORD`` for a call's
    keyword argument (``name=`` inside a call's parentheses on the line, or at depth 0 on a
    continuation line of a call); else ``VARIABLE`` (parameters, assignments, uses)."""
    line = lines[row]
    if DEFINING.search(line, 0, start):
        return DEFINED
    if not re.match(r"\s*=(?!=)", line[start + len(name):]) or FUNCTION_HEADER.match(line):
        return VARIABLE
    before = line[:start]
    depth = sum(before.count(ch) for ch in "([{") - sum(before.count(ch) for ch in ")]}")
    if depth > 0:
        return KEYWORD
    if before.strip() and not before.rstrip().endswith(","):
        return VARIABLE
    above = next((lines[r] for r in range(row - 1, max(-1, row - 20), -1) if lines[r].strip()), "")
    if not above.rstrip().endswith(("(", ",")):
        return VARIABLE
    header = enclosing_header(lines, row)
    if header is not None and all(lines[r].rstrip().endswith(("(", ",")) for r in range(header, row)
                                  if lines[r].strip()):
        return VARIABLE  # a parameter with a default, in a header split over lines
    return KEYWORD


def is_parameter(header: str, name: str) -> bool:
    """``name`` stands as a parameter name between the header's parentheses."""
    inside = header[header.find("(") + 1 :] if "(" in header else ""
    return re.search(rf"(?:^|[(,*])\s*{re.escape(name)}\s*(?:[:=,)]|$)", inside) is not None


def is_defined_name(header: str, name: str) -> bool:
    """``name`` is the function's own name (its callers follow)."""
    return re.search(rf"\b(?:def|function|fn|func)\s+{re.escape(name)}\b", header) is not None


def code_of(line: str) -> str:
    """A line's code without a trailing ``#`` comment or blanks: a header split over lines
    often opens with ``def f(  # type: ignore[misc]`` or closes with ``) -> None:  # noqa``.
    A line that is all comment (or a JavaScript ``#private(`` member) stays as it is."""
    spans = code_spans(line, "#")
    code = line[: spans[-1][1]].rstrip() if spans else ""
    return code if code.strip() else line.rstrip()


def block_after(lines: list[str], header_row: int, in_strings: Container[int] = ()) -> range:
    """The lines indented deeper than a header (blank lines and the insides of multi-line
    strings included)."""
    indent = indent_of(lines[header_row])
    row = header_row + 1
    # A header split over several lines ends at the first line that ends with ':' or '{'.
    while row < len(lines) and code_of(lines[header_row]).endswith((",", "(")) and row - header_row < 20:
        if code_of(lines[row]).endswith((":", "{")):
            row += 1
            break
        row += 1
    end = row
    while end < len(lines) and (not lines[end].strip() or indent_of(lines[end]) > indent or end in in_strings):
        end += 1
    return range(header_row + 1, end)


def binding_function(lines: list[str], row: int, names: tuple[str, str], old_lines: list[str],
                     in_strings: Container[int] = ()) -> range | None:
    """The rows of the function, around ``row`` or around that one, whose variable the
    name renamed there is (bound in it under either name: a rename half done binds the new
    one; or by the changed ``old_lines`` themselves), header first; None for a global name.
    A nested function uses its closure's names, unless it declares them ``nonlocal``."""
    bound_by_the_change = binds(old_lines, range(len(old_lines)), names[0])
    outer = enclosing_header(lines, row, in_strings)
    while outer is not None:
        scope = range(outer, block_after(lines, outer, in_strings).stop)
        if not any(declares(lines, scope, name, in_strings) for name in names) and (
                bound_by_the_change or any(binds(lines, scope, name) for name in names)):
            return scope
        outer = enclosing_header(lines, outer, in_strings)
    return None


def declares(lines: list[str], scope: range, name: str, in_strings: Container[int] = ()) -> bool:
    """The function whose rows ``scope`` are (its header first) declares ``name``
    ``nonlocal`` or ``global`` itself: what it assigns to it is not its own variable."""
    declaration = re.compile(rf"\s*(?:nonlocal|global)\s[^#\n]*\b{re.escape(name)}\b")
    return any(declaration.match(lines[row]) and enclosing_header(lines, row, in_strings) == scope.start
               for row in scope if row not in in_strings and name in lines[row])


# Python's nested ``def`` only: FUNCTION_HEADER's other languages' forms also match lines
# that are none (``.*=>`` in a string), and a false one would hide a use from the rename.
_NESTED_DEF = re.compile(r"\s*(?:async\s+)?def\s+\w+\s*\(")


def shadowed_rows(lines: list[str], scope: range, header: int, name: str, edited: Container[int],
                  in_strings: Container[int] = ()) -> set[int]:
    """The rows of the functions nested in ``scope`` (the function whose header is row
    ``header``) that bind ``name`` themselves, a parameter or a local of their own, and
    hold none of the ``edited`` rows: there it is another variable, which a rename of the
    scope's leaves alone (unless they declare it ``nonlocal`` or ``global``)."""
    shadowed: set[int] = set()
    row = scope.start
    while row < scope.stop:
        if row != header and row not in in_strings and _NESTED_DEF.match(lines[row]):
            nested = range(row, min(scope.stop, block_after(lines, row, in_strings).stop))
            if not any(r in edited for r in nested) and binds(lines, nested, name) \
                    and not declares(lines, nested, name, in_strings):
                shadowed.update(nested)
                row = nested.stop
                continue
        row += 1
    return shadowed


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


def enclosing_header(lines: list[str], row: int, in_strings: Container[int] = ()) -> int | None:
    """The nearest function header above ``row`` that ``row`` is indented under."""
    for above in _outer_rows(lines, row, in_strings):
        line = lines[above]
        if FUNCTION_HEADER.match(line):
            return above
        if line.lstrip().startswith(")") and code_of(line).endswith(":"):
            # `) -> None:` closes a header split over lines: its first line is the header.
            opening = next((row for row in range(above - 1, max(-1, above - 40), -1)
                            if indent_of(lines[row]) == indent_of(line) and lines[row].strip()), None)
            if opening is not None and FUNCTION_HEADER.match(lines[opening]):
                return opening
    return None
