"""``redraft bench http`` as a user runs it: its rows add up, whatever the machine's speed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks.http import parse_clients

BENCH = [sys.executable, "-m", "lsp_server", "bench", "http"]


def rows(printed: str) -> list[dict[str, str]]:
    lines = printed.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["clients", "sent"])
    names = lines[header].replace(" ms", "_ms").split()
    found = []
    for line in lines[header + 1:]:
        if not line.strip():
            break
        found.append(dict(zip(names, line.split(), strict=True)))
    return found


def error_count(cell: str) -> int:
    return 0 if cell == "0" else sum(int(part.rsplit(":", 1)[1]) for part in cell.split(","))


@pytest.mark.parametrize("burst", [False, True])
def test_every_request_sent_is_answered_refused_or_counted_as_an_error(burst: bool) -> None:
    done = subprocess.run([*BENCH, "--clients", "2", "--requests", "6", *(["--burst"] if burst else [])],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (row,) = rows(done.stdout)
    assert row["clients"] == "2" and row["sent"] == "6"
    assert int(row["answered"]) + int(row["429"]) + error_count(row["errors"]) == 6
    assert int(row["shown"]) <= int(row["answered"])
    assert float(row["req/s"]) > 0 and float(row["p50_ms"]) <= float(row["p95_ms"]) <= float(row["p99_ms"])
    assert "server alive after the last row: yes" in done.stdout
    if burst:
        assert "burst: every request answered or refused with 429: yes" in done.stdout


def test_a_list_of_client_counts_is_a_row_each_and_nonsense_is_refused() -> None:
    assert parse_clients("1,4,8") == [1, 4, 8]
    with pytest.raises(ValueError, match="whole numbers"):
        parse_clients("four")
    refused = subprocess.run([*BENCH, "--clients", "0"], capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "counts of 1 or more" in refused.stderr and "Traceback" not in refused.stderr
