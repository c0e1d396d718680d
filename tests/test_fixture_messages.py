"""Every lint fixture's findings with their messages, as committed in fixtures/lint/messages.json
(path, then each finding's cell in a notebook, line, column, code and message), so that a change
of wording shows in review as a diff of the snapshot. The fixtures are linted with the opt-in rules
selected, as on a machine with fixture_findings.SNAPSHOT_CPUS CPUs (TFP302's message counts them).
After changing a message on purpose: `python tests/test_fixture_messages.py --write`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from expectations import lint_fixtures  # noqa: E402
from fixture_findings import Finding, findings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LINT = ROOT / "fixtures" / "lint"
SNAPSHOT = LINT / "messages.json"


def _entry(finding: Finding) -> dict:
    entry = {} if finding.cell is None else {"cell": finding.cell}
    entry.update(line=finding.line, column=finding.column, code=finding.code, message=finding.message)
    return entry


def snapshot(paths: list[Path]) -> dict[str, list[dict]]:
    """Each fixture with findings, by its path in fixtures/lint, with its findings in the linter's order."""
    return {path.relative_to(LINT).as_posix(): [_entry(finding) for finding in findings(path)]
            for path in paths if findings(path)}


def render() -> str:
    return json.dumps(snapshot(lint_fixtures(ROOT)), indent=1, ensure_ascii=False) + "\n"


def _directory(path: Path) -> str:
    return path.relative_to(LINT).parts[0]


DIRECTORIES = sorted({_directory(path) for path in lint_fixtures(ROOT)})


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_messages_are_the_snapshot(directory: str) -> None:
    """Per directory of fixtures (a rule's own, mixed, near_misses), so that `-k TFP201` checks its rule's."""
    committed = {name: entries for name, entries in json.loads(SNAPSHOT.read_text(encoding="utf-8")).items()
                 if _directory(LINT / name) == directory}
    current = snapshot([path for path in lint_fixtures(ROOT) if _directory(path) == directory])
    changed = sorted(name for name in committed.keys() | current.keys() if committed.get(name) != current.get(name))
    assert not changed, f"messages differ in {changed[:5]} ({len(changed)} fixtures); " \
        "if on purpose, run: python tests/test_fixture_messages.py --write and review the diff"


def test_the_snapshot_holds_no_path_of_this_machine() -> None:
    """The snapshot's messages hold no path of this checkout (another machine's would differ), none is empty."""
    committed = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    messages = [entry["message"] for entries in committed.values() for entry in entries]
    assert messages and all(message.strip() for message in messages)
    assert not any(str(ROOT) in message for message in messages)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    SNAPSHOT.write_text(render(), encoding="utf-8")
