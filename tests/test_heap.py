import sys
from pathlib import Path

import pytest

from lsp_server.heap import give_back_freed_memory


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heap")
def test_freed_memory_in_the_middle_of_the_heap_goes_back_to_the_system() -> None:
    chunks = [bytes(2000) + bytes([n % 256]) for n in range(40_000)]  # ~80 MB, each from malloc
    kept = chunks[::1000]  # pins the heap's top, so that freeing the rest alone can't shrink it
    del chunks
    before = rss_mb()
    give_back_freed_memory()
    assert rss_mb() < before - 40, "the freed 80 MB stayed with the process"
    assert len(kept) == 40
