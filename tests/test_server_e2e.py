"""The real server, started as a subprocess with the shipped model, driven over LSP."""

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import ClientServerConfig, LanguageClient

from benchmarks.case_dialect import rewritten_text

SERVER = [sys.executable, "-m", "lsp_server", "serve"]
pytestmark = pytest.mark.asyncio(loop_scope="module")


def initialize_params(threshold: float, encodings: list[str] | None = None) -> types.InitializeParams:
    general = types.GeneralClientCapabilities(position_encodings=encodings) if encodings else None
    return types.InitializeParams(
        capabilities=types.ClientCapabilities(general=general),
        # A generous deadline: a busy machine must not turn answers into nulls.
        initialization_options={"confidenceThreshold": threshold, "requestTimeoutMs": 20000},
    )


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(initialize_params(0.0))
    yield
    await lsp_client.shutdown_session()


_opened = 0


def open_document(client: LanguageClient, text: str) -> str:
    global _opened
    _opened += 1
    uri = f"file:///tmp/redraft-test-{_opened}.py"
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri


async def complete(
    client: LanguageClient, uri: str, line: int, character: int,
    trigger: types.InlineCompletionTriggerKind = types.InlineCompletionTriggerKind.Automatic,
) -> types.InlineCompletionList | list[types.InlineCompletionItem] | None:
    params = types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri), position=types.Position(line, character),
        context=types.InlineCompletionContext(trigger_kind=trigger))
    return await asyncio.wait_for(client.text_document_inline_completion_async(params), 60)


def items_of(result: object) -> list[types.InlineCompletionItem]:
    if result is None:
        return []
    return list(result.items if isinstance(result, types.InlineCompletionList) else result)  # type: ignore[attr-defined]


def insert_text(item: types.InlineCompletionItem) -> str:
    text = item.insert_text
    return text if isinstance(text, str) else text.value


# "Obvious completions" for a small model: the colon that opens a block.
WHILE_LOOP = "def loop():\n    while True\n        pass\n"


async def test_automatic_request_answers_one_item_at_the_cursor(client: LanguageClient) -> None:
    uri = open_document(client, WHILE_LOOP)
    items = items_of(await complete(client, uri, 1, 14))
    assert len(items) == 1
    assert items[0].range == types.Range(types.Position(1, 14), types.Position(1, 14))
    assert insert_text(items[0]) == ":"


async def test_invoked_request_answers_up_to_three_distinct_items(client: LanguageClient) -> None:
    uri = open_document(client, WHILE_LOOP)
    items = items_of(await complete(client, uri, 1, 14, types.InlineCompletionTriggerKind.Invoked))
    texts = [insert_text(i) for i in items]
    assert 1 <= len(texts) <= 3 and ":" in texts
    assert len(set(texts)) == len(texts)


async def test_incremental_changes_are_applied_before_completing(client: LanguageClient) -> None:
    uri = open_document(client, "def check(value):\n    if value\n        return False\n    return True\n")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(1, 12), types.Position(1, 12)), text=" is None")]))
    items = items_of(await complete(client, uri, 1, 20))
    assert [insert_text(i) for i in items] == [":"]


async def test_a_cancelled_request_does_not_stop_the_next_one(client: LanguageClient) -> None:
    # Not WHILE_LOOP: an earlier test's answer for it would come from the suggestion cache
    # before the cancellation arrives.
    uri = open_document(client, "def wait():\n    while True\n        data = read()\n")
    params = types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri), position=types.Position(1, 14),
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked))
    pending = client.protocol.send_request(types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id="cancel-me")
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="cancel-me"))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(asyncio.wrap_future(pending), 60)
    items = items_of(await complete(client, uri, 1, 14))
    assert [insert_text(i) for i in items] == [":"]


async def test_a_newer_request_supersedes_the_older_one(client: LanguageClient) -> None:
    uri = open_document(client, WHILE_LOOP)
    first = asyncio.ensure_future(complete(client, uri, 1, 14, types.InlineCompletionTriggerKind.Invoked))
    second = asyncio.ensure_future(complete(client, uri, 1, 14))
    results = await asyncio.gather(first, second)
    assert items_of(results[1]), "the newest request is answered"


