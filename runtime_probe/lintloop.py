"""Close the loop with the linter: bad scenarios must be flagged by their rule, fixed ones must
lint clean, and where the linter offers a fix, the auto-fixed bad scenario becomes one more
scenario that must run ok. A package scenario is linted as a project, in a copy of its folder: its
entry script and the files it names; a fix edits only the entry script, in a copy of the package.
"""

from __future__ import annotations

import importlib
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .catalog import Scenario

LINT_RULE = re.compile(r"TFP\d+")  # scenario rules the linter has a code for


@dataclass
class LintCheck:
    scenario: str
    requirement: str  # "flagged TFP101", "lints clean", "auto-fix", ...
    passed: bool | None  # None: nothing to check (no fix offered)
    detail: str = ""


@dataclass
class LintLoop:
    status: str  # "ran" or why it could not run
    checks: list[LintCheck] = field(default_factory=list)
    autofixed: list[Scenario] = field(default_factory=list)

    @property
    def failures(self) -> list[LintCheck]:
        return [c for c in self.checks if c.passed is False]

    def to_dict(self) -> dict:
        return {
            "status": self.status,
            "checks": [asdict(c) for c in self.checks],
            "autofixed": [str(s.path) for s in self.autofixed],
        }


def _import(module: str):
    """The tfproc_lint module, or the reason it cannot be imported (it is written in parallel)."""
    try:
        return importlib.import_module(f"tfproc_lint.{module}"), ""
    except Exception as exc:  # noqa: BLE001 - any import failure means "unavailable", reported as such
        return None, f"{type(exc).__name__}: {exc}"


def _codes(diagnostics, root: Path | None = None) -> str:
    """"TFP201@12", or in a package "TFP201@workers.py:12"; "cell 2:" before a notebook cell's lines."""
    def where(d) -> str:
        place = f"{Path(d.path).relative_to(root).as_posix()}:" if root is not None else ""
        return f"{place}{'' if d.cell is None else f'cell {d.cell}:'}{d.line}"

    return ", ".join(f"{d.code}@{where(d)}" for d in diagnostics) or "none"


