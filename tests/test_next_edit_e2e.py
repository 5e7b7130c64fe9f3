"""redraft/nextEdit and the edit log, through the real server over LSP."""

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from benchmarks.lsp_client import LspClient, LspError
from lsp_server.options import ServerOptions

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
pytestmark = pytest.mark.asyncio

DOC = "def total(items, count):\n    s = 'é😀'\n    return sum(items) / count\n\n\nprint(total([1, 2], 2))\n"


async def started(client: LspClient, root: Path | None = None, **options: Any) -> None:
    params = {"confidenceThreshold": 0.0, "nextEditConfidenceThreshold": 0.0, "debugRequests": True, **options}
    if root is None:
        await client.initialize(params)
    else:
        result = await client.request("initialize", {
            "processId": None, "rootUri": root.as_uri(), "capabilities": {}, "initializationOptions": params})
        assert result["capabilities"]
    await client.initialized()


@asynccontextmanager
async def served(uri: str, doc: str) -> AsyncIterator[LspClient]:
    """A server at the next-edit threshold it serves by default, with ``doc`` open at ``uri``."""
    async with LspClient(SERVER, timeout=60) as client:
        await started(client, nextEditConfidenceThreshold=ServerOptions().next_edit_confidence_threshold)
        await client.did_open(uri, doc)
        yield client


async def paced(client: LspClient, uri: str, version: int, changes: list[dict[str, Any]]) -> int:
    """Send each change as a person makes steps: a pause longer than the edit log's merge
    window before each (within it, a change and the next merge into one event). The
    document's version after the last is returned."""
    for change in changes:
        await asyncio.sleep(1.1)
        version += 1
        await client.did_change(uri, version, [change])
    return version


async def text_of(client: LspClient, uri: str) -> str:
    """The document's text as the server holds it (``redraft/debugState``)."""
    state = await client.request("redraft/debugState")
    return str(state["documents"][uri]["text"])


def deleted_line(line: int) -> dict[str, Any]:
    """The change of ``dd`` or Delete Line: the line's whole range, its break included."""
    return {"range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}}, "text": ""}


def edit(line: int, start: int, end: int, text: str) -> dict[str, Any]:
    return {"range": {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}},
            "text": text}


async def test_edits_are_logged_and_proposals_are_well_formed_with_non_ascii_text() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await started(client)
        await client.did_open("file:///w.py", DOC)
        # Rename `count` to `n` in the signature, one keystroke at a time.
        await client.did_change("file:///w.py", 2, [edit(0, 17, 22, "")])
        await client.did_change("file:///w.py", 3, [edit(0, 17, 17, "n")])
        state = await client.request("redraft/debugState")
        assert state["documents"]["file:///w.py"]["text"].startswith("def total(items, n):")
        assert [(e["oldText"], e["newText"]) for e in state["editLog"]] == [
            ("def total(items, count):\n", "def total(items, n):\n")]
        result = await client.request("redraft/nextEdit", {"textDocument": {"uri": "file:///w.py"},
                                                           "position": {"line": 0, "character": 18}})
        text = state["documents"]["file:///w.py"]["text"]
        lines = text.split("\n")
        for item in (result or {"items": []})["items"]:
            assert item["textDocument"] == {"uri": "file:///w.py", "version": 3}
            assert 0.0 <= item["confidence"] <= 1.0 and item["id"]
            start, end = item["edit"]["range"]["start"], item["edit"]["range"]["end"]
            assert (start["line"], start["character"]) <= (end["line"], end["character"])
            assert start["line"] < len(lines) and end["line"] < len(lines)


async def test_nothing_below_the_next_edit_threshold_is_shown() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await started(client, nextEditConfidenceThreshold=1.0)
        await client.did_open("file:///q.py", DOC)
        await client.did_change("file:///q.py", 2, [edit(0, 4, 9, "sum_of")])
        assert await client.request("redraft/nextEdit", {"textDocument": {"uri": "file:///q.py"},
                                                         "position": {"line": 0, "character": 10}}) is None


