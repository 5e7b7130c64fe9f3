"""The language server: every feature registration, each a thin handler."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcMethodNotFound
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from lsp_server.completion import CompletionService
from lsp_server.documents import Document, DocumentStore, position_at
from lsp_server.edit_log import EditLog
from lsp_server.engine import Engine
from lsp_server.faults import FaultPlan
from lsp_server.feedback_thresholds import raised_thresholds
from lsp_server.next_edit import NextEditService, parse_params
from lsp_server.options import ServerOptions, parse_options
from lsp_server.protocol import ACCEPTED_COMMAND, CURSOR, DEBUG_STATE, FEEDBACK, NEXT_EDIT, RedraftProtocol
from lsp_server.scheduling import RequestScheduler
from lsp_server.stats import UsageStats, default_stats_path
from lsp_server.suggestion_cache import SuggestionCache
from lsp_server.watched_folders import WatchedFolders
from lsp_server.workspace_lines import WorkspaceLines
from model.languages import Language, served_names

log = logging.getLogger(__name__)

VERSION = "0.1.0"


class RedraftServer(LanguageServer):
    def __init__(self, model_dir: Path | None = None) -> None:
        super().__init__("redraft", VERSION, protocol_cls=RedraftProtocol)
        self.options = ServerOptions()
        self.faults = FaultPlan.from_environment()  # off unless REDRAFT_FAULTS is set (tests)
        self.documents = DocumentStore(self.faults)
        self.engine = Engine(model_dir, on_load_error=self.show_error, faults=self.faults)
        self.scheduler = RequestScheduler()
        self.suggestions = SuggestionCache()
        self.stats = UsageStats(default_stats_path())
        self.completions = CompletionService(self.engine, self.suggestions, self.scheduler,
                                             lambda threshold: raised_thresholds(self.stats.sources, threshold))
        self.edit_log = EditLog()
        self.next_edits = NextEditService(self.engine, self.edit_log)
        self.workspace_lines = WorkspaceLines()  # filled by the watchers
        # The workspace folders, or (none named) the projects of the documents opened.
        self.watched = WatchedFolders(self.edit_log, self.workspace_lines,
                                      lambda uri: self.documents.get(uri) is not None)
        self._pending_messages: list[str] = []
        self._told_unserved: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def encoding(self) -> str:
        return str(self.workspace.position_encoding or types.PositionEncodingKind.Utf16)

    def served_language(self, document: Document | None) -> Language | None:
        """The document's language, if Redraft serves it. A document in another language gets
        no suggestions; the log says so once for it, not on every keystroke."""
        language = None if document is None else document.language
        if document is not None and language is None and document.uri not in self._told_unserved:
            self._told_unserved.add(document.uri)
            log.info("%s is not served (language %r; served: %s)", document.uri, document.language_id or "unknown",
                     served_names())
        return language

    def forget_unserved(self, uri: str) -> None:
        self._told_unserved.discard(uri)

    def show_error(self, message: str) -> None:
        """A message the user should see (once per cause), e.g. a model that won't load.
        Safe to call from the model thread: the message is sent from the event loop."""
        params = types.ShowMessageParams(types.MessageType.Error, message)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.window_show_message, params)

    def apply_settings(self, raw: Any) -> None:
        self.options, problems = parse_options(raw, self.options)
        for problem in problems:
            log.warning("%s", problem)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, problem))


def create_server(model_dir: Path | None = None) -> RedraftServer:
    server = RedraftServer(model_dir)

    @server.feature(types.INITIALIZE)
    def initialize(ls: RedraftServer, params: types.InitializeParams) -> None:
        ls.options, ls._pending_messages = parse_options(params.initialization_options)

    @server.feature(types.INITIALIZED)
    def initialized(ls: RedraftServer, params: types.InitializedParams) -> None:
        ls._loop = asyncio.get_running_loop()
        for message in ls._pending_messages:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, message))
        ls.engine.start_loading()
        ls.watched.name(workspace_folders(ls))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(ls: RedraftServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.watched.name(workspace_folders(ls))  # pygls has already updated ls.workspace.folders

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: RedraftServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("redraft"), dict):
            settings = settings["redraft"]
        ls.apply_settings(settings)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RedraftServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.documents.open(params.text_document)
        path = file_path(params.text_document.uri)
        if path is not None:
            ls.watched.opened(path, lambda: [p for uri, _ in ls.documents.items() if (p := file_path(uri)) is not None])

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RedraftServer, params: types.DidChangeTextDocumentParams) -> None:
        document = ls.documents.get(params.text_document.uri)
        if document is None:
            log.warning("change for a document that is not open: %s", params.text_document.uri)
            return
        try:
            applied = ls.documents.change(params, ls.encoding) or []
        except Exception:  # pygls would only pop up "Error in server" on every keystroke, with no traceback
            log.error("change to %s (version %s) not applied; the document stays at version %s",
                      document.uri, params.text_document.version, document.version, exc_info=True)
            return
        for change in applied:
            if ls.next_edits.took_offer(document.uri, change.before, change.after):
                ls.edit_log.end_burst()
            ls.edit_log.record(document.uri, change.before, change.after, context_lines=change.context_lines,
                               whole_lines=change.whole_lines)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RedraftServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.documents.close(params.text_document.uri)
        ls.suggestions.forget(params.text_document.uri)
        ls.next_edits.forget(params.text_document.uri)
        ls.scheduler.forget(params.text_document.uri)
        ls.forget_unserved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        ls: RedraftServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        ls.faults.check("handler")
        document = ls.documents.get(params.text_document.uri)
        language = ls.served_language(document)
        if document is None or language is None:
            return None
        text, encoding, options = document.text, ls.encoding, ls.options
        offset = document.offset_at(params.position, encoding)
        invoked = params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked
        # The editor's suggest widget is open on an item: answer as if it were accepted, and
        # offer the item and what follows it over the item's range. An editor shows ghost
        # text beside the widget only when it extends the selected item (VS Code, by default
        # on each identifier typed).
        selected = params.context.selected_completion_info
        replaced: types.Range | None = None
        lead = ""
        if selected is not None and selected.text:
            start, end = (document.offset_at(selected.range.start, encoding),
                          document.offset_at(selected.range.end, encoding))
            if start <= offset <= end:
                text, offset = text[:start] + selected.text + text[end:], start + len(selected.text)
                replaced, lead = selected.range, selected.text
        related = ls.workspace_lines.related(file_path(document.uri))
        suggestions = await ls.completions.suggest(document.uri, text, offset, options, invoked, related,
                                                   language)
        if not suggestions:
            return None
        if replaced is None:
            # The line starts computed for the request are still good unless the text changed meanwhile.
            cursor = position_at(text, offset, encoding, document.starts if document.text is text else None)
            replaced = types.Range(cursor, cursor)
        ids = [uuid.uuid4().hex[:12] for _ in suggestions]
        ls.stats.shown("inline_completion", ids, [s.source for s in suggestions])
        # Clients run an item's command when it is accepted: that is the accept feedback.
        return types.InlineCompletionList(items=[
            types.InlineCompletionItem(insert_text=lead + s.text, range=replaced, command=accepted_command(i))
            for s, i in zip(suggestions, ids, strict=True)
        ])

    @server.feature(NEXT_EDIT)
    async def next_edit(ls: RedraftServer, params: Any) -> dict[str, Any] | None:
        request = parse_params(params)
        document = ls.documents.get(request.uri)
        if document is None or ls.served_language(document) is None:
            return None
        items = await ls.next_edits.suggest(document, request, ls.options, ls.encoding)
        ls.stats.shown("next_edit", [item["id"] for item in items])
        return {"items": items} if items else None

    @server.feature(CURSOR)
    def cursor(ls: RedraftServer, params: Any) -> None:
        try:
            at = parse_params(params, CURSOR)
        except JsonRpcInvalidParams as exc:
            log.warning("ignored a %s notification: %s", CURSOR, exc)  # a notification gets no answer
            return
        document = ls.documents.get(at.uri)
        language = ls.served_language(document)
        if document is None or language is None:
            return
        offset = document.offset_at(types.Position(at.line, at.character), ls.encoding)
        ls.completions.warm(document.uri, document.text, offset, ls.options,
                            ls.workspace_lines.related(file_path(document.uri)), language)

    @server.feature(FEEDBACK)
    def feedback(ls: RedraftServer, params: Any) -> None:
        suggestion_id, accepted = getattr(params, "id", None), getattr(params, "accepted", None)
        if not isinstance(suggestion_id, str) or not isinstance(accepted, bool):
            log.warning("redraft/feedback needs {id: string, accepted: boolean}, got %r", params)
            return
        # Accepting or dismissing a suggestion ends a typing burst: what comes next (a
        # rename on the line above, say) is a change of its own, not part of that burst.
        ls.edit_log.end_burst()
        if not ls.stats.feedback(suggestion_id, accepted):
            log.info("feedback for an unknown suggestion id %s", suggestion_id)

    @server.feature(DEBUG_STATE)
    def debug_state(ls: RedraftServer, params: Any) -> dict[str, Any]:
        if not ls.options.debug_requests:
            raise JsonRpcMethodNotFound.of(DEBUG_STATE)
        return {
            "documents": {uri: {"version": d.version, "text": d.text} for uri, d in ls.documents.items()},
            "editLog": [{"uri": e.uri, "startLine": e.start_line, "oldText": e.old_text, "newText": e.new_text,
                         "source": e.source} for e in ls.edit_log.events()],
            # The watchers' first scans are done and their files' lines are indexed.
            "workspaceIndexed": ls.watched.ready(),
            "watchedFolders": [str(root) for root in ls.watched.roots()],
            "completionModelCalls": ls.completions.model_calls,
            # Which source wrote each suggestion shown and not yet accepted or dismissed.
            "suggestionSources": ls.stats.sources_shown(),
        }

    @server.command(ACCEPTED_COMMAND)
    def accepted(ls: RedraftServer, *arguments: Any) -> None:
        # pygls 2 passes a command's arguments one by one, not as a list.
        if arguments and isinstance(arguments[0], str):
            ls.edit_log.end_burst()
            ls.stats.feedback(arguments[0], accepted=True)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: RedraftServer, params: None) -> None:
        ls.engine.shutdown()
        ls.watched.stop()

    return server


def accepted_command(suggestion_id: str) -> types.Command:
    return types.Command(title="Redraft: accepted", command=ACCEPTED_COMMAND, arguments=[suggestion_id])


def workspace_folders(ls: RedraftServer) -> list[Path]:
    """Local folders of the workspace (file: URIs only)."""
    uris = [folder.uri for folder in ls.workspace.folders.values()]
    if not uris and ls.workspace.root_uri:
        uris = [ls.workspace.root_uri]
    paths = [file_path(uri) for uri in uris]
    return [path for path in paths if path is not None and path.is_dir()]


def file_path(uri: str) -> Path | None:
    """The local path of a file: URI, None for any other scheme."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None
