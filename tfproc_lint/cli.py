"""The `tfproc-lint` command: check (and fix), rules, explain, probe.

Exit codes: 0 no findings; 1 findings remain or a file could not be checked; 2 usage or
configuration error, or an internal error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tfproc_lint import __version__
from tfproc_lint.config import COMMAND_LINE, Config, ConfigError, Configs, apply_options
from tfproc_lint.options import CHECK_OPTIONS, SETTINGS
from tfproc_lint.rules import rule_codes

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
NO_FILES = "no Python files or notebooks found under the given path(s)"
# The `server` extra's requirements (setup.cfg): tfproc-lint has no release whose extra could be named.
SERVER_INSTALL = "pip install 'pygls>=2,<3' 'lsprotocol>=2025'"


class UsageError(Exception):
    pass


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's own, asking the terminal's width only when it formats help or usage: each
    `add_argument` makes one (to check the argument's metavar) and never reads the width, which
    costs the import of shutil (about 2% of a one-file check's start)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None, **options):
        self._asked = (indent_increment, max_help_position) if width is None else None
        super().__init__(prog, indent_increment, max_help_position, 80 if width is None else width, **options)

    def _measure(self) -> None:
        if self._asked is not None:  # as HelpFormatter.__init__ computes them for width=None
            import shutil

            indent_increment, max_help_position = self._asked
            self._asked = None
            width = shutil.get_terminal_size().columns - 2
            self.__dict__["_given_width"] = width
            self.__dict__["_given_position"] = min(max_help_position, max(width - 20, indent_increment * 2))

    @property
    def _width(self) -> int:
        self._measure()
        return self._given_width

    @_width.setter
    def _width(self, value: int) -> None:
        self._given_width = value

    @property
    def _max_help_position(self) -> int:
        self._measure()
        return self._given_position

    @_max_help_position.setter
    def _max_help_position(self, value: int) -> None:
        self._given_position = value


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **options) -> None:
        options.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **options)

    def error(self, message: str):  # argparse exits 2 on usage errors, as we do
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tfproc-lint", description="Find TensorFlow runtime state crossing process boundaries.")
    parser.add_argument("--version", action="version", version=f"tfproc-lint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    check = commands.add_parser("check", help="check files and directories (and fix them)")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or directories (default: .)")
    groups = {None: check}  # tfproc_lint/options.py: the flags and their help, in this order
    for option in CHECK_OPTIONS:
        if option.command_line:
            if option.group not in groups:
                groups[option.group] = check.add_argument_group(option.group)
            groups[option.group].add_argument(*option.command_line, **option.argparse_options())

    rules = commands.add_parser("rules", help="list the rules")
    rules.add_argument("--format", choices=("text", "json"), default="text")

    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code", metavar="RULE",
                         help="a rule's code or name, e.g. TFP201 or runtime-initialised-before-fork")

    commands.add_parser("probe", help="run the runtime probe (see `tfproc-lint probe --help`)", add_help=False)

    server = commands.add_parser("server", help="run the language server for editors, over stdio")
    server.add_argument("--stdio", action="store_true", help="accepted for editors that pass it; stdio is the default")
    return parser


def main(argv: list[str] | None = None) -> int:
    own_process = argv is None  # the console script: tune the garbage collector (batch.TUNE_GC)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "probe":
        return _probe(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    args.own_process = own_process
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "rules":
            return _rules(args)
        if args.command == "explain":
            return _explain(args)
        if args.command == "server":
            return _server()
    except (ConfigError, UsageError) as error:
        print(f"tfproc-lint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    parser.print_help(sys.stderr)
    return EXIT_ERROR


# check ---------------------------------------------------------------------------------------------
def configuration(args) -> Configs:
    """Each file's configuration: the nearest project's (or --config's), the command line over it.
    The command line's own values are checked here, before any file."""
    options = {option.name: getattr(args, option.attribute) for option in SETTINGS.values() if option.command_line}
    options = {name: value for name, value in options.items() if value is not None}
    apply_options(Config(), options, COMMAND_LINE).check_selectors(rule_codes(), enables_some=False)
    configs = Configs(args.config, options, COMMAND_LINE, rule_codes())
    if args.config is not None:
        configs.for_directory(Path.cwd())
    return configs


def _print_warnings(configs: Configs) -> None:
    for warning in configs.warnings:
        print(f"tfproc-lint: warning: {warning}", file=sys.stderr)


def _check(args) -> int:
    from tfproc_lint import batch
    from tfproc_lint.files import collect_files
    from tfproc_lint.output import FORMATS, Run, renderer
    from tfproc_lint.output.console import Console

    if args.format not in FORMATS:
        raise UsageError(f"--format: expected one of {', '.join(FORMATS)}, got {args.format!r}")
    if args.diff and args.format != "text":
        raise UsageError("--diff prints a unified diff; it cannot be combined with --format")
    if args.jobs < 0:
        raise UsageError("--jobs must be 0 (all cores) or more")
    _check_adoption_options(args)
    configs = configuration(args)
    console = Console(sys.stderr, args.color, quiet=args.quiet or args.format not in TEXT_FORMATS)
    files, path_errors = collect_files(args.paths, configs, force_exclude=args.force_exclude)
    _print_warnings(configs)
    if not files and not path_errors and not args.quiet:  # as Ruff: a passing run that checked nothing
        print(f"tfproc-lint: warning: {NO_FILES}", file=sys.stderr)
    config = Config()  # each file carries its own; this is for none
    dependents = _dependents(args, files, configs)
    if args.add_noqa:
        return _exit_code(args, _add_noqa(args, config, files, path_errors))
    progress = console.progress(len(files) + len(dependents), "checking")
    batch.TUNE_GC = args.own_process
    if args.fix or args.diff:
        fixed = batch.fix_files(files, config, args.unsafe_fixes, write=not args.diff, progress=progress)
        results = [entry.result for entry in fixed]
        if dependents:  # checked after the fixes, which they may import; never edited
            results += batch.check_files(dependents, config, args.jobs, progress=progress)
        run = Run(results, fixed=sum(e.applied for e in fixed), unsafe_fixes=args.unsafe_fixes,
                  sources={e.result.path: e.fixed for e in fixed if e.result.error is None})
        if args.diff:
            run.diffs = [_unified_diff(e) for e in fixed if e.fixed != e.original]
    else:
        results = batch.check_files(files + dependents, config, args.jobs, progress=progress,
                                    fix_edits=args.format in ("json", "sarif"),
                                    cache=_cache(args, configs.for_directory(Path.cwd())))
        run = Run(results, unsafe_fixes=args.unsafe_fixes)  # as Ruff: unsafe fixes shown as available
    console.done()
    if dependents:
        _keep_dependents_findings(run, dependents, args.quiet)
    run.results.extend(_error_result(error) for error in path_errors)
    run.results.sort(key=lambda result: result.path)
    for error in run.errors:
        print(f"tfproc-lint: {error.path}: {error.reason}", file=sys.stderr)
    if args.diff:
        from tfproc_lint.output.console import is_terminal
        from tfproc_lint.output.text import diff_summary

        sys.stdout.write("".join(run.diffs))
        if not args.quiet:  # after the diff on a terminal; kept out of a redirected patch
            sys.stdout.flush()
            print(diff_summary(run), file=sys.stdout if is_terminal(sys.stdout) else sys.stderr)
    elif args.statistics:
        sys.stdout.write(_statistics(args, run, console))
    else:
        output = renderer(args.format)(run, colour=console.colour_for(sys.stdout))
        if args.quiet and args.format in TEXT_FORMATS:
            output = _without_summary(output)
        sys.stdout.write(output)
    if any(error.internal for error in run.errors):
        return EXIT_ERROR
    if args.diff:
        return _exit_code(args, EXIT_FINDINGS if run.fixed or run.diagnostics else EXIT_CLEAN)
    return _exit_code(args, EXIT_FINDINGS if run.diagnostics or run.errors else EXIT_CLEAN)


def _cache(args, config):
    """The result cache for this run, or None (`--no-cache`, or a folder that cannot be used: one
    warning). Its folder: `cache-dir` from the command line or the configuration of the current
    folder's project, else `.tfproc_lint_cache` in that project's root."""
    if args.no_cache:
        return None
    from tfproc_lint.cache import DEFAULT_CACHE_DIR, open_cache
    from tfproc_lint.config import find_project_root

    if config.cache_dir:
        directory = Path(config.cache_dir).expanduser()
    else:
        directory = (find_project_root(Path.cwd()) or Path.cwd()) / DEFAULT_CACHE_DIR
    cache, warning = open_cache(directory)
    if warning:
        print(f"tfproc-lint: warning: {warning}", file=sys.stderr)
    return cache


def _dependents(args, files, configs) -> list:
    """--with-dependents: the project files that import the given ones (tfproc_lint/dependents.py)."""
    if not args.with_dependents:
        return []
    if args.add_noqa:
        raise UsageError("--with-dependents reports findings in other files; it cannot be combined with --add-noqa")
    from tfproc_lint.dependents import find_dependents

    return find_dependents(files, configs)


def _keep_dependents_findings(run, dependents, quiet: bool) -> None:
    """A dependent reports its findings only: one that cannot be read or parsed is not part of
    what was given (its own check says why). Names the dependents with findings on stderr."""
    shown = {source_file.display for source_file in dependents}
    run.results[:] = [result for result in run.results
                      if not (result.path in shown and result.error is not None and not result.error.internal)]
    reported = sorted({result.path for result in run.results if result.path in shown and result.diagnostics})
    if reported and not quiet:
        print(f"tfproc-lint: findings in {len(reported)} file{'s' * (len(reported) != 1)} that import the given "
              f"files (--with-dependents): {', '.join(reported)}", file=sys.stderr)


# adopting: --statistics, --exit-zero, --add-noqa ------------------------------------------------------
def _check_adoption_options(args) -> None:
    if args.statistics:  # imported only then: it loads json
        from tfproc_lint.output.statistics import FORMATS as STATISTICS_FORMATS
    if args.statistics and (args.diff or args.format not in STATISTICS_FORMATS):
        raise UsageError(f"--statistics prints {' or '.join(STATISTICS_FORMATS)}; it cannot be combined with "
                         f"{'--diff' if args.diff else '--format ' + args.format}")
    if args.add_noqa and (args.fix or args.diff or args.statistics or args.format != "text"):
        raise UsageError("--add-noqa edits files and reports in text; it cannot be combined with --fix, --diff, "
                         "--statistics or --format")


def _exit_code(args, code: int) -> int:
    """--exit-zero turns "findings remain / a file could not be checked" into success."""
    return EXIT_CLEAN if args.exit_zero and code == EXIT_FINDINGS else code


def _statistics(args, run, console) -> str:
    from tfproc_lint.output.statistics import render

    output = render(run, args.format, colour=console.colour_for(sys.stdout))
    return _without_summary(output) if args.quiet and args.format == "text" else output


def _add_noqa(args, config, files, path_errors) -> int:
    """Check, then mark the findings of each file that has some; report how many lines changed."""
    from tfproc_lint import batch
    from tfproc_lint.diagnostics import FileError
    from tfproc_lint.add_noqa import add_noqa

    results = batch.check_files(files, config, args.jobs)
    with_findings = {result.path for result in results if result.diagnostics}
    outcomes = [add_noqa(source_file, source_file.config or config) for source_file in files
                if source_file.display in with_findings]
    errors = [r.error for r in results if r.error] + path_errors
    errors += [FileError(o.path, o.error) for o in outcomes if o.error]
    for error in errors:
        print(f"tfproc-lint: {error.path}: {error.reason}", file=sys.stderr)
    skipped = [where for outcome in outcomes for where in outcome.skipped]
    for where in skipped:
        print(f"tfproc-lint: {where}: no `# noqa` added: the line ends inside a string or with a backslash",
              file=sys.stderr)
    changed = sum(outcome.changed for outcome in outcomes)
    touched = sum(1 for outcome in outcomes if outcome.changed)
    if not args.quiet:
        print(f"Added {changed} noqa comment{'s' * (changed != 1)} to {touched} file{'s' * (touched != 1)}.")
    if any(error.internal for error in errors):
        return EXIT_ERROR
    return EXIT_FINDINGS if errors or skipped else EXIT_CLEAN


TEXT_FORMATS = ("text", "full")  # for a person: progress, colour, a summary line that -q drops


def _without_summary(output: str) -> str:
    lines = output.splitlines()[:-1]
    while lines and not lines[-1]:  # full's blank line before the summary
        lines.pop()
    return "".join(line + "\n" for line in lines)


def _error_result(error):
    from tfproc_lint.diagnostics import FileResult

    return FileResult(error.path, error=error)


def _unified_diff(entry) -> str:
    path = entry.result.path.lstrip('/')
    if entry.cells:  # a notebook: one diff per changed cell, named like Ruff's
        return "".join(_diff(_ended(before), _ended(after), f"{path}:cell {number}")
                       for number, before, after in entry.cells)
    return _diff(entry.original, entry.fixed, path)


def _ended(cell_source: str) -> str:
    """A cell's last line has no newline; each line of the diff needs one."""
    return cell_source if cell_source.endswith("\n") or not cell_source else cell_source + "\n"


def _diff(before: str, after: str, name: str) -> str:
    import difflib

    return "".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{name}", tofile=f"b/{name}",
    ))


