"""The statement around the cursor, and whether it parses with a candidate in place: the
parse feature every FIM calibrator reads (``calibration.py``, ``copy_check.py``,
``line_continuation.py``, ``left_to_right.py``), and the candidates Python's syntax rules
out, which are never shown (``CursorStatement.rules_out``).

The statement is the top-level one around the cursor or, in a class, the statement of its
body (a method), not the file: parsing a 20 KB file on every keystroke cost ~4 ms. Lines
inside a long string neither start nor end one.
"""

from __future__ import annotations

import io
import itertools
import re
import tokenize
from dataclasses import dataclass
from functools import cached_property, lru_cache

from model.code_text import code_spans, indent_of
from model.fim.suffix_overlap import trim_suffix_overlap
from model.languages.python_parse import parses
from model.languages.statement import UNKNOWN_PARSE
from model.line_forms import parses_in_a_file

MAX_PARSED_CHARS = 20_000  # a longer statement around the cursor is not parsed (~4 ms at this size)
_DEFINITION = ("def ", "class ", "async ", "@")  # what a decorator decorates, or another decorator
# Written above a statement cut from a class body, whose lines are indented: Python parses
# an indented block only under a header.
_BLOCK_HEADER = "if True:\n"


_QUOTES = ('"""', "'''")
_CLAUSES = ("else", "elif", "except", "finally")  # they go on with the statement above


def _open_strings(text: str, start: int, end: int) -> tuple[int, ...]:
    """How many of each triple quote ``text[start:end]`` holds, modulo 2: a line after an
    odd count lies inside a docstring (or another long string), whose lines look like code."""
    return tuple(text.count(quotes, start, end) % 2 for quotes in _QUOTES)


def _opened_at(text: str, line_start: int) -> int | None:
    """Where the long string that the line at ``line_start`` closes opened, when the line
    starts with triple quotes after an odd count of them (counted from the file's start,
    but only for such a line); None for any other line."""
    quotes = text[line_start:line_start + 3]
    if quotes not in _QUOTES or text.count(quotes, 0, line_start) % 2 == 0:
        return None
    return text.rfind(quotes, 0, line_start)


@dataclass(frozen=True)
class _Level:
    """Statements at one indentation (in characters, spaces or tabs): 0 for the file's top
    level, a class body's for its methods and attributes."""

    indent: int

    @cached_property
    def starts(self) -> re.Pattern[str]:
        """A line that starts a statement at this indentation: code there, not a closing
        bracket, and not a clause that continues the statement above (``else:``)."""
        return re.compile(rf"\n[ \t]{{{self.indent}}}(?=[^\s#)\]}}])(?!(?:{'|'.join(_CLAUSES)})\b)")

    @cached_property
    def ends(self) -> re.Pattern[str]:
        """A line that ends a statement at this indentation: one that starts another there,
        or code further out (the class body is over)."""
        return re.compile(rf"\n(?=[ \t]{{0,{self.indent}}}[^\s#)\]}}])"
                          rf"(?![ \t]{{{self.indent}}}(?:{'|'.join(_CLAUSES)})\b)")

    @cached_property
    def defined(self) -> re.Pattern[str]:
        """The line a decorator decorates."""
        return re.compile(rf"^[ \t]{{{self.indent}}}(?:def|class|async)\b", re.MULTILINE)

    def opens(self, text: str, at: int, words: tuple[str, ...] | str) -> bool:
        """Whether the line starting at ``at`` is at this indentation and begins with one of ``words``."""
        return text.startswith(words, at + self.indent) and not text[at:at + self.indent].strip(" \t")

    def statement_start(self, text: str, before: int, floor: int) -> int:
        """Where the newline before the last line that starts a statement here is, between
        ``floor`` and ``before``; -1 if there is none. In a class body (``floor``, the
        newline that ends its header, > 0), a line inside a long string does not count. At
        the top level, a line that closes a long string (a module docstring's closing
        quotes, or the end of a string whose lines start at column 0) does not either: the
        statement starts where the string opened."""
        while (before := text.rfind("\n", floor, before)) >= 0:
            if not self.starts.match(text, before):
                continue
            if floor:
                if not any(_open_strings(text, floor, before)):
                    return before
                continue
            opened = _opened_at(text, before + 1)
            if opened is None:
                return before
            before = opened + 1  # go on from the line the string opened on, that line included
        return -1


@lru_cache(maxsize=16)
def _level(indent: int) -> _Level:
    return _Level(indent)  # one per indentation, its patterns compiled once


_TOP_LEVEL = _level(0)


