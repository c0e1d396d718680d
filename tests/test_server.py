"""`tfproc-lint server` driven as an editor drives it: pygls's LanguageClient over stdio, one real
server process per test."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402

import processes  # noqa: E402
from conftest import ROOT, run_env, tool  # noqa: E402
from lsp_editor import CAPABILITIES, Editor, apply_workspace_edit, run  # noqa: E402
from tfproc_lint.server.documents import MAX_CHARACTERS  # noqa: E402

FIXES = ROOT / "fixtures" / "fix"
SAFE_IN = (FIXES / "TFP403" / "env_after_first_op.in.py").read_text()  # one TFP403, a safe fix
SAFE_OUT = (FIXES / "TFP403" / "env_after_first_op.out.py").read_text()
UNSAFE_IN = (FIXES / "TFP301" / "keras_load_per_task.in.py").read_text()  # one TFP301 (a warning), unsafe fix
UNSAFE_OUT = (FIXES / "TFP301" / "keras_load_per_task.out.py").read_text()
CLEAN = "import os\n\nprint(os.getcwd())\n"


def line_of(text: str, fragment: str) -> int:
    """The 0-based line holding `fragment`."""
    return next(number for number, line in enumerate(text.split("\n")) if fragment in line)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nrequires-python = ">=3.10"\n')
    return tmp_path


def test_diagnostics_on_open_change_and_save(project):
    async def scenario():
        editor = Editor(project)
        result = await editor.start()
        assert result.capabilities.notebook_document_sync is not None
        try:
            uri = editor.open(project / "job.py", SAFE_IN)
            [found] = await editor.diagnostics(uri, 1)
            assert found.code == "TFP403" and found.source == "tfproc-lint"
            assert found.severity == types.DiagnosticSeverity.Error
            assert found.range.start.line == line_of(SAFE_IN, "CUDA_VISIBLE_DEVICES")
            assert found.code_description.href.endswith("/docs/rules/TFP403.md")
            [related] = found.related_information
            assert related.location.uri == uri and related.message.startswith("TensorFlow runtime started here")
            assert related.location.range.start.line == line_of(SAFE_IN, "reduce_sum")

            assert await editor.diagnostics(uri, editor.change(uri, CLEAN)) == []

            version = editor.change(uri, UNSAFE_IN)
            [warning] = await editor.diagnostics(uri, version)
            assert warning.code == "TFP301" and warning.severity == types.DiagnosticSeverity.Warning

            before = len(editor.published)
            editor.save(uri)
            [again] = await editor.diagnostics(uri, version, after=before)
            assert again.code == "TFP301"

            closed_from = len(editor.published)
            editor.client.text_document_did_close(types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri)))
            assert await editor.diagnostics(uri, None, after=closed_from) == []
        finally:
            await editor.stop()
    run(scenario)


def test_every_code_action_kind(project):
    async def scenario():
        editor = Editor(project)
        await editor.start()
        try:
            safe = editor.open(project / "safe.py", SAFE_IN)
            unsafe = editor.open(project / "unsafe.py", UNSAFE_IN)
            await editor.diagnostics(safe, 1)
            await editor.diagnostics(unsafe, 1)

            line = line_of(SAFE_IN, "CUDA_VISIBLE_DEVICES")
            assert await editor.code_actions(safe, line_of(SAFE_IN, "def main"), only=["quickfix"]) == []
            fix, noqa, fix_all = await editor.code_actions(safe, line)  # all kinds: `only` not given
            assert fix_all.kind == "source.fixAll.tfproc-lint"
            assert fix.kind == "quickfix" and fix.is_preferred and "unsafe" not in fix.title.lower()
            assert fix.diagnostics[0].code == "TFP403"
            assert apply_workspace_edit(fix.edit, {safe: SAFE_IN})[safe] == SAFE_OUT
            assert fix.edit.document_changes[0].text_document.version == 1

            assert noqa.kind == "quickfix" and not noqa.is_preferred and "noqa" in noqa.title
            silenced = apply_workspace_edit(noqa.edit, {safe: SAFE_IN})[safe]
            assert silenced.split("\n")[line].endswith("# the scheduler's choice  # noqa: TFP403")
            assert await editor.diagnostics(safe, editor.change(safe, silenced)) == []

            actions = await editor.code_actions(unsafe, line_of(UNSAFE_IN, "pool.map"), only=["quickfix"])
            unsafe_fix, _noqa = actions
            assert unsafe_fix.title.startswith("Unsafe fix:") and not unsafe_fix.is_preferred
            assert unsafe_fix.kind == "quickfix"
            assert apply_workspace_edit(unsafe_fix.edit, {unsafe: UNSAFE_IN})[unsafe] == UNSAFE_OUT

            editor.change(safe, SAFE_IN)
            [fix_all] = await editor.code_actions(safe, 0, only=["source.fixAll"])
            assert fix_all.kind == "source.fixAll.tfproc-lint"
            assert apply_workspace_edit(fix_all.edit, {safe: SAFE_IN})[safe] == SAFE_OUT
            # Only safe fixes: the unsafe file has nothing to fix all.
            assert await editor.code_actions(unsafe, 0, only=["source.fixAll.tfproc-lint"]) == []
            assert all(a.kind == "quickfix" for a in await editor.code_actions(safe, line, only=["quickfix"]))
        finally:
            await editor.stop()
    run(scenario)


# Two late threading settings: `check` lists both as safe fixes, the second applying after the first.
TWO_SETTINGS = """import tensorflow as tf


