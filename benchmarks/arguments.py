"""``redraft bench arguments``: an argument added by hand at a function's first call, then
the next edit asked for, until every call has it.

Cases: a function the file defines once, with at least two calls in the file:
- Python (read with ``ast``): a ``def`` at any level; one in a class's body is a method;
- JavaScript and TypeScript (read off the tokens): ``function name(``, or ``const``/``let``/
  ``var name = [async] (…) =>`` (or ``= x =>``), a function; ``name(…) {`` (or ``… ):``, a
  return type) after ``{``, ``}``, ``;`` or a modifier (``async``, ``static``, ``get``…),
  a method.

A call is the name right before ``(`` that is not the definition itself: a function's not
after a ``.`` (``json.load(`` calls another ``load``); a method's after ``self.`` or
``cls.`` (``this.`` in JavaScript), and a method also called through another receiver
(``other.name(``, ``self.cache.name(``) is left out, since the scan cannot tell whose
method that is. Strings and comments are
skipped, and calls nested in other calls' arguments count (``items.map(x => load(x))``,
``f(g(x))``). A function with a call whose parentheses span lines is left out. The case is ``nested``
when one of its calls stands inside another call's parentheses.

The edit, typed at the first call: one argument before its closing parenthesis, drawn from
a short list (a keyword argument in Python, ``timeout=30``, not one the calls pass already;
a literal in JavaScript, ``true``), after ``, `` unless the call has no arguments. Right:
exactly the next call given the same argument, nothing else (``edit_chains.py`` says how
proposals are applied and judged); then every call done.
"""

from __future__ import annotations

import ast
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from benchmarks.code_tokens import PYTHON, SCRIPT, Kind, Source, Token, matching_close, source_files
from benchmarks.edit_chains import (
    EditCase,
    EditReport,
    Site,
    Typing,
    added_argument,
    drawn_cases,
    format_outcomes,
    how_typed,
    run_cases,
)

ARGUMENTS = {PYTHON: ("timeout=30", "strict=True", "retries=3", "verbose=False"),
             SCRIPT: ("true", "false", "null", "0")}
NESTED, NOT_NESTED = "nested", "not nested"
_MODIFIERS = frozenset({"async", "static", "get", "set", "public", "private", "protected", "readonly", "override",
                        "abstract", "*", "{", "}", ";"})
_DECLARING = frozenset({"const", "let", "var"})
_DEFINING = frozenset({"def", "class", "function"})


def definitions(source: Source, code: tuple[Token, ...]) -> dict[str, bool]:
    """Each function the file defines once, and whether it is a method."""
    found = _python_definitions(source.text) if source.dialect is PYTHON else list(_script_definitions(code))
    counts = Counter(name for name, _ in found)
    return {name: is_method for name, is_method in found if counts[name] == 1}


