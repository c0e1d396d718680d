"""The engine: one parse, one analysis, all enabled rules, plain data out.

`lint_source` is the one core function behind the CLI, the flake8 plugin, the probe and the tests.
"""

from __future__ import annotations

import ast
import os
from collections import Counter
from contextlib import nullcontext
from typing import TYPE_CHECKING

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.prefilter import may_match, may_match_tree, may_need_project
from tfproc_lint.analysis.project_names import Place, ProjectNames
from tfproc_lint.config import Config
from tfproc_lint.diagnostics import Diagnostic, Edit, Fix, Related
from tfproc_lint.fixes.base import Refusal
from tfproc_lint.fixes.common import replace_nodes
from tfproc_lint.noqa import remove_noqa
from tfproc_lint.rules.base import Report, Rule, all_rules
from tfproc_lint.parsing import parse_guarded
from tfproc_lint.project import project_for
from tfproc_lint.source import DecodedSource, SourceError, decode, parse_guard, read_source  # noqa: F401 - re-exported

if TYPE_CHECKING:
    from tfproc_lint.notebook import Program

DEFAULT_CONFIG = Config()


def enabled_rules(config: Config) -> list[Rule]:
    return [rule() for rule in all_rules() if config.is_enabled(rule.code, rule.default_enabled)]


UNSCREENED = object()  # `lint_source(syntax_tree=...)` not given: the engine runs the guard and the stages
AUTO = object()  # `lint_source(project=...)` not given: the project of `path`, if it is a file in one


def lint_source(source: str, path: str = "<string>", config: Config = DEFAULT_CONFIG,
                respect_noqa: bool = True, fix_edits: bool = False, verify_fixes: bool = True,
                notebook: bool = False, syntax_tree=UNSCREENED, project=AUTO) -> list[Diagnostic]:
    """Diagnostics for one module's text. Raises SourceError when it cannot be parsed.

    A finding's `fix` names the rewrite and its safety. With `fix_edits=True` (fixing, diffs, JSON,
    SARIF) the edits are computed and, with `verify_fixes`, the rewritten module is re-analysed: a
    fix whose result would not parse or would have a finding the original does not is withdrawn.
    Without edits, the fix builders' own checks decide (a test keeps both answers equal).
    `notebook`: the text is a notebook's code cells (see `lint_notebook`). `syntax_tree`: given by
    a caller that already ran `prefilter.screen` on the text and got this tree (batch.py, which
    screens before importing the engine)."""
    screened = syntax_tree is not UNSCREENED
    if project is AUTO:
        project = project_for(path, config) if path != "<string>" and os.path.isfile(path) else None
    if not (screened or may_match(source) or (project is not None and may_need_project(source, path, config))):
        return []
    config = config.for_path(path)  # per-file-ignores (the command line resolved them already)
    rules = enabled_rules(config)
    if not rules:
        return []
    if not screened:
        syntax_tree = parse_guard(source)
        if syntax_tree is not None and not may_match_tree(source, syntax_tree) \
                and not (project is not None and may_need_project(source, path, config)):
            return []
    key = (source, path, notebook)
    recent = _RECENT.get(key)
    if recent is not None and recent[0] is config and not any(d.fix for d in recent[1]):
        # Analysed already without fix edits (a fix's rewrite, checked before the fix loop applies
        # it): with no fix among the findings, the edits and their checks change nothing.
        return remove_noqa(recent[1], source) if respect_noqa else list(recent[1])
    module = parse_guarded(source)
    names = project.names_for(path) if project is not None else None
    try:
        with project.lint_scope() if project is not None else nullcontext():
            diagnostics = _lint_module(module, source, path, config, rules, respect_noqa, fix_edits, verify_fixes,
                                       notebook, syntax_tree, names)
    except RecursionError:
        # The symbol table walk and LibCST's code generation (positions, fixes) recurse once per
        # nesting level; an expression about 1,000 levels deep (`1 + 1 + ...` with 1,000 terms)
        # that CPython and LibCST both accept still exceeds Python's recursion limit here.
        raise SourceError("cannot analyse: the code is nested too deeply") from None
    if not respect_noqa and not fix_edits:
        if len(_RECENT) >= 4:
            _RECENT.pop(next(iter(_RECENT)))
        _RECENT[key] = (config, diagnostics)
    return diagnostics


# The last few analyses of rewritten modules (respect_noqa=False, no fix edits), by text, path and
# notebook, with the configuration they were made with.
_RECENT: dict[tuple, tuple[Config, list[Diagnostic]]] = {}


def lint_program(program: Program, path: str, config: Config = DEFAULT_CONFIG,
                 respect_noqa: bool = True) -> list[Diagnostic]:
    """A notebook's findings with positions in its joined program; a fix whose edits would cross
    a cell boundary is dropped (the finding says a manual edit is required)."""
    diagnostics = lint_source(program.text, path, config, respect_noqa, fix_edits=True, notebook=True)
    return [program.refuse_crossing_fix(d) for d in diagnostics]


def lint_notebook(program: Program, path: str, config: Config = DEFAULT_CONFIG,
                  respect_noqa: bool = True) -> list[Diagnostic]:
    """A notebook's findings, positioned per cell (`Diagnostic.cell`)."""
    return [program.to_cells(d) for d in lint_program(program, path, config, respect_noqa)]


