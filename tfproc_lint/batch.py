"""Checking and fixing many files, in worker processes when there are enough of them."""

from __future__ import annotations

import heapq
import os
from collections import deque
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tfproc_lint.analysis.prefilter import (
    may_match, may_match_bytes, may_match_tree, may_start_processes_bytes, project_verdict,
)
from tfproc_lint.config import Config
from tfproc_lint.diagnostics import FileError, FileResult
from tfproc_lint.files import SourceFile, is_notebook
from tfproc_lint.knowledge import packages
from tfproc_lint.rules import rule_codes
from tfproc_lint.source import SourceError, decode, parse_guard

if TYPE_CHECKING:  # the cache is imported where a run uses one (`--no-cache` runs never do)
    from tfproc_lint.cache import ResultCache

_PREFILTERED = ""  # cache.PREFILTERED (tests/test_cache.py checks)
PARALLEL_MIN_FILES = 32  # below this, starting worker processes (about 0.1 s) does not pay
# Set by the command line (a short-lived process of its own): after the engine's import, move
# every object to the garbage collector's permanent generation (gc.freeze) and collect young
# objects less often. LibCST's modules and trees are then no longer scanned again and again
# (cyclic collections took about a fifth of a `-j1` run on TensorFlow's sources).
TUNE_GC = False
_gc_tuned = False


@dataclass
class FixedFile:
    result: FileResult
    original: str = ""
    fixed: str = ""
    applied: int = 0
    cells: list = field(default_factory=list)  # a notebook's changed cells: (number, before, after)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def check_files(files: list[SourceFile], config: Config, jobs: int = 0, progress=None,
                fix_edits: bool = False, cache: ResultCache | None = None) -> list[FileResult]:
    """Results in the order of `files`; identical for any number of jobs, with or without `cache`.
    Each file is checked with its own configuration (`SourceFile.config`, which travels with it to
    the worker processes), `config` where it has none. With `cache`, the files its index knows
    unchanged are answered first, without reading them; only the others are read and screened."""
    jobs = jobs or default_jobs()
    if cache is None:
        return _check_unknown(files, config, jobs, progress, fix_edits, None, None)
    from tfproc_lint.cache import FileIndex, index_key

    index = cache.file_index()
    results: list[FileResult | None] = [None] * len(files)
    unknown: list[int] = []
    keys = [index_key(f.display, f.explicit) for f in files]
    signatures = [FileIndex.signature(f.path) for f in files]  # before any read: a later write is a miss
    for i, source_file in enumerate(files):
        results[i] = _known_result(source_file, config, fix_edits, cache, index.outcome(keys[i], signatures[i]))
        if results[i] is None:
            unknown.append(i)
        else:
            _progress(progress, 1)
    outcomes: dict[int, str | None] = {}
    checked = _check_unknown([files[i] for i in unknown], config, jobs, progress, fix_edits, cache, outcomes)
    for position, (i, result) in enumerate(zip(unknown, checked)):
        results[i] = result
        index.remember(keys[i], signatures[i], outcomes.get(position))
    index.save()
    return results


def _known_result(source_file: SourceFile, config: Config, fix_edits: bool, cache: ResultCache,
                  outcome: str | None) -> FileResult | None:
    """The result the file index's `outcome` gives, without reading the file, or None."""
    if outcome is None:
        return None
    result = FileResult(source_file.display)
    if outcome == _PREFILTERED:
        return result
    config = source_file.config or config
    if not _any_rule_enabled(config):
        return result
    cached = cache.get(cache.key_for(outcome, source_file.display, config, fix_edits))
    if isinstance(cached, FileError):
        result.error = cached
    elif cached is not None:
        result.diagnostics = cached
    else:
        return None
    return result


def _check_unknown(files, config, jobs, progress, fix_edits, cache, outcomes) -> list[FileResult]:
    """Read, screen and lint `files`; `outcomes` (if given) receives, by position in `files`, what
    the file index may remember of each (`_prepare_noted`)."""
    if jobs > 1 and len(files) >= max(PARALLEL_MIN_FILES, 2):
        return _check_in_workers(files, config, jobs, progress, fix_edits, cache, outcomes)
    results = []
    for position, source_file in enumerate(files):
        result, outcome = _check_file_noted(source_file, config, fix_edits, cache)
        if outcomes is not None:
            outcomes[position] = outcome
        _progress(progress, 1)
        results.append(result)
    return results


def _check_file(source_file: SourceFile, config: Config, fix_edits: bool, cache: ResultCache | None) -> FileResult:
    """Read, pre-filter, look up in the cache, and lint one file."""
    return _check_file_noted(source_file, config, fix_edits, cache)[0]


