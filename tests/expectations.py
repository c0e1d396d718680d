"""Reading fixture files: `# expect: CODE[, CODE]` per line and `# fixture-config: k=v` headers."""

from __future__ import annotations

import re
from pathlib import Path

from tfproc_lint.config import Config, apply_options

EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TFP\d{3}(?:\s*,\s*TFP\d{3})*)")
CONFIG = re.compile(r"#\s*fixture-config:\s*(?P<options>.+)")


def expected(source: str) -> set[tuple[int, str]]:
    found = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            for code in re.split(r"\s*,\s*", match.group("codes")):
                found.add((number, code))
    return found


def fixture_config(source: str, where: str) -> Config:
    options = {}
    for line in source.splitlines()[:5]:
        match = CONFIG.search(line)
        if match:
            for pair in match.group("options").split(";"):
                key, _, value = pair.partition("=")
                options[key.strip()] = value.strip()
    return apply_options(Config(), options, where) if options else Config()


def lint_fixtures(root: Path) -> list[Path]:
    return sorted((root / "fixtures" / "lint").rglob("*.py"))