def _statement_at(level: _Level, prefix: str, suffix: str, floor: int = 0) -> tuple[str, str] | None:
    """The parts before and after the cursor of the statement at ``level`` around it, a
    decorated definition with its decorators. ``floor``: in a class body, the newline that
    ends the class's header in ``prefix``; None when no line after it starts a statement."""
    start = level.statement_start(prefix, len(prefix), floor)
    if start < 0 and floor:
        return None
    while start >= 0 and level.opens(prefix, start + 1, _DEFINITION):
        above = level.statement_start(prefix, start, floor)
        if not level.opens(prefix, above + 1, "@"):
            break
        start = above
    before = prefix[start + 1:] if start >= 0 else prefix
    decorated = level.opens(before, 0, "@") and level.defined.search(before) is None  # its definition is still to come
    # A line after the cursor inside a long string ends nothing: counted from the class's
    # header in a class body, from the statement's start at the top level.
    open_before = _open_strings(prefix, floor, len(prefix)) if floor else _open_strings(before, 0, len(before))
    for end in level.ends.finditer(suffix):
        if any((a + b) % 2 for a, b in zip(open_before, _open_strings(suffix, 0, end.start()), strict=True)):
            continue
        if decorated and level.opens(suffix, end.start() + 1, _DEFINITION):
            decorated = level.opens(suffix, end.start() + 1, "@")
            continue
        return before, suffix[:end.start() + 1]
    return before, suffix


def _header_end(text: str, start: int) -> int | None:
    """The index of the newline that ends the header starting at ``start`` (over several
    lines when its brackets do), or None when ``text`` ends first."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text[start:]).readline):
            if token.type == tokenize.NEWLINE:
                row, column = token.start
                line_start = start
                for _ in range(row - 1):
                    line_start = text.index("\n", line_start) + 1
                return line_start + column if text.startswith("\n", line_start + column) else None
    except (tokenize.TokenError, SyntaxError):
        pass
    return None


_FIRST_CODE_LINE = re.compile(r"\n([ \t]*)[^\s#]")


def _class_body(level: _Level, before: str) -> tuple[_Level, int] | None:
    """When the statement at ``level`` whose part before the cursor is ``before`` is a class
    (decorated or not) and the cursor is past its header: the body's level (the indentation
    of its first line of code, as Python reads it) and the newline that ends the header."""
    found = level.defined.search(before)
    keyword = found.start() + level.indent if found else -1
    if found is None or not before.startswith("class", keyword) \
            or not (level.opens(before, 0, "class") or level.opens(before, 0, "@")):
        return None
    floor = _header_end(before, keyword)
    first = _FIRST_CODE_LINE.search(before, floor) if floor is not None else None
    if floor is None or first is None or len(first.group(1)) <= level.indent:
        return None
    return _level(len(first.group(1))), floor


def statement_around(prefix: str, suffix: str) -> tuple[str, str]:
    """The parts of the statement around the cursor that lie before and after it: the
    top-level statement (def, class, assignment…) from the last line before the cursor that
    starts at column 0 to the next one after it, a decorated definition with its decorators.
    In a class, the statement of the class body around the cursor instead (a method, with a
    header above it so that it parses alone): a class can be thousands of lines, too long to
    parse on every keystroke, and an unfinished method elsewhere in it says nothing of the
    cursor's."""
    parts = _statement_at(_TOP_LEVEL, prefix, suffix)
    assert parts is not None  # the top level always has one
    level, nested = _TOP_LEVEL, False
    while (body := _class_body(level, parts[0])) is not None \
            and (inner := _statement_at(body[0], *parts, floor=body[1])) is not None:
        level, parts, nested = body[0], inner, True
    before, after = parts
    return (_BLOCK_HEADER + before if nested else before), after


def _sibling(line: str, indent: int) -> str | None:
    """``line`` stripped when it is code at ``indent`` (a sibling to compare endings with)."""
    text = line.strip()
    return text if text and not text.startswith("#") and indent_of(line) == indent else None


_ITEM_END = re.compile(r"[\w)\]}\"']$")  # a line that ends a whole item, not an operator or an opener


def _cursor_line(prefix: str, middle: str, suffix: str) -> tuple[str, int]:
    """The cursor's line with ``middle`` in place, and the cursor's column in it. Slices by
    index: the prefix and suffix can be a whole 10 MB document."""
    line_starts = prefix.rfind("\n") + 1
    line_ends = suffix.find("\n")
    return prefix[line_starts:] + middle + (suffix[:line_ends] if line_ends >= 0 else suffix), len(prefix) - line_starts