def _check_file_noted(source_file: SourceFile, config: Config, fix_edits: bool,
                      cache: ResultCache | None) -> tuple[FileResult, str | None]:
    prepared, outcome = _prepare_noted(source_file, config, fix_edits, cache)
    if isinstance(prepared, FileResult):
        return prepared, outcome
    return _lint_text(prepared), outcome


@dataclass
class _Task:
    """A file that must be linted: its text (or a notebook's program), and where its result goes."""

    text: object  # str, or a notebook's Program
    display: str
    config: Config
    fix_edits: bool
    syntax_tree: object = None  # for a Python file: the tree the screening built (None: CPython rejects it)
    cache: ResultCache | None = None
    key: str = ""
    deps: list = field(default_factory=list)  # (path, digest) of the project modules the result used

    @property
    def length(self) -> int:
        return len(self.text if isinstance(self.text, str) else self.text.text)


def _prepare(source_file: SourceFile, config: Config, fix_edits: bool,
             cache: ResultCache | None = None) -> FileResult | _Task:
    """A finished result (skipped by the pre-filter, found in the cache, unreadable) or the task
    that lints it. Everything here runs without the engine (LibCST): a run in which no file needs
    the analysis, or every such file's result is cached, never imports it."""
    return _prepare_noted(source_file, config, fix_edits, cache)[0]


def _prepare_noted(source_file: SourceFile, config: Config, fix_edits: bool,
                   cache: ResultCache | None = None) -> tuple[FileResult | _Task, str | None]:
    """`_prepare`, and what the file index may remember of the file: cache.PREFILTERED (the
    pre-filter stops it, whatever the configuration), its content's digest (its result goes to or
    comes from the cache), or None (nothing: no cache, an error, a selection without rules)."""
    result = FileResult(source_file.display)
    config = source_file.config or config
    prefiltered = _PREFILTERED if cache is not None else None
    try:
        data = source_file.path.read_bytes()
        notebook = is_notebook(source_file.path)
        # A file that makes processes may run TensorFlow through a module of its project: it is
        # decoded and, if so, linted; the file index does not remember it as stopped (its verdict
        # depends on other files).
        through_project = config.project_analysis and not _names_tensorflow(data) and (
            may_start_processes_bytes(data) or b"import" in data)  # or imports a helper that makes a setting
        if not (source_file.explicit or through_project or may_match_bytes(data, notebook)):
            return result, prefiltered
        text = _notebook_program(data) if notebook else decode(data).text
        if text is None:
            return result, prefiltered  # a notebook in another language
        source = text if isinstance(text, str) else text.text
        # Files named on the command line are decoded whatever they hold (bad bytes get a reason),
        # then pre-filtered like the others: lint_source would return at once.
        needs_project = False
        if not may_match(source):
            verdict = project_verdict(source, str(source_file.path), config) if through_project else None
            needs_project = verdict is True
            if not needs_project:
                # Remembered as stopped only when the verdict depends on this file alone.
                return result, prefiltered if verdict is None else None
        if not _any_rule_enabled(config):
            return result, None
        digest = key = ""
        if cache is not None:
            from tfproc_lint.cache import content_digest

            digest = content_digest(data)
            key = cache.key_for(digest, source_file.display, config, fix_edits)
            cached = cache.get(key)
            if isinstance(cached, FileError):
                result.error = cached
                return result, digest
            if cached is not None:
                result.diagnostics = cached
                return result, digest
        task = _Task(text, source_file.display, config, fix_edits, cache=cache, key=key)
        if isinstance(text, str):
            task.syntax_tree = parse_guard(text)  # raises SourceError for code nested too deeply
            if task.syntax_tree is not None and not needs_project and not may_match_tree(text, task.syntax_tree):
                _store(task, result)
                return result, prefiltered
        return task, digest or None
    except OSError as error:
        result.error = FileError(source_file.display, f"cannot read: {error.strerror or error}")
    except SourceError as error:
        result.error = FileError(source_file.display, str(error))
    return result, None


_TENSORFLOW_MARKERS = tuple(marker.encode() for marker in packages.TENSORFLOW_MARKERS)


def _names_tensorflow(data: bytes) -> bool:
    """A file that names TensorFlow or Keras is judged by the pre-filter on its own text (the
    project check, `prefilter.may_need_project`, is for files that do not)."""
    return any(marker in data for marker in _TENSORFLOW_MARKERS)


def _any_rule_enabled(config: Config) -> bool:
    """False only when the selection enables no rule (the engine would return at once)."""
    return any(config.is_enabled(code) for code in rule_codes())


