"""Terminal niceties that stay out of the way: progress and colour only on a TTY.

Progress is shown on stderr when it is a terminal and CI is not set; colour is used when the
stream is a terminal (or `--color always`) and NO_COLOR is not set (https://no-color.org).
"""

from __future__ import annotations

import os
import time

_STYLES = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "dim": "2"}


class Console:
    def __init__(self, stream, color: str = "auto", quiet: bool = False) -> None:
        self.stream = stream
        self.color = color
        in_ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
        self.show_progress = not quiet and is_terminal(stream) and not in_ci
        self._shown = False

    def colour_for(self, stream):
        """A function `colour(text, style)`, or None for plain text."""
        if self.color == "never" or (self.color == "auto" and (os.environ.get("NO_COLOR") or not is_terminal(stream))):
            return None
        return lambda text, style: f"\x1b[{_STYLES[style]}m{text}\x1b[0m"

    def progress(self, total: int, label: str):
        """A callable to tick once per item, or None when progress is not shown."""
        if not self.show_progress or total < 2:
            return None
        state = {"done": 0, "last": 0.0}

        def tick() -> None:
            state["done"] += 1
            now = time.monotonic()
            if now - state["last"] >= 0.1 or state["done"] == total:
                state["last"] = now
                self.stream.write(f"\r{label} {state['done']}/{total}")
                self.stream.flush()
                self._shown = True

        return tick

    def done(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


def is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
