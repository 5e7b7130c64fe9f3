import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from watchdog.events import FileSystemEvent

from lsp_server.edit_log import EditEvent, EditLog
from lsp_server.file_watcher import WorkspaceWatcher

DEBOUNCE = 0.05


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.log = EditLog(merge_window_s=0.0)
        self.open_uris: set[str] = set()
        self.watcher: WorkspaceWatcher | None = None

    def write(self, rel: str, data: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_bytes(data.encode("utf-8"))
        return path

    def start(self, max_file_bytes: int = 1_000_000, debounce_s: float = DEBOUNCE) -> WorkspaceWatcher:
        self.watcher = WorkspaceWatcher(
            [self.root],
            self.log,
            lambda uri: uri in self.open_uris,
            max_file_bytes=max_file_bytes,
            debounce_s=debounce_s,
        )
        self.watcher.start()
        assert self.watcher.wait_ready(5.0)
        return self.watcher

    def events(self) -> list[EditEvent]:
        return self.log.events()

    def event_for(self, path: Path) -> EditEvent:
        """Wait for the first logged event about ``path``."""
        assert wait_for(lambda: bool(self.log.events_for(path.as_uri()))), f"no event for {path}"
        return self.log.events_for(path.as_uri())[0]


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = Workspace(tmp_path)
    yield workspace
    if workspace.watcher is not None:
        workspace.watcher.stop()


def test_a_file_modified_on_disk_is_logged_as_a_diff(ws: Workspace) -> None:
    path = ws.write("pkg/mod.py", "def f(a):\n    return a\n\nx = f(1)\n")
    ws.start()
    ws.write("pkg/mod.py", "def f(a, b):\n    return a\n\nx = f(1)\n")
    event = ws.event_for(path)
    assert (event.start_line, event.old_text, event.new_text) == (0, "def f(a):\n", "def f(a, b):\n")
    assert event.source == "disk"
    assert event.uri == path.as_uri()


def test_created_and_deleted_files_are_logged(ws: Workspace) -> None:
    doomed = ws.write("old.py", "gone = True\n")
    ws.start()
    created = ws.write("new.py", "fresh = 1\n")
    assert (ws.event_for(created).old_text, ws.event_for(created).new_text) == ("", "fresh = 1\n")
    doomed.unlink()
    assert (ws.event_for(doomed).old_text, ws.event_for(doomed).new_text) == ("gone = True\n", "")


def test_a_burst_of_writes_gives_one_event(ws: Workspace) -> None:
    path = ws.write("fmt.py", "x=1\n")
    ws.start(debounce_s=0.3)  # roomy, so a loaded machine can't split the burst
    for text in ["", "x =", "x = 1", "x = 1\n", "x = 1\n"]:  # a formatter truncating and rewriting
        ws.write("fmt.py", text)
    event = ws.event_for(path)
    sentinel = ws.write("sentinel.py", "done\n")
    ws.event_for(sentinel)
    assert [(e.old_text, e.new_text) for e in ws.log.events_for(path.as_uri())] == [("x=1\n", "x = 1\n")]
    assert event.new_text == "x = 1\n"


def test_ignored_folders_gitignored_and_binary_files_are_not_logged(ws: Workspace) -> None:
    ws.write(".gitignore", "generated/\n*.log\n")
    skipped = [
        ".git/config",
        "node_modules/lib/index.js",
        "myenv/lib/site.py",
        "build/out.py",
        "pkg.egg-info/PKG-INFO",
        "generated/api.py",
        "run.log",
        "blob.bin",
        "latin1.txt",
    ]
    ws.write("myenv/pyvenv.cfg", "home = /usr/bin\n")
    for rel in skipped:
        ws.write(rel, "before\n")
    ws.start()
    for rel in skipped:
        ws.write(rel, "after\n")
    ws.write("blob.bin", b"\x00\x01binary\n")
    ws.write("latin1.txt", "caf\xe9\n".encode("latin-1"))
    ws.write("late.log", "new log\n")
    # Written last: once it shows up, everything before it has been handled.
    sentinel = ws.write("sentinel.py", "done\n")
    ws.event_for(sentinel)
    assert [e.uri for e in ws.events()] == [sentinel.as_uri()]


def test_a_file_open_in_the_editor_is_not_logged_but_its_snapshot_is_refreshed(ws: Workspace) -> None:
    path = ws.write("open.py", "v = 1\n")
    ws.open_uris.add(path.as_uri())
    ws.start()
    ws.write("open.py", "v = 2\n")
    sentinel = ws.write("sentinel.py", "one\n")
    ws.event_for(sentinel)
    assert ws.log.events_for(path.as_uri()) == []
    ws.open_uris.clear()
    ws.write("open.py", "v = 3\n")
    event = ws.event_for(path)
    assert (event.old_text, event.new_text) == ("v = 2\n", "v = 3\n")


def test_a_change_to_a_file_without_a_snapshot_only_takes_one(ws: Workspace) -> None:
    path = ws.write("big.py", "x = 1\n" * 100)
    ws.start(max_file_bytes=300)
    ws.write("big.py", "small = 1\n")  # now under the limit: snapshot, no event
    sentinel = ws.write("sentinel.py", "one\n")
    ws.event_for(sentinel)
    assert ws.log.events_for(path.as_uri()) == []
    ws.write("big.py", "small = 2\n")
    event = ws.event_for(path)
    assert (event.old_text, event.new_text) == ("small = 1\n", "small = 2\n")


def test_stop_returns_promptly_and_twice_is_fine(ws: Workspace) -> None:
    watcher = ws.start()
    ws.write("busy.py", "x\n")
    began = time.monotonic()
    watcher.stop()
    watcher.stop()
    assert time.monotonic() - began < 1.0


def test_a_missing_folder_logs_a_warning_and_does_not_raise(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    watcher = WorkspaceWatcher([tmp_path / "nope"], EditLog(), lambda uri: False, debounce_s=DEBOUNCE)
    with caplog.at_level(logging.WARNING, logger="lsp_server.file_watcher"):
        watcher.start()
        assert watcher.wait_ready(5.0)
    watcher.stop()
    assert "does not exist" in caplog.text


# watchdog's inotify backend warns (harmlessly) when it races itself adding nested new directories.
@pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")
def test_files_in_a_new_directory_are_logged_as_created(ws: Workspace) -> None:
    ws.start()
    first = ws.write("newpkg/sub/a.py", "a = 1\n")
    second = ws.write("newpkg/b.py", "b = 2\n")
    assert ws.event_for(first).new_text == "a = 1\n"
    assert ws.event_for(second).new_text == "b = 2\n"
    assert len(ws.log.events_for(first.as_uri())) == 1


def test_an_atomic_save_by_rename_is_one_diff_and_the_temp_file_is_not_logged(ws: Workspace) -> None:
    path = ws.write("saved.py", "a = 1\n")
    ws.start(debounce_s=0.3)  # the rename must land inside the debounce, even on a loaded machine
    temp = ws.write(".saved.py.tmp", "a = 2\n")
    temp.replace(path)
    event = ws.event_for(path)
    assert (event.old_text, event.new_text) == ("a = 1\n", "a = 2\n")
    assert [e.uri for e in ws.events()] == [path.as_uri()]


def test_the_number_of_files_watched_is_capped(tmp_path: Path) -> None:
    for index in range(12):
        (tmp_path / f"m{index}.py").write_text(f"x = {index}\n")
    log = EditLog(merge_window_s=0.0)
    watcher = WorkspaceWatcher([tmp_path], log, lambda uri: False, max_files=5, debounce_s=DEBOUNCE)
    watcher.start()
    try:
        assert watcher.wait_ready(5.0)
        assert len(watcher._snapshots) == 5
    finally:
        watcher.stop()


def test_the_characters_held_in_snapshots_are_capped(tmp_path: Path) -> None:
    for index in range(12):
        (tmp_path / f"m{index}.py").write_text(f"x = {index:03d}\n" * 10 + "#" * 19 + "\n")  # 100 characters
    log = EditLog(merge_window_s=0.0)
    watcher = WorkspaceWatcher([tmp_path], log, lambda uri: False, max_total_bytes=350, debounce_s=DEBOUNCE)
    watcher.start()
    try:
        assert watcher.wait_ready(5.0)
        assert len(watcher._snapshots) == 3
        assert sum(len(text) for text in watcher._snapshots.values()) <= 350
    finally:
        watcher.stop()


def test_reading_the_workspace_raises_no_events(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opens and read-only closes never reach us: in a big tree they overflowed inotify's
    queue, and watchdog's recovery walk overflowed it again, keeping a core busy."""
    from lsp_server.disk_events import DiskEventHandler

    seen: list[str] = []
    original = DiskEventHandler.on_any_event

    def counted(self: DiskEventHandler, event: FileSystemEvent) -> None:
        seen.append(event.event_type)
        original(self, event)

    monkeypatch.setattr(DiskEventHandler, "on_any_event", counted)
    paths = [ws.write(f"pkg/m{n}.py", f"x = {n}\n") for n in range(20)]
    ws.start()
    for path in paths:
        path.read_text()
    changed = ws.write("pkg/m0.py", "x = 100\n")  # a real change: events do flow
    ws.event_for(changed)
    assert "opened" not in seen and "closed_no_write" not in seen
