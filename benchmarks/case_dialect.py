"""Benchmark cases rewritten with ``\\r\\n`` line breaks or tab indentation.

The server reads a document's line breaks and indentation and answers in them
(``document_dialect.py``). To measure that, ``redraft bench fim --dialect`` rewrites each
case's whole text — the prompt, the reference and the suffix together, so that the same
spans are asked about in every dialect — and places the cuts where they fall in the
rewritten text. With tabs, every run of four leading spaces becomes a tab; a case cut
inside a run that does not become whole tabs (two spaces of four) is left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsp_server.document_dialect import TAB_WIDTH

DIALECTS = ("lf", "crlf", "tabs", "crlf-tabs")


def rewritten(text: str, cuts: Sequence[int], dialect: str) -> tuple[str, list[int]] | None:
    """``text`` in ``dialect`` and where each of ``cuts`` (offsets, ascending) lands in it;
    None when a cut falls inside leading spaces that become a tab."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}: one of {', '.join(DIALECTS)}")
    if dialect == "lf":  # the cases' own: every file of a workspace is written this way
        return text, list(cuts)
    crlf, tabs = dialect.startswith("crlf"), dialect.endswith("tabs")
    pieces: list[str] = []
    moved = list(cuts)
    written = 0  # characters of the rewritten text so far
    start = 0
    parts = text.split("\n")  # LSP's lines end at \n here: the cases are read with \n breaks
    for line in [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else []):
        body = line[:-1] if line.endswith("\n") else line
        indents = 0
        if tabs:
            spaces = len(body) - len(body.lstrip(" "))
            indents = spaces // TAB_WIDTH
        new_body = "\t" * indents + body[indents * TAB_WIDTH:]
        ending = ("\r\n" if crlf else "\n") if line.endswith("\n") else ""
        for n, cut in enumerate(cuts):
            if start <= cut <= start + len(body):  # in this line, before its break
                column = cut - start
                if column < indents * TAB_WIDTH:
                    if column % TAB_WIDTH:
                        return None
                    moved[n] = written + column // TAB_WIDTH
                else:
                    moved[n] = written + column - indents * (TAB_WIDTH - 1)
        pieces.append(new_body + ending)
        written += len(new_body) + len(ending)
        start += len(line)
    for n, cut in enumerate(cuts):
        if cut == len(text):
            moved[n] = written
    return "".join(pieces), moved


def rewritten_text(text: str, dialect: str) -> str:
    """``text`` in ``dialect`` (a whole file, no cuts to place)."""
    done = rewritten(text, [], dialect)
    assert done is not None  # only a cut can fail
    return done[0]
