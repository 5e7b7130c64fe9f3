"""A small asyncio LSP client that drives a real server subprocess over stdio.

Messages are plain JSON (dicts and lists), so what the benchmark sees is exactly what the
server sent, with no client-side structuring in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypedDict

log = logging.getLogger("redraft.bench.client")

JsonObject = dict[str, Any]


# The languageId an editor sends for a document, by its file's suffix (LSP's own identifiers).
LANGUAGE_IDS = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
}


def language_id_for(uri: str) -> str:
    """The languageId of a document by its uri's suffix; "python", the benches' own documents'
    language, where the suffix names none of ``LANGUAGE_IDS``."""
    name = uri.rsplit("/", 1)[-1]
    suffix = name[name.rfind("."):] if "." in name else ""
    return LANGUAGE_IDS.get(suffix.lower(), "python")


class LspError(RuntimeError):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method} failed with code {code}: {message}")
        self.method, self.code, self.data = method, code, data


class LspTimeout(TimeoutError):
    """A request got no answer in time (it has been cancelled on the server)."""


class ServerExited(ConnectionError):
    """The server's stdout closed: it exited or crashed."""


class LspPosition(TypedDict):
    line: int
    character: int


class LspRange(TypedDict):
    start: LspPosition
    end: LspPosition


class ContentChange(TypedDict):
    """An incremental change: replace ``range`` of the document with ``text``."""

    range: LspRange
    text: str


