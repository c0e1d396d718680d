"""`tfproc-lint server`: the Language Server Protocol front end, on pygls, over stdio.

The event loop only records documents and takes snapshots; linting runs on one worker thread
(`worker.LatestOnlyWorker`) and its results come back to the loop, which publishes them unless the
document changed meanwhile. Where a finding has a fix, a second, slower look (`documents.planned`,
what `tfproc-lint check` lists: fixes that apply only after another, fixes the fix loop would not
apply) follows when no edit waits, and is published if it says anything else. Code actions run on
the default executor. Bad input never ends the
server: it gets no diagnostics and one `window/logMessage` line.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer

from tfproc_lint import __version__
from tfproc_lint.dependents import file_stamp
from tfproc_lint.diagnostics import Diagnostic
from tfproc_lint.project import forget_files
from tfproc_lint.project_layout import overlaid
from tfproc_lint.server import documents
from tfproc_lint.server.actions import KINDS, code_actions
from tfproc_lint.server.configs import WATCHED_GLOBS, Configs, is_config_file
from tfproc_lint.server.convert import hover_text, to_lsp
from tfproc_lint.server.documents import Cell, Findings, Snapshot
from tfproc_lint.server.positions import LineIndex
from tfproc_lint.server.worker import LatestOnlyWorker

NAME = "tfproc-lint"
PYTHON_SUFFIXES = (".py", ".pyi")
# The second look (`documents.planned`) costs several lints where findings have fixes: 70-110 ms
# against 13 ms for the first on benchmarks/lsp_latency.py's file. It starts once the document has
# been still this long, so that typing never waits behind it.
PLAN_DELAY_S = 0.25
# How often the files that open documents' findings read are looked at (one `stat` each; a file
# whose digest was recorded is read and hashed only when its `stat` changed): a change no watcher
# reported (a client without file watching, a `git checkout` it missed) reaches the documents
# within this plus one lint.
POLL_S = 2.0
LOG_LEVELS = {"error": types.MessageType.Error, "warning": types.MessageType.Warning,
              "info": types.MessageType.Info, "log": types.MessageType.Log}


@dataclass(frozen=True)
class Job:
    snapshot: Snapshot
    planned: bool = False  # the second look: the findings as `check` lists them
    # The open Python documents' texts (absolute path -> text), read instead of their files.
    buffers: Mapping[str, str] = field(default_factory=dict)


class Session:
    """The server's state between requests (touched on the event loop unless a method says not)."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None
        self.configs = Configs(self.log_from_any_thread)
        self.worker: LatestOnlyWorker[Job] = LatestOnlyWorker(self._lint, self._failed)
        # The findings last published for each document (a notebook cell is one): (text, findings).
        self.published: dict[str, tuple[str, list[Diagnostic]]] = {}
        self.notebook_cells: dict[str, set[str]] = {}  # notebook URI -> cells last published
        # Document URI -> the project's files its last findings read, with their digests or
        # stamps (documents.Findings.uses).
        self.uses: dict[str, Mapping[str, str | tuple | None]] = {}
        self.plan_timers: dict[str, asyncio.TimerHandle] = {}  # document URI -> its second look
        # Files changed since the lint thread last made the project layer forget them (it does,
        # before its next lint), and what the poll last saw of each file it watches.
        self._changed: set[str] = set()
        self._on_disk = False  # one of them may have been created or removed
        self._changed_lock = threading.Lock()
        self.stamps: dict[str, tuple | None] = {}

    # logging -------------------------------------------------------------------------------------
    def log(self, level: str, message: str) -> None:
        self.server.window_log_message(types.LogMessageParams(type=LOG_LEVELS[level], message=f"{NAME}: {message}"))
        if level == "error":
            self.server.window_show_message(types.ShowMessageParams(type=types.MessageType.Error,
                                                                    message=f"{NAME}: {message}"))

    def log_from_any_thread(self, level: str, message: str) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.log, level, message)

    @property
    def encoding(self) -> str:
        return str(getattr(self.server.workspace.position_encoding, "value", None)
                   or self.server.workspace.position_encoding or "utf-16")

    # snapshots (on the loop) ---------------------------------------------------------------------
    def snapshot(self, uri: str) -> Snapshot | None:
        """The document or notebook at `uri` (a cell's URI gives its notebook), if it is Python."""
        workspace = self.server.workspace
        notebook = workspace.get_notebook_document(notebook_uri=uri) or workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            return self._notebook_snapshot(notebook)
        if uri not in workspace.text_documents:
            return None
        document = workspace.get_text_document(uri)
        if document.language_id != "python" and not document.uri.endswith(PYTHON_SUFFIXES):
            return None
        return Snapshot(uri, _path(uri), document.version, text=document.source)

    def _notebook_snapshot(self, notebook: types.NotebookDocument) -> Snapshot:
        workspace = self.server.workspace
        cells = []
        for number, cell in enumerate(notebook.cells, start=1):
            if cell.kind != types.NotebookCellKind.Code or cell.document not in workspace.text_documents:
                continue
            document = workspace.get_text_document(cell.document)
            if document.language_id in (None, "python"):
                cells.append(Cell(cell.document, number, document.source, document.version))
        return Snapshot(notebook.uri, _path(notebook.uri), notebook.version, cells=tuple(cells), notebook=True)

    def buffers(self) -> dict[str, str]:
        """The open Python documents' texts by absolute path: the project layer reads a module
        from its buffer, saved or not."""
        workspace = self.server.workspace
        found = {}
        for uri, document in list(workspace.text_documents.items()):
            path = _file(uri)
            if path is not None and path.suffix in PYTHON_SUFFIXES and (
                    workspace.get_notebook_document(cell_uri=uri) is None):
                found[os.path.abspath(path)] = document.source
        return found

    def schedule(self, uri: str) -> None:
        self.loop = self.loop or asyncio.get_running_loop()
        snapshot = self.snapshot(uri)
        if snapshot is not None:
            self._cancel_plan(snapshot.uri)
            self.worker.submit(snapshot.uri, Job(snapshot, buffers=self.buffers()))

    def _plan_later(self, snapshot: Snapshot) -> None:
        self._cancel_plan(snapshot.uri)
        self.plan_timers[snapshot.uri] = asyncio.get_running_loop().call_later(PLAN_DELAY_S, self._plan, snapshot)

    def _plan(self, snapshot: Snapshot) -> None:
        self.plan_timers.pop(snapshot.uri, None)
        if self._current(snapshot):
            self.worker.submit(snapshot.uri, Job(snapshot, planned=True, buffers=self.buffers()), later=True)

    def _cancel_plan(self, uri: str) -> None:
        timer = self.plan_timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def relint_all(self) -> None:
        workspace = self.server.workspace
        for uri in list(workspace.notebook_documents):
            self.schedule(uri)
        for uri in list(workspace.text_documents):
            if workspace.get_notebook_document(cell_uri=uri) is None:
                self.schedule(uri)

    # the worker thread ---------------------------------------------------------------------------
    def _lint(self, job: Job) -> None:
        """On the worker thread: lint, then hand the findings to the loop."""
        with self._changed_lock:
            changed, self._changed, on_disk, self._on_disk = self._changed, set(), self._on_disk, False
        if changed:
            forget_files(changed, layout=on_disk)
        config = self.configs.for_path(_file(job.snapshot.uri))
        with overlaid(job.buffers):
            findings = (documents.planned if job.planned else documents.lint)(job.snapshot, config)
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self._deliver, findings, job.planned)

    def _failed(self, job: Job, error: BaseException) -> None:
        snapshot = job.snapshot
        where = "".join(traceback.format_exception_only(type(error), error)).strip()
        self.log_from_any_thread("error", f"internal error while checking {snapshot.path}: {where} "
                                          "(please report it); the server goes on")
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self._deliver, Findings(snapshot, {
                uri: [] for uri in _documents_of(snapshot)}, error=None))

    # back on the loop ----------------------------------------------------------------------------
    def _current(self, snapshot: Snapshot) -> bool:
        """Whether the snapshot is still what the editor shows (no newer edit, not closed)."""
        if self.worker.is_pending(snapshot.uri):
            return False
        now = self.snapshot(snapshot.uri)
        return now is not None and now.version == snapshot.version and now.cells == snapshot.cells and (
            now.text == snapshot.text)

    def _deliver(self, findings: Findings, planned: bool = False) -> None:
        snapshot = findings.snapshot
        if not self._current(snapshot) or planned and findings.error:
            return  # a newer version is on its way, or the document was closed
        if findings.error:
            self.log("log", f"{snapshot.path}: {findings.error}; no findings shown")
        if not planned:
            self.uses[snapshot.uri] = findings.uses
        texts = {cell.uri: cell.text for cell in snapshot.cells} if snapshot.notebook else {snapshot.uri: snapshot.text}
        indexes = {uri: LineIndex(text, self.encoding) for uri, text in texts.items()}
        if snapshot.notebook:  # cells deleted since the last time lose their findings
            for gone in self.notebook_cells.get(snapshot.uri, set()) - set(texts):
                self.clear(gone)
            self.notebook_cells[snapshot.uri] = set(texts)
        versions = {cell.uri: cell.version for cell in snapshot.cells} if snapshot.notebook else {
            snapshot.uri: snapshot.version}
        for uri, found in findings.by_uri.items():
            if uri not in texts:  # not a cell of this snapshot: nothing to place the findings in
                continue
            shown = [to_lsp(diagnostic, uri, indexes, snapshot) for diagnostic in found]
            if planned and self._shown(uri, texts[uri], indexes, snapshot) == shown:
                continue  # the second look agrees with what is published
            self.published[uri] = (texts[uri], found)
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, version=versions.get(uri), diagnostics=shown))
        if not planned and documents.may_change_when_planned(findings):
            self._plan_later(snapshot)

    def _shown(self, uri: str, text: str, indexes, snapshot: Snapshot) -> list[types.Diagnostic] | None:
        """What is published for `uri` now, if it was published for `text`."""
        published_text, found = self.published.get(uri, (None, []))
        return [to_lsp(d, uri, indexes, snapshot) for d in found] if published_text == text else None

    def clear(self, uri: str) -> None:
        self.published.pop(uri, None)
        self.uses.pop(uri, None)
        self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # requests ------------------------------------------------------------------------------------
    def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        if uri not in self.published:
            return None
        text, found = self.published[uri]
        line, column = LineIndex(text, self.encoding).from_client(position.line, position.character)
        here = (line + 1, column)
        covering = [d for d in found if (d.line, d.col) <= here <= (
            (d.end_line, d.end_col) if d.end_line is not None and d.end_col is not None else (d.line, 1 << 30))]
        if not covering:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover_text(covering)))

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        snapshot = self.snapshot(params.text_document.uri)
        if snapshot is None:
            return None
        config = self.configs.for_path(_file(snapshot.uri))
        only = params.context.only
        encoding = self.encoding
        buffers = self.buffers()

        def actions():
            with overlaid(buffers):
                return code_actions(snapshot, config, params.text_document.uri, params.range.start.line,
                                    params.range.end.line, only, encoding)
        try:
            return await asyncio.get_running_loop().run_in_executor(None, actions)
        except documents.SourceError as error:
            self.log("log", f"{snapshot.path}: {error}; no code actions")
            return None

    async def register_watchers(self) -> None:
        """Ask the client to report changes to the configuration files (where it can)."""
        capability = self.server.client_capabilities.workspace
        watched = capability and capability.did_change_watched_files
        if not (watched and watched.dynamic_registration):
            self.log("log", "the client cannot watch files; configuration is re-read when a config file is saved "
                            "in the editor, or found changed when a checked file is saved")
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED_GLOBS])
        registration = types.Registration(id=f"{NAME}-config-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                          register_options=options)
        try:
            await self.server.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
        except Exception as error:  # noqa: BLE001 - a client that refuses: config is still re-read on save
            self.log("log", f"could not register file watchers ({error})")

    def config_changed(self, uri: str) -> None:
        self.log("info", f"{_path(uri)} changed: configuration re-read")
        self.configs.forget()
        self.relint_all()

    def saved(self, uri: str) -> None:
        """A saved document is linted again; if a configuration file it depends on changed since
        its configuration was read (a client that does not report such changes), every document is."""
        changed = self.configs.changed(_file(uri))
        if changed:
            self.config_changed(Path(changed).as_uri())
        else:
            self.schedule(uri)
            self.module_changed(uri, on_disk=True)

    def module_changed(self, uri: str, on_disk: bool = False) -> None:
        """A project module changed (in its editor buffer, saved or not; on disk; closed with
        unsaved edits): the project layer forgets what it read of it, and the open documents whose
        findings read it, or whose imports reach it, are linted again."""
        path = _file(uri)
        if path is not None:
            self.file_changed(os.path.abspath(path), uri, on_disk)

    def file_changed(self, path: str, uri: str | None = None, on_disk: bool = False) -> None:
        """`on_disk`: the file may have been created or removed (module lookups start afresh)."""
        with self._changed_lock:
            self._changed.add(path)
            self._on_disk |= on_disk
        for other, used in list(self.uses.items()):
            if other != uri and path in used:
                self.schedule(other)

    # the poll --------------------------------------------------------------------------------------
    def start_polling(self) -> None:
        self.loop = self.loop or asyncio.get_running_loop()
        self.loop.call_later(POLL_S, self._poll_and_again)

    def _poll_and_again(self) -> None:
        try:
            self.poll()
        finally:
            if not self.stopped:
                self.loop.call_later(POLL_S, self._poll_and_again)

    stopped = False

    def poll(self) -> None:
        """Look at the files the open documents' findings read (not those open in the editor,
        whose buffers count): one that changed since it was read is `file_changed`."""
        shown = set(self.buffers())
        watched = {path for used in self.uses.values() for path in used} - shown
        for path in watched:
            stamp = file_stamp(path)
            if stamp == self.stamps.get(path, False):
                continue
            self.stamps[path] = stamp
            digest: list = []  # read once, if a document recorded the file's digest

            def differs(recorded) -> bool:
                if not isinstance(recorded, str):
                    return recorded != stamp  # a stamp (the file read for its imports) or None
                if not digest:
                    digest.append(_digest(path))
                return recorded != digest[0]
            if any(differs(used[path]) for used in self.uses.values() if path in used):
                self.file_changed(path, on_disk=True)
        self.stamps = {path: stamp for path, stamp in self.stamps.items() if path in watched}


def _digest(path: str) -> str | None:
    try:
        with open(path, "rb") as stream:
            return hashlib.blake2b(stream.read(), digest_size=20).hexdigest()
    except OSError:
        return None


def _path(uri: str) -> str:
    return uris.to_fs_path(uri) or uri


def _file(uri: str) -> Path | None:
    path = uris.to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None


def _documents_of(snapshot: Snapshot) -> list[str]:
    return [cell.uri for cell in snapshot.cells] if snapshot.notebook else [snapshot.uri]


def create_server() -> LanguageServer:
    notebooks = types.NotebookDocumentSyncOptions(
        notebook_selector=[types.NotebookDocumentFilterWithCells(
            notebook="*", cells=[types.NotebookCellLanguage(language="python")])],
        save=True)
    server = LanguageServer(NAME, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                            notebook_document_sync=notebooks)
    session = Session(server)
    server.session = session  # for tests and debugging

    @server.feature(types.INITIALIZED)
    async def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
        session.loop = asyncio.get_running_loop()
        session.start_polling()
        await session.register_watchers()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        session.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        session.schedule(params.text_document.uri)
        session.module_changed(params.text_document.uri)  # the documents that import it read its buffer

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        if is_config_file(_path(params.text_document.uri)):
            session.config_changed(params.text_document.uri)
        else:
            session.saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        session.clear(params.text_document.uri)
        session.module_changed(params.text_document.uri)  # unsaved edits are gone: its file counts again

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: LanguageServer, params: types.DidOpenNotebookDocumentParams) -> None:
        session.schedule(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: LanguageServer, params: types.DidChangeNotebookDocumentParams) -> None:
        session.schedule(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: LanguageServer, params: types.DidSaveNotebookDocumentParams) -> None:
        session.saved(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: LanguageServer, params: types.DidCloseNotebookDocumentParams) -> None:
        for cell in params.cell_text_documents:
            session.clear(cell.uri)
        session.notebook_cells.pop(params.notebook_document.uri, None)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files(ls: LanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        changed = [change.uri for change in params.changes if is_config_file(_path(change.uri))]
        if changed:
            session.config_changed(changed[0])
            return
        for change in params.changes:
            session.module_changed(change.uri, on_disk=True)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover | None:
        return session.hover(params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=list(KINDS)))
    async def code_action(ls: LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        return await session.code_actions(params)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: LanguageServer, params) -> None:
        session.stopped = True
        session.worker.stop()

    return server


def serve() -> int:
    create_server().start_io()
    return 0
