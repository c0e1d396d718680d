"""flake8 plugin `TFP`: `flake8 --select TFP`.

flake8 conventions (as in flake8-bugbear): the constructor takes `tree` (so flake8 treats this as
an AST plugin), `lines` and `filename`; `run()` yields (line, 0-based column, "CODE message", type);
`# noqa` is left to flake8. LibCST and the rules are imported only for files that pass the text
pre-filter, so installing the plugin does not slow down every flake8 start. Notebooks go through
nbqa, which writes the cells to a temporary `*_nbqa_ipynb.py` file: that name tells the rules the
code is a notebook's (TFP204).

Opt-in rules (TFP302, TFP303) follow flake8-bugbear's B9xx: they run only when flake8's `select` or
`extend-select` (command line or `[flake8]` config) names them more specifically than `TFP`
(`--extend-select TFP3`, `--select TFP302`), so that `flake8 --select TFP` stays quiet for them.
"""

from __future__ import annotations

import ast
import functools
import os
import sys
from pathlib import Path
from typing import Iterator

from tfproc_lint import __version__
from tfproc_lint.analysis.prefilter import may_match, may_match_tree, may_need_project
from tfproc_lint.options import FLAKE8_OPTIONS, ValueKind


# nbqa (`nbqa flake8 notebook.ipynb`) hands flake8 the notebook's cells as `<name><random>_nbqa_ipynb.py`.
NBQA_SUFFIX = "_nbqa_ipynb.py"


class TFProcPlugin:
    name = "tfproc-lint"
    version = __version__
    # The `--tfp-` options given (options.FLAKE8_OPTIONS): (name, value) pairs, a value None or False when not.
    settings: tuple[tuple[str, object], ...] = ()
    opt_in: tuple[str, ...] = ()  # flake8 selectors that can enable opt-in rules (`TFP3`, `TFP302`)

    def __init__(self, tree: ast.AST, lines: list[str], filename: str = "<stdin>") -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename
        # Read here, not in run(): flake8 reports an error raised while it makes the plugin in one
        # line ("There was a critical error ... due to ConfigError(...)"), one raised by run() as a
        # traceback. Cached per directory and per project.
        self.config = _config(_project_root(_directory_of(filename)), self.settings, self.opt_in)

    @classmethod
    def add_options(cls, manager) -> None:
        for option in FLAKE8_OPTIONS:  # tfproc_lint/options.py: a flag for a boolean setting, else a value
            if option.value is ValueKind.BOOLEAN:
                takes = {"action": "store_true", "default": False}
            else:
                takes = {"default": None, **({"choices": option.choices} if option.choices else {})}
            manager.add_option(f"--tfp-{option.name}", parse_from_config=True,
                               help=f"tfproc-lint: {option.flake8_help}", **takes)

    @classmethod
    def parse_options(cls, options) -> None:
        from tfproc_lint.config import ConfigError

        cls.settings = tuple((option.name, getattr(options, f"tfp_{option.attribute}", None))
                             for option in FLAKE8_OPTIONS)
        cls.opt_in = opt_in_selectors(options)
        try:
            # validated once, before any file
            config = _config(_project_root(os.getcwd()), cls.settings, cls.opt_in)
        except ConfigError as error:
            raise SystemExit(f"flake8: error: {error}") from None
        for warning in [*config.warnings, *names_in_flake8_options(options)]:
            print(f"tfproc-lint: warning: {warning}", file=sys.stderr)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        source = "".join(self.lines)
        # A file whose text names no TensorFlow may still run it through a module of its project
        # (the engine then reads that module's summary, built here on demand).
        matches = may_match(source)
        through_project = not matches and may_need_project(source, self.filename, self.config)
        if not (matches or through_project):
            return
        # flake8's tree is CPython's tree of this text (`ast.parse("".join(lines))`), the one the
        # engine's parse guard would build: the syntax-tree stage runs on it before LibCST is
        # imported, and the engine takes it instead of parsing again.
        screened = isinstance(self.tree, ast.Module)
        if screened and not through_project and not may_match_tree(source, self.tree):
            return
        _import_engine()
        from tfproc_lint.engine import UNSCREENED, SourceError, lint_source

        _keep_summaries(self.filename, self.config)

        try:
            diagnostics = lint_source(source, self.filename, self.config, respect_noqa=False,
                                      notebook=self.filename.endswith(NBQA_SUFFIX),
                                      syntax_tree=self.tree if screened else UNSCREENED)
        except SourceError:
            return  # flake8 reports the syntax error itself (E999)
        for diagnostic in diagnostics:
            yield diagnostic.line, diagnostic.col, f"{diagnostic.code} {diagnostic.full_message}", type(self)


