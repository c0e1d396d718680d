"""Reading a source file's bytes and decoding them as Python does.

Kept apart from the engine (and free of LibCST) so that reading and pre-filtering many files
does not pay for importing the parser.
"""

from __future__ import annotations

import ast
import tokenize
import warnings
from io import BytesIO
from pathlib import Path

from tfproc_lint.records import record


class SourceError(Exception):
    """The source cannot be analysed (syntax error, ...); the message is one line."""


@record
class DecodedSource:
    text: str
    encoding: str
    bom: bool


def decode(data: bytes) -> DecodedSource:
    """Decode as Python does (BOM, coding cookie, else UTF-8); raise SourceError otherwise."""
    if b"\0" in data:
        raise SourceError("contains NUL bytes; not a Python source file")
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
    except SyntaxError as error:
        raise SourceError(f"cannot decode: {error.msg if hasattr(error, 'msg') else error}") from None
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8-sig" if bom else encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise SourceError(f"cannot decode as {encoding}: {error}") from None
    return DecodedSource(text, "utf-8" if bom else encoding, bom)


def read_source(path: Path) -> DecodedSource:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from None
    return decode(data)


def split_lines(text: str) -> list[str]:
    """The lines of `text`, each with its line end, split at "\n" only (as Python's tokenizer
    reads them): `str.splitlines` also splits at form feeds, "\x1c", "\u2028", ..., which can
    sit inside a line of code or a string."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


# CPython's own messages for code nested beyond what its parser accepts.
_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation", "too complex")


def parse_guard(source: str) -> ast.Module | None:
    """CPython's syntax tree of `source`, or None where CPython rejects it for another reason than
    nesting; raise SourceError for code nested too deeply for LibCST to parse safely.

    LibCST's native parser recurses on the C stack: a few thousand nesting levels (5,000 nested
    parentheses, 4,000 chained `lambda:`) kill the process with SIGSEGV or SIGABRT, which no
    `except` can catch and which breaks the whole `-j` worker pool. CPython's parser refuses such
    code cleanly well before that (at most 200 nested brackets, at most 3x the recursion limit of
    AST depth), so it parses first, as a guard; this costs 5-10% of the LibCST parse, and the tree
    serves the pre-filter's syntax-tree stages and the positions. Other syntax errors are left to
    LibCST, which knows syntax newer than the running Python.
    """
    try:
        with warnings.catch_warnings():  # e.g. invalid escape sequences: not ours to report
            warnings.simplefilter("ignore")
            return compile(source, "<source>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
    except (RecursionError, MemoryError):
        raise SourceError("cannot parse: the code is nested too deeply") from None
    except SyntaxError as error:
        if any(reason in str(error.msg) for reason in _TOO_DEEP):
            raise SourceError(f"cannot parse: {error.msg} (line {error.lineno})") from None
    except ValueError:  # NUL bytes: LibCST's error is reported below
        pass
    return None
