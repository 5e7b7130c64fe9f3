"""`redraft bench nextedit`: release hunks replayed through the real server, both ways."""

import json
import sys
from pathlib import Path

from lsp_server.bench.nextedit import format_nextedit, run_nextedit_bench

SERVER = [sys.executable, "-m", "lsp_server", "serve"]


def test_a_rename_replayed_from_either_end_is_carried_to_the_next_use(tmp_path: Path) -> None:
    # One name renamed in a function, each use its own hunk (lines in between unchanged).
    body = "".join(f"    total = total + {n}\n    log(n)\n" for n in range(3))
    old = f"def add(total):\n{body}    return total\n"
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"path": "m.py", "old": old, "new": old.replace("total", "amount")}) + "\n")
    for bottom_up in (False, True):
        report = run_nextedit_bench(data, None, 3, SERVER, threshold=0.5, bottom_up=bottom_up)
        assert len(report.outcomes) == 3
        # Top-down the next use is below the change, bottom-up above it: right both ways.
        assert all(o.exact and o.located and o.confidence and o.confidence >= 0.5 for o in report.outcomes)
        assert "exact 100.0%" in format_nextedit(report)
