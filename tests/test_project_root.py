"""A lone file's project: the folder the server watches when the editor names none."""

import sys
from pathlib import Path

import pytest

from benchmarks.fim import workspace_indexed
from benchmarks.lsp_client import LspClient
from lsp_server import watched_folders
from lsp_server.edit_log import EditLog
from lsp_server.project_root import project_root
from lsp_server.watched_folders import WatchedFolders
from lsp_server.workspace_lines import WorkspaceLines
from tests.test_file_watcher import wait_for

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
LOGGER = "import logging\n\nlogger = logging.getLogger('demo.audit')\n"  # nothing a model would guess


def make(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_nearest_folder_with_version_control_or_packaging_is_the_root(tmp_path: Path) -> None:
    make(tmp_path / "repo/pyproject.toml")
    (tmp_path / "repo/.git").mkdir()
    make(tmp_path / "repo/tools/setup.py")  # a nested project of its own
    assert project_root(make(tmp_path / "repo/src/pkg/mod.py")) == tmp_path / "repo"
    assert project_root(make(tmp_path / "repo/tools/lib/run.py")) == tmp_path / "repo/tools"


def test_without_markers_the_top_of_the_python_package_or_else_the_file_s_folder(tmp_path: Path) -> None:
    make(tmp_path / "loose/pkg/__init__.py")
    make(tmp_path / "loose/pkg/sub/__init__.py")
    assert project_root(make(tmp_path / "loose/pkg/sub/mod.py")) == tmp_path / "loose/pkg"
    assert project_root(make(tmp_path / "scripts/one/run.py")) == tmp_path / "scripts/one"


def test_a_file_in_an_installed_package_belongs_to_that_package_not_to_the_project_around_it(tmp_path: Path) -> None:
    make(tmp_path / "app/pyproject.toml")
    make(tmp_path / "app/.venv/pyvenv.cfg")
    site = tmp_path / "app/.venv/lib/python3.11/site-packages"
    make(site / "lib1/__init__.py")
    assert project_root(make(site / "lib1/core.py")) == site / "lib1"
    assert project_root(make(site / "six.py")) is None  # site-packages itself is too broad


def test_never_a_folder_too_broad_to_watch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setattr(Path, "home", lambda: home)
    make(home / ".git/HEAD")  # a dotfiles repository makes the home folder no project
    assert project_root(make(home / "notes.py")) is None
    assert project_root(make(home / "scratch/try.py")) == home / "scratch"
    assert project_root(tmp_path / "missing/file.py") is None


@pytest.mark.asyncio
async def test_with_no_workspace_folder_the_server_copies_from_the_document_s_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    make(project / "pyproject.toml", "[project]\nname = 'demo'\n")
    for name in ("one", "two", "three"):
        make(project / "demo" / f"{name}.py", LOGGER)
    document = make(project / "demo/main.py", "import logging\n")
    typed = "import logging\n\nlogger = logging.getLogger("
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"confidenceThreshold": 0.3, "debugRequests": True, "requestTimeoutMs": 20_000})
        await client.initialized()
        await client.did_open("file:///nowhere/scratch.py", "x = 1\n")  # no such folder: nothing watched
        assert (await client.request("redraft/debugState", {}))["workspaceIndexed"] is False
        await client.did_open(document.as_uri(), typed)
        await workspace_indexed(client, 10.0)
        assert (await client.request("redraft/debugState", {}))["workspaceIndexed"] is True
        result = await client.inline_completion(document.as_uri(), 2, len("logger = logging.getLogger("))
        items = result["items"] if isinstance(result, dict) else result
        assert [item["insertText"] for item in items][:1] == ["'demo.audit')"]


def never_listed() -> list[Path]:
    raise AssertionError("the open documents were listed")


