"""The pure parts of the FIM benchmark: positions, edits, scoring and test execution."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import time
from pathlib import Path

from benchmarks.fim import (
    CaseResult,
    FimCase,
    FimReport,
    format_report,
    held_out_cases,
    load_cases,
    program_with_tests,
)
from benchmarks.lsp_text import apply_item, first_item, offset_to_position, position_to_offset
from benchmarks.scoring import is_exact, percentile, program_command, run_program

CASE = FimCase(
    task_id="tiny/0",
    entry_point="double",
    prompt="def double(x: int) -> int:\n",
    suffix="\n\nprint('ok')\n",
    canonical_solution="    return 2 * x\n",
    test="def check(candidate):\n    assert candidate(3) == 6\n",
)


def test_position_at_end_of_an_ascii_prompt_counts_lines_and_columns() -> None:
    text = "ab\ncde\nf"
    assert offset_to_position(text, 0) == (0, 0)
    assert offset_to_position(text, 3) == (1, 0)
    assert offset_to_position(text, 5) == (1, 2)
    assert offset_to_position(text, len(text)) == (2, 1)


def test_position_counts_utf16_code_units_for_surrogate_pairs() -> None:
    text = "x = '😀é'\ny"  # the emoji is one str character but two UTF-16 code units
    end_of_string = text.index("'", 5) + 1
    assert offset_to_position(text, end_of_string) == (0, 9)
    assert offset_to_position(text, end_of_string, "utf-32") == (0, 8)
    assert offset_to_position(text, end_of_string, "utf-8") == (0, 12)
    assert position_to_offset(text, 0, 9) == end_of_string


def test_position_treats_crlf_as_one_line_break() -> None:
    text = "a\r\nbc"
    assert offset_to_position(text, 4) == (1, 1)
    assert position_to_offset(text, 1, 1) == 4


def test_position_past_line_end_clamps_to_the_line_end() -> None:
    assert position_to_offset("ab\ncd", 0, 99) == 2
    assert position_to_offset("ab\ncd", 7, 0) == 5


def test_first_item_accepts_a_list_an_array_or_null() -> None:
    item = {"insertText": "x"}
    assert first_item({"items": [item]}) == item
    assert first_item([item]) == item
    assert first_item({"items": []}) is None
    assert first_item(None) is None


def test_item_without_range_is_inserted_at_the_cursor() -> None:
    document = CASE.prompt + CASE.suffix
    program = apply_item(document, len(CASE.prompt), {"insertText": "    return x + x\n"})
    assert program == CASE.prompt + "    return x + x\n" + CASE.suffix


def test_item_with_range_replaces_that_range_of_the_document() -> None:
    document = "def f():\n    ret\n"
    # The item rewrites the half-typed "ret" (line 1, characters 4..7) into a full line.
    item = {
        "insertText": "return 1",
        "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 7}},
    }
    assert apply_item(document, len(document), item) == "def f():\n    return 1\n"


def test_item_range_after_a_surrogate_pair_uses_utf16_columns() -> None:
    document = "s = '😀'; t"
    # "t" is str index 9 but UTF-16 column 10, after the two code units of the emoji.
    span = {"start": {"line": 0, "character": 10}, "end": {"line": 0, "character": 11}}
    item = {"insertText": "u", "range": span}
    assert apply_item(document, 0, item) == "s = '😀'; u"


def test_exact_match_ignores_trailing_whitespace() -> None:
    assert is_exact("a = 1   \nb = 2\n", "a = 1\nb = 2")
    assert is_exact("a = 1\t\n", "a = 1\n")


def test_exact_match_still_sees_indentation_and_blank_lines() -> None:
    assert not is_exact("  a = 1\n", "a = 1\n")
    assert not is_exact("a = 1\n\nb = 2\n", "a = 1\nb = 2\n")


def test_a_correct_program_passes_its_tests() -> None:
    program = CASE.prompt + CASE.canonical_solution + CASE.suffix
    assert run_program(program_with_tests(program, CASE), timeout=10)


def test_a_wrong_program_fails_its_tests() -> None:
    program = CASE.prompt + "    return x\n" + CASE.suffix
    assert not run_program(program_with_tests(program, CASE), timeout=10)


def test_a_program_that_hangs_fails_at_the_timeout() -> None:
    assert not run_program("while True:\n    pass\n", timeout=0.5)


def test_a_hanging_program_stops_itself_without_the_timeout(tmp_path: Path) -> None:
    # As when the bench is killed mid-test: nothing waits to kill the child, so its own
    # CPU limit must end it.
    path = tmp_path / "program.py"
    path.write_text("while True:\n    pass\n")
    started = time.monotonic()
    done = subprocess.run(program_command(path, cpu_seconds=1), timeout=60, check=False)
    # The CPU limit's signals (the kernel sends SIGKILL at the hard limit), not an error in the runner.
    assert done.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
    assert time.monotonic() - started < 30


def test_load_cases_reads_gzipped_jsonl_up_to_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl.gz"
    row = {name: getattr(CASE, name) for name in FimCase.__dataclass_fields__}
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write("\n".join(json.dumps(row | {"task_id": f"tiny/{n}"}) for n in range(3)) + "\n")
    assert [case.task_id for case in load_cases(path, 2)] == ["tiny/0", "tiny/1"]
    assert len(load_cases(path, None)) == 3


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([10.0, 20.0, 30.0, 40.0], 50) == 25.0
    assert percentile([5.0], 95) == 5.0


def test_report_counts_unanswered_cases_as_not_shown_and_not_passed() -> None:
    results = (
        CaseResult("a", "x", exact=True, passed=True, latency_ms=10.0),
        CaseResult("b", None, exact=False, passed=False, latency_ms=30.0),
        CaseResult("c", None, exact=False, passed=False, latency_ms=None, error="timeout"),
    )
    report = FimReport(Path("cases.jsonl.gz"), 0.0, "utf-16", results)
    assert (report.shown, report.exact, report.passed, report.errors) == (1, 1, 1, 1)
    table = format_report(report)
    assert "33.3% (1/3)" in table
    assert "100.0% (1/1)" in table  # exact match among shown
    assert "20 ms" in table  # p50 of the two answered requests


def test_held_out_spans_are_cases_without_tests_and_the_report_says_so(tmp_path: Path) -> None:
    corpus = tmp_path / "dev.jsonl"
    text = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40))
    corpus.write_text(json.dumps({"package": "pkg", "path": "m.py", "text": text}) + "\n")
    cases = held_out_cases(corpus, 5)
    assert len(cases) == 5
    for case in cases:
        assert case.test == "" and case.prompt + case.canonical_solution + case.suffix == text
    results = (CaseResult("dev/0", "x", exact=True, passed=False, latency_ms=10.0),)
    table = format_report(FimReport(corpus, 0.3, "utf-16", results, tested=False))
    assert "n/a (no tests)" in table and "100.0% (1/1)" in table
