"""Between the engine's positions and LSP's.

The engine counts lines from 1 and columns in characters (code points); LSP counts lines from 0
and columns in the code units of the negotiated position encoding (UTF-16 unless the client
offers another). Lines end at "\\n", as the engine and Python's tokenizer read them.
"""

from __future__ import annotations

import bisect

from tfproc_lint.source import split_lines

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def units(text: str, encoding: str) -> int:
    """The length of `text` in the encoding's code units."""
    if encoding == UTF32 or text.isascii():
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for character in text if ord(character) > 0xFFFF)


class LineIndex:
    """One text's lines, for converting positions both ways."""

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.text = text
        self.encoding = encoding
        self.lines = split_lines(text)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def _body(self, line: int) -> str:
        """The 0-based line without its end; "" past the last line."""
        return self.lines[line].rstrip("\r\n") if 0 <= line < len(self.lines) else ""

    def to_client(self, line: int, column: int) -> tuple[int, int]:
        """0-based line and character column -> 0-based line and code-unit column."""
        body = self._body(line)
        return line, units(body[:column], self.encoding) + max(0, column - len(body))

    def from_client(self, line: int, column: int) -> tuple[int, int]:
        """0-based line and code-unit column -> 0-based line and character column."""
        body = self._body(line)
        counted = 0
        for index, character in enumerate(body):
            if counted >= column:
                return line, index
            counted += units(character, self.encoding)
        return line, len(body)

    def offset_to_client(self, offset: int) -> tuple[int, int]:
        """A character offset into the text -> 0-based line and code-unit column."""
        line = max(bisect.bisect_right(self.starts, offset) - 1, 0)
        if line >= len(self.lines):  # at the very end of the text
            if self.lines and not self.lines[-1].endswith("\n"):
                return self.to_client(len(self.lines) - 1, offset - self.starts[-2])
            return len(self.lines), 0
        return self.to_client(line, offset - self.starts[line])

    def end_of_line(self, line: int) -> tuple[int, int]:
        """The client position at the end of a 0-based line's text."""
        return line, units(self._body(line), self.encoding)