def main():
    x = tf.ones((2, 2))
    tf.config.threading.set_inter_op_parallelism_threads(2)
    tf.config.threading.set_intra_op_parallelism_threads(2)
    return x


if __name__ == "__main__":
    main()
"""


def cli(project: Path, *args: str) -> subprocess.CompletedProcess:
    return processes.run([tool("tfproc-lint"), "check", "--no-cache", *args], cwd=project, capture_output=True,
                         text=True, env=run_env(), timeout=120)


def test_the_editor_offers_the_fixes_check_lists(project):
    (project / "job.py").write_text(TWO_SETTINGS)
    listed = json.loads(cli(project, "--format", "json", "job.py").stdout)["findings"]
    expected = [(f["code"], f["line"] - 1, f["message"], f["fix"] and f["fix"]["applicability"]) for f in listed]
    assert [(code, fix) for code, _line, _message, fix in expected] == [("TFP402", "safe"), ("TFP402", "safe")]
    assert cli(project, "--fix", "job.py").returncode == 0
    fixed_by_cli = (project / "job.py").read_text()
    assert fixed_by_cli != TWO_SETTINGS

    async def scenario():
        editor = Editor(project)
        await editor.start()
        try:
            uri = editor.open(project / "job.py", TWO_SETTINGS)

            def shown():
                latest = next((p for p in reversed(editor.published) if p.uri == uri), None)
                return latest and [(d.code, d.range.start.line, d.message, d.data and d.data["applicability"])
                                   for d in latest.diagnostics]
            try:  # the findings as first published, then as `check` lists them
                await editor.wait_for(lambda: shown() == expected, "the findings as `check` lists them")
            except AssertionError:
                assert shown() == expected

            second = line_of(TWO_SETTINGS, "set_intra_op")
            fix, _noqa = await editor.code_actions(uri, second, only=["quickfix"])
            assert fix.is_preferred and fix.diagnostics[0].range.start.line == second
            assert fix.title == f"{listed[1]['fix']['title']} (TFP402; also applies the TFP402 fix)"
            assert apply_workspace_edit(fix.edit, {uri: TWO_SETTINGS})[uri] == fixed_by_cli
            [fix_all] = await editor.code_actions(uri, 0, only=["source.fixAll"])
            assert fix_all.title.endswith("(2)")
            assert apply_workspace_edit(fix_all.edit, {uri: TWO_SETTINGS})[uri] == fixed_by_cli
        finally:
            await editor.stop()
    run(scenario)


def test_hover_shows_the_rule_and_its_link(project):
    async def scenario():
        editor = Editor(project)
        await editor.start()
        try:
            uri = editor.open(project / "job.py", SAFE_IN)
            [found] = await editor.diagnostics(uri, 1)
            hover = await editor.hover(uri, found.range.start.line, found.range.start.character + 2)
            assert "**TFP403**" in hover.contents.value
            assert "environment-after-runtime-start" in hover.contents.value
            assert "/docs/rules/TFP403.md)" in hover.contents.value
            assert await editor.hover(uri, 0, 1) is None

            # Columns are UTF-16 code units (the default encoding): an emoji counts twice.
            text = SAFE_IN.replace('"TensorFlow"', '"TensorFlow \U0001F600"')
            emoji = editor.open(project / "emoji.py", text)
            [found] = await editor.diagnostics(emoji, 1)
            line = text.split("\n")[found.related_information[0].location.range.start.line]
            assert found.related_information[0].location.range.start.character == line.index("tf.ones") + 1
            position = found.related_information[0].location.range.start
            assert (await editor.hover(emoji, found.range.start.line, 4)).contents.value.startswith("**TFP403**")
            assert position.line == line_of(text, "reduce_sum")
        finally:
            await editor.stop()
    run(scenario)


NOTEBOOK_CELLS = [
    (types.NotebookCellKind.Markup, "markdown", "# A GPU job"),
    (types.NotebookCellKind.Code, "python", "import os\n\nimport tensorflow as tf"),
    (types.NotebookCellKind.Code, "python", "%matplotlib inline\nx = tf.ones((2, 2))\n"
                                            "os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0\""),
]


def open_notebook(editor: Editor, path: Path, cells) -> tuple[str, list[str]]:
    uri = path.as_uri()
    cell_uris = [f"{uri}#cell{number}" for number in range(len(cells))]
    editor.client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=uri, notebook_type="jupyter-notebook", version=1, cells=[
            types.NotebookCell(kind=kind, document=cell_uri)
            for (kind, _language, _text), cell_uri in zip(cells, cell_uris)]),
        cell_text_documents=[types.TextDocumentItem(uri=cell_uri, language_id=language, version=1, text=text)
                             for (_kind, language, text), cell_uri in zip(cells, cell_uris) if language == "python"]))
    return uri, cell_uris


def test_notebook_findings_are_placed_in_their_cells(project):
    async def scenario():
        editor = Editor(project)
        await editor.start()
        try:
            uri, (_markdown, first, second) = open_notebook(editor, project / "job.ipynb", NOTEBOOK_CELLS)
            assert await editor.diagnostics(first, 1) == []
            [found] = await editor.diagnostics(second, 1)
            assert found.code == "TFP403" and found.range.start.line == 2  # third line of cell 3
            [related] = found.related_information
            assert related.location.uri == second and related.location.range.start.line == 1

            actions = await editor.code_actions(second, 2)
            fix = next(action for action in actions if action.is_preferred)
            after = apply_workspace_edit(fix.edit, {second: NOTEBOOK_CELLS[2][2]})[second]
            assert after == "%matplotlib inline\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0\"\nx = tf.ones((2, 2))"
            noqa = next(action for action in actions if "noqa" in action.title)
            assert noqa.edit.document_changes[0].text_document.uri == second
            [fix_all] = await editor.code_actions(second, 0, only=["source.fixAll"])
            assert apply_workspace_edit(fix_all.edit, {second: NOTEBOOK_CELLS[2][2]})[second] == after

            # The editor applies the fix to cell 3: its finding goes.
            before = len(editor.published)
            editor.client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(uri=uri, version=2),
                change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
                    types.NotebookDocumentCellContentChanges(
                        document=types.VersionedTextDocumentIdentifier(uri=second, version=2),
                        changes=[types.TextDocumentContentChangeWholeDocument(text=after)])]))))
            assert await editor.diagnostics(second, 2, after=before) == []

            # The runtime now starts in cell 2, the setting stays in cell 3: the related location is
            # in cell 2, and the fix edits both cells.
            moved = "os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0\""
            cells = {first: NOTEBOOK_CELLS[1][2] + "\nx = tf.ones((2, 2))", second: moved}
            before = len(editor.published)
            editor.client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(uri=uri, version=3),
                change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
                    types.NotebookDocumentCellContentChanges(
                        document=types.VersionedTextDocumentIdentifier(uri=cell, version=3),
                        changes=[types.TextDocumentContentChangeWholeDocument(text=text)])
                    for cell, text in cells.items()]))))
            [found] = await editor.diagnostics(second, 3, after=before)
            assert found.range.start.line == 0 and "(cell 2, line 4: " in found.message
            assert found.related_information[0].location.uri == first
            assert found.related_information[0].location.range.start.line == 3
            fix, _noqa = await editor.code_actions(second, 0, only=["quickfix"])
            assert {change.text_document.uri: change.text_document.version
                    for change in fix.edit.document_changes} == {first: 3, second: 3}
            after = apply_workspace_edit(fix.edit, cells)
            assert after[first].split("\n")[3:] == [moved, "x = tf.ones((2, 2))"] and moved not in after[second]
        finally:
            await editor.stop()
    run(scenario)


def test_configuration_is_reloaded_when_it_changes(project):
    async def scenario():
        editor = Editor(project)
        await editor.start()
        try:
            watchers = await editor.wait_for(lambda: [r for r in editor.registrations
                                                      if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES],
                                             "the file watcher registration")
            globs = [watcher["globPattern"] for watcher in watchers[0].register_options["watchers"]]  # plain JSON
            assert "**/pyproject.toml" in globs and "**/setup.cfg" in globs

            uri = editor.open(project / "job.py", SAFE_IN)
            assert [d.code for d in await editor.diagnostics(uri, 1)] == ["TFP403"]

            pyproject = project / "pyproject.toml"
            pyproject.write_text(pyproject.read_text() + '\n[tool.tfproc-lint]\nignore = ["TFP403"]\n')
            before = len(editor.published)
            editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
                types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]))
            assert await editor.diagnostics(uri, 1, after=before) == []

            # A client without file watching: saving the config file in the editor reloads too.
            pyproject.write_text(pyproject.read_text().replace('ignore = ["TFP403"]', 'ignore = ["TFP1"]'))
            before = len(editor.published)
            config = editor.open(pyproject, pyproject.read_text(), language="toml")
            editor.save(config)
            assert [d.code for d in await editor.diagnostics(uri, 1, after=before)] == ["TFP403"]
            assert not any(p.uri == config for p in editor.published)  # the TOML file is not linted

            # A broken configuration: one error line, and the last good configuration stays.
            pyproject.write_text(pyproject.read_text().replace('ignore = ["TFP1"]', 'ignore = ["TFP9"]'))
            before = len(editor.published)
            editor.save(config)
            assert [d.code for d in await editor.diagnostics(uri, 1, after=before)] == ["TFP403"]
            errors = [log.message for log in editor.logs if log.type == types.MessageType.Error]
            assert any("'TFP9' matches no rule" in message for message in errors)
        finally:
            await editor.stop()
    run(scenario)


def test_saving_a_checked_file_rereads_changed_configuration(project):
    # A client that neither watches files nor tells the server about saves of pyproject.toml
    # (Neovim on Linux by default): saving the Python file finds the change.
    capabilities = copy.deepcopy(CAPABILITIES)
    capabilities.workspace.did_change_watched_files = None

    async def scenario():
        editor = Editor(project, capabilities)
        await editor.start()
        try:
            (project / "sub").mkdir()
            uri = editor.open(project / "sub" / "job.py", SAFE_IN)
            assert [d.code for d in await editor.diagnostics(uri, 1)] == ["TFP403"]
            assert not editor.registrations

            pyproject = project / "pyproject.toml"
            pyproject.write_text(pyproject.read_text() + '\n[tool.tfproc-lint]\nignore = ["TFP403"]\n')
            before = len(editor.published)
            editor.save(uri)
            assert await editor.diagnostics(uri, 1, after=before) == []
            assert any(log.message == f"tfproc-lint: {pyproject} changed: configuration re-read" for log in editor.logs)

            # A project file that appears nearer the document makes its folder the root.
            nearer = project / "sub" / "setup.cfg"
            nearer.write_text("[tfproc-lint]\nselect = TFP4\n")
            before = len(editor.published)
            editor.save(uri)
            assert [d.code for d in await editor.diagnostics(uri, 1, after=before)] == ["TFP403"]
            assert any(log.message == f"tfproc-lint: {nearer} changed: configuration re-read" for log in editor.logs)

            # Nothing changed: the saved file is linted again, the configuration is not re-read.
            logged, before = len(editor.logs), len(editor.published)
            editor.save(uri)
            assert [d.code for d in await editor.diagnostics(uri, 1, after=before)] == ["TFP403"]
            assert not any("configuration re-read" in log.message for log in editor.logs[logged:])
        finally:
            await editor.stop()
    run(scenario)


def test_documents_that_import_a_changed_module_are_linted_again(project):
    """Project analysis in the editor: `train.py` finds TFP403 through `helpers.py`; saving
    `helpers.py` (or, once it is closed, a watcher reporting it changed on disk) re-lints `train.py`
    with its new summary."""
    helper = project / "helpers.py"
    starts = "import tensorflow as tf\n\n\ndef devices():\n    return tf.config.list_logical_devices()\n"
    quiet = "import tensorflow as tf\n\n\ndef devices():\n    return []\n"
    train = ('import os\n\nfrom helpers import devices\n\nif __name__ == "__main__":\n    print(devices())\n'
             '    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n')
    helper.write_text(starts)
    (project / "train.py").write_text(train)

    async def scenario():
        editor = Editor(project)
        await editor.start()
        try:
            uri = editor.open(project / "train.py", train)
            [found] = await editor.diagnostics(uri, 1)
            assert found.code == "TFP403" and "helpers.py:5" in found.message
            assert any(r.location.uri == helper.resolve().as_uri() for r in found.related_information)

            helper_uri = editor.open(helper, starts)
            helper.write_text(quiet)
            editor.change(helper_uri, quiet)
            before = len(editor.published)
            editor.save(helper_uri)
            assert await editor.diagnostics(uri, 1, after=before) == []

            before = len(editor.published)
            editor.client.text_document_did_close(types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=helper_uri)))  # while open, its buffer counts
            await codes_after(editor, uri, before, [])  # the file, saved as the buffer was
            helper.write_text(starts)  # changed on disk by another program
            before = len(editor.published)
            editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
                types.FileEvent(uri=helper.as_uri(), type=types.FileChangeType.Changed)]))
            # Lints queued by the edits above may still publish [] first: the last publication counts.
            await codes_after(editor, uri, before, ["TFP403"])
        finally:
            await editor.stop()
    run(scenario)


def test_bad_input_never_ends_the_server(project):
    async def scenario():
        editor = Editor(project)
        await editor.start()
        try:
            uri = editor.open(project / "job.py", SAFE_IN)
            await editor.diagnostics(uri, 1)
            bad_inputs = [
                SAFE_IN[: SAFE_IN.index('load_model("') + 13],  # half-typed: an open string
                SAFE_IN + "def f(:\n    pass\n",  # a syntax error
                SAFE_IN + "x = " + "(" * 5000 + ")" * 5000 + "\n",  # nesting that kills LibCST's parser
                SAFE_IN + "x = 1\0\n",  # a NUL character
                SAFE_IN + "x = 1\n" * (MAX_CHARACTERS // 6),  # huge
            ]
            for text in bad_inputs:
                logged = len(editor.logs)
                assert await editor.diagnostics(uri, editor.change(uri, text)) == []
                await editor.wait_for(lambda: editor.logs[logged:], "a log line")
                assert editor.logs[-1].message.startswith("tfproc-lint: ")
                assert editor.logs[-1].type == types.MessageType.Log
                assert await editor.code_actions(uri, 0) == []
            assert "not checked while editing" in editor.logs[-1].message
            assert [d.code for d in await editor.diagnostics(uri, editor.change(uri, SAFE_IN))] == ["TFP403"]
            assert not editor.shown  # nothing alarming shown to the user
        finally:
            await editor.stop()
    run(scenario)


def test_fast_edits_publish_only_current_versions(project):
    # A file that takes a while to lint, changed 20 times without waiting: the versions published
    # only ever go up, the last one is published, and most of the others are skipped.
    main = SAFE_IN[SAFE_IN.index("def main"):SAFE_IN.index("\n\n\nif __name__")]
    big = SAFE_IN + "".join("\n\n" + main.replace("def main(", f"def main_{n}(") + "\n" for n in range(60))

    async def scenario():
        editor = Editor(project)
        await editor.start()
        try:
            uri = editor.open(project / "job.py", big)
            await editor.diagnostics(uri, 1)
            start = len(editor.published)
            versions = [editor.change(uri, big + f"\nvalue = {n}\n") for n in range(20)]
            found = await editor.diagnostics(uri, versions[-1], after=start)
            assert len(found) == 61
            published = [p.version for p in editor.published[start:] if p.uri == uri]
            assert published == sorted(published) and published[-1] == versions[-1]
            assert len(published) < len(versions) / 2, published
        finally:
            await editor.stop()
    run(scenario)


def test_server_without_pygls_says_how_to_install_it():
    hide = "import sys; sys.modules['pygls'] = None; from tfproc_lint.cli import main; sys.exit(main(['server']))"
    result = processes.run([sys.executable, "-c", hide], capture_output=True, text=True, env=run_env(), timeout=120)
    assert result.returncode == 2
    assert "pip install 'pygls>=2,<3' 'lsprotocol>=2025'" in result.stderr  # the server extra; no release yet


SHOP = {
    "shop/__init__.py": "",
    "shop/models.py": "import tensorflow as tf\n\n\ndef load(path):\n    return tf.keras.models.load_model(path)\n",
    "scripts/nightly.py": ('import multiprocessing as mp\n\nimport tensorflow as tf\n\nfrom shop import registry\n\n\n'
                           'def total(rows):\n    return float(tf.reduce_sum(tf.constant(rows)))\n\n\n'
                           'if __name__ == "__main__":\n    print(registry.describe())\n    with mp.Pool(4) as pool:\n'
                           '        print(pool.map(total, [[1.0], [2.0]]))\n'),
}
REGISTRY = 'from shop import models\n\nMODEL_PATH = "ranker.keras"\n\n\ndef describe():\n    return MODEL_PATH\n'
REGISTRY_LOADING = REGISTRY + "\n\nMODEL = models.load(MODEL_PATH)\n"  # loads the model at import
POLL_BOUND_S = 15  # the server polls every few seconds; one lint of the script on a loaded machine


def write_shop(project: Path) -> Path:
    for name, text in {**SHOP, "shop/registry.py": REGISTRY}.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    return project / "scripts" / "nightly.py"


async def codes_after(editor: Editor, uri: str, before: int, codes: list[str], timeout: float = 60) -> float:
    """Wait until `uri`'s diagnostics published after the first `before` are `codes`; the seconds it took."""
    start = time.monotonic()

    def found():
        mine = [p for p in editor.published[before:] if p.uri == uri]
        return bool(mine) and [d.code for d in mine[-1].diagnostics] == codes
    await editor.wait_for(found, f"{codes} for {uri}", timeout=timeout)
    return time.monotonic() - start