def test_a_new_project_replaces_the_least_recently_opened_one_preferring_one_without_open_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watched_folders, "MAX_PROJECTS", 2)
    lines = WorkspaceLines()
    watched = WatchedFolders(EditLog(), lines, lambda uri: False)
    projects = [tmp_path / name for name in ("a", "b", "c", "d")]
    documents = [make(project / "setup.py", LOGGER) for project in projects]
    for project in projects:
        make(project / "other.py", LOGGER)
    try:
        watched.opened(documents[0], lambda: [documents[0]])
        watched.opened(documents[1], lambda: [documents[1]])
        assert watched.roots() == projects[:2]
        assert wait_for(watched.ready, 10.0)
        assert lines.related(documents[0]) is not None
        # "a" again: now the most recent; nothing must go, so the open documents aren't listed
        watched.opened(documents[0], never_listed)
        watched.opened(documents[2], lambda: [documents[2]])  # nothing open in "b": it goes
        assert watched.roots() == [projects[0], projects[2]]
        assert wait_for(lambda: lines.related(documents[1]) is None, 10.0)  # its indexes dropped
        # both still open (a harness that never closes a document): the least recently opened goes
        watched.opened(documents[3], lambda: [documents[0], documents[2], documents[3]])
        assert watched.roots() == [projects[2], projects[3]]
    finally:
        watched.stop()


def test_projects_are_kept_within_a_budget_of_snapshot_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    projects = [tmp_path / name for name in ("a", "b", "c")]
    documents = [make(project / "setup.py", LOGGER) for project in projects]
    monkeypatch.setattr(watched_folders, "PROJECTS_MAX_BYTES", 2 * len(LOGGER) - 1)  # under two projects
    watched = WatchedFolders(EditLog(), WorkspaceLines(), lambda uri: False)
    try:
        watched.opened(documents[0], never_listed)
        assert wait_for(watched.ready, 10.0)
        watched.opened(documents[1], never_listed)  # under the budget: "a" stays
        assert wait_for(watched.ready, 10.0)
        assert watched.roots() == projects[:2]
        watched.opened(documents[2], lambda: [documents[2]])  # over it: the least recently opened goes
        assert watched.roots() == projects[1:]
    finally:
        watched.stop()


def test_named_workspace_folders_are_the_only_ones_watched(tmp_path: Path) -> None:
    watched = WatchedFolders(EditLog(), WorkspaceLines(), lambda uri: False)
    elsewhere = make(tmp_path / "elsewhere/pyproject.toml")
    try:
        watched.name([tmp_path / "named"])
        watched.opened(elsewhere.parent / "mod.py", lambda: [])
        assert watched.roots() == [tmp_path / "named"]
    finally:
        watched.stop()


def test_redraft_complete_uses_the_file_s_project_unless_told_not_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lsp_server.cli import main

    project = tmp_path / "project"
    make(project / "setup.cfg")
    for name in ("one", "two", "three"):
        make(project / f"{name}.py", LOGGER)
    document = make(project / "main.py", "import logging\n\nlogger = logging.getLogger(\n")
    assert main(["complete", f"{document}:3:28"]) == 0
    out = capsys.readouterr().out
    assert f"workspace  │ {project} (the file's project)" in out and "'demo.audit')" in out
    assert main(["complete", f"{document}:3:28", "--no-workspace"]) == 0
    out = capsys.readouterr().out
    assert "workspace  │" not in out and "'demo.audit')" not in out


@pytest.mark.asyncio
async def test_workspace_folders_added_and_removed_by_the_editor_are_watched_from_then_on(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    make(first / "a.py", "x = 1\n")
    for name in ("one", "two", "three"):
        make(second / f"{name}.py", LOGGER)
    document = make(second / "main.py", "import logging\n")
    typed = "import logging\n\nlogger = logging.getLogger("
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"confidenceThreshold": 0.3, "debugRequests": True, "requestTimeoutMs": 20_000},
                                workspace_folders=[first])
        await client.initialized()
        await client.notify("workspace/didChangeWorkspaceFolders", {"event": {
            "added": [{"uri": second.as_uri(), "name": "second"}],
            "removed": [{"uri": first.as_uri(), "name": "first"}]}})
        await workspace_indexed(client, 10.0)
        assert (await client.request("redraft/debugState", {}))["watchedFolders"] == [str(second)]
        await client.did_open(document.as_uri(), typed)
        result = await client.inline_completion(document.as_uri(), 2, len("logger = logging.getLogger("))
        items = result["items"] if isinstance(result, dict) else result
        assert [item["insertText"] for item in items][:1] == ["'demo.audit')"]
