"""Block spans: the bodies lines open, cut for training and for `bench fim --spans blocks`,
and the bench's figures on holes of several lines."""

from __future__ import annotations

import json
import random
from pathlib import Path

from benchmarks.fim import CaseResult, FimReport, first_line_right, format_report, held_out_cases, lines_of
from model.training.fim_examples import BLOCK_LINES, SpanKind, block_spans, choose_span

PYTHON = (
    "import os\n"
    "\n"
    "def load(path):\n"
    "    with open(path) as handle:\n"
    "        text = handle.read()\n"
    "\n"
    "        return text.strip()\n"
    "\n"
    "# a comment ending with a colon:\n"
    "x = 1\n"
    "if x:\n"
    "    y = 2\n"
)
JAVASCRIPT = "function add(a, b) {\n  const sum = a + b;\n  return sum;\n}\n"


def _middles(text: str) -> list[str]:
    return [text[start:end] for start, end in block_spans(text)]


def test_a_block_is_the_body_up_to_where_its_indentation_closes_from_after_its_indent() -> None:
    middles = _middles(PYTHON)
    assert middles == [
        "with open(path) as handle:\n        text = handle.read()\n\n        return text.strip()\n",
        "text = handle.read()\n\n        return text.strip()\n",
    ]  # `if x:` has a one-line body, and the comment opens nothing
    for start, _ in block_spans(PYTHON):
        assert PYTHON[:start].endswith("\n    ") or PYTHON[:start].endswith("\n        ")


def test_blocks_are_read_from_braces_too_and_cut_at_the_most_lines() -> None:
    assert _middles(JAVASCRIPT) == ["const sum = a + b;\n  return sum;\n"]
    long_body = "def f():\n" + "".join(f"    v{i} = {i}\n" for i in range(20))
    (middle,) = _middles(long_body)
    assert lines_of(middle) == BLOCK_LINES[1]


def test_a_text_without_blocks_gives_whole_lines() -> None:
    text = "a = 1\nb = 2\nc = 3\n"
    start, end = choose_span(text, SpanKind.BLOCK, random.Random(0))
    assert text[start:end].endswith("\n") and text[start:end].strip()


def test_block_cases_are_bodies_and_the_report_judges_them_whole_and_by_their_first_line(tmp_path: Path) -> None:
    corpus = tmp_path / "dev.jsonl"
    corpus.write_text(json.dumps({"package": "pkg", "path": "m.py", "text": PYTHON * 3}) + "\n")
    cases = held_out_cases(corpus, 6, blocks=True)
    assert len(cases) == 6
    assert all(lines_of(case.canonical_solution) >= 2 for case in cases)
    assert all(case.prompt + case.canonical_solution + case.suffix == PYTHON * 3 for case in cases)

    block = "text = handle.read()\n\n        return text.strip()\n"
    assert first_line_right("text = handle.read()", block)
    assert first_line_right("text = handle.read()\n", block)
    assert not first_line_right("text = handle", block)
    assert not first_line_right(None, block)
    results = (
        CaseResult("dev/0", block, exact=True, passed=False, latency_ms=30.0, lines=3, source="block"),
        CaseResult("dev/1", "text = handle.read()\n", exact=False, passed=False, latency_ms=10.0, lines=3,
                   first_line=True),
        CaseResult("dev/2", None, exact=False, passed=False, latency_ms=12.0, lines=2),
        CaseResult("dev/3", "x", exact=True, passed=False, latency_ms=5.0, source="copy"),  # one line: not a block
    )
    table = format_report(FimReport(corpus, 0.0, "utf-16", results, tested=False))
    rows = dict(line.split("  ", 1) for line in table.splitlines()[2:])
    assert rows["blocks (2+ lines)"].strip() == "3"
    assert rows["blocks: shown"].strip() == "66.7% (2/3)"
    assert rows["blocks: shown with 2+ lines"].strip() == "33.3% (1/3)"
    assert rows["blocks: exact (whole)"].strip() == "33.3% (1/3)"
    assert rows["blocks: first line alone | shown"].strip() == "50.0% (1/2)"
    assert rows["blocks: latency p50"].strip() == "12 ms"
    assert rows["source block: shown | exact"].strip() == "33.3% (1/3) | 100.0% (1/1)"
    assert rows["source copy: shown | exact"].strip() == "33.3% (1/3) | 100.0% (1/1)"