@contextmanager
def _linted_copy(scenario: Scenario):
    """A package scenario's folder copied to a scratch directory (removed afterwards), or None."""
    if scenario.root is None:
        yield None
        return
    scratch = tempfile.mkdtemp(prefix=f"probe-lint-{scenario.name}-")
    try:
        copy = Path(scratch) / scenario.root.name
        shutil.copytree(scenario.root, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        yield copy
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(scenarios: list[Scenario], outdir: Path) -> LintLoop:
    engine, why = _import("engine")
    config_module, why_config = _import("config")
    if engine is None or config_module is None:
        return LintLoop(status=f"linter unavailable ({why or why_config})")
    fixing, why_fixing = _import("fixing")
    loop = LintLoop(status="ran" if fixing else f"ran; fixer unavailable ({why_fixing})")
    for scenario in scenarios:
        with _linted_copy(scenario) as copy:
            _check(loop, scenario, engine, fixing, _config(config_module, scenario), outdir, copy)
    return loop


def _check(loop: LintLoop, scenario: Scenario, engine, fixing, config, outdir: Path, copy: Path | None) -> None:
    """The lint checks of one scenario; `copy`: a package scenario's folder, copied."""
    try:
        found = _lint(engine, scenario, config, copy)
    except Exception as exc:  # noqa: BLE001 - a linter crash is a finding for the lead, not a probe crash
        loop.checks.append(LintCheck(scenario.name, "lint", False, f"linter raised {exc!r}"))
        return
    codes = _codes(found, copy)
    if scenario.kind == "fixed":
        loop.checks.append(LintCheck(scenario.name, "lints clean", not found, f"found {codes}"))
    elif not LINT_RULE.fullmatch(scenario.rule):
        loop.checks.append(LintCheck(scenario.name, f"none ({scenario.rule} is no lint rule)", None, f"found {codes}"))
    else:
        own = [d for d in found if d.code == scenario.rule]
        loop.checks.append(LintCheck(scenario.name, f"flagged {scenario.rule}", bool(own), f"found {codes}"))
        if own and fixing and scenario.is_notebook:
            _autofix_notebook(loop, scenario, own, fixing, config, outdir)
        elif own and fixing and copy is not None:
            _autofix_package(loop, scenario, own, engine, fixing, config, outdir, copy)
        elif own and fixing:
            _autofix(loop, scenario, scenario.source, own, engine, fixing, config, outdir)


def _config(config_module, scenario: Scenario):
    """The default rules, and the scenario's own rule even when it is opt-in (TFP302, TFP303)."""
    config = config_module.Config()
    if LINT_RULE.fullmatch(scenario.rule):
        config = config_module.apply_options(config, {"extend-select": scenario.rule}, "the probe")
    return config


def _lint(engine, scenario: Scenario, config, copy: Path | None = None) -> list:
    """Findings of a script, of a notebook's code cells (lines counted within each cell), or of a
    package's entry script and named files, each linted where it lies in the copied project."""
    if copy is not None:
        found = []
        for name in (scenario.path.relative_to(scenario.root).as_posix(), *scenario.lint_files):
            path = copy / name
            found += engine.lint_source(path.read_text(encoding="utf-8"), str(path), config)
        return found
    if not scenario.is_notebook:
        return engine.lint_source(scenario.source, str(scenario.path), config)
    from tfproc_lint.notebook import read_notebook

    program = read_notebook(scenario.path.read_bytes()).program
    return engine.lint_notebook(program, str(scenario.path), config) if program else []


def _autofix_notebook(loop, scenario, own, fixing, config, outdir: Path) -> None:
    """The notebook fixed in a copy, the way `tfproc-lint check --fix --unsafe-fixes` would."""
    if not any(d.fix for d in own):
        loop.checks.append(LintCheck(scenario.name, "auto-fix", None, "no fix offered (manual edit)"))
        return
    path = outdir / "autofixed" / scenario.path.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(scenario.path.read_bytes())
    try:
        fixed, _ = fixing.fix_notebook_file(path, config, unsafe=True)
    except Exception as exc:  # noqa: BLE001 - reported, see above
        loop.checks.append(LintCheck(scenario.name, "auto-fix", False, f"fixer raised {exc!r}"))
        return
    if not fixed.applied:
        loop.checks.append(LintCheck(scenario.name, "auto-fix", False, "a fix was offered but nothing changed"))
        return
    loop.checks.append(LintCheck(scenario.name, "auto-fix", True, f"applied {len(fixed.applied)}"))
    loop.autofixed.append(autofixed_scenario(scenario, path))
    remaining = [d for d in fixed.remaining if d.code == scenario.rule]
    loop.checks.append(LintCheck(
        f"{scenario.name} (auto-fixed)", f"no {scenario.rule} left", not remaining, f"found {_codes(remaining)}"
    ))


def _autofix(loop, scenario, source, own, engine, fixing, config, outdir: Path) -> None:
    if not any(d.fix for d in own):
        loop.checks.append(LintCheck(scenario.name, "auto-fix", None, "no fix offered (manual edit)"))
        return
    try:
        fixed = fixing.fix_source(source, str(scenario.path), config, unsafe=True)
    except Exception as exc:  # noqa: BLE001 - reported, see above
        loop.checks.append(LintCheck(scenario.name, "auto-fix", False, f"fixer raised {exc!r}"))
        return
    if fixed.source == source:
        loop.checks.append(LintCheck(scenario.name, "auto-fix", False, "a fix was offered but nothing changed"))
        return
    titles = "; ".join(sorted({d.fix.title for d in fixed.applied if d.fix}))
    loop.checks.append(LintCheck(scenario.name, "auto-fix", True, f"applied {len(fixed.applied)}: {titles}"))
    path = outdir / "autofixed" / scenario.path.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(fixed.source, encoding="utf-8")
    loop.autofixed.append(autofixed_scenario(scenario, path))
    try:
        remaining = [d for d in engine.lint_source(fixed.source, str(path), config) if d.code == scenario.rule]
    except Exception as exc:  # noqa: BLE001 - reported, see above
        loop.checks.append(LintCheck(f"{scenario.name} (auto-fixed)", "lint", False, f"linter raised {exc!r}"))
        return
    loop.checks.append(LintCheck(
        f"{scenario.name} (auto-fixed)", f"no {scenario.rule} left", not remaining, f"found {_codes(remaining)}"
    ))


def _autofix_package(loop, scenario, own, engine, fixing, config, outdir: Path, copy: Path) -> None:
    """The entry script fixed in place in the copied package (fixes edit only the reported file), and the
    copy kept as the auto-fixed scenario."""
    entry = copy / scenario.path.relative_to(scenario.root)
    if not any(d.fix for d in own if Path(d.path) == entry):
        loop.checks.append(LintCheck(scenario.name, "auto-fix", None, "no fix offered (manual edit)"))
        return
    source = entry.read_text(encoding="utf-8")
    try:
        fixed = fixing.fix_source(source, str(entry), config, unsafe=True)
    except Exception as exc:  # noqa: BLE001 - reported, see above
        loop.checks.append(LintCheck(scenario.name, "auto-fix", False, f"fixer raised {exc!r}"))
        return
    if fixed.source == source:
        loop.checks.append(LintCheck(scenario.name, "auto-fix", False, "a fix was offered but nothing changed"))
        return
    titles = "; ".join(sorted({d.fix.title for d in fixed.applied if d.fix}))
    loop.checks.append(LintCheck(scenario.name, "auto-fix", True, f"applied {len(fixed.applied)}: {titles}"))
    entry.write_text(fixed.source, encoding="utf-8")
    target = outdir / "autofixed" / scenario.root.name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(copy, target)
    path = target / scenario.path.relative_to(scenario.root)
    loop.autofixed.append(replace(autofixed_scenario(scenario, path), root=target))
    try:
        remaining = [d for d in _lint(engine, scenario, config, copy) if d.code == scenario.rule]
    except Exception as exc:  # noqa: BLE001 - reported, see above
        loop.checks.append(LintCheck(f"{scenario.name} (auto-fixed)", "lint", False, f"linter raised {exc!r}"))
        return
    loop.checks.append(LintCheck(
        f"{scenario.name} (auto-fixed)", f"no {scenario.rule} left", not remaining, f"found {_codes(remaining, copy)}"
    ))


def autofixed_scenario(bad: Scenario, path: Path) -> Scenario:
    """The auto-fixed twin of `bad`: must run ok (and faster, where `bad` was only slow)."""
    expect = {"outcome": "ok"}
    if "slower_than" in bad.expect:
        expect["faster_than"] = {"scenario": bad.name, "factor": bad.expect["slower_than"]["factor"]}
    return replace(
        bad, name=f"{bad.name} (auto-fixed)", path=path, kind="auto-fixed", expect=expect,
        timeout=max(bad.timeout, 60.0),
    )