async def test_bad_next_edit_params_get_invalid_params() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await started(client)
        with pytest.raises(LspError) as raised:
            await client.request("redraft/nextEdit", {"textDocument": {"uri": 7}, "position": {"line": -1}})
        assert raised.value.code == -32602


async def test_a_file_changed_on_disk_shows_up_in_the_edit_log(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("alpha = 1\nbeta = 2\n")
    async with LspClient(SERVER, timeout=60) as client:
        await started(client, root=tmp_path)
        events: list[dict[str, Any]] = []
        # The watcher snapshots the folder in the background: keep changing the file until
        # a change lands after the snapshot.
        for attempt in range(10):
            source.write_text(f"alpha = 1\nbeta = {attempt + 3}\n")
            for _ in range(30):  # the watcher debounces bursts of writes
                await asyncio.sleep(0.1)
                events = (await client.request("redraft/debugState"))["editLog"]
                if events:
                    break
            if events:
                break
        first = events[0]
        assert first["source"] == "disk" and first["uri"] == source.as_uri()
        assert first["oldText"].startswith("beta = ") and first["newText"].startswith("beta = ")
        assert first["oldText"] != first["newText"]


async def test_the_debug_request_is_off_by_default() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({})
        await client.initialized()
        with pytest.raises(LspError) as raised:
            await client.request("redraft/debugState")
        assert raised.value.code == -32601


RENAME_DOC = (
    "def area(width, height):\n"
    "    # café ☕: the size of the box\n"
    "    half = width / 2\n"
    "    return half * height\n"
    "\n"
    "\n"
    "width = 3\n"
)


async def next_edit(client: LspClient, uri: str, line: int, character: int) -> Any:
    return await client.request("redraft/nextEdit", {"textDocument": {"uri": uri},
                                                     "position": {"line": line, "character": character}})


def applied(text: str, item: dict[str, Any]) -> str:
    """The document after an item's edit (UTF-16 positions, as negotiated by default)."""
    lines = text.split("\n")

    def offset(position: dict[str, int]) -> int:
        before = sum(len(line) + 1 for line in lines[: position["line"]])
        units = lines[position["line"]].encode("utf-16-le")[: 2 * position["character"]]
        return before + len(units.decode("utf-16-le"))

    edit = item["edit"]
    return text[: offset(edit["range"]["start"])] + edit["newText"] + text[offset(edit["range"]["end"]) :]


def as_change(item: dict[str, Any]) -> dict[str, Any]:
    """The didChange content change a client sends when it applies an item."""
    return {"range": item["edit"]["range"], "text": item["edit"]["newText"]}


async def test_a_renamed_parameter_is_offered_at_its_uses_with_default_options() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"requestTimeoutMs": 20_000})
        await client.initialized()
        uri = "file:///rename.py"
        await client.did_open(uri, RENAME_DOC)
        # `width` → `w` in the signature: delete the word, then type the new name.
        await client.did_change(uri, 2, [edit(0, 9, 14, "")])
        await client.did_change(uri, 3, [edit(0, 9, 9, "w")])
        text = RENAME_DOC.replace("(width,", "(w,")
        result = await next_edit(client, uri, 0, 10)
        assert result is not None and result["items"], "no next edit after a rename"
        first = result["items"][0]
        assert first["textDocument"] == {"uri": uri, "version": 3}
        assert 0.0 < first["confidence"] <= 1.0
        assert [i["confidence"] for i in result["items"]] == sorted((i["confidence"] for i in result["items"]),
                                                                    reverse=True)
        text = applied(text, first)
        assert text == RENAME_DOC.replace("(width,", "(w,").replace("half = width", "half = w")
        # Accept it: the function has no other use, and the module-level `width` is out of
        # scope, so the server stays quiet.
        await client.did_change(uri, 4, [as_change(first)])
        assert await next_edit(client, uri, 2, 12) is None


