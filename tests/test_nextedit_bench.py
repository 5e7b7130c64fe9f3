"""`redraft bench nextedit`: release hunks replayed through the real server, both ways."""

import json
import sys
from pathlib import Path

from benchmarks.nextedit import format_nextedit, run_nextedit_bench, typed_pieces
from model.training.next_edit_examples import line_hunks

SERVER = [sys.executable, "-m", "lsp_server", "serve"]


def test_a_rename_replayed_from_either_end_is_carried_to_the_next_use(tmp_path: Path) -> None:
    # One name renamed in a function, each use its own hunk (lines in between unchanged).
    body = "".join(f"    total = total + {n}\n    log(n)\n" for n in range(3))
    old = f"def add(total):\n{body}    return total\n"
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"path": "m.py", "old": old, "new": old.replace("total", "amount")}) + "\n")
    for bottom_up, together in ((False, False), (True, False), (False, True), (True, True)):
        report = run_nextedit_bench(data, None, 3, SERVER, threshold=0.5, bottom_up=bottom_up, together=together)
        assert len(report.outcomes) == 3
        # Top-down the next use is below the change, bottom-up above it: right both ways,
        # each hunk sent alone or all in one notification.
        assert all(o.exact and o.located and o.confidence and o.confidence >= 0.5 for o in report.outcomes)
        assert "exact 100.0%" in format_nextedit(report)


def test_hunks_cut_as_git_cuts_them_hold_nearby_changes_and_their_context() -> None:
    old = "".join(f"line {n}\n" for n in range(40))
    new = old.replace("line 5\n", "line five\n").replace("line 9\n", "line nine\n")
    new = new.replace("line 30\n", "line 30\nadded\n")
    minimal = line_hunks(old, new)
    assert [(h.start, len(h.old_lines), len(h.new_lines)) for h in minimal] == [(5, 1, 1), (9, 1, 1), (31, 0, 1)]
    hunks = line_hunks(old, new, context=3)
    # Changes 3 lines apart are one hunk, 3 unchanged lines kept on each side of it.
    assert [(h.start, len(h.old_lines), len(h.new_lines)) for h in hunks] == [(2, 11, 11), (28, 6, 7)]
    assert hunks[0].old_lines[0] == "line 2\n" and hunks[0].new_lines[3:8] == [
        "line five\n", "line 6\n", "line 7\n", "line 8\n", "line nine\n"]
    assert line_hunks(old, old, context=3) == []


def test_a_rename_replayed_as_git_hunks_is_carried_to_the_next_use(tmp_path: Path) -> None:
    # A module-level name used in functions far apart: each use is its own git hunk, sent
    # with its unchanged context lines, and the cursor ends three lines below the change.
    filler = "".join(f"    step_{n} = {n}\n" for n in range(8))
    uses = "".join(f"def f{n}():\n{filler}    return LIMIT + {n}\n\n" for n in range(3))
    old = f"LIMIT = 10\n\n{uses}"
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"path": "m.py", "old": old, "new": old.replace("LIMIT", "MAX_SIZE")}) + "\n")
    report = run_nextedit_bench(data, None, 3, SERVER, threshold=0.5, hunk_context=3)
    assert len(report.outcomes) == 3
    assert all(o.exact and o.located and o.confidence and o.confidence >= 0.5 for o in report.outcomes)


def test_typed_the_last_hunk_is_asked_about_after_each_piece_and_scored_as_replayed(tmp_path: Path) -> None:
    twin = "    f: Future = Future()\n"
    old = f"def a(self):\n{twin}    return f\n\n\ndef b(self):\n{twin}    return f\n"
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"path": "m.py", "old": old,
                                "new": old.replace(twin, "    f = self._loop.create_future()\n")}) + "\n")
    assert typed_pieces(twin.rstrip("\n"), "    f = self._loop.create_future()") == (
        5, 17, [" ", "=", " ", "self", ".", "_loop", ".", "create_f"])
    replayed = run_nextedit_bench(data, None, 1, SERVER, threshold=0.5)
    report = run_nextedit_bench(data, None, 1, SERVER, threshold=0.5, typed=True)
    (outcome,) = report.outcomes
    assert outcome.exact and [o.exact for o in replayed.outcomes] == [True] and replayed.outcomes[0].typing == []
    # One request after each piece but the last; some half-typed states are left alone.
    assert len(outcome.typing) == 7 and None in outcome.typing
    table = format_nextedit(report)
    assert "7 requests while typing it" in table and "typing" in table.splitlines()[2]