def _notebook_program(data: bytes):
    from tfproc_lint.notebook import read_notebook

    return read_notebook(data).program


def _lint_text(task: _Task) -> FileResult:
    # The engine (LibCST and the rules, about 0.2 s to import) is imported by the first file that
    # passes the pre-filter: in each worker, while the others go on reading, and never for a run
    # in which no file can match.
    _import_engine()
    result = FileResult(task.display)
    project = _project_of(task)
    try:
        with project.lint_scope() if project is not None else nullcontext() as used:
            _lint_task(task, result)
        task.deps = sorted(used) if used else []
    except SourceError as error:
        result.error = FileError(task.display, str(error))
    except Exception as error:  # noqa: BLE001 - report one file's bug, keep going
        result.error = FileError(task.display, f"internal error: {type(error).__name__}: {error}", internal=True)
    _store(task, result)
    return result


def _project_of(task: _Task):
    from tfproc_lint.project import project_for

    project = project_for(task.display, task.config) if os.path.isfile(task.display) else None
    if project is not None and project.store is None and task.cache is not None:
        project.store = task.cache.summaries()  # summaries persist with the results
    return project


def _lint_task(task: _Task, result: FileResult) -> None:
    from tfproc_lint.engine import lint_source
    from tfproc_lint.fixing import plan_program, plan_source

    if isinstance(task.text, str):
        # With fix edits: they cost nothing where no finding has a fix, and the fix loop that
        # decides what `check` lists (exactly the fixes --fix applies) starts from them.
        result.diagnostics = lint_source(task.text, task.display, task.config, fix_edits=True,
                                         syntax_tree=task.syntax_tree)
        if any(d.fix for d in result.diagnostics):
            result.diagnostics = plan_source(task.text, task.display, task.config, result.diagnostics)
    else:
        result.diagnostics = plan_program(task.text, task.display, task.config)


def _import_engine() -> None:
    """Import the engine and the fix loop (LibCST, the rules, the fixes). With TUNE_GC, the import
    is frozen (`load_frozen`: about 8% less CPU for it, and no later collection scans it again),
    then young objects are collected less often."""
    global _gc_tuned
    if not TUNE_GC or _gc_tuned:
        _load_engine()
        return
    _gc_tuned = True
    load_frozen(_load_engine)
    import gc

    gc.set_threshold(10_000, 50, 50)


def _load_engine() -> None:
    import tfproc_lint.fixing  # noqa: F401 - imports the engine too
    from tfproc_lint.rules.base import all_rules

    all_rules()  # imports the rule modules (and the fixes they offer) now, not at the first lint


