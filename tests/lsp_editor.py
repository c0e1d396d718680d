"""An editor for the language server's tests: pygls's LanguageClient starting the real
`tfproc-lint server` over stdio, with what an editor keeps (published diagnostics, log lines,
registrations) and ways to wait for them."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
from lsprotocol import types
from pygls.lsp.client import LanguageClient

import processes
from conftest import run_env, tool

TIMEOUT = 60  # seconds; the first lint imports the engine (LibCST) on a loaded 2-core machine


@dataclass
class Published:
    uri: str
    version: int | None
    diagnostics: list[types.Diagnostic]
    at: float


CAPABILITIES = types.ClientCapabilities(
    general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
    text_document=types.TextDocumentClientCapabilities(
        synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=True, version_support=True),
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(value_set=["quickfix", "source"])),
            is_preferred_support=True),
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
    ),
    notebook_document=types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()),
    workspace=types.WorkspaceClientCapabilities(
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)),
)


class Editor:
    def __init__(self, root: Path, capabilities: types.ClientCapabilities = CAPABILITIES) -> None:
        self.root = root
        self.capabilities = capabilities
        self.client = LanguageClient("tfproc-lint-tests", "1")
        self.published: list[Published] = []
        self.logs: list[types.LogMessageParams] = []
        self.shown: list[types.ShowMessageParams] = []
        self.registrations: list[types.Registration] = []
        self._event = asyncio.Event()
        self.versions: dict[str, int] = {}
        self.server: psutil.Process | None = None  # the server's process, once started

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self.published.append(Published(params.uri, params.version, list(params.diagnostics), time.perf_counter()))
            self._event.set()

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def log(params: types.LogMessageParams) -> None:
            self.logs.append(params)
            self._event.set()

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def show(params: types.ShowMessageParams) -> None:
            self.shown.append(params)

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)
            self._event.set()

    async def start(self) -> types.InitializeResult:
        # A session of its own, unbuffered: stop() kills its whole group, whatever happened.
        await self.client.start_io(tool("tfproc-lint"), "server", env=processes.env_for(run_env()),
                                   cwd=str(self.root), start_new_session=True)
        self.server = psutil.Process(self.client._server.pid)  # pygls's asyncio process
        result = await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=self.capabilities, root_uri=self.root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name="project")])), TIMEOUT)
        self.client.initialized(types.InitializedParams())
        return result

    async def stop(self) -> None:
        server = self.server
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
            self.client.exit(None)
            await asyncio.wait_for(self.client.stop(), TIMEOUT)
        except BaseException:
            if server is not None and server.is_running():
                print(f"the server did not stop; its processes' stacks:\n{processes.dump(server.pid)}", flush=True)
            raise
        finally:
            if server is not None:
                processes.kill_group(server)

    async def wait_for(self, predicate, what: str, timeout: float = TIMEOUT):
        """The first truthy value of `predicate()`, re-checked whenever the server sends something."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            self._event.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}")
            try:
                await asyncio.wait_for(self._event.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def diagnostics(self, uri: str, version: int | None = None, after: int = 0) -> list[types.Diagnostic]:
        """The diagnostics published for `uri` (at `version`, when given) after the first `after`
        publications."""
        def found():
            for item in reversed(self.published[after:]):
                if item.uri == uri and (version is None or item.version == version):
                    return [item]
            return None
        return (await self.wait_for(found, f"diagnostics for {uri} version {version}"))[0].diagnostics

    # documents ---------------------------------------------------------------------------------------
    def open(self, path: Path, text: str, language: str = "python") -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
        return uri

    def change(self, uri: str, text: str) -> int:
        """Replace the whole text (a change without a range)."""
        self.versions[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        return self.versions[uri]

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))

    async def code_actions(self, uri: str, line: int, only=None, end_line: int | None = None):
        end = line if end_line is None else end_line
        return await asyncio.wait_for(self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line, 0), end=types.Position(end, 0)),
            context=types.CodeActionContext(diagnostics=[], only=only))), TIMEOUT) or []

    async def hover(self, uri: str, line: int, character: int):
        return await asyncio.wait_for(self.client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line, character))), TIMEOUT)


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 columns; ASCII test texts) as an editor does."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(position: types.Position) -> int:
        return min(starts[position.line] + position.character, len(text)) if position.line < len(lines) else len(text)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def apply_workspace_edit(edit: types.WorkspaceEdit, texts: dict[str, str]) -> dict[str, str]:
    """Each document's text after the edit (`texts`: URI -> text before)."""
    after = dict(texts)
    for change in edit.document_changes or []:
        after[change.text_document.uri] = apply_edits(after[change.text_document.uri], list(change.edits))
    return after


def run(scenario) -> None:
    """Run an async test scenario to its end."""
    asyncio.run(scenario())