# rules, explain, probe -----------------------------------------------------------------------------
def _rules(args) -> int:
    from tfproc_lint.links import rule_url
    from tfproc_lint.rules.base import all_rules

    rules = all_rules()
    if args.format == "json":
        import json

        entries = [{
            "code": r.code, "name": r.name, "summary": r.summary, "severity": r.severity.value,
            "fix": r.fix_availability.value, "opt_in": not r.default_enabled, "url": rule_url(r.code),
        } for r in rules]
        print(json.dumps([{k: v for k, v in entry.items() if v is not None} for entry in entries], indent=2))
        return EXIT_CLEAN
    for rule in rules:
        opt_in = "" if rule.default_enabled else f" (opt-in: --extend-select {rule.code})"
        print(f"{rule.code}  {rule.name:<34} {rule.summary}{opt_in}")
    return EXIT_CLEAN


def _explain(args) -> int:
    from tfproc_lint.docs import render_rule
    from tfproc_lint.rules.base import all_rules, rule_by_code

    rule = rule_by_code(args.code) or next((r for r in all_rules() if r.name == args.code.lower()), None)
    if rule is None:
        raise UsageError(f"unknown rule {args.code!r}: give a code or a name, e.g. TFP201 or "
                         "runtime-initialised-before-fork; `tfproc-lint rules` lists them")
    sys.stdout.write(render_rule(rule))
    return EXIT_CLEAN


def _probe(argv: list[str]) -> int:
    try:
        from runtime_probe.cli import main as probe_main
    except ImportError as error:
        print(f"tfproc-lint: error: the runtime probe is not available ({error}); "
              "install tfproc-lint's `probe` extra (from a clone: `pip install '.[probe]'`)", file=sys.stderr)
        return EXIT_ERROR
    return probe_main(argv, prog="tfproc-lint probe")


def _server() -> int:
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as error:
        print(f"tfproc-lint: error: the language server is not available ({error}); "
              f"install it with `{SERVER_INSTALL}` (tfproc-lint's `server` extra)", file=sys.stderr)
        return EXIT_ERROR
    from tfproc_lint.server.app import serve

    return serve()


if __name__ == "__main__":
    sys.exit(main())