def ends_unlike_its_siblings(prefix: str, middle: str, suffix: str) -> bool:
    """Whether the cursor's line, ``middle`` in place, ends with a comma where the lines
    just above and below it at its indentation don't, or the other way round; or, with no
    such line above (the first item of a bracket), ends a whole item without a comma where
    the line below ends with one. Python parses ``("a", 1)`` then ``("b", 2)`` on the next
    line without the comma between, as a call; on held-out spans such line continuations
    were right once in 97 (the first-item case: never, in 57)."""
    line_starts = prefix.rfind("\n")
    previous = prefix[prefix.rfind("\n", 0, max(0, line_starts)) + 1:max(0, line_starts)]
    line_ends = suffix.find("\n")
    following_ends = suffix.find("\n", line_ends + 1) if line_ends >= 0 else -1
    following = suffix[line_ends + 1:following_ends if following_ends >= 0 else len(suffix)] if line_ends >= 0 else ""
    line, _ = _cursor_line(prefix, middle, suffix)
    if "\n" in middle or _sibling(line, indent_of(line)) is None:
        return False
    above, below = _sibling(previous, indent_of(line)), _sibling(following, indent_of(line))
    ends_with_comma = line.rstrip().endswith(",")
    if above is not None and below is not None:
        return above.endswith(",") != ends_with_comma
    # A line that opens a docstring or a long string has prose below it, whose commas say nothing.
    opens_string = any(_open_strings(line, 0, len(line)))
    return above is None and below is not None and below.endswith(",") and not ends_with_comma \
        and not opens_string and _ITEM_END.search(line.rstrip()) is not None