def _lint_module(module: cst.Module, source: str, path: str, config: Config, rules: list[Rule],
                 respect_noqa: bool, fix_edits: bool, verify_fixes: bool, notebook: bool = False,
                 syntax_tree: ast.Module | None = None, project: ProjectNames | None = None) -> list[Diagnostic]:
    analysis = FileAnalysis(module, path, config, notebook=notebook, syntax_tree=syntax_tree, project=project)
    reports: list[tuple[Rule, Report]] = []
    for crossing in analysis.crossings:
        for rule in rules:
            reports.extend((rule, report) for report in rule.check_crossing(crossing, analysis))
    for rule in rules:
        reports.extend((rule, report) for report in rule.check_file(analysis))
    diagnostics = _to_diagnostics(reports, analysis, source, fix_edits, verify_fixes)
    if respect_noqa:
        diagnostics = remove_noqa(diagnostics, source)
    return diagnostics


def _to_diagnostics(reports, analysis: FileAnalysis, source: str, fix_edits: bool,
                    verify_fixes: bool) -> list[Diagnostic]:
    unique, seen = [], set()
    for rule, report in reports:
        if (rule.code, id(report.node)) not in seen:
            seen.add((rule.code, id(report.node)))
            unique.append((rule, report))
    keys = [report.finding.key() for _, report in unique]
    before = [((rule.code, key), report) for (rule, report), key in zip(unique, keys)]
    diagnostics = []
    for (rule, report), key in zip(unique, keys):
        fix, refusal = None, ""
        if report.fix is not None:
            fix, refusal = _checked_fix(report, rule, analysis, source, before, fix_edits, verify_fixes)
        position = analysis.position(report.node)
        diagnostics.append(Diagnostic(
            code=rule.code,
            message=report.message,
            path=analysis.path,
            line=position.start.line,
            col=position.start.column,
            severity=rule.severity,
            fix=fix,
            end_line=position.end.line,
            end_col=position.end.column,
            related=tuple(_related(analysis, node, text) for node, text in report.related),
            manual_edit=(refusal or report.manual) if fix is None else None,
            key=key,
        ))
    return sorted(diagnostics, key=lambda d: d.sort_key)


def _checked_fix(report: Report, rule: Rule, analysis: FileAnalysis, source: str, before, fix_edits: bool,
                 verify_fixes: bool) -> tuple[Fix | None, str]:
    """The report's fix, or None and why: no plan, or the rewritten module would not parse, would
    have a finding that the original does not (spawn making inherited objects pickled), or would
    lose a finding other than the one it fixes (an initializer that hides another task's build)."""
    builder = report.fix
    plan = builder.plan(analysis)
    if isinstance(plan, Refusal):
        return None, plan.reason
    if not fix_edits:  # listing findings: the plan's own checks stand (tests/test_fix_contract.py)
        return Fix(builder.title, builder.applicability, None), ""
    after = replace_nodes(analysis.module, plan, analysis.ancestors).code
    if after == source:
        return None, ""
    also_fixes: tuple = ()
    if verify_fixes:
        refusal, also_fixes = _rewrite_refusal(after, analysis, before, report)
        if refusal:
            return None, refusal
    edits = text_edits(source, after) if fix_edits else None
    return Fix(builder.title, builder.applicability, edits, also_fixes), ""


def _rewrite_refusal(after: str, analysis: FileAnalysis, before, fixed: Report) -> tuple[str, tuple]:
    """Why the rewritten module breaks the fix's promise ("" if it keeps it), and the other
    findings it fixes. It breaks it if it does not parse, has a finding the original does not
    have, or loses a finding it was not made for (anything else it silences is hidden). Findings
    whose own fix is this very rewrite (one moved helper call that makes two settings), or that
    follow from the fixed one (`Report.cause`: a setting in forked workers that a spawn context
    fixes), are fixed with it."""
    try:
        found = lint_source(after, analysis.path, analysis.config, respect_noqa=False, verify_fixes=False,
                            notebook=analysis.notebook)
    except SourceError:
        return "the rewrite would not parse", ()
    expected = Counter(key for key, report in before if report is not fixed)
    remaining = expected.copy()
    for diagnostic in found:
        key = finding_key(diagnostic)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            return f"the rewrite would add {diagnostic.code} on line {diagnostic.line}", ()
    also_fixes = []
    for key, report in before:
        if report is not fixed and remaining[key] > 0:
            if report.cause is not None and report.cause in (fixed.node, fixed.cause) \
                    or _same_rewrite(report, analysis, after):
                remaining[key] -= 1
                also_fixes.append(key)
                continue
            return f"the rewrite would hide {key[0]} on line {analysis.line_of(report.node)} without fixing it", ()
    return "", tuple(also_fixes)


def _same_rewrite(report: Report, analysis: FileAnalysis, after: str) -> bool:
    if report.fix is None:
        return False
    plan = report.fix.plan(analysis)
    return not isinstance(plan, Refusal) and replace_nodes(analysis.module, plan, analysis.ancestors).code == after


def finding_key(diagnostic: Diagnostic) -> tuple[str, tuple]:
    """A finding as compared across rewrites: its code and its finding's key (`Finding.key`:
    the finding's facts less its positions and quoted code; never its wording or fix state)."""
    return diagnostic.code, diagnostic.key


def _related(analysis: FileAnalysis, node, message: str) -> Related:
    if isinstance(node, Place):  # in another module of the project: its span, or its line
        if node.end_line is None:
            return Related(message, node.line, node.column, node.line, node.column, path=node.path)
        return Related(message, node.line, node.column, node.end_line, node.end_column, path=node.path)
    position = analysis.position(node)
    return Related(message, position.start.line, position.start.column, position.end.line, position.end.column)


def text_edits(before: str, after: str) -> tuple[Edit, ...]:
    """The smallest line-level edits that turn `before` into `after`."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    offsets = [0]
    for line in old:
        offsets.append(offsets[-1] + len(line))
    edits = []
    import difflib

    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            edits.append(Edit(offsets[i1], offsets[i2], "".join(new[j1:j2])))
    return tuple(edits)
