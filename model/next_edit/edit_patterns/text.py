"""How the kinds read code: lines, tokens, indentation, function headers and argument
lists."""

from __future__ import annotations

import re

from model.code_text import indent_of, lsp_lines_with_ends

__all__ = ["DEFINING", "FUNCTION_HEADER", "indent_of", "split_arguments", "split_lines", "tokens_of"]

_TOKEN = re.compile(r"[A-Za-z_$][\w$]*|\d[\w.]*|\s+|.", re.DOTALL)  # `$` is a letter in JavaScript
# A function's header in the languages the kinds read. Strict enough that a Python line
# using a variable named ``func``, ``fn`` or ``function`` (``func(event)``, ``fn = None``,
# ``result = function(a)``) is not one: it was, and a rename there was carried nowhere.
FUNCTION_HEADER = re.compile(
    r"\s*(?:async\s+)?def\b"  # Python
    r"|\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\b\s*\*?\s*[A-Za-z_$][\w$]*\s*\("  # JavaScript
    r"|\s*(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:fn|func)\s+[\w(]"  # Rust's, Go's (`func (r *T) Name(`)
    r"|.*\bfunction\b\s*\*?\s*[\w$]*\s*\([^)]*\)\s*\{"  # JavaScript's function expression
    r"|.*=>")  # an arrow function
# What stands right before a name that a line defines rather than uses or calls
# (``def fetch(``, ``class Reader``, ``function load(``, ``fn main``, ``func Name``).
DEFINING = re.compile(r"(?:\bdef|\bclass|\bfunction|\bfn|\bfunc)\s+\Z")


def split_lines(text: str) -> list[str]:
    # LSP's line rule: str.splitlines would also break at form feed, \x85, \u2028…, and a
    # change to a line holding one would not line up with the document's lines.
    return lsp_lines_with_ends(text)


def tokens_of(text: str) -> list[str]:
    return _TOKEN.findall(text)


def split_arguments(text: str) -> list[str]:
    """Top-level comma-separated arguments, stripped; a comma in a string literal is the
    string's (``f(value, ',;')`` has two arguments)."""
    parts, depth, start, quote, i = [], 0, 0, "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1  # the escaped character is the string's
            elif ch == quote:
                quote = ""
        elif ch in "\"'`":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    parts.append(text[start:].strip())
    return [] if parts == [""] else parts