class LspClient:
    """Starts ``command`` and talks LSP to it; use as ``async with LspClient(...) as client``."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        timeout: float = 60.0,
        stderr_log: Path | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``env``: the server's whole environment (default: this process's)."""
        self.command = list(command)
        self.timeout = timeout
        self._stderr_log = stderr_log
        self._cwd = cwd
        self._env = dict(env) if env is not None else None
        self._process: asyncio.subprocess.Process | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._stderr_file: IO[bytes] | None = None
        self.notifications: list[JsonObject] = []
        """Every notification the server sent (window/showMessage, logs, ...), in order."""

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        # stderr goes to a file or is read continuously: a full pipe would stall the server.
        if self._stderr_log is not None:
            self._stderr_file = self._stderr_log.open("ab")
        self._process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr_file or asyncio.subprocess.PIPE,
            cwd=self._cwd,
            env=self._env,
        )
        self._tasks.append(asyncio.create_task(self._read_messages()))
        if self._stderr_file is None:
            self._tasks.append(asyncio.create_task(self._drain_stderr()))

    @property
    def pid(self) -> int:
        if self._process is None:
            raise ServerExited("the server is not running")
        return self._process.pid

    async def __aenter__(self) -> LspClient:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close(graceful=exc_type is None)

    async def close(self, *, graceful: bool = True, wait: float = 10.0) -> int | None:
        """shutdown + exit (when ``graceful``), then wait for the process; kill it if it lingers."""
        process = self._process
        if process is None:
            return None
        if graceful and process.returncode is None:
            with contextlib.suppress(LspError, LspTimeout, ServerExited, ConnectionError):
                await self.shutdown(timeout=wait)
                await self.exit()
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), wait)
        except TimeoutError:
            log.warning("server did not exit within %.0f s; killing it", wait)
            process.kill()
            await process.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._stderr_file is not None:
            self._stderr_file.close()
        return process.returncode

    # -- JSON-RPC ----------------------------------------------------------------------------

    def _write(self, message: JsonObject) -> None:
        process = self._process
        if process is None or process.stdin is None or process.stdin.is_closing():
            raise ServerExited("the server is not running")
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def notify(self, method: str, params: Any = None) -> None:
        message: JsonObject = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)
        assert self._process is not None and self._process.stdin is not None
        try:
            await self._process.stdin.drain()
        except ConnectionError as exc:
            raise ServerExited(f"the server closed its input: {exc}") from exc

    def send_request(self, method: str, params: Any = None) -> tuple[int, asyncio.Future[Any]]:
        """Send a request without waiting; the id is what ``cancel`` takes."""
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._write(message)
        except ServerExited:
            del self._pending[request_id]
            raise
        return request_id, future

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """The raw ``result`` of a request; raises LspError, LspTimeout or ServerExited."""
        limit = self.timeout if timeout is None else timeout
        request_id, future = self.send_request(method, params)
        try:
            return await asyncio.wait_for(future, limit)
        except TimeoutError:
            self._pending.pop(request_id, None)
            with contextlib.suppress(ServerExited, ConnectionError):
                await self.cancel(request_id)
            raise LspTimeout(f"{method} (id {request_id}) got no answer within {limit:g} s") from None

    async def cancel(self, request_id: int) -> None:
        await self.notify("$/cancelRequest", {"id": request_id})

    async def _read_messages(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        try:
            while True:
                length = await self._read_headers(stdout)
                if length is None:
                    break
                self._dispatch(json.loads(await stdout.readexactly(length)))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception:
            log.error("bad message from the server", exc_info=True)
        finally:
            self._fail_pending(ServerExited(f"server exited (code {self._process.returncode})"))

    @staticmethod
    async def _read_headers(stdout: asyncio.StreamReader) -> int | None:
        length: int | None = None
        while True:
            line = await stdout.readline()
            if not line:
                return None  # EOF
            if line in (b"\r\n", b"\n"):
                if length is None:
                    raise ValueError("message without Content-Length")
                return length
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)

    def _dispatch(self, message: JsonObject) -> None:
        method = message.get("method")
        if method is None:  # a response to one of our requests
            pending = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if pending is None:
                return  # answer to a request that already timed out
            name, future = pending
            if future.done():
                return
            error = message.get("error")
            if error is not None:
                code, text = error.get("code", 0), error.get("message", "")
                future.set_exception(LspError(name, code, text, error.get("data")))
            else:
                future.set_result(message.get("result"))
        elif "id" in message:
            self._answer_server_request(message)
        else:
            self.notifications.append(message)
            log.debug("server notification %s: %s", method, message.get("params"))

    def _answer_server_request(self, message: JsonObject) -> None:
        # A benchmark client has no settings or UI: answer neutrally so the server never waits.
        result: Any = None
        if message["method"] == "workspace/configuration":
            result = [None for _ in (message.get("params") or {}).get("items", [])]
        with contextlib.suppress(ServerExited):
            self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _fail_pending(self, error: Exception) -> None:
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        self._pending.clear()

    async def _drain_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        while chunk := await self._process.stderr.read(65536):
            log.debug("server stderr: %s", chunk.decode("utf-8", "replace").rstrip())

    # -- LSP methods -------------------------------------------------------------------------

    async def initialize(
        self,
        initialization_options: Mapping[str, Any] | None = None,
        position_encodings: Sequence[str] = ("utf-16",),
        workspace_folders: Sequence[Path] = (),
    ) -> JsonObject:
        """The ``initialize`` request; returns the server's InitializeResult."""
        params: JsonObject = {
            "processId": None,
            "rootUri": workspace_folders[0].as_uri() if workspace_folders else None,
            "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name} for folder in workspace_folders]
            or None,
            "capabilities": {
                "general": {"positionEncodings": list(position_encodings)},
                "textDocument": {"inlineCompletion": {"dynamicRegistration": False}},
            },
        }
        if initialization_options is not None:
            params["initializationOptions"] = dict(initialization_options)
        result: JsonObject = await self.request("initialize", params)
        return result

    async def initialized(self) -> None:
        await self.notify("initialized", {})

    async def did_open(self, uri: str, text: str, language_id: str | None = None, version: int = 1) -> None:
        """Open a document; its languageId is ``language_id``, else the one its uri's suffix names."""
        document = {"uri": uri, "languageId": language_id or language_id_for(uri), "version": version, "text": text}
        await self.notify("textDocument/didOpen", {"textDocument": document})

    async def did_change(self, uri: str, version: int, changes: Sequence[ContentChange]) -> None:
        await self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": list(changes)},
        )

    async def did_close(self, uri: str) -> None:
        await self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    async def inline_completion(
        self, uri: str, line: int, character: int, trigger_kind: int = 2, *, timeout: float | None = None
    ) -> Any:
        """Raw result: an InlineCompletionList, an item array, or None.

        ``trigger_kind`` is 1 (Invoked) or 2 (Automatic)."""
        params = {
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": character},
            "context": {"triggerKind": trigger_kind},
        }
        return await self.request("textDocument/inlineCompletion", params, timeout=timeout)

    async def shutdown(self, *, timeout: float | None = None) -> None:
        await self.request("shutdown", timeout=timeout)

    async def exit(self) -> None:
        await self.notify("exit")