async def test_raising_the_threshold_hides_suggestions(client: LanguageClient) -> None:
    uri = open_document(client, "def check(value):\n    if value is None\n        return False\n")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"redraft": {"confidenceThreshold": 1.0}}))
    try:
        assert await complete(client, uri, 1, 20) is None
    finally:
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"confidenceThreshold": 0.0}))
    assert [insert_text(i) for i in items_of(await complete(client, uri, 1, 20))] == [":"]


async def test_with_the_suggest_widget_open_the_answer_extends_its_selected_item(client: LanguageClient) -> None:
    # The widget's item "True" over the typed "Tru": answered as if it were accepted, so as
    # the document with "True" typed is, behind the item's text and over its range.
    typed = open_document(client, "def wait():\n    while True\n        data = read()\n")
    plain = items_of(await complete(client, typed, 1, 14))
    assert plain, "the document with the item typed has an answer"
    uri = open_document(client, "def wait():\n    while Tru\n        data = read()\n")
    word = types.Range(types.Position(1, 10), types.Position(1, 13))
    params = types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri), position=types.Position(1, 13),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Automatic,
            selected_completion_info=types.SelectedCompletionInfo(range=word, text="True")))
    items = items_of(await asyncio.wait_for(client.text_document_inline_completion_async(params), 60))
    assert len(items) == 1 and items[0].range == word
    assert insert_text(items[0]) == "True" + insert_text(plain[0])


DIALECT_DOCS = [("import sys\n\n\ndef main(argv):\n    if len(argv) < 2:\n", "    return 0\n"),
                ("import os\n\n\ndef walk(root):\n    for name in os.listdir(root):\n", "        print(name)\n")]


async def answers_at_line_starts(client: LanguageClient, dialect: str) -> list[str]:
    answers = []
    for prefix, suffix in DIALECT_DOCS:
        uri = open_document(client, rewritten_text(prefix + suffix, dialect))
        invoked = types.InlineCompletionTriggerKind.Invoked
        answers += [insert_text(i) for i in items_of(await complete(client, uri, prefix.count("\n"), 0, invoked))]
    return answers


@pytest.mark.parametrize(("dialect", "line_break", "indent"),
                         [("crlf", "\r\n", "    "), ("tabs", "\n", "\t"), ("crlf-tabs", "\r\n", "\t")])
async def test_a_document_with_crlf_or_tabs_gets_its_twin_s_answers_in_its_own_breaks_and_indents(
    client: LanguageClient, dialect: str, line_break: str, indent: str
) -> None:
    # The model reads \n and four spaces: with \r\n in its context it wrote `    else:` for
    # `        sys.exit(1)`, with tabs a line indented by 32 spaces; and its answers broke
    # lines with \n and indented with spaces.
    twin = await answers_at_line_starts(client, "lf")
    answers = await answers_at_line_starts(client, dialect)
    assert answers == [rewritten_text(text, dialect) for text in twin]
    assert any(line_break in text and text.startswith(indent) for text in answers)  # whole indented lines


async def test_unknown_document_gets_null(client: LanguageClient) -> None:
    assert await complete(client, "file:///never/opened.py", 0, 0) is None


async def test_javascript_and_typescript_documents_get_ghost_text(client: LanguageClient) -> None:
    for uri, language_id in (("file:///tmp/redraft-area.js", "javascript"), ("file:///tmp/redraft-area.ts",
                                                                              "typescript")):
        text = "function area(r) {\n  return \n}\n"
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)))
        items = items_of(await complete(client, uri, 1, 9))
        assert items and items[0].insert_text, language_id


async def test_a_language_that_is_not_served_gets_no_suggestions_and_no_error(client: LanguageClient) -> None:
    # A Go file the editor names as such, and a .py file the user set to plain text.
    for uri, language_id in (("file:///tmp/redraft-main.go", "go"), ("file:///tmp/redraft-notes.py", "plaintext")):
        text = "func main() {\n    fmt.\n}\n"
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)))
        for _ in range(3):
            assert await complete(client, uri, 1, 8) is None
        assert await client.protocol.send_request_async("redraft/nextEdit", {
            "textDocument": {"uri": uri}, "position": {"line": 1, "character": 8}}) is None
    assert not client.error