async def test_an_added_argument_is_offered_at_the_next_call_and_a_deleted_line_at_its_twin() -> None:
    doc = "a = fetch(url)\nc = fetch(other)\nb = 1\nprint('checking the value')\nd = 2\nprint('checking the value')\n"
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"requestTimeoutMs": 20_000, "debugRequests": True})
        await client.initialized()
        uri = "file:///calls.py"
        await client.did_open(uri, doc)
        await client.did_change(uri, 2, [edit(0, 13, 13, ", timeout=5")])
        text = doc.replace("fetch(url)", "fetch(url, timeout=5)")
        result = await next_edit(client, uri, 0, 24)
        assert result is not None
        text = applied(text, result["items"][0])
        assert "c = fetch(other, timeout=5)\n" in text
        await client.did_change(uri, 3, [as_change(result["items"][0])])
        # Delete the first print line (not touching the accepted edit, which would merge into
        # one event with it): its twin below is offered for deletion.
        await client.did_change(uri, 4, [{"range": {"start": {"line": 3, "character": 0},
                                                    "end": {"line": 4, "character": 0}}, "text": ""}])
        text = text.replace("print('checking the value')\n", "", 1)
        assert await text_of(client, uri) == text
        result = await next_edit(client, uri, 3, 0)
        assert result is not None
        assert applied(text, result["items"][0]) == text.replace("print('checking the value')\n", "")


async def test_a_deleted_indented_line_offers_its_twin_as_a_line_deleted_in_an_editor_does() -> None:
    # Neovim's `dd` and VS Code's "Delete Line" send the line's whole range. The line after it
    # has the same indentation, which the log's diff used to read as part of the change: a
    # two-line hunk, whose twin no pattern found.
    doc = "def f(a, b):\n    log.debug('start')\n    x = a + b\n    log.debug('start')\n    return x\n"
    uri = "file:///twin.py"
    async with served(uri, doc) as client:
        await client.did_change(uri, 2, [deleted_line(1)])
        state = await client.request("redraft/debugState")
        (event,) = [e for e in state["editLog"] if e["uri"] == uri]
        assert (event["startLine"], event["oldText"], event["newText"]) == (1, "    log.debug('start')\n", "")
        text = doc.replace("    log.debug('start')\n", "", 1)
        result = await next_edit(client, uri, 1, 0)
        assert result is not None  # at the served threshold
        assert applied(text, result["items"][0]) == "def f(a, b):\n    x = a + b\n    return x\n"


async def test_after_an_undo_the_server_does_not_repeat_what_was_undone() -> None:
    # dd, `u`, a redo, the twin accepted, `u`: each more than the log's merge window after
    # the last (within it, a change and its undo already leave nothing).
    line = "    log.debug('start')\n"
    doc = f"def f(a, b):\n{line}    x = a + b\n{line}    return x\n"
    uri = "file:///undo.py"
    async with served(uri, doc) as client:

        async def change(version: int, change: dict[str, Any]) -> Any:
            await paced(client, uri, version - 1, [change])
            return await next_edit(client, uri, 1, 0)

        def restore(line_number: int) -> dict[str, Any]:
            at = {"line": line_number, "character": 0}
            return {"range": {"start": at, "end": at}, "text": line}

        proposed = await change(2, deleted_line(1))  # dd
        assert proposed is not None
        twin = proposed["items"][0]
        assert applied(doc.replace(line, "", 1), twin) == doc.replace(line, "")
        # Undo it: the twin of the line just restored is not offered.
        assert await change(3, restore(1)) is None
        # Redo: the deletion is a change again, and its twin is offered again.
        again = await change(4, deleted_line(1))
        assert again is not None and again["items"][0]["edit"] == twin["edit"]
        assert await change(5, as_change(twin)) is None  # accepted: nothing left to do
        # Undo the accepted twin: not offered again.
        assert await change(6, restore(2)) is None
        assert await text_of(client, uri) == doc.replace(line, "", 1)


