import json
import os
import sys
from pathlib import Path

import pytest

from benchmarks.lsp_client import LspClient
from lsp_server.stats import UsageStats, format_counts, read_counts


def test_feedback_counts_accepts_and_dismissals_of_ids_it_gave_out(tmp_path: Path) -> None:
    stats = UsageStats(tmp_path / "stats.json")
    stats.shown("next_edit", ["a", "b"])
    assert stats.feedback("a", accepted=True)
    assert stats.feedback("b", accepted=False)
    assert not stats.feedback("a", accepted=True)  # each id counts once
    assert not stats.feedback("never-shown", accepted=True)
    counts = read_counts(tmp_path / "stats.json")
    assert counts["next_edit"] == {"shown": 2, "accepted": 1, "rejected": 1}
    assert "50.0%" in format_counts(counts)


def test_a_corrupt_stats_file_reads_as_zero_counts(tmp_path: Path) -> None:
    (tmp_path / "stats.json").write_text("{not json")
    assert read_counts(tmp_path / "stats.json")["inline_completion"]["shown"] == 0


@pytest.mark.asyncio
async def test_feedback_over_lsp_lands_in_the_local_stats_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert os.environ["XDG_STATE_HOME"] == str(tmp_path)
    async with LspClient([sys.executable, "-m", "lsp_server", "serve"], timeout=60) as client:
        await client.initialize({"confidenceThreshold": 0.0, "requestTimeoutMs": 20000, "debugRequests": True})
        await client.initialized()
        await client.did_open("file:///s.py", "def loop():\n    while True\n        pass\n")
        result = await client.inline_completion("file:///s.py", 1, 14, trigger_kind=1)
        item = result["items"][0]
        suggestion_id = item["command"]["arguments"][0]
        state = await client.request("redraft/debugState", {})
        assert state["suggestionSources"][suggestion_id] in ("canvas", "copy", "continuation", "phrase",
                                                              "left_to_right", "block")
        await client.notify("redraft/feedback", {"id": suggestion_id, "accepted": False})
        await client.request("shutdown")
    counts = json.loads((tmp_path / "redraft" / "stats.json").read_text())
    assert counts["inline_completion"]["rejected"] == 1
    assert counts["inline_completion"]["shown"] >= 1


def test_the_suggestion_ids_remembered_for_feedback_are_bounded() -> None:
    from lsp_server.stats import MAX_TRACKED_IDS

    stats = UsageStats(None)
    ids = [f"id{i}" for i in range(MAX_TRACKED_IDS + 500)]
    for start in range(0, len(ids), 3):
        stats.shown("inline_completion", ids[start : start + 3])
    assert len(stats._kinds) == MAX_TRACKED_IDS
    assert not stats.feedback(ids[0], accepted=True)  # the oldest were forgotten
    assert stats.feedback(ids[-1], accepted=True)


def test_ghost_text_feedback_is_counted_per_source_and_kept_across_restarts(tmp_path: Path) -> None:
    from lsp_server.stats import format_source_counts, read_source_counts

    stats = UsageStats(tmp_path / "stats.json")
    stats.shown("inline_completion", ["a", "b", "c"], ["copy", "copy", "canvas"])
    stats.shown("next_edit", ["d"])
    for suggestion_id, accepted in (("a", False), ("b", True), ("c", False), ("d", True)):
        assert stats.feedback(suggestion_id, accepted)
    assert read_source_counts(tmp_path / "stats.json") == {"copy": {"accepted": 1, "rejected": 1},
                                                           "canvas": {"accepted": 0, "rejected": 1}}
    assert UsageStats(tmp_path / "stats.json").sources == stats.sources
    assert stats.sources_shown() == {}  # each id leaves once its feedback came
    stats.shown("inline_completion", ["e"], ["block"])
    assert stats.sources_shown() == {"e": "block"}
    assert "copy" in format_source_counts(stats.sources, 0.5)
    # A file edited by hand into nonsense reads as no counts, not as an error.
    (tmp_path / "stats.json").write_text(json.dumps({"inline_completion_sources": {"copy": {"accepted": -3}, "x": 1}}))
    assert read_source_counts(tmp_path / "stats.json") == {"copy": {"accepted": 0, "rejected": 0}}
