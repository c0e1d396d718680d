"""Checking and fixing many files, in worker processes when there are enough of them."""

from __future__ import annotations

import heapq
import os
from collections import deque
from dataclasses import dataclass, field

from tfproc_lint.analysis.prefilter import may_match, may_match_bytes
from tfproc_lint.config import Config
from tfproc_lint.diagnostics import FileError, FileResult
from tfproc_lint.files import SourceFile, is_notebook
from tfproc_lint.source import SourceError, decode


PARALLEL_MIN_FILES = 32  # below this, starting worker processes (about 0.1 s) does not pay


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
                fix_edits: bool = False) -> list[FileResult]:
    """Results in the order of `files`; identical for any number of jobs. Each file is checked
    with its own configuration (`SourceFile.config`, which travels with it to the worker
    processes), `config` where it has none."""
    jobs = jobs or default_jobs()
    if jobs > 1 and len(files) >= max(PARALLEL_MIN_FILES, 2):
        return _check_in_workers(files, config, jobs, progress, fix_edits)
    return list(_with_progress((_check_file(f, config, fix_edits) for f in files), progress))


def _check_file(source_file: SourceFile, config: Config, fix_edits: bool) -> FileResult:
    """Read, pre-filter on bytes, decode and lint one file."""
    prepared = _prepare(source_file, config, fix_edits)
    if isinstance(prepared, FileResult):
        return prepared
    return _lint_text(prepared)


def _prepare(source_file: SourceFile, config: Config, fix_edits: bool) -> FileResult | tuple:
    """A finished result (skipped by the pre-filter, unreadable) or the task that lints it: the
    text, or a notebook's program."""
    result = FileResult(source_file.display)
    config = source_file.config or config
    try:
        data = source_file.path.read_bytes()
        if not (source_file.explicit or may_match_bytes(data)):
            return result
        text = _notebook_program(data) if is_notebook(source_file.path) else decode(data).text
        if text is None:
            return result  # a notebook in another language
        if not (source_file.explicit or may_match(text if isinstance(text, str) else text.text)):
            return result  # lint_source would return at once; this keeps the worker off the engine
        return text, source_file.display, config, fix_edits
    except OSError as error:
        result.error = FileError(source_file.display, f"cannot read: {error.strerror or error}")
    except SourceError as error:
        result.error = FileError(source_file.display, str(error))
    return result


def _notebook_program(data: bytes):
    from tfproc_lint.notebook import read_notebook

    return read_notebook(data).program


def _task_length(task: tuple) -> int:
    return len(task[0] if isinstance(task[0], str) else task[0].text)


def _lint_text(task: tuple) -> FileResult:
    # The engine (LibCST and the rules, about 0.2 s to import) is imported by the first file that
    # passes the pre-filter: in each worker, while the others go on reading, and never for a run
    # in which no file can match.
    from tfproc_lint.engine import lint_notebook, lint_source

    text, display, config, fix_edits = task
    result = FileResult(display)
    try:
        if isinstance(text, str):
            result.diagnostics = lint_source(text, display, config, fix_edits=fix_edits)
        else:
            result.diagnostics = lint_notebook(text, display, config)
    except SourceError as error:
        result.error = FileError(display, str(error))
    except Exception as error:  # noqa: BLE001 - report one file's bug, keep going
        result.error = FileError(display, f"internal error: {type(error).__name__}: {error}", internal=True)
    return result


def _screen_chunk(chunk: tuple[list[SourceFile], Config, bool]) -> list[FileResult | int]:
    """First pass, in a worker: read and pre-filter. Per file, its finished result, or the length
    of a text that must be linted."""
    files, config, fix_edits = chunk
    screened: list[FileResult | int] = []
    for source_file in files:
        prepared = _prepare(source_file, config, fix_edits)
        screened.append(prepared if isinstance(prepared, FileResult) else _task_length(prepared))
    if not all(isinstance(result, FileResult) for result in screened):
        # This worker will lint: import the engine now, while the other workers go on screening.
        import tfproc_lint.engine  # noqa: F401
    return screened


def _check_in_workers(files, config, jobs, progress, fix_edits) -> list[FileResult]:
    """Forked workers (cheap and safe here: tfproc-lint starts no threads and no TensorFlow) take
    two kinds of task: screening a chunk of files (read, pre-filter), and linting one candidate
    that a screening found. Candidates go first, longest first, as soon as they are found, so that
    the biggest file starts early instead of last, while the other workers go on screening."""
    import multiprocessing  # imported here: a run on a few files never starts a worker process
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    size = max(1, len(files) // (jobs * 8))
    chunk_starts = deque(range(0, len(files), size))
    workers = min(jobs, len(chunk_starts))
    results: list[FileResult | None] = [None] * len(files)
    candidates: list[tuple[int, int]] = []  # heap of (-length, index in files)
    try:
        with ProcessPoolExecutor(workers, mp_context=context) as executor:
            in_flight: dict = {}  # future: (is a screening, index of its first file)

            def submit_more() -> None:
                while len(in_flight) < 2 * workers and (candidates or chunk_starts):
                    if candidates:
                        index = heapq.heappop(candidates)[1]
                        in_flight[executor.submit(_check_file, files[index], config, fix_edits)] = (False, index)
                    else:
                        start = chunk_starts.popleft()
                        chunk = (files[start:start + size], config, fix_edits)
                        in_flight[executor.submit(_screen_chunk, chunk)] = (True, start)

            submit_more()
            while in_flight:
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    is_screening, start = in_flight.pop(future)
                    outputs = future.result() if is_screening else [future.result()]
                    for index, output in enumerate(outputs, start):
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
            prepared = _prepare(files[i], config, fix_edits)
            results[i] = prepared if isinstance(prepared, FileResult) else _lint_isolated(prepared, context)
            _progress(progress, 1)
    return results


def _lint_isolated(task: tuple[str, str, Config, bool], context) -> FileResult:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(1, mp_context=context) as executor:
        try:
            return executor.submit(_lint_text, task).result()
        except BrokenProcessPool:
            return FileResult(task[1], error=FileError(
                task[1], "internal error: the process checking this file died (a crash in native code, or out of "
                         "memory)", internal=True))


def _progress(progress, count: int) -> None:
    for _ in range(count if progress else 0):
        progress()


def _with_progress(outputs, progress):
    for output in outputs:
        if progress:
            progress()
        yield output


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