async def test_undoing_an_accepted_edit_and_one_after_it_leaves_the_users_own_edit_alone() -> None:
    # An argument added by hand, the same added at the next call by accepting the proposal,
    # another edit, then `u` twice: the server used to propose removing the argument from
    # the user's own edit, the one change still standing.
    doc = "a = fetch(url)\nc = fetch(other)\nb = 1\nprint(a, b, c)\n"
    uri = "file:///undo_twice.py"
    async with served(uri, doc) as client:
        await paced(client, uri, 1, [edit(0, 13, 13, ", timeout=5"), edit(1, 15, 15, ", timeout=5"),
                                     edit(2, 4, 5, "2"), edit(2, 4, 5, "1"), edit(1, 15, 26, "")])
        assert await text_of(client, uri) == doc.replace("fetch(url)", "fetch(url, timeout=5)")
        assert await next_edit(client, uri, 1, 15) is None


async def test_a_line_copied_and_changed_does_not_make_the_original_a_copy() -> None:
    # Copy a line (Neovim's yyp, VS Code's Copy Line Down), then change the copy, each step
    # a second apart: nothing to repeat. The server used to propose rewriting the original
    # line, and its twin in another function, into the copy.
    line = '    width = config.get("width", 80)\n'
    doc = f"def setup(config):\n{line}    return width\n\n\ndef other(config):\n{line}    return width\n"
    uri = "file:///copy.py"
    async with served(uri, doc) as client:
        await client.did_change(uri, 2, [edit(2, 0, 0, line)])
        await paced(client, uri, 2, [edit(2, 4, 9, "height"), edit(2, 25, 30, "height"), edit(2, 34, 36, "24")])
        copy = '    height = config.get("height", 24)\n'
        assert await text_of(client, uri) == doc.replace(line, line + copy, 1)
        assert await next_edit(client, uri, 2, 37) is None


async def test_a_line_moved_with_ddp_does_not_offer_deleting_its_twin() -> None:
    line = "    log.debug('start')\n"
    doc = f"def f(a, b):\n{line}    x = a + b\n    y = x * 2\n    z = y - 1\n{line}    return z\n"
    uri = "file:///move.py"
    async with served(uri, doc) as client:
        await client.did_change(uri, 2, [deleted_line(1)])
        assert await next_edit(client, uri, 1, 0) is not None  # deleted: its twin is offered
        await client.did_change(uri, 3, [edit(2, 0, 0, line)])  # p: put back below `x = a + b`
        assert await text_of(client, uri) == doc.replace(line + "    x = a + b\n", "    x = a + b\n" + line)
        assert await next_edit(client, uri, 2, 0) is None


async def test_a_half_typed_line_is_not_carried_to_its_twin_until_it_is_finished() -> None:
    # VS Code asks after each pause in typing; a half-typed line used to be proposed at its twin.
    twin = "    f: Future = Future()\n"
    doc = f"def a(self):\n{twin}    return f\n\n\ndef b(self):\n{twin}    return f\n"
    uri = "file:///typing.py"
    async with served(uri, doc) as client:
        await client.did_change(uri, 2, [edit(1, 5, 24, " = self._loop.")])  # `f: …` → `f = self._loop.`
        assert await next_edit(client, uri, 1, 19) is None
        await client.did_change(uri, 3, [edit(1, 19, 19, "create_future()")])
        result = await next_edit(client, uri, 1, 34)
        assert result is not None
        finished = doc.replace(twin, "    f = self._loop.create_future()\n", 1)
        assert applied(finished, result["items"][0]) == doc.replace(twin, "    f = self._loop.create_future()\n")


async def test_a_line_only_dedented_offers_no_edit_that_changes_nothing() -> None:
    doc = "def f(a):\n    if a:\n        return None\n\n\ndef g(a):\n    if a:\n        return None\n"
    uri = "file:///dedent.py"
    async with served(uri, doc) as client:
        await client.did_change(uri, 2, [edit(2, 0, 4, "")])
        assert await next_edit(client, uri, 2, 0) is None


async def test_without_recent_edits_the_server_stays_quiet_by_default() -> None:
    async with LspClient(SERVER, timeout=60) as client:
        await client.initialize({"requestTimeoutMs": 20_000})
        await client.initialized()
        await client.did_open("file:///quiet.py", RENAME_DOC)
        assert await next_edit(client, "file:///quiet.py", 2, 4) is None


TESTS_DOC = ("import os\n\n\ndef test_a():\n    assert os\n\n\ndef test_b():\n    assert os\n\n\n"
             "def test_c():\n    assert os\n")


