"""``redraft bench repeated``: the same change made to each line of a run of similar lines
(assignments, a literal's entries, calls), made by hand on one of them, then the next edit
asked for.

A run is three or more consecutive lines that are each a candidate, similar to each other:
- a candidate line is non-blank, at most 200 characters, not only a comment, holds no
  piece of a string or comment that spans lines and no ``\\`` continuation, and its
  brackets pair up on it (a call or literal that spans lines is left out); lines of an
  import's or export's list of names, and TypeScript's lines that hold a type
  (``type_lines.py``), are left out;
- two lines are similar when they have the same indentation, their first tokens are alike
  (the same keyword or punctuation, or both a name, both a string or both a number), and
  their punctuation is the same sequence once names, keywords, numbers, strings and
  comments are set aside (``"a": 1,`` and ``"bc": f(x),`` are not; ``"b": 22,`` is).

One operation of a menu (``line_operations.py``: wrap, method, keyword, callee, suffix,
prefix) is drawn per run, each defined on a line's own tokens. The operations are tried
in an order drawn at random and the first that every line of the run admits is the
case's; a run that admits none is skipped (no line is dropped from a run). The expected
result on each line is the operation applied to it alone. The hand edit is typed on the
run's first line (``--at any``: a line drawn at random); right is the next line below
edited and nothing else, or, typed inside the run, the line above (``edit_chains.py``
says how the proposals are applied and judged).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from benchmarks.code_tokens import Kind, Source, Token, source_files
from benchmarks.edit_chains import EditCase, EditReport, Typing, drawn_cases, format_outcomes, how_typed, run_cases
from benchmarks.line_operations import CHOICES, CLOSING, OPENING, OPERATIONS, Line, run_edit
from benchmarks.type_lines import type_rows

MIN_RUN, MAX_LINE = 3, 200
_IMPORTING = frozenset({"import", "export"})  # a bracket after them opens a list of names


def candidate_lines(source: Source) -> dict[int, Line]:
    """The lines a run may hold, by row."""
    by_row: dict[int, list[Token]] = {}
    left_out = type_rows(source)  # rows a token reaches past its own line, in an import list, or typed
    openers: list[int] = []  # indices of the brackets open so far
    for index, token in enumerate(source.tokens):
        first, last = source.row(token.start), source.row(max(token.start, token.end - 1))
        if first not in by_row and openers and openers[-1] > 0 and source.tokens[openers[-1] - 1].text in _IMPORTING:
            left_out.add(first)
        by_row.setdefault(first, []).append(token)
        left_out.update(range(first, last + 1) if last > first else ())
        if token.kind is Kind.PUNCT and token.text in OPENING:
            openers.append(index)
        elif token.kind is Kind.PUNCT and token.text in CLOSING and openers:
            openers.pop()
    lines = source.lines()
    found = {}
    for row, on_row in by_row.items():
        text = lines[row].rstrip("\r\n")
        start = source.line_starts[row]
        code = tuple(Token(t.kind, t.text, t.start - start, t.end - start)
                     for t in on_row if t.kind is not Kind.COMMENT)
        if row in left_out or not code or len(text) > MAX_LINE or any(t.text == "\\" for t in code):
            continue
        if _balanced(code):
            found[row] = Line(row, text, code, source)
    return found


def _balanced(code: tuple[Token, ...]) -> bool:
    depth = 0
    for token in code:
        if token.kind is Kind.PUNCT:
            depth += (token.text in OPENING) - (token.text in CLOSING)
            if depth < 0:
                return False
    return depth == 0


def shape(line: Line) -> tuple[str, ...]:
    """What two similar lines have alike: indentation, first token, punctuation."""
    first = line.code[0]
    lead = first.text if first.kind is Kind.PUNCT or line.is_keyword(first) else first.kind.value
    return (line.indent, lead, *(t.text for t in line.code if t.kind is Kind.PUNCT))


def runs(source: Source) -> Iterator[list[Line]]:
    """Every maximal run of at least MIN_RUN consecutive similar lines."""
    lines = candidate_lines(source)
    run: list[Line] = []
    for row in sorted(lines):
        line = lines[row]
        if run and (run[-1].row + 1 != row or shape(run[-1]) != shape(line)):
            if len(run) >= MIN_RUN:
                yield run
            run = []
        run.append(line)
    if len(run) >= MIN_RUN:
        yield run


def repeated_cases(paths: list[Path], limit: int, seed: int, anywhere: bool = False) -> tuple[list[EditCase], int]:
    """Up to ``limit`` cases, one per run that admits an operation, drawn at random; and how
    many files were read."""
    def cases_in(source: Source, rng: random.Random) -> Iterator[EditCase]:
        for run in runs(source):
            operations = list(OPERATIONS)
            rng.shuffle(operations)
            for operation in operations:
                choice = rng.choice(CHOICES[operation][source.dialect])
                sites = run_edit(run, operation, choice)
                if sites is not None:
                    typed = rng.randrange(len(sites)) if anywhere else 0
                    yield EditCase(source.path, source.text, sites, typed, source.dialect.label, operation)
                    break

    return drawn_cases(paths, limit, seed, cases_in)


def run_repeated_bench(folder: Path, limit: int, command: list[str], threshold: float = 0.5, seed: int = 0,
                       anywhere: bool = False, typing: Typing = "piece", by_hand: int = 1) -> EditReport:
    cases, read = repeated_cases(source_files(folder), limit, seed, anywhere)
    return EditReport(read, run_cases(cases, command, threshold, "repeated", typing, by_hand), anywhere, typing,
                      by_hand)


def format_repeated(report: EditReport, threshold: float) -> str:
    headline = (f"{len(report.outcomes)} repeated-line edits in {report.files} files, threshold {threshold:g}"
                f"{', typed at a line drawn at random' if report.anywhere else ''}{how_typed(report)}")
    return format_outcomes(headline, report.outcomes, "every line done",
                           [("operation", lambda o: o.label), ("language", lambda o: o.language)])