def _python_definitions(text: str) -> list[tuple[str, bool]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    methods = {id(node) for klass in ast.walk(tree) if isinstance(klass, ast.ClassDef) for node in klass.body}
    return [(node.name, id(node) in methods) for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def _script_definitions(code: tuple[Token, ...]) -> Iterator[tuple[str, bool]]:
    def text(index: int) -> str:
        return code[index].text if 0 <= index < len(code) else ""

    for index, token in enumerate(code):
        if token.kind is not Kind.NAME:
            continue
        before = text(index - 1)
        if before == "function" or (before == "*" and text(index - 2) == "function"):
            if text(index + 1) == "(":
                yield token.text, False
        elif before in _DECLARING and text(index + 1) == "=":
            start = index + 3 if text(index + 2) == "async" else index + 2
            if text(start) == "(":
                close = matching_close(code, start)
                is_arrow = close is not None and text(close + 1) == "=>"
            else:  # one parameter, unbracketed
                is_arrow = start < len(code) and code[start].kind is Kind.NAME and text(start + 1) == "=>"
            if is_arrow:
                yield token.text, False
        elif text(index + 1) == "(" and (index == 0 or before in _MODIFIERS):
            close = matching_close(code, index + 1)
            if close is not None and text(close + 1) in ("{", ":"):
                yield token.text, True


def _inside_calls(code: tuple[Token, ...], keywords: frozenset[str]) -> list[bool]:
    """For each token, whether it stands inside a call's parentheses (a definition's
    parameter list is none)."""
    inside: list[bool] = []
    openers: list[bool] = []  # for each open bracket, whether it is a call's
    for index, token in enumerate(code):
        if token.kind is Kind.PUNCT and token.text in (")", "]", "}") and openers:
            openers.pop()
        inside.append(any(openers))
        if token.kind is Kind.PUNCT and token.text in ("(", "[", "{"):
            before = code[index - 1] if index else None
            called = token.text == "(" and before is not None and (
                (before.kind is Kind.NAME and before.text not in keywords) or before.text in (")", "]"))
            defining = index > 1 and code[index - 2].text in _DEFINING
            openers.append(called and not defining)
    return inside


def call_sites(source: Source, code: tuple[Token, ...], name: str, is_method: bool,
               inside: list[bool]) -> list[tuple[Token, Token, bool]] | None:
    """(name, closing parenthesis, nested) of each call of ``name`` in order; None when one
    spans lines, or when a method is called through another receiver than its own."""
    sites = []
    for index, token in enumerate(code[:-1]):
        if token.kind is not Kind.NAME or token.text != name or code[index + 1].text != "(":
            continue
        before = code[index - 1].text if index else ""
        dotted = before in (".", "?.")
        if dotted != is_method or before in _DEFINING:
            continue
        if dotted and not (index > 1 and code[index - 2].text in source.dialect.own_receivers
                           and (index < 3 or code[index - 3].text not in (".", "?."))):
            return None
        close = matching_close(code, index + 1)
        if close is None or source.row(code[close].start) != source.row(token.start):
            return None
        sites.append((token, code[close], inside[index]))
    return sites


def argument_cases(paths: list[Path], limit: int, seed: int) -> tuple[list[EditCase], int]:
    """Up to ``limit`` cases, one per function with two calls or more, drawn at random; and
    how many files were read."""
    return drawn_cases(paths, limit, seed, _argument_cases_in)


def _argument_cases_in(source: Source, rng: random.Random) -> Iterator[EditCase]:
    """A case for each function ``source`` defines once and calls twice or more, the
    argument drawn with ``rng`` among those none of its calls passes."""
    code = tuple(token for token in source.tokens if token.kind is not Kind.COMMENT)
    inside = _inside_calls(code, source.dialect.keywords)
    for name, is_method in sorted(definitions(source, code).items()):
        sites = call_sites(source, code, name, is_method, inside)
        if sites is None or len(sites) < 2:
            continue
        arguments = list(ARGUMENTS[source.dialect])
        rng.shuffle(arguments)
        insides = [source.text[name_token.end + 1 : close.start] for name_token, close, _ in sites]
        argument = next((a for a in arguments if "=" not in a or not any(
            re.search(rf"\b{a.split('=')[0]}\s*=", text) for text in insides)), None)
        if argument is None:
            continue
        edits = tuple(Site(source.row(close.start), ((column, column, added_argument(text, argument)),))
                      for (_, close, _), text in zip(sites, insides, strict=True)
                      for column in [source.column(close.start)])
        nested = NESTED if any(is_nested for _, _, is_nested in sites) else NOT_NESTED
        yield EditCase(source.path, source.text, edits, 0, source.dialect.label, nested)


def run_arguments_bench(folder: Path, limit: int, command: list[str], threshold: float = 0.5, seed: int = 0,
                        typing: Typing = "piece", by_hand: int = 1) -> EditReport:
    cases, read = argument_cases(source_files(folder), limit, seed)
    return EditReport(read, run_cases(cases, command, threshold, "arguments", typing, by_hand), typing=typing,
                      by_hand=by_hand)


def format_arguments(report: EditReport, threshold: float) -> str:
    headline = (f"{len(report.outcomes)} arguments added at a first call in {report.files} files, "
                f"threshold {threshold:g}{how_typed(report)}")
    return format_outcomes(headline, report.outcomes, "every call done",
                           [("language", lambda o: o.language), ("calls", lambda o: o.label)])
