"""Parsing a module with guards: every way the parsers can fail becomes a one-line SourceError.

CPython parses first (`source.parse_guard`, kept with the LibCST-free reading code so that
batch.py can screen files without importing LibCST): it refuses code nested too deeply for LibCST's
native parser, which would kill the process. Then LibCST parses; its errors take CPython's wording
where CPython has one.
"""

from __future__ import annotations

import ast

import libcst as cst

from tfproc_lint.source import SourceError, parse_guard


def parse(source: str) -> cst.Module:
    """LibCST's tree of `source`; SourceError if CPython or LibCST refuses it."""
    module = _RECENT.get(source)
    if module is not None:  # parsed, guard and all, a moment ago
        return module
    return parse_with_syntax_tree(source)[0]


def parse_with_syntax_tree(source: str) -> tuple[cst.Module, ast.Module | None]:
    """LibCST's tree, and CPython's tree of the same source when CPython accepts it (the guard
    builds it anyway; positions use it to find where statements start)."""
    syntax_tree = parse_guard(source)
    return parse_guarded(source), syntax_tree


# The last few modules parsed, by text. A fix's rewrite is parsed twice otherwise: by the check
# that re-analyses it (engine._rewrite_refusal), then by the fix loop that applies it (fixing.py):
# one parse of three on a file with a fix. LibCST's trees are immutable: sharing one is safe.
_RECENT: dict[str, cst.Module] = {}
_RECENT_SIZE = 4


def parse_guarded(source: str) -> cst.Module:
    """LibCST's tree of `source`, which `parse_guard` has accepted."""
    module = _RECENT.get(source)
    if module is None:
        module = _parse_guarded(source)
        if len(_RECENT) >= _RECENT_SIZE:
            _RECENT.pop(next(iter(_RECENT)))
        _RECENT[source] = module
    return module


def _parse_guarded(source: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise SourceError(_syntax_error(source, error)) from None
    except RecursionError:
        raise SourceError("cannot parse: the code is nested too deeply") from None
    except (ValueError, TypeError) as error:  # e.g. NUL bytes
        raise SourceError(f"cannot parse: {str(error).splitlines()[0]}") from None
    except cst.CSTValidationError as error:  # valid Python LibCST's parser rejects: `"" not in.0`
        raise SourceError(f"cannot parse with LibCST: {str(error).splitlines()[0]}") from None


def _syntax_error(source: str, error: cst.ParserSyntaxError) -> str:
    """One line, with CPython's wording where it has one (it names Python 2 print statements)."""
    try:
        compile(source, "<source>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
    except SyntaxError as python_error:
        if python_error.lineno:
            return (f"cannot parse as Python 3 (line {python_error.lineno}, column {python_error.offset or 1}): "
                    f"{python_error.msg}")
    except (ValueError, RecursionError, MemoryError):
        pass
    message = str(error.message).split(": expected one of")[0].splitlines()[0] if error.message else "invalid syntax"
    return f"cannot parse as Python 3 (line {error.editor_line}, column {error.editor_column}): {message}"
