"""fixtures/lint/README.md's counts table is the fixtures' own count. After adding fixtures:
`python tests/test_fixture_counts.py --write` renders it again."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from expectations import expected_in, lint_fixtures  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "fixtures" / "lint" / "README.md"
SECTION = re.compile(r"(## Counts\n\n)(.*?Total:[^\n]*)()", re.DOTALL)


def _count(paths: list[Path]) -> str:
    notebooks = sum(path.suffix == ".ipynb" for path in paths)
    if notebooks and notebooks == len(paths):
        return f"{len(paths)} (notebooks)"
    return f"{len(paths)} (1 notebook)" if notebooks == 1 else \
        f"{len(paths)} ({notebooks} notebooks)" if notebooks else str(len(paths))


def render() -> str:
    files = lint_fixtures(ROOT)
    findings: Counter = Counter()
    folders: dict[str, list[Path]] = {}
    for path in files:
        folders.setdefault(path.parent.name, []).append(path)
        findings.update(entry[-1] for entry in expected_in(path))
    rows = ["| rule   | bad files in its dir | good files in its dir | expected findings (all dirs) |",
            "|--------|---------------------:|----------------------:|-----------------------------:|"]
    rules = sorted(name for name in folders if re.fullmatch(r"TFP\d{3}", name))
    for name in [*rules, "mixed", "near_misses"]:
        paths = folders.get(name, [])
        bad = [p for p in paths if p.name.startswith("bad_")]
        good = [p for p in paths if p.name.startswith("good_") or name == "near_misses"]
        total = "(counted above)" if name == "mixed" else str(findings[name] if name in rules else 0)
        rows.append(f"| {name} | {_count(bad)} | {_count(good)} | {total} |")
    bad_all = [p for p in files if p.name.startswith("bad_")]
    good_all = [p for p in files if p not in bad_all]
    near = len(folders.get("near_misses", []))
    notebooks = sum(p.suffix == ".ipynb" for p in files)
    rows.append("")
    rows.append(f"Total: {len(bad_all)} bad files, {len(good_all)} good files ({near} of them near-misses; "
                f"{notebooks} notebooks), {sum(findings.values())} expected findings.")
    return "\n".join(rows)


def test_readme_counts_are_the_fixtures() -> None:
    match = SECTION.search(README.read_text(encoding="utf-8"))
    assert match is not None and match.group(2) == render(), "run: python tests/test_fixture_counts.py --write"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    text = README.read_text(encoding="utf-8")
    README.write_text(SECTION.sub(lambda m: m.group(1) + render() + m.group(3), text, count=1), encoding="utf-8")
