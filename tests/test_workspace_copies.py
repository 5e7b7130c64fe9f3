"""Copied lines from the workspace's other files: the index, the buckets, the watcher that
keeps the index current, and the server, which never copies from the document's own file."""

import json
import sys
from pathlib import Path

import pytest

from benchmarks.fim import held_out_cases, workspace_indexed
from benchmarks.lsp_client import LspClient
from lsp_server.edit_log import EditLog
from lsp_server.file_watcher import WorkspaceWatcher
from lsp_server.workspace_lines import MAX_CHANGED_FILES, WorkspaceLines, file_key
from model.data.corpus import SourceFile
from model.fim.calibrate import with_workspace
from model.fim.calibrate_sources import measure_copies
from model.fim.fim_patterns import (
    AGREE_1,
    MAX_WORKSPACE_MATCHES,
    WORKSPACE_AGREE_1,
    WORKSPACE_AGREE_3,
    WORKSPACE_MAJORITY,
    CopiedLine,
    LineIndex,
    RelatedLines,
    copy_candidate,
)
from tests.test_file_watcher import wait_for

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
LOGGER = "import logging\n\nlogger = logging.getLogger(__name__)\n"


def test_the_index_finds_the_lines_that_start_with_the_typed_text_except_in_the_skipped_file() -> None:
    index = LineIndex({"a.py": LOGGER, "b.py": "  logger = logging.getLogger('b')\nlog = 1\n", "c.py": LOGGER})
    assert index.rests("logger = logging.") == {"getLogger(__name__)": 2, "getLogger('b')": 1}
    assert index.rests("logger = logging.", skip="a.py") == {"getLogger(__name__)": 1, "getLogger('b')": 1}
    assert index.rests("nothing starts so") == {}
    # A saved file's new lines replace its old ones; a deleted file's are gone.
    saved = index.updated("b.py", "logger = logging.getLogger('saved')\n").updated("c.py", None)
    assert saved.rests("logger = logging.") == {"getLogger(__name__)": 1, "getLogger('saved')": 1}
    assert saved.rests("logger = logging.", skip="b.py") == {"getLogger(__name__)": 1}
    assert index.rests("logger = logging.", skip="a.py") == {"getLogger(__name__)": 1, "getLogger('b')": 1}
    # Too many matches to read within a request's budget: no answer rather than a partial one.
    crowded = LineIndex({"d.py": "".join(f"x = {n}\n" for n in range(MAX_WORKSPACE_MATCHES + 1))})
    assert crowded.rests("x = ") is None and crowded.rests("x = 1") is not None


def test_the_workspace_is_asked_only_when_the_file_gives_nothing_and_has_its_own_buckets() -> None:
    workspace = RelatedLines(LineIndex({"a.py": LOGGER, "b.py": LOGGER, "c.py": LOGGER}))
    typed = "import os\nlogger = logging.getLo"
    assert copy_candidate(typed, "\n", workspace) == CopiedLine("gger(__name__)", WORKSPACE_AGREE_3)
    # The file's own line wins, even a single one.
    own = "logger = logging.getLogger('here')\n" + typed
    assert copy_candidate(own, "\n", workspace) == CopiedLine("gger('here')", AGREE_1)
    # One other file: weak evidence, proposed only after 8 typed characters.
    single = RelatedLines(LineIndex({"a.py": "total_count = sum(values)\n"}))
    assert copy_candidate("tota", "", single) is None
    assert copy_candidate("total_co", "", single) == CopiedLine("unt = sum(values)", WORKSPACE_AGREE_1)
    split = RelatedLines(LineIndex({"a.py": "result_value = a\nresult_value = a\n", "b.py": "result_value = b\n"}))
    assert copy_candidate("result_value = ", "", split) == CopiedLine("a", WORKSPACE_MAJORITY)


def test_calibration_measures_workspace_buckets_with_the_rest_of_the_package_as_the_workspace() -> None:
    files = [SourceFile("pkg", f"m{n}.py", f"import logging\nlogger = logging.getLogger('m{n}')\n"
                        "logger.info('started')\n") for n in range(4)]
    cases = with_workspace(files, 60, seed=1)
    for _, _, _, related in cases:  # every other file of the package, never the case's own
        assert related.skip is not None
        rests = related.index.rests("logger = logging.getLogger(", related.skip)
        assert rests is not None and len(rests) == 3 and f"'{related.skip[:-3]}')" not in rests
    fired, right = measure_copies(list(cases))[WORKSPACE_AGREE_3]
    assert fired > 0 and right == fired  # "logger.info('started')" in all three other files


