"""Checking and fixing many files: the pre-filter runs here, only candidates go to worker processes."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from tfproc_lint.analysis.prefilter import may_match_bytes
from tfproc_lint.config import Config
from tfproc_lint.diagnostics import Diagnostic, FileError, FileResult
from tfproc_lint.engine import SourceError, decode, enabled_rules, lint_source
from tfproc_lint.files import SourceFile
from tfproc_lint.fixing import fix_file


PARALLEL_MIN_CHARS = 500_000  # about half a second of LibCST work on 2 cores


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


def _lint_text(task: tuple[str, str, Config, bool]) -> tuple[list[Diagnostic], FileError | None]:
    text, display, config, fix_edits = task
    try:
        return lint_source(text, display, config, fix_edits=fix_edits), None
    except SourceError as error:
        return [], FileError(display, str(error))
    except Exception as error:  # noqa: BLE001 - report one file's bug, keep going
        return [], FileError(display, f"internal error: {type(error).__name__}: {error}", internal=True)


def check_files(files: list[SourceFile], config: Config, jobs: int = 0, progress=None,
                fix_edits: bool = False) -> list[FileResult]:
    """Results in the order of `files`; identical for any number of jobs."""
    results = [FileResult(f.display) for f in files]
    pending: list[tuple[int, tuple[str, str, Config, bool]]] = []
    for index, source_file in enumerate(files):
        try:
            data = source_file.path.read_bytes()
            if not (source_file.explicit or may_match_bytes(data)):
                if progress:
                    progress()
                continue
            text = decode(data).text
        except OSError as error:
            results[index].error = FileError(source_file.display, f"cannot read: {error.strerror or error}")
            continue
        except SourceError as error:
            results[index].error = FileError(source_file.display, str(error))
            continue
        pending.append((index, (text, source_file.display, config, fix_edits)))
    jobs = jobs or default_jobs()
    tasks = [task for _, task in pending]
    # Starting worker processes costs about 0.1 s: worth it only with enough text to analyse.
    if jobs > 1 and len(pending) > 1 and sum(len(task[0]) for task in tasks) > PARALLEL_MIN_CHARS:
        enabled_rules(config)  # import the rules once here, not in every forked worker
        # fork is cheap and safe here: tfproc-lint starts no threads and no TensorFlow.
        context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        outputs = []
        try:
            with ProcessPoolExecutor(min(jobs, len(pending)), mp_context=context) as executor:
                for output in _with_progress(
                        executor.map(_lint_text, tasks, chunksize=max(1, len(tasks) // (jobs * 4))), progress):
                    outputs.append(output)  # noqa: PERF402 - keeps what arrived before a worker died
        except BrokenProcessPool:
            # A worker died (a native crash, the OOM killer) and took the pool with it. The outputs
            # received so far are in order and good; each remaining file gets a process of its own,
            # so only the file that kills its process is reported, not the whole run.
            remaining = (_lint_isolated(task, context) for task in tasks[len(outputs):])
            outputs.extend(_with_progress(remaining, progress))
    else:
        outputs = list(_with_progress(map(_lint_text, tasks), progress))
    for (index, _), (diagnostics, error) in zip(pending, outputs, strict=True):
        results[index].diagnostics = diagnostics
        results[index].error = error
    return results


def _lint_isolated(task: tuple[str, str, Config, bool], context) -> tuple[list[Diagnostic], FileError | None]:
    with ProcessPoolExecutor(1, mp_context=context) as executor:
        try:
            return executor.submit(_lint_text, task).result()
        except BrokenProcessPool:
            return [], FileError(task[1], "internal error: the process checking this file died (a crash in native "
                                          "code, or out of memory)", internal=True)


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