def test_an_open_script_follows_unsaved_edits_of_a_module_it_imports(project):
    """The entry script's findings come from the module's buffer, saved or not: an edit that makes
    shop/registry.py load the model at import gives scripts/nightly.py its TFP201 at once."""
    nightly = write_shop(project)
    registry = project / "shop" / "registry.py"

    async def scenario():
        editor = Editor(project)
        await editor.start()
        try:
            uri = editor.open(nightly, nightly.read_text())
            assert await editor.diagnostics(uri, 1) == []
            module = editor.open(registry, REGISTRY)
            await editor.diagnostics(module, 1)
            before = len(editor.published)
            editor.change(module, REGISTRY_LOADING)  # not saved
            await codes_after(editor, uri, before, ["TFP201"])
            assert registry.read_text() == REGISTRY
            [finding] = [p for p in editor.published[before:] if p.uri == uri][-1].diagnostics
            assert "imports shop.registry, whose import calls models.load()" in finding.message
            assert "which loads a Keras model (shop/models.py:5)" in finding.message
            before = len(editor.published)
            editor.change(module, REGISTRY)  # undone, still not saved
            await codes_after(editor, uri, before, [])
            editor.change(module, REGISTRY_LOADING)
            await codes_after(editor, uri, len(editor.published), ["TFP201"])
            before = len(editor.published)
            editor.client.text_document_did_close(types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=module)))  # closed unsaved: the disk's text again
            await codes_after(editor, uri, before, [])
        finally:
            await editor.stop()
    run(scenario)


@pytest.mark.slow
def test_an_open_script_follows_a_module_changed_on_disk_without_a_watcher(project):
    """A module the editor does not show, changed by another program (a git checkout), with a
    client that reports no file changes: the server's poll finds it within a bounded time."""
    capabilities = copy.deepcopy(CAPABILITIES)
    capabilities.workspace.did_change_watched_files = None
    nightly = write_shop(project)
    registry = project / "shop" / "registry.py"

    async def scenario():
        editor = Editor(project, capabilities)
        await editor.start()
        try:
            uri = editor.open(nightly, nightly.read_text())
            assert await editor.diagnostics(uri, 1) == []
            before = len(editor.published)
            registry.write_text(REGISTRY_LOADING)
            took = await codes_after(editor, uri, before, ["TFP201"], timeout=POLL_BOUND_S)
            before = len(editor.published)
            registry.write_text(REGISTRY)
            took = max(took, await codes_after(editor, uri, before, [], timeout=POLL_BOUND_S))
            print(f"disk change to published diagnostics: at most {took:.1f} s")
        finally:
            await editor.stop()
    run(scenario)