def joins_string_literals(prefix: str, middle: str, suffix: str) -> bool:
    """Whether ``middle`` puts two string literals against each other on the cursor's line
    (``"DDBox"`` + ``""``). Python reads them as one concatenated string, so the statement
    parses, but nobody writes that; held-out corpus phrases doing it: right 0 times in 12."""
    line, cursor = _cursor_line(prefix, middle, suffix)
    if line.count('"') + line.count("'") < 4:
        return False  # fewer than two literals: skip the tokenizer
    middle_ends = cursor + len(middle)
    tokens: list[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            tokens.append(token)
    except (tokenize.TokenError, SyntaxError):
        pass  # an unfinished line: the tokens read before the error are kept
    return any(first.type == second.type == tokenize.STRING and first.end == second.start
               and cursor <= first.end[1] <= middle_ends
               for first, second in itertools.pairwise(tokens))


# The last line of a block's header (``for x in xs:``, ``else:``, ``b):`` ending a ``def``
# over several lines), with or without a comment after its colon; a decorator's line; a
# ``try``'s header, whose block also awaits a clause after it.
_OPENS_BLOCK = re.compile(r":[ \t]*(?:#[^\n]*)?$")
_DECORATOR = re.compile(r"^[ \t]*@")
_TRY = re.compile(r"^[ \t]*try[ \t]*:")


def with_awaited_body(text: str, at: int) -> str | None:
    """``text`` with a body written after the line holding ``at`` when that line opens a
    block (``pass`` indented under it, and a ``finally`` after a ``try``'s) or is a
    decorator (a definition below it); None for any other line. Code is typed top down:
    a header is finished before its body, a decorator before its ``def``, and neither
    parses alone. A deeper ``pass`` after any other line is an unexpected indent, so this
    never makes a wrong line parse."""
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    line_end = len(text) if line_end < 0 else line_end
    line = text[line_start:line_end]
    indent = line[:len(line) - len(line.lstrip(" \t"))]
    if _DECORATOR.match(line):
        awaited = f"\n{indent}def _(): pass"
    elif _OPENS_BLOCK.search(line):
        awaited = f"\n{indent}    pass"
        if _TRY.match(line):
            awaited += f"\n{indent}finally:\n{indent}    pass"  # and a clause after it
    else:
        return None
    return text[:line_end] + awaited + text[line_end:]


class CursorStatement:
    """The statement around one cursor (``statement_around``), found once for every candidate checked
    against it (a request checks the network's candidates, a copied line and up to two
    continuations)."""

    def __init__(self, prefix: str, suffix: str) -> None:
        self.prefix, self.suffix = prefix, suffix
        # Each candidate is judged by several checks (``parses_with`` for the calibrators, then
        # ``rules_out``'s three): each trims it and parses its statement once.
        self._trimmed: dict[str, tuple[str, str]] = {}
        self._parsed: dict[str, bool] = {}

    def _trimmed_and_line(self, middle: str) -> tuple[str, str]:
        """``middle`` without what repeats the suffix, and the cursor's line with it in place."""
        known = self._trimmed.get(middle)
        if known is None:
            trimmed = trim_suffix_overlap(middle, self.suffix)
            known = self._trimmed[middle] = (trimmed, _cursor_line(self.prefix, trimmed, self.suffix)[0])
        return known

    def _parses(self, text: str) -> bool:
        known = self._parsed.get(text)
        if known is None:
            known = self._parsed[text] = parses(text)
        return known

    @cached_property
    def _parts(self) -> tuple[str, str] | None:
        """``statement_around``; None when it is too long to parse (the cost is capped)."""
        before, after = statement_around(self.prefix, self.suffix)
        return (before, after) if len(before) + len(after) < MAX_PARSED_CHARS else None

    @cached_property
    def _parses_alone(self) -> bool:
        return self._parts is not None and self._parses(self._parts[0] + self._parts[1])

    @cached_property
    def _in_docstring(self) -> bool:
        return any(_open_strings(self.prefix, 0, len(self.prefix)))

    def still_parses(self, middle: str) -> float:
        """The network's ``parses`` feature: whether the statement still parses with
        ``middle`` in place; UNKNOWN_PARSE unless it parsed without it."""
        if not self._parses_alone:
            return UNKNOWN_PARSE
        text = self._text_with(middle)
        return UNKNOWN_PARSE if text is None else float(self._parses(text))

    def parses_with(self, middle: str) -> float:
        """1.0 when the statement parses with ``middle`` in place and the cursor's line ends
        as its siblings do (``ends_unlike_its_siblings``), else 0.0; UNKNOWN_PARSE in a
        docstring (prose, whose lines at column 0 end no statement) or past the cost cap.
        Unlike ``still_parses`` this is measured whether or not the statement parsed
        without the middle: the cursor usually stands in an unfinished line, which a right
        middle finishes (held-out line continuations whose statement parsed with them:
        right 251 times in 1,016; whose statement did not: 17 in 582). Python only: the
        caller passes UNKNOWN_PARSE for other files."""
        if self._in_docstring:
            return UNKNOWN_PARSE
        middle, _ = self._trimmed_and_line(middle)
        if ends_unlike_its_siblings(self.prefix, middle, self.suffix) \
                or joins_string_literals(self.prefix, middle, self.suffix):
            return 0.0
        text = self._text_with(middle)
        if text is None:
            return UNKNOWN_PARSE
        if not self._parses(text) and self._half_typed_clause:
            # ``ex`` started a statement of its own; ``except ImportError:`` goes on with the one above.
            found = self._found_again(middle)
            return UNKNOWN_PARSE if found is None else float(self._parses(found[0] + found[1]))
        return float(self._parses(text))

    @cached_property
    def _half_typed_clause(self) -> bool:
        """Whether the cursor's line so far is the start of a clause's keyword (``ex``, ``el``)."""
        typed = self.prefix[self.prefix.rfind("\n") + 1:].lstrip(" \t")
        return bool(typed) and any(keyword.startswith(typed) and keyword != typed for keyword in _CLAUSES)

    def _text_with(self, middle: str) -> str | None:
        """The statement with ``middle`` in place; None past the cost cap. Found again with
        the middle in place when it opens or closes a long string: which lines after the
        cursor end the statement depends on which lie inside a string (a middle that opens
        a docstring)."""
        if any(_open_strings(middle, 0, len(middle))):
            found = self._found_again(middle)
            return None if found is None else found[0] + found[1]
        if self._parts is None:
            return None
        before, after = self._parts
        return before + middle + after

    def _found_again(self, middle: str) -> tuple[str, str] | None:
        """The statement found with ``middle`` in place, split after it; None past the cost cap."""
        before, after = statement_around(self.prefix + middle, self.suffix)
        return (before, after) if len(before) + len(after) < MAX_PARSED_CHARS else None

    def rules_out(self, middle: str) -> bool:
        """Whether Python's syntax rules ``middle`` out here: it breaks a statement that parsed
        without it (``breaks_with``), ends a line with a colon no line can end with
        (``ends_with_a_stray_colon``) or opens a clause under a header that refuses it
        (``opens_a_clause_its_header_refuses``)."""
        return self.breaks_with(middle) or self.ends_with_a_stray_colon(middle) \
            or self.opens_a_clause_its_header_refuses(middle)

    def breaks_with(self, middle: str) -> bool:
        """Whether ``middle`` surely breaks a statement that parsed without it: what
        ``parses_with`` would call 0.0, and the statement found again with the middle in
        place does not parse either, even with the body that a header, a decorator or a
        ``try`` the middle finishes awaits (``with_awaited_body``). Found again, because a
        half-typed line is not yet what it will be: ``ex`` starts a statement, ``except
        ImportError:`` goes on with the one above. A header typed before its body is not
        broken; nor is a statement holding an unclosed triple quote, whose extent is not
        known (held-out docstrings opened with three quotes were right 7 times in 7 where
        ``parses_with`` said 0.0)."""
        if not self._parses_alone or self._in_docstring:
            return False
        middle, line = self._trimmed_and_line(middle)
        if any(_open_strings(line, 0, len(line))):
            return False
        if ends_unlike_its_siblings(self.prefix, middle, self.suffix) \
                or joins_string_literals(self.prefix, middle, self.suffix):
            return True
        text = self._text_with(middle)
        if text is None or self._parses(text):
            return False
        found = self._found_again(middle)
        if found is None:
            return False
        text = found[0] + found[1]
        if any(_open_strings(text, 0, len(text))) or self._parses(text):
            return False
        awaited = with_awaited_body(text, len(found[0]))
        return awaited is None or not self._parses(awaited)

    def ends_with_a_stray_colon(self, middle: str) -> bool:
        """Whether ``middle`` ends a line with a colon that no Python line can end with. A
        colon says the line is a finished header (``assert isinstance(x, int):``, ``import
        decode as e:``); a line that parses in none of the forms a line takes in a file,
        even joined to the lines around it and its brackets closed by lines to come
        (``line_forms.parses_in_a_file``), is broken wherever it stands, whether or not the
        statement around it parsed before. Not judged in a docstring, nor on a line that
        holds a triple quote."""
        middle, text = self._trimmed_and_line(middle)
        lines = text.split("\n")
        # Only the lines the middle writes on: the user's own line before or after it is theirs.
        touched = lines[1 if middle.startswith("\n") else 0:len(lines) - 1 if middle.endswith("\n") else len(lines)]
        colon_lines = [line for line in touched if _code_ends_with_colon(line)]
        # Whether the cursor is in a docstring counts quotes over the whole document: asked last.
        if not colon_lines or any(_open_strings(text, 0, len(text))) or self._in_docstring:
            return False
        return any(not parses_in_a_file(line, joined=True) for line in colon_lines)

    def opens_a_clause_its_header_refuses(self, middle: str) -> bool:
        """Whether ``middle`` makes the cursor's line a clause (``else``, ``elif``, ``except``,
        ``finally``) right under a header that cannot take it: the nearest line above at the
        cursor's indentation is ``try:`` with no handler yet and the clause is ``else``, a
        ``def``, a ``with`` … Code typed top down finishes a ``try``'s body before its
        handler, so no statement parses with or without the candidate, and ``e`` went on as
        ``else:`` there. Only a header line is read: under a plain statement the line may
        still be dedented (editors dedent ``else:`` as it is typed)."""
        _, line = self._trimmed_and_line(middle)
        clause = _CLAUSE.match(line.split("\n", 1)[0])
        if clause is None or self._in_docstring:
            return False
        indent = len(clause.group(1))
        above = self.prefix[:self.prefix.rfind("\n") + 1]
        for previous in reversed(above[max(0, len(above) - _CLAUSE_LOOKBACK):].split("\n")):
            code = previous.strip()
            if not code or code.startswith(("#", ")", "]", "}")) or indent_of(previous) > indent:
                continue
            if indent_of(previous) < indent or any(quotes in previous for quotes in _QUOTES):
                return False  # no header at this indentation, or a string whose extent is not known
            keyword = _KEYWORD.match(code)
            if keyword is None or not code.endswith(":"):
                return False  # a plain statement: the clause may yet be dedented under another header
            return keyword.group(1) not in _TAKES[clause.group(2)]
        return False


# The clause the cursor's line opens, with its indentation; the header keyword a line opens
# with; what each clause may follow at its indentation (``finally`` after a ``try``'s ``else``).
_CLAUSE = re.compile(rf"([ \t]*)({'|'.join(_CLAUSES)})\b")
_KEYWORD = re.compile(r"(async|class|def|elif|else|except|finally|for|if|match|try|while|with)\b")
_TAKES = {"else": ("if", "elif", "for", "while", "except", "async"), "elif": ("if", "elif"),
          "except": ("try", "except"), "finally": ("try", "except", "else")}
_CLAUSE_LOOKBACK = 20_000  # characters above the cursor read for the header


def _code_ends_with_colon(line: str) -> bool:
    """The line's code (strings and a trailing comment left out) ends with a colon."""
    return "".join(line[start:end] for start, end in code_spans(line, "#")).rstrip().endswith(":")


def statement_parses(prefix: str, middle: str, suffix: str) -> float:
    """``CursorStatement.parses_with`` for one candidate."""
    return CursorStatement(prefix, suffix).parses_with(middle)