def load_frozen(load) -> None:
    """Run `load` (imports that make objects which stay: LibCST's modules, the rules) with the
    cyclic garbage collector paused, then move everything to its permanent generation
    (`gc.freeze`), so that no later collection scans those objects again. The collector's state
    and thresholds are left as they were. The CLI and the flake8 plugin use it."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        load()
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _store(task: _Task, result: FileResult) -> None:
    if task.key and task.cache is not None:
        task.cache.put(task.key, result.diagnostics, result.error, task.deps)


def _screen_chunk(chunk: tuple[list[SourceFile], Config, bool, ResultCache | None]) \
        -> list[tuple[FileResult | int, str | None]]:
    """First pass, in a worker: read, pre-filter, look up the cache. Per file, its finished result
    or the length of a text that must be linted, with what the file index may remember of it."""
    files, config, fix_edits, cache = chunk
    screened: list[tuple[FileResult | int, str | None]] = []
    for source_file in files:
        prepared, outcome = _prepare_noted(source_file, config, fix_edits, cache)
        screened.append((prepared if isinstance(prepared, FileResult) else prepared.length, outcome))
    if not all(isinstance(result, FileResult) for result, _ in screened):
        # This worker will lint: import the engine now, while the other workers go on screening.
        _import_engine()
    return screened


def _check_in_workers(files, config, jobs, progress, fix_edits, cache, outcomes=None) -> list[FileResult]:
    """Forked workers (cheap and safe here: tfproc-lint starts no threads and no TensorFlow) take
    two kinds of task: screening a chunk of files (read, pre-filter), and linting one candidate
    that a screening found. Candidates go first, longest first, as soon as they are found, so that
    the biggest file starts early instead of last, while the other workers go on screening. The
    largest files are screened first: a large candidate (its lint can take longer than all the
    screening) is then found early, not by the last chunk. `outcomes`: as in `_check_unknown`,
    from the screenings."""
    import multiprocessing  # imported here: a run on a few files never starts a worker process
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    chunks = deque(_chunks(files, jobs))
    workers = min(jobs, len(chunks))
    results: list[FileResult | None] = [None] * len(files)
    candidates: list[tuple[int, int]] = []  # heap of (-length, index in files)
    try:
        with ProcessPoolExecutor(workers, mp_context=context) as executor:
            in_flight: dict = {}  # future: (is a screening, index of its first file)

            def submit_more() -> None:
                while len(in_flight) < 2 * workers and (candidates or chunks):
                    if candidates:
                        index = heapq.heappop(candidates)[1]
                        future = executor.submit(_check_file, files[index], config, fix_edits, cache)
                        in_flight[future] = (False, [index])
                    else:
                        indexes = chunks.popleft()
                        chunk = ([files[i] for i in indexes], config, fix_edits, cache)
                        in_flight[executor.submit(_screen_chunk, chunk)] = (True, indexes)

            submit_more()
            while in_flight:
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    is_screening, indexes = in_flight.pop(future)
                    outputs = future.result() if is_screening else [(future.result(), None)]
                    for index, (output, outcome) in zip(indexes, outputs, strict=True):
                        if is_screening and outcomes is not None:
                            outcomes[index] = outcome
                        if isinstance(output, FileResult):
                            results[index] = output
                            _progress(progress, 1)
                        else:
                            heapq.heappush(candidates, (-output, index))
                submit_more()
    except BrokenProcessPool:
        # A worker died (a native crash, the OOM killer) and took the pool with it. The results
        # received so far are good; the other files are read here, and each candidate is linted in
        # a process of its own, so only the file that kills its process is reported.
        for i, result in enumerate(results):
            if result is not None:
                continue
            prepared = _prepare(files[i], config, fix_edits, cache)
            results[i] = prepared if isinstance(prepared, FileResult) else _lint_isolated(prepared, context)
            _progress(progress, 1)
    return results


def _chunks(files: list[SourceFile], jobs: int) -> list[list[int]]:
    """The screening tasks: indexes into `files`, the largest files first, each chunk at most
    1/(8 jobs) of the files and, past its first file, of about 1/(16 jobs) of their bytes. By count
    alone, the first chunk held half the bytes of TensorFlow + Keras (its largest files): the
    candidates among them (Keras's saving_lib_test.py, the longest lint) waited for the whole of it
    on one worker before their lint could start."""
    sizes = [_size_of(source_file) for source_file in files]
    order = sorted(range(len(files)), key=lambda i: -sizes[i])
    most = max(1, len(files) // (jobs * 8))
    budget = sum(sizes) / (jobs * 16)
    chunks: list[list[int]] = []
    chunk: list[int] = []
    held = 0
    for index in order:
        if chunk and (len(chunk) >= most or held + sizes[index] > budget):
            chunks.append(chunk)
            chunk, held = [], 0
        chunk.append(index)
        held += sizes[index]
    if chunk:
        chunks.append(chunk)
    return chunks


def _size_of(source_file: SourceFile) -> int:
    try:
        return os.stat(source_file.path).st_size
    except OSError:
        return 0  # reported when it is read


def _lint_isolated(task: _Task, context) -> FileResult:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(1, mp_context=context) as executor:
        try:
            return executor.submit(_lint_text, task).result()
        except BrokenProcessPool:
            return FileResult(task.display, error=FileError(
                task.display, "internal error: the process checking this file died (a crash in native code, or "
                              "out of memory)", internal=True))


def _progress(progress, count: int) -> None:
    for _ in range(count if progress else 0):
        progress()


def fix_files(files: list[SourceFile], config: Config, unsafe: bool, write: bool, progress=None) -> list[FixedFile]:
    from tfproc_lint.fixing import fix_file

    fixed_files = []
    for source_file in files:
        entry = FixedFile(FileResult(source_file.display))
        try:
            outcome, original = fix_file(source_file.path, source_file.config or config, unsafe, write,
                                         source_file.display)
            entry.result.diagnostics = outcome.remaining
            entry.original, entry.fixed, entry.applied = original, outcome.source, len(outcome.applied)
            entry.cells = outcome.cells
        except SourceError as error:
            entry.result.error = FileError(source_file.display, str(error))
        except OSError as error:
            entry.result.error = FileError(source_file.display, f"cannot write: {error.strerror or error}")
        except Exception as error:  # noqa: BLE001
            entry.result.error = FileError(source_file.display, f"internal error: {type(error).__name__}: {error}",
                                           internal=True)
        if progress:
            progress()
        fixed_files.append(entry)
    return fixed_files
