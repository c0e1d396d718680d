"""Checking and fixing many files, in worker processes when there are enough of them."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from tfproc_lint.analysis.prefilter import may_match_bytes
from tfproc_lint.config import Config
from tfproc_lint.diagnostics import FileError, FileResult
from tfproc_lint.engine import SourceError, decode, enabled_rules, lint_source
from tfproc_lint.files import SourceFile
from tfproc_lint.fixing import fix_file


PARALLEL_MIN_FILES = 32  # below this, starting worker processes (about 0.1 s) does not pay


@dataclass
class FixedFile:
    result: FileResult
    original: str = ""
    fixed: str = ""
    applied: int = 0


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def check_files(files: list[SourceFile], config: Config, jobs: int = 0, progress=None,
                fix_edits: bool = False) -> list[FileResult]:
    """Results in the order of `files`; identical for any number of jobs."""
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
    """A finished result (skipped by the pre-filter, unreadable) or the task that lints it."""
    result = FileResult(source_file.display)
    try:
        data = source_file.path.read_bytes()
        if not (source_file.explicit or may_match_bytes(data)):
            return result
        return decode(data).text, source_file.display, config, fix_edits
    except OSError as error:
        result.error = FileError(source_file.display, f"cannot read: {error.strerror or error}")
    except SourceError as error:
        result.error = FileError(source_file.display, str(error))
    return result


def _lint_text(task: tuple[str, str, Config, bool]) -> FileResult:
    text, display, config, fix_edits = task
    result = FileResult(display)
    try:
        result.diagnostics = lint_source(text, display, config, fix_edits=fix_edits)
    except SourceError as error:
        result.error = FileError(display, str(error))
    except Exception as error:  # noqa: BLE001 - report one file's bug, keep going
        result.error = FileError(display, f"internal error: {type(error).__name__}: {error}", internal=True)
    return result


def _check_chunk(chunk: tuple[list[SourceFile], Config, bool]) -> list[FileResult]:
    files, config, fix_edits = chunk
    return [_check_file(f, config, fix_edits) for f in files]


def _check_in_workers(files, config, jobs, progress, fix_edits) -> list[FileResult]:
    """Chunks of files (reading included) in forked workers; fork is cheap and safe here:
    tfproc-lint starts no threads and no TensorFlow."""
    enabled_rules(config)  # import the rules once here, not in every worker
    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    size = max(1, len(files) // (jobs * 8))
    chunks = [(files[i:i + size], config, fix_edits) for i in range(0, len(files), size)]
    results: list[FileResult] = []
    try:
        with ProcessPoolExecutor(min(jobs, len(chunks)), mp_context=context) as executor:
            for chunk_results in executor.map(_check_chunk, chunks):
                results.extend(_with_progress(chunk_results, progress))
    except BrokenProcessPool:
        # A worker died (a native crash, the OOM killer) and took the pool with it. The results
        # received so far are in order and good; the rest are read here, and each candidate is
        # linted in a process of its own, so only the file that kills its process is reported.
        for source_file in files[len(results):]:
            prepared = _prepare(source_file, config, fix_edits)
            if not isinstance(prepared, FileResult):
                prepared = _lint_isolated(prepared, context)
            results.extend(_with_progress([prepared], progress))
    return results


def _lint_isolated(task: tuple[str, str, Config, bool], context) -> FileResult:
    with ProcessPoolExecutor(1, mp_context=context) as executor:
        try:
            return executor.submit(_lint_text, task).result()
        except BrokenProcessPool:
            return FileResult(task[1], error=FileError(
                task[1], "internal error: the process checking this file died (a crash in native code, or out of "
                         "memory)", internal=True))


def _with_progress(outputs, progress):
    for output in outputs:
        if progress:
            progress()
        yield output


def fix_files(files: list[SourceFile], config: Config, unsafe: bool, write: bool, progress=None) -> list[FixedFile]:
    fixed_files = []
    for source_file in files:
        entry = FixedFile(FileResult(source_file.display))
        try:
            outcome, original = fix_file(source_file.path, config, unsafe, write, source_file.display)
            entry.result.diagnostics = outcome.remaining
            entry.original, entry.fixed, entry.applied = original, outcome.source, len(outcome.applied)
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
