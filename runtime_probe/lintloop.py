"""Close the loop with the linter: bad scenarios must be flagged by their rule, fixed ones must
lint clean, and where the linter offers a fix, the auto-fixed bad scenario becomes one more
scenario that must run ok.
"""

from __future__ import annotations

import importlib
import re
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


def _codes(diagnostics) -> str:
    return ", ".join(f"{d.code}@{'' if d.cell is None else f'cell {d.cell}:'}{d.line}" for d in diagnostics) or "none"


def run(scenarios: list[Scenario], outdir: Path) -> LintLoop:
    engine, why = _import("engine")
    config_module, why_config = _import("config")
    if engine is None or config_module is None:
        return LintLoop(status=f"linter unavailable ({why or why_config})")
    fixing, why_fixing = _import("fixing")
    loop = LintLoop(status="ran" if fixing else f"ran; fixer unavailable ({why_fixing})")
    for scenario in scenarios:
        source = scenario.source
        config = _config(config_module, scenario)
        try:
            found = _lint(engine, scenario, config)
        except Exception as exc:  # noqa: BLE001 - a linter crash is a finding for the lead, not a probe crash
            loop.checks.append(LintCheck(scenario.name, "lint", False, f"linter raised {exc!r}"))
            continue
        if scenario.kind == "fixed":
            loop.checks.append(LintCheck(scenario.name, "lints clean", not found, f"found {_codes(found)}"))
        elif not LINT_RULE.fullmatch(scenario.rule):
            loop.checks.append(LintCheck(scenario.name, f"none ({scenario.rule} is no lint rule)", None,
                                         f"found {_codes(found)}"))
        else:
            own = [d for d in found if d.code == scenario.rule]
            loop.checks.append(
                LintCheck(scenario.name, f"flagged {scenario.rule}", bool(own), f"found {_codes(found)}")
            )
            if own and fixing and scenario.is_notebook:
                _autofix_notebook(loop, scenario, own, fixing, config, outdir)
            elif own and fixing:
                _autofix(loop, scenario, source, own, engine, fixing, config, outdir)
    return loop


def _config(config_module, scenario: Scenario):
    """The default rules, and the scenario's own rule even when it is opt-in (TFP302, TFP303)."""
    config = config_module.Config()
    if LINT_RULE.fullmatch(scenario.rule):
        config = config_module.apply_options(config, {"extend-select": scenario.rule}, "the probe")
    return config


def _lint(engine, scenario: Scenario, config) -> list:
    """Findings of a script, or of a notebook's code cells (lines counted within each cell)."""
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


def autofixed_scenario(bad: Scenario, path: Path) -> Scenario:
    """The auto-fixed twin of `bad`: must run ok (and faster, where `bad` was only slow)."""
    expect = {"outcome": "ok"}
    if "slower_than" in bad.expect:
        expect["faster_than"] = {"scenario": bad.name, "factor": bad.expect["slower_than"]["factor"]}
    return replace(
        bad, name=f"{bad.name} (auto-fixed)", path=path, kind="auto-fixed", expect=expect,
        timeout=max(bad.timeout, 60.0),
    )
