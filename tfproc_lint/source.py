"""Reading a source file's bytes and decoding them as Python does.

Kept apart from the engine (and free of LibCST) so that reading and pre-filtering many files
does not pay for importing the parser.
"""

from __future__ import annotations

import tokenize
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path


class SourceError(Exception):
    """The source cannot be analysed (syntax error, ...); the message is one line."""


@dataclass(frozen=True)
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
