"""The operations ``bench repeated`` makes on each line of a run, each defined on the
line's own tokens, so that what a line is expected to become is the operation applied to
it alone:

- ``wrap``: the line's value wrapped in a call (``x = v`` → ``x = str(v)``). The value is
  what follows the first top-level ``=``, or else a ``:`` after a one-token key (a string
  or number in Python, where a name before ``:`` is an annotation; in JavaScript a name
  too), up to a trailing ``,`` or ``;``; one with a top-level ``,``, ``=`` or ``:`` is none;
- ``method``: a method call appended to the value (``.strip()``), where the value is one
  operand: a name, a string or a bracketed group, then only ``.name``, calls and subscripts;
- ``keyword``: an argument added before the ``)`` of the line's first call (a name that is
  no keyword, right before ``(``, not a ``def``'s, ``class``'s or ``function``'s name):
  ``, strict=True`` in Python (not where the call has that keyword already), ``, true`` in
  JavaScript; without the comma in an empty call;
- ``callee``: the first call's name replaced by another, only where every line of the run
  calls the same name first;
- ``suffix``: text appended to the line's end, before a trailing ``,`` or ``;`` (`` or None``,
  `` ?? null``), where that end closes an operand and the line starts with no keyword but
  ``return`` (and ``const``, ``let``, ``var`` in JavaScript): an entry, an assignment, a
  call, a returned value;
- ``prefix``: ``self.``/``this.`` put before a bare name assigned to (``x = …``; in
  Python only in an indented block).

Each writes one text drawn per case from a short list (``CHOICES``); an operation a line
does not admit gives None.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from benchmarks.code_tokens import PYTHON, SCRIPT, Dialect, Kind, Source, Token, matching_close
from benchmarks.edit_chains import Piece, Site, added_argument

Operation = Literal["wrap", "method", "keyword", "callee", "suffix", "prefix"]
OPERATIONS: tuple[Operation, ...] = ("wrap", "method", "keyword", "callee", "suffix", "prefix")
# What each operation writes, by language.
CHOICES: dict[Operation, dict[Dialect, tuple[str, ...]]] = {
    "wrap": {PYTHON: ("str", "list", "repr", "tuple"), SCRIPT: ("String", "Number", "Boolean")},
    "method": {PYTHON: (".strip()", ".lower()", ".copy()"), SCRIPT: (".trim()", ".toString()", ".slice()")},
    "keyword": {PYTHON: ("strict=True", "check=False", "default=None"), SCRIPT: ("true", "null", "0")},
    "callee": {PYTHON: ("convert", "checked", "render"), SCRIPT: ("convert", "checked", "render")},
    "suffix": {PYTHON: (" or None", " or {}", " or 0"), SCRIPT: (" ?? null", " || {}", " ?? 0")},
    "prefix": {PYTHON: ("self.",), SCRIPT: ("this.",)},
}
OPENING, CLOSING = ("(", "[", "{"), (")", "]", "}")
_DEFINING = frozenset({"def", "class", "function"})


@dataclass(frozen=True)
class Line:
    """A candidate line: its text (no line break) and its code tokens, at columns of the line."""

    row: int
    text: str
    code: tuple[Token, ...]
    source: Source

    @property
    def indent(self) -> str:
        return self.text[: len(self.text) - len(self.text.lstrip())]

    def is_keyword(self, token: Token) -> bool:
        return token.kind is Kind.NAME and token.text in self.source.dialect.keywords


def _top_level(code: tuple[Token, ...]) -> list[int]:
    """Indices of the tokens outside any bracket (brackets themselves count as inside)."""
    depth, found = 0, []
    for index, token in enumerate(code):
        is_bracket = token.kind is Kind.PUNCT and token.text in (*OPENING, *CLOSING)
        if token.kind is Kind.PUNCT and token.text in CLOSING:
            depth -= 1
        if depth == 0 and not is_bracket:
            found.append(index)
        if token.kind is Kind.PUNCT and token.text in OPENING:
            depth += 1
    return found


def value_span(line: Line) -> tuple[int, int] | None:
    """Token indices [first, last] of the line's value (see the module's docstring)."""
    code, top = line.code, _top_level(line.code)
    equals = [i for i in top if code[i].text == "="]
    key_kinds = (Kind.STRING, Kind.NUMBER) if line.source.dialect is PYTHON else (Kind.STRING, Kind.NUMBER, Kind.NAME)
    if equals:
        after = equals[0]
    elif len(code) > 2 and code[1].text == ":" and code[0].kind in key_kinds and not line.is_keyword(code[0]):
        after = 1
    else:
        return None
    last = len(code) - 1 - (code[-1].text in (",", ";"))
    if last <= after or any(code[i].text in (",", "=", ":") for i in top if after < i <= last):
        return None
    return after + 1, last


def _is_one_operand(line: Line, first: int, last: int) -> bool:
    """Tokens ``first``..``last`` are a name, a string or a bracketed group, followed only by
    ``.name``, calls and subscripts."""
    code, values = line.code, line.source.dialect.values
    index, expect_atom = first, True
    while index <= last:
        token = code[index]
        if token.kind is Kind.PUNCT and token.text in OPENING:  # an atom, or a call or subscript after one
            close = matching_close(code, index)
            if close is None or close > last:
                return False
            index, expect_atom = close + 1, False
        elif expect_atom:
            if not (token.kind is Kind.STRING
                    or (token.kind is Kind.NAME and (not line.is_keyword(token) or token.text in values))):
                return False
            index, expect_atom = index + 1, False
        elif token.text in (".", "?.") and index < last and code[index + 1].kind is Kind.NAME:
            index += 2
        else:
            return False
    return not expect_atom


def first_call(line: Line) -> tuple[int, int] | None:
    """Token indices of the line's first call's name and of its closing ``)``."""
    code = line.code
    for index in range(len(code) - 1):
        token, previous = code[index], code[index - 1] if index else None
        if token.kind is not Kind.NAME or line.is_keyword(token) or code[index + 1].text != "(":
            continue
        if previous is not None and previous.text in _DEFINING:
            continue
        close = matching_close(code, index + 1)
        return None if close is None else (index, close)
    return None


def _wrap(line: Line, choice: str) -> tuple[Piece, ...] | None:
    span = value_span(line)
    if span is None:
        return None
    start, end = line.code[span[0]].start, line.code[span[1]].end
    return (start, start, f"{choice}("), (end, end, ")")


def _method(line: Line, choice: str) -> tuple[Piece, ...] | None:
    span = value_span(line)
    if span is None or not _is_one_operand(line, *span):
        return None
    end = line.code[span[1]].end
    return ((end, end, choice),)


def _suffix(line: Line, choice: str) -> tuple[Piece, ...] | None:
    code, dialect = line.code, line.source.dialect
    last = code[-2] if len(code) > 1 and code[-1].text in (",", ";") else code[-1]
    ends_an_operand = last.kind in (Kind.STRING, Kind.NUMBER) or last.text in CLOSING or (
        last.kind is Kind.NAME and (not line.is_keyword(last) or last.text in dialect.values))
    leads = not line.is_keyword(code[0]) or code[0].text in dialect.values | dialect.value_statements
    return ((last.end, last.end, choice),) if ends_an_operand and leads else None


def _keyword(line: Line, choice: str) -> tuple[Piece, ...] | None:
    call = first_call(line)
    if call is None:
        return None
    opening, close = line.code[call[0] + 1].end, line.code[call[1]].start
    inside = line.text[opening:close]
    if "=" in choice and re.search(rf"\b{re.escape(choice.split('=')[0])}\s*=", inside):
        return None
    return ((close, close, added_argument(inside, choice)),)


def _callee(line: Line, choice: str) -> tuple[Piece, ...] | None:
    call = first_call(line)
    if call is None or line.code[call[0]].text == choice:
        return None
    name = line.code[call[0]]
    return ((name.start, name.end, choice),)


def _prefix(line: Line, choice: str) -> tuple[Piece, ...] | None:
    code = line.code
    if len(code) < 3 or code[0].kind is not Kind.NAME or line.is_keyword(code[0]) or code[1].text != "=":
        return None
    if line.source.dialect is PYTHON and not line.indent:
        return None
    return ((code[0].start, code[0].start, choice),)


_OPERATIONS: dict[Operation, Callable[[Line, str], tuple[Piece, ...] | None]] = {
    "wrap": _wrap, "method": _method, "keyword": _keyword, "callee": _callee, "suffix": _suffix, "prefix": _prefix}


def run_edit(run: list[Line], operation: Operation, choice: str) -> tuple[Site, ...] | None:
    """Each line of the run with ``operation`` applied to it; None unless every line admits it."""
    sites = []
    for line in run:
        pieces = _OPERATIONS[operation](line, choice)
        if pieces is None:
            return None
        sites.append(Site(line.row, pieces))
    if operation == "callee" and len({line.code[call[0]].text for line in run
                                      if (call := first_call(line)) is not None}) != 1:
        return None
    return tuple(sites)