def hunk(doc: str, first: int, last: int, lines: list[str]) -> dict[str, Any]:
    """Lines ``first``..``last`` of ``doc`` replaced whole by ``lines``, as one change."""
    assert len(doc.splitlines()) > last
    return {"range": {"start": {"line": first, "character": 0}, "end": {"line": last + 1, "character": 0}},
            "text": "".join(f"{line}\n" for line in lines)}


async def test_a_change_sent_as_a_git_hunk_gets_the_next_hunk_whole() -> None:
    doc = TESTS_DOC.splitlines()
    annotated = [line.replace("():", "() -> None:") for line in doc]
    # With git's three context lines on each side, as a tool replaying `git diff` sends it:
    # the next hunk joins the two tests below (3 unchanged lines apart), so the next edit does.
    async with served("file:///test_git.py", TESTS_DOC) as client:
        await client.did_change("file:///test_git.py", 2, [hunk(TESTS_DOC, 0, 6, [*doc[:3], annotated[3], *doc[4:7]])])
        text = await text_of(client, "file:///test_git.py")
        result = await next_edit(client, "file:///test_git.py", 6, 0)
        assert result is not None and result["items"]
        assert applied(text, result["items"][0]) == TESTS_DOC.replace("():", "() -> None:")
    # The changed line alone, as an editor sends it: the next test only.
    async with served("file:///test_line.py", TESTS_DOC) as client:
        await client.did_change("file:///test_line.py", 2, [hunk(TESTS_DOC, 3, 3, [annotated[3]])])
        text = await text_of(client, "file:///test_line.py")
        result = await next_edit(client, "file:///test_line.py", 3, 0)
        assert result is not None and result["items"]
        assert applied(text, result["items"][0]) == TESTS_DOC.replace("():", "() -> None:", 2)


async def test_hunks_sent_in_one_notification_are_changes_of_their_own() -> None:
    # A tool applying a commit's diff may send its hunks as the changes of one notification:
    # an import added, then a test annotated. The newest change is the annotation, as if
    # each hunk had come alone, so the next test is offered it.
    uri = "file:///test_batch.py"
    doc = TESTS_DOC.splitlines()
    async with served(uri, TESTS_DOC) as client:
        import_added = hunk(TESTS_DOC, 0, 0, [doc[0], "import sys"])
        # Each change's range is read in the text the changes before it left: one line down.
        annotated = {"range": {"start": {"line": 4, "character": 0}, "end": {"line": 5, "character": 0}},
                     "text": doc[3].replace("():", "() -> None:") + "\n"}
        await client.did_change(uri, 2, [import_added, annotated])
        text = await text_of(client, uri)
        assert text == TESTS_DOC.replace("import os\n", "import os\nimport sys\n").replace("():", "() -> None:", 1)
        state = await client.request("redraft/debugState")
        assert [(e["oldText"], e["newText"]) for e in state["editLog"]] == [
            ("", "import sys\n"), ("def test_a():\n", "def test_a() -> None:\n")]
        result = await next_edit(client, uri, 4, 0)
        assert result is not None and result["items"]
        assert applied(text, result["items"][0]) == text.replace("def test_b():", "def test_b() -> None:")


async def first_item_at_the_served_threshold(doc: str, changes: list[dict[str, Any]], line: int,
                                             character: int) -> tuple[str, dict[str, Any]]:
    """The document after ``changes`` (one notification) and the first next edit offered
    at the cursor, which must be as confident as the server's default threshold asks."""
    uri = "file:///sweep.py"
    async with served(uri, doc) as client:
        await client.did_change(uri, 2, changes)
        text = await text_of(client, uri)
        result = await next_edit(client, uri, line, character)
        assert result is not None and result["items"]
        assert result["items"][0]["confidence"] >= ServerOptions().next_edit_confidence_threshold
        return text, result["items"][0]


