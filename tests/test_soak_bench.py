"""The soak bench, in miniature: real files, requests with cancellations, one server."""

import sys
from pathlib import Path

from benchmarks.soak import default_files, format_soak, run_soak_bench

SERVER = [sys.executable, "-m", "lsp_server", "serve"]


def test_a_short_soak_has_no_errors_and_reports_every_figure() -> None:
    files = default_files(limit=2)
    assert files and all(isinstance(path, Path) for path in files)
    report = run_soak_bench(30, files, SERVER, seed=3)
    assert report.requests == 30 and (report.errors, report.crashes) == (0, 0)
    assert report.rss_start_mb > 0 and report.rss_warm_mb > 0 and report.rss_end_mb > 0
    assert len(report.latencies_ms) + report.cancelled == report.requests
    table = format_soak(report)
    assert "latency p50 first → last tenth" in table and "errors" in table
