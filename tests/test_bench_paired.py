"""Comparing two FIM benchmark runs case by case (``bench fim --save`` / ``--against``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.fim import CaseResult, FimReport
from benchmarks.paired import compare, format_comparison, load_results, save_results, sign_test
from lsp_server.cli import main


def _report(outcomes: list[tuple[str | None, bool, bool]], tested: bool = True, threshold: float = 0.0) -> FimReport:
    results = tuple(CaseResult(f"case/{n}", completion, exact, passed, 12.5 if completion else None)
                    for n, (completion, exact, passed) in enumerate(outcomes))
    return FimReport(Path("cases.jsonl.gz"), threshold, "utf-16", results, tested)


def test_the_sign_test_is_the_exact_two_sided_binomial_tail() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(10, 0) == pytest.approx(2 / 1024)
    assert sign_test(3, 7) == sign_test(7, 3) == pytest.approx(2 * (1 + 10 + 45 + 120) / 1024)
    assert sign_test(5, 5) == 1.0  # capped: both tails overlap at the middle


def test_a_saved_run_reloads_case_for_case_and_the_comparison_counts_only_the_disagreements(tmp_path: Path) -> None:
    saved_report = _report([("a", True, True), ("b", False, False), (None, False, False), ("d", True, False)])
    path = tmp_path / "saved.jsonl"
    save_results(saved_report, path)
    saved = load_results(path)
    assert saved.results == saved_report.results and saved.threshold == 0.0 and saved.tested
    assert saved.data_path == Path("cases.jsonl.gz") and saved.encoding == "utf-16"

    now = _report([("a", True, True), ("b", True, True), ("c", True, True), (None, False, False)])
    rows = {row.metric: row for row in compare(now, saved)}
    assert (rows["shown"].this_run, rows["shown"].saved_run) == (3, 3)
    assert (rows["shown"].only_this, rows["shown"].only_saved) == (1, 1)
    assert (rows["exact"].this_run, rows["exact"].only_this, rows["exact"].only_saved) == (3, 2, 1)
    assert (rows["pass@1"].only_this, rows["pass@1"].only_saved) == (2, 0)
    assert rows["pass@1"].p_value == pytest.approx(0.5)
    table = format_comparison(list(rows.values()), path)
    assert "against saved.jsonl" in table and "pass@1" in table


def test_runs_without_tests_compare_shown_and_exact_only(tmp_path: Path) -> None:
    path = tmp_path / "dev.jsonl"
    save_results(_report([("x", True, False)], tested=False), path)
    rows = compare(_report([("y", False, False)], tested=False), load_results(path))
    assert [row.metric for row in rows] == ["shown", "exact"]
    assert (rows[1].only_this, rows[1].only_saved) == (0, 1)


def test_other_cases_or_a_foreign_file_are_refused_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "saved.jsonl"
    save_results(_report([("a", True, True)]), path)
    with pytest.raises(ValueError, match="other cases"):
        compare(_report([("a", True, True), ("b", True, True)]), load_results(path))
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"task_id": "x"}\n')
    with pytest.raises(ValueError, match="not a file saved by"):
        load_results(foreign)
    with pytest.raises(ValueError, match="cannot read"):
        load_results(tmp_path / "missing.jsonl")


def test_a_bad_against_file_stops_the_cli_before_any_case_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not json\n")
    # --data names a file that doesn't exist: reaching the run would fail differently.
    code = main(["bench", "fim", "--data", str(tmp_path / "absent.jsonl.gz"), "--against", str(foreign)])
    assert code == 1
    error = capsys.readouterr().err
    assert error.startswith("redraft: cannot read") and "Traceback" not in error