async def test_a_sweep_of_python_2_leftovers_is_offered_at_the_next_one_at_the_served_threshold() -> None:
    # `super(Name, self)` → `super()` in one class: offered in the next class's method, as
    # confident as the kind's calibrated bucket (above the default threshold), not in a
    # docstring.
    doc = ("class A(Base):\n    def __init__(self):\n        super(A, self).__init__()\n\n\n"
           'class B(Base):\n    """Calls super(B, self)."""\n\n    def __init__(self, x):\n'
           "        super(B, self).__init__(x)\n")
    text, item = await first_item_at_the_served_threshold(doc, [edit(2, 14, 21, "")], 2, 13)
    assert applied(text, item) == text.replace("super(B, self).__init__(x)", "super().__init__(x)")


async def test_a_def_annotated_offers_the_next_def_the_types_its_code_tells_at_the_served_threshold() -> None:
    # The next test takes another parameter, typed in the fixture: no token run of the
    # change applies to it again, only the types the file tells.
    doc = ("def tester(app: App, code: int = 0) -> Tester:\n    return Tester(app, code)\n\n\n"
           "def test_runs(tester):\n    assert tester.run() == 0\n\n\n"
           "def test_fails(tester, code=1):\n    assert tester.run('x') == code\n")
    changes = [edit(4, 20, 20, ": Tester"), edit(4, 29, 29, " -> None")]
    text, item = await first_item_at_the_served_threshold(doc, changes, 4, 37)
    assert "def test_runs(tester: Tester) -> None:\n" in text
    assert applied(text, item) == text.replace(
        "def test_fails(tester, code=1):", "def test_fails(tester: Tester, code: int = 1) -> None:")


async def accepted_in_turn(client: LspClient, uri: str, steps: list[tuple[tuple[int, int], str]]) -> str:
    """For each step, ask for the next edit at its (line, character) and accept the first
    item at once, as an editor's accept-and-jump does: a ``didChange`` of its own (the
    hand edit being version 2), no feedback sent; the document must then hold the step's
    line. The document after the last step is returned."""
    version, document = 2, ""
    for (line, character), expected in steps:
        result = await next_edit(client, uri, line, character)
        assert result is not None, f"nothing proposed for {expected!r}"
        version += 1
        await client.did_change(uri, version, [as_change(result["items"][0])])
        document = await text_of(client, uri)
        assert expected in document
    return document


async def test_a_run_of_lines_edited_alike_is_carried_line_by_line_as_each_proposal_is_accepted() -> None:
    # The same change on each entry of a literal; each proposal is applied at once, as an
    # editor's accept-and-jump does, without telling the server (no feedback sent): the
    # accepted edit is a change of its own, not merged with the hand edit on the line above.
    uri = "file:///tmp/runs.py"
    doc = 'record = {\n    "name": row[0],\n    "age": row[1],\n    "city": row[12],\n}\n'
    async with served(uri, doc) as client:
        where = {"start": {"line": 1, "character": 12}, "end": {"line": 1, "character": 18}}
        await client.did_change(uri, 2, [{"range": where, "text": "str(row[0])"}])
        document = await accepted_in_turn(client, uri, [((1, 23), '    "age": str(row[1]),\n'),
                                                        ((1, 23), '    "city": str(row[12]),\n')])
        assert document == doc.replace("row[0]", "str(row[0])").replace("row[1]", "str(row[1])").replace(
            "row[12]", "str(row[12])")


async def test_an_accepted_proposal_is_a_change_of_its_own_even_within_the_merge_window() -> None:
    # Calls of unlike lines: merged with the hand edit above it, the accepted edit would be
    # a two-line change that no pattern reads, and the third call would be left out.
    uri = "file:///tmp/calls.py"
    doc = "a = fetch(x)\nb = [fetch(y)]\nc = {fetch(z)}\n"
    async with served(uri, doc) as client:
        where = {"start": {"line": 0, "character": 11}, "end": {"line": 0, "character": 11}}
        await client.did_change(uri, 2, [{"range": where, "text": ", retries=3"}])
        await accepted_in_turn(client, uri, [((0, 0), "b = [fetch(y, retries=3)]\n"),
                                             ((1, 0), "c = {fetch(z, retries=3)}\n")])
