"""How the benchmarks score a program and sum up their latencies: exact line for line,
whether it runs to exit code 0 in a capped interpreter, and percentiles."""

from __future__ import annotations

import math
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

# Caps a test run's address space and CPU seconds (argv[2]): a runaway candidate must not
# starve the machine, nor outlive a bench that was killed while it ran (the timeout dies with it).
_RUNNER = (
    "import resource, runpy, sys; lim = 2 << 30; resource.setrlimit(resource.RLIMIT_AS, (lim, lim)); "
    "cpu = int(sys.argv[2]); resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu)); "
    "sys.argv = sys.argv[1:2]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def is_exact(program: str, expected: str) -> bool:
    """Equal line for line, ignoring trailing whitespace on each line (see ``fim.py``'s docstring)."""
    return _stripped_lines(program) == _stripped_lines(expected)


def _stripped_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def program_command(path: Path, cpu_seconds: int) -> list[str]:
    """The command that runs the program at ``path`` in an isolated interpreter, capped."""
    return [sys.executable, "-I", "-c", _RUNNER, str(path), str(cpu_seconds)]


def run_program(source: str, timeout: float = 10.0) -> bool:
    """Whether ``source`` exits with code 0 in an isolated interpreter within ``timeout``."""
    with tempfile.TemporaryDirectory(prefix="redraft-fim-") as folder:
        path = Path(folder) / "program.py"
        path.write_text(source, encoding="utf-8")
        try:
            done = subprocess.run(
                program_command(path, math.ceil(timeout) + 1),
                cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                timeout=timeout, check=False,
            )
        except subprocess.TimeoutExpired:
            return False
        return done.returncode == 0


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
