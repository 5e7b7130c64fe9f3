"""Line continuations from the workspace's other files: the run index, the continuer that
counts its runs with the file's, the index the server keeps current, and the server."""

import logging
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import model.fim.run_index
from benchmarks.fim import workspace_indexed
from benchmarks.lsp_client import LspClient
from lsp_server.workspace_lines import WorkspaceLines, file_key
from model.fim.fim_patterns import LineIndex, RelatedLines
from model.fim.line_continuation import LineContinuer
from model.fim.run_index import MAX_INDEXED_TOKENS, RunIndexBuilder

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
CALLS = "server.configure(verbose=True, retries=3)\n"


def followers_text(index: object, context: list[str], skip: str | None = None) -> list[list[str]]:
    from model.fim.run_index import RunIndex

    assert isinstance(index, RunIndex)
    return [sorted(index.strings[t] for t in found.tolist()) for found in index.followers(context, skip)]


def test_the_index_finds_what_follows_runs_of_two_or_more_tokens_except_in_the_skipped_file() -> None:
    index = RunIndexBuilder().replace_all({"a.py": "x = load(path)\n", "b.py": "y = load(name)\nz = load(path)\n"})
    # "load(" is followed by path twice and name once; "= load(" the same: every one is after "=".
    assert followers_text(index, ["=", " ", "load", "("]) == [["name", "path", "path"]] * 3
    assert followers_text(index, ["=", " ", "load", "("], skip="b.py") == [["path"]] * 3
    assert followers_text(index, ["load"]) == []  # one token: the file's own business
    assert followers_text(index, ["never", "seen"]) == []
    # No run crosses from one file into the next: a.py ends with a line break, b.py starts with "y".
    assert followers_text(RunIndexBuilder().replace_all({"a.py": "f(x)", "b.py": "y"}), ["(", "x"]) == [[")"]]


def test_a_saved_file_replaces_its_runs_and_a_deleted_one_takes_them_away() -> None:
    builder = RunIndexBuilder()
    builder.replace_all({"a.py": "x = load(path)\n", "b.py": "y = load(name)\n"})
    saved = builder.update({"a.py": "x = load(other)\n", "b.py": None})
    assert followers_text(saved, ["load", "("]) == [["other"]]
    assert len(saved) == len(["x", " ", "=", " ", "load", "(", "other", ")", "\n"])


def test_indexing_stops_at_its_token_cap(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    big = "a = 1\n" * (MAX_INDEXED_TOKENS // 6 + 10)  # six tokens a line
    index = RunIndexBuilder().replace_all({"a.py": "b = 2\n", "big.py": big})
    assert len(index) < MAX_INDEXED_TOKENS and index.owners == ["a.py"]
    assert "files indexed" in caplog.text


def test_the_continuer_counts_the_workspace_s_runs_with_the_file_s() -> None:
    saved_document = "client.configure(quiet)\n" * 9
    workspace = RunIndexBuilder().replace_all({"a.py": CALLS * 2, "b.py": CALLS, "main.py": saved_document})
    prefix, suffix = "import os\n\nclient.configure(", "\n"
    assert LineContinuer().continuation(prefix, suffix) is None  # the file alone has no such run
    workspace_of_others = RelatedLines(LineIndex(), skip="main.py", runs=workspace)
    found = LineContinuer().continuation(prefix, suffix, workspace_of_others)
    assert found is not None and found.text == "verbose=True, retries=3)"
    assert found.min_count == 3 and found.min_share == 1.0
    # The document's own saved file is not another file: with it, its nine runs would win.
    counted = LineContinuer().continuation(prefix, suffix, RelatedLines(LineIndex(), runs=workspace))
    assert counted is not None and counted.text == "quiet)"
    # A word typed halfway is finished from the workspace too.
    typed = LineContinuer().continuation("import os\n\nclient.configure(verb", suffix, workspace_of_others)
    assert typed is not None and typed.text == "ose=True, retries=3)"
    # The file's own runs count beside the workspace's: four of "quiet" outvote three.
    own = "server.configure(quiet)\n" * 4 + prefix
    outvoted = LineContinuer().continuation(own, suffix, workspace_of_others)
    assert outvoted is not None and outvoted.text == "quiet)" and outvoted.min_share == pytest.approx(4 / 7)


def test_the_server_s_index_keeps_the_runs_of_each_group_current(tmp_path: Path) -> None:
    lines = WorkspaceLines()
    lines.rebuild(tmp_path, ".py", {tmp_path / "a.py": CALLS, tmp_path / "main.py": "pass\n"})
    related = lines.related(tmp_path / "main.py")
    assert related is not None and related.runs is not None
    assert followers_text(related.runs, ["configure", "("], related.skip) == [["verbose"]]
    assert lines.update(tmp_path, ".py", {tmp_path / "a.py": "server.configure(debug)\n"})
    related = lines.related(tmp_path / "main.py")
    assert related is not None and related.runs is not None
    assert followers_text(related.runs, ["configure", "("], related.skip) == [["debug"]]
    lines.rebuild(tmp_path, ".txt", {tmp_path / "notes.txt": CALLS})
    text_related = lines.related(tmp_path / "draft.txt")
    assert text_related is not None and text_related.runs is None  # runs only for the model's language
    lines.rebuild(tmp_path, ".py", {})
    assert lines.related(tmp_path / "main.py") is None
    assert np.array_equal(RunIndexBuilder().replace_all({}).stream, np.array([-1]))


@pytest.mark.asyncio
@pytest.mark.parametrize("line_break", ["\n", "\r\n"])
async def test_the_server_continues_a_line_as_the_workspace_s_other_files_do(tmp_path: Path, line_break: str) -> None:
    # Other files with \r\n breaks continue the line as well, and no stray \r comes with it.
    for name in ("one", "two", "three"):
        text = f"def setup_{name}(server):\n    {CALLS}"
        (tmp_path / f"{name}.py").write_bytes(text.replace("\n", line_break).encode())
    document = tmp_path / "main.py"
    typed = "import os\n\nclient.configure("
    document.write_text(typed + "\n")
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"confidenceThreshold": 0.0, "debugRequests": True, "requestTimeoutMs": 20_000},
                                workspace_folders=[tmp_path])
        await client.initialized()
        await workspace_indexed(client, 5.0)
        await client.did_open(document.as_uri(), typed + "\n")
        result = await client.inline_completion(document.as_uri(), 2, len("client.configure("), trigger_kind=1)
        items = result["items"] if isinstance(result, dict) else result
        assert "verbose=True, retries=3)" in [item["insertText"] for item in items]
        assert not any("\r" in item["insertText"] for item in items)


def test_where_the_runs_are_capped_the_newest_files_are_the_ones_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model.fim.run_index, "MAX_INDEXED_TOKENS", 12)  # one file of 9 tokens
    files = {tmp_path / "a_old.py": "old = configure(stale)\n", tmp_path / "z_new.py": "new = configure(fresh)\n"}
    for age, path in enumerate(files):
        path.write_text(files[path])
        os.utime(path, (1_000_000 + 1000 * age, 1_000_000 + 1000 * age))  # z_new.py newest
    lines = WorkspaceLines()
    lines.rebuild(tmp_path, ".py", files)
    related = lines.related(tmp_path / "main.py")
    assert related is not None and related.runs is not None
    assert related.runs.owners == [file_key(tmp_path / "z_new.py")]
    assert followers_text(related.runs, ["configure", "("]) == [["fresh"]]