@functools.lru_cache(maxsize=None)
def _import_engine() -> None:
    """Import the engine and the rules once per flake8 process, frozen (`batch.load_frozen`).
    Otherwise every full collection that flake8's own work triggers on the files after this one
    scans LibCST's modules again: that, not the plugin's analysis, was most of what the plugin
    added to `flake8 --select F` (measured in benchmarks/README.md). flake8's collector settings
    are left as they are."""
    from tfproc_lint.batch import load_frozen

    def load() -> None:
        import tfproc_lint.engine  # noqa: F401 - LibCST, the analysis
        from tfproc_lint.rules.base import all_rules

        all_rules()  # the rule modules, now rather than inside the first file's lint

    load_frozen(load)


def _keep_summaries(filename: str, config) -> None:
    """The project's module summaries come from, and go to, tfproc-lint's cache folder: the one
    `tfproc-lint check` run here would use (`cache-dir`, else `.tfproc_lint_cache` in the root of
    the current folder's configuration, else the current folder), never one per linted
    sub-project. A folder that cannot be used leaves them in memory."""
    from tfproc_lint.project import project_for

    project = project_for(filename, config) if os.path.isfile(filename) else None
    if project is not None and project.store is None:
        project.store = _summary_store(config.cache_dir)


@functools.lru_cache(maxsize=None)
def _summary_store(cache_dir: str | None):
    from tfproc_lint.cache import DEFAULT_CACHE_DIR, open_cache
    from tfproc_lint.config import find_project_root

    if cache_dir:
        directory = Path(cache_dir).expanduser()
    else:
        directory = (find_project_root(Path.cwd()) or Path.cwd()) / DEFAULT_CACHE_DIR
    cache, _ = open_cache(directory)
    return cache.summaries() if cache is not None else False


def opt_in_selectors(options) -> tuple[str, ...]:
    """The codes and prefixes in flake8's select and extend-select that are more specific than
    `TFP` and name at least one rule: they enable opt-in rules (bugbear's `should_warn`)."""
    from tfproc_lint.config import is_specific
    from tfproc_lint.rules import rule_codes

    codes = rule_codes()
    given = [*(getattr(options, "select", None) or ()), *(getattr(options, "extend_select", None) or ())]
    return tuple(dict.fromkeys(
        selector for selector in (s.strip().upper() for s in given)
        if selector.startswith("TFP") and is_specific(selector) and any(code.startswith(selector) for code in codes)
    ))


def names_in_flake8_options(options) -> list[str]:
    """flake8 selects and ignores by code only: a rule's name in its select, ignore or
    per-file-ignores would do nothing, silently. One warning naming the code to write instead."""
    import re

    from tfproc_lint.rules import rule_names

    names = rule_names()
    warnings = []
    for option in ("select", "extend_select", "ignore", "extend_ignore", "per_file_ignores"):
        value = getattr(options, option, None) or ()
        for token in re.split(r"[\s,:]+", value) if isinstance(value, str) else value:
            if token.strip().lower() in names:
                code = names[token.strip().lower()]
                warnings.append(f"flake8's {option.replace('_', '-')} takes codes, not rule names: "
                                f"{token.strip()!r} does nothing; write {code}")
    return warnings


def _directory_of(filename: str) -> str:
    """The directory whose configuration applies to `filename` (flake8 names stdin `stdin` or `-`)."""
    if filename in ("-", "stdin", "<stdin>"):
        return os.getcwd()
    return os.path.dirname(os.path.abspath(filename))


@functools.lru_cache(maxsize=None)
def _project_root(directory: str):
    return _roots().root_of(directory)


@functools.lru_cache(maxsize=None)
def _roots():
    """One finder for the run, so that the directories above the checked ones are looked at once."""
    from tfproc_lint.config import Configs

    return Configs()


@functools.lru_cache(maxsize=None)
def _config(root, settings: tuple[tuple[str, object], ...] = (), opt_in: tuple[str, ...] = ()):
    """tfproc-lint's own settings apply too, from the project nearest to the file (`root`, as on
    the command line; flake8's own configuration is the one in the directory flake8 runs in);
    flake8 decides select, ignore and noqa, and `opt_in` (from flake8's selection) enables the
    opt-in rules it names. A bad setting in a project's files is a flake8 error, as flake8 reports
    its own."""
    from tfproc_lint.config import Config, apply_options, load_config

    config = load_config(root) if root is not None else Config()
    if root is not None and root != _project_root(os.getcwd()):
        for warning in config.warnings:
            print(f"tfproc-lint: warning: {warning}", file=sys.stderr)
    options = {"select": " ".join(("TFP", *opt_in)), "ignore": "", **{name: value for name, value in settings if value}}
    return apply_options(config, options, "flake8 options")