def test_the_watcher_indexes_each_folder_s_files_by_suffix_and_keeps_the_index_current(tmp_path: Path) -> None:
    (tmp_path / "one.py").write_text(LOGGER)
    (tmp_path / "notes.txt").write_text("logger = logging.getLogger('text')\n")
    document = tmp_path / "main.py"
    document.write_text("logger = logging.getLogger('main')\n")
    lines = WorkspaceLines()
    watcher = WorkspaceWatcher([tmp_path], EditLog(), lambda uri: False, debounce_s=0.05, lines=lines)
    watcher.start()
    try:
        assert watcher.wait_ready(5.0)
        related = lines.related(document)
        assert related is not None and related.skip == file_key(document)
        assert related.index.rests("logger = ", related.skip) == {"logging.getLogger(__name__)": 1}
        assert lines.related(tmp_path.parent / "elsewhere.py") is None  # outside the workspace
        # Other kinds of file once a document of the kind is opened.
        assert lines.related(tmp_path / "draft.txt") is None
        watcher.index_suffix(".txt")
        assert wait_for(lambda: lines.related(tmp_path / "draft.txt") is not None)
        text_lines = lines.related(tmp_path / "draft.txt")
        assert text_lines is not None and text_lines.index.rests("logger = ") == {"logging.getLogger('text')": 1}
        (tmp_path / "two.py").write_text("logger = logging.getLogger('two')\n")
        assert wait_for(lambda: (lines.related(document) or related).index.rests("logger = ", related.skip)
                        == {"logging.getLogger(__name__)": 1, "logging.getLogger('two')": 1})
        (tmp_path / "one.py").unlink()
        assert wait_for(lambda: (lines.related(document) or related).index.rests("logger = ", related.skip)
                        == {"logging.getLogger('two')": 1})
    finally:
        watcher.stop()


def test_many_changed_files_sort_the_group_again(tmp_path: Path) -> None:
    lines = WorkspaceLines()
    assert not lines.update(tmp_path, ".py", {tmp_path / "a.py": "x = 1\n"})  # nothing indexed yet
    lines.rebuild(tmp_path, ".py", {tmp_path / "a.py": "x = 1\n"})
    assert lines.update(tmp_path, ".py", {tmp_path / "b.py": "x = 2\n"})
    many: dict[Path, str | None] = {tmp_path / f"m{n}.py": "x = 3\n" for n in range(MAX_CHANGED_FILES)}
    assert not lines.update(tmp_path, ".py", many)
    related = lines.related(tmp_path / "a.py")
    assert related is not None and related.index.rests("x = ", related.skip) == {"2": 1}


def test_held_out_cases_can_live_in_a_workspace_with_their_package(tmp_path: Path) -> None:
    corpus = tmp_path / "dev.jsonl"
    rows = [{"package": "pkg", "path": f"sub/m{n}.py", "text": f"def f{n}(x):\n    return x + {n}\n" * 20}
            for n in range(2)]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
    workspace = tmp_path / "workspace"
    cases = held_out_cases(corpus, 4, workspace)
    assert all(case.path in {"pkg/sub/m0.py", "pkg/sub/m1.py"} for case in cases)
    assert (workspace / "pkg/sub/m1.py").read_text() == rows[1]["text"]


@pytest.mark.asyncio
async def test_the_server_copies_from_other_files_of_the_workspace_but_never_from_the_document_s_own(
    tmp_path: Path,
) -> None:
    for name in ("one", "two", "three"):
        (tmp_path / f"{name}.py").write_text(LOGGER)
    document = tmp_path / "main.py"
    # Saved on disk: five lines that would outvote the other files if the file were not left out.
    document.write_text("import logging\n" + "logger = logging.getLogger('main')\n" * 5)
    typed = "import logging\n\nlogger = logging.getLogger("
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"confidenceThreshold": 0.3, "debugRequests": True, "requestTimeoutMs": 20_000},
                                workspace_folders=[tmp_path])
        await client.initialized()
        await workspace_indexed(client, 5.0)
        await client.did_open(document.as_uri(), typed)
        result = await client.inline_completion(document.as_uri(), 2, len("logger = logging.getLogger("))
        items = result["items"] if isinstance(result, dict) else result
        assert [item["insertText"] for item in items][:1] == ["__name__)"]


def test_redraft_complete_copies_from_the_workspace_it_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lsp_server.cli import main

    for name in ("one", "two", "three"):
        (tmp_path / f"{name}.py").write_text(LOGGER)
    document = tmp_path / "main.py"
    document.write_text("import logging\n\nlogger = logging.getLogger(\n")
    assert main(["complete", f"{document}:3:28", "--workspace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "'__name__)'" in out and "copied from the workspace's other files" in out
