"""The options of `tfproc-lint check`, one table. Derived from it: the command line
(`cli.build_parser`, `cli.configuration`), the settings read from files and their TOML types
(`config.apply_options`, `config.check_toml_types`), the flake8 plugin's `--tfp-` options
(`flake8_plugin`) and the option tables of docs/configuration.md (`python -m tfproc_lint.docs`).

A leaf of the data layer (it imports no other module of the package). Every start reads it: the
records are NamedTuples, whose classes take about half a millisecond less to make than frozen
dataclasses' (measured with `-X importtime`).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Callable, NamedTuple

START_METHODS = ("fork", "spawn", "forkserver")


class ValueKind(enum.Enum):
    """How a setting's value is read from a file or the command line; config.py has a parser and a
    TOML type for each."""

    CODES = "codes"  # codes, prefixes or rules' names: a list, or one string split at commas and spaces
    STRINGS = "strings"  # a list of strings, or one string split the same way
    VERSION = "version"  # a Python version: 3.12, 312, py312
    START_METHOD = "start method"  # one of START_METHODS
    BOOLEAN = "boolean"
    FOLDER = "folder"  # a path
    PER_FILE_IGNORES = "per-file ignores"  # file patterns to codes


class OptionDoc(NamedTuple):
    """The option's row in docs/configuration.md's Options table."""

    example: str  # the value in the command-line example (`--select TFP1,TFP201`); also flake8's
    default: str
    text: str  # what it does


class Option(NamedTuple):
    """One option: a setting read from files (`value` set) and/or a flag of `check` (`flags` not None)."""

    name: str  # the key in files (dashes; underscores accepted); `--NAME` unless `flags` says otherwise
    help: str | None = None  # `check --help`'s line
    value: ValueKind | None = None  # None: the command line only
    flags: tuple[str, ...] | None = ()  # the command line's spellings; (): `--NAME`; None: files only
    # argparse's, for the flag (None: argparse's default)
    action: str | None = None
    const: object = None
    default: object = None
    choices: tuple[str, ...] | None = None
    type: Callable | None = None
    group: str | None = None  # the argument group of `check --help` it is listed under
    doc: OptionDoc | None = None  # a setting's row in docs/configuration.md
    flake8_help: str | None = None  # the flake8 plugin's `--tfp-NAME` (also `tfp-NAME` in `[flake8]`)
    extends: str | None = None  # the option whose values this one adds to, in the same or a lower place

    @property
    def attribute(self) -> str:
        """The Config field and argparse's `dest`."""
        return self.name.replace("-", "_")

    @property
    def command_line(self) -> tuple[str, ...]:
        """The flags of `check` that give it; () for a setting read from files only."""
        if self.flags is None:
            return ()
        return self.flags or (f"--{self.name}",)

    def argparse_options(self) -> dict:
        """`add_argument`'s keywords: the ones set here, argparse's defaults for the rest."""
        given = {"action": self.action, "const": self.const, "default": self.default, "choices": self.choices,
                 "type": self.type, "help": self.help}
        return {"dest": self.attribute, **{key: value for key, value in given.items() if value is not None}}


ADOPTING = "adopting on an existing code base"

# In the order of `check --help`; the settings (`value` set) in the order `check` layers them.
CHECK_OPTIONS = (
    Option("select", value=ValueKind.CODES,
           help="comma-separated codes, prefixes or rule names to enable (e.g. TFP1,TFP201, "
                "runtime-initialised-before-fork)",
           doc=OptionDoc("TFP1,TFP201", '`["TFP"]` (all rules but the opt-in ones)',
                         "Codes, code prefixes or [rule names](#rule-names) to enable.")),
    Option("ignore", value=ValueKind.CODES, help="comma-separated codes, prefixes or rule names to disable",
           doc=OptionDoc("TFP301", "`[]`", "Codes, prefixes or rule names to disable.")),
    Option("extend-select", value=ValueKind.CODES, extends="select",
           help="codes, prefixes or rule names added to the selection from the config",
           doc=OptionDoc("TFP301", "`[]`", "Added to `select` from the same or a lower place.")),
    Option("exclude", value=ValueKind.STRINGS, help="comma-separated patterns replacing the default excludes",
           doc=OptionDoc("build,gen", "see below", "Patterns of files and directories skipped while walking "
                                                   "directories; replaces the default list.")),
    Option("extend-exclude", value=ValueKind.STRINGS, help="comma-separated patterns added to the excludes",
           doc=OptionDoc("gen", "`[]`", "Patterns added to `exclude`.")),
    Option("target-python", value=ValueKind.VERSION,
           help="Python version the code runs on (drives the default start method)",
           flake8_help="Python version the code runs on (e.g. 3.11); drives the default start method",
           doc=OptionDoc("3.12", "from `requires-python`, else none",
                         "The Python version the checked code runs on: `3.12`, `312` or `py312`. Decides the "
                         "default start method (below).")),
    Option("assume-start-method", value=ValueKind.START_METHOD, choices=START_METHODS,
           help="start method the program sets elsewhere (e.g. in its entry point)",
           flake8_help="start method the program sets elsewhere",
           doc=OptionDoc("spawn", "none", "`fork`, `spawn` or `forkserver`: the start method the program sets "
                                          "somewhere tfproc-lint cannot see (its entry point, a library).")),
    Option("assume-gpu", value=ValueKind.BOOLEAN, action="store_const", const=True,
           help="the code runs where TensorFlow sees GPUs (TFP401 reports without other evidence)",
           flake8_help="the code runs where TensorFlow sees GPUs (TFP401)",
           doc=OptionDoc("", "`false`, or `true` when the project depends on a GPU build of TensorFlow",
                         "`true` or `false`: the code runs where TensorFlow sees GPUs. TFP401 (GPU workers that "
                         "take all GPU memory) then reports without needing GPU use in the file itself.")),
    Option("force-exclude", action="store_true",
           help="apply the excludes to files named on the command line too (for pre-commit)"),
    Option("with-dependents", action="store_true",
           help="also report the findings of the project's files that import the given files, directly "
                "or through other modules (for pre-commit; with --fix, those files are not edited)"),
    Option("config", type=Path, help="read options from this pyproject.toml or setup.cfg only"),
    Option("format", flags=("--format", "--output-format"), default="text",
           help="text, full (with the source lines), json, sarif or github (default: text)"),
    Option("fix", action="store_true", help="apply safe fixes"),
    Option("unsafe-fixes", action="store_true",
           help="with --fix or --diff, also apply unsafe fixes; alone, count them as fixable"),
    Option("diff", action="store_true", help="print the fixes as a unified diff, write nothing"),
    Option("no-cache", action="store_true",
           help="neither read nor write the result cache (fixes and diffs never use it)"),
    Option("cache-dir", value=ValueKind.FOLDER,
           help="the result cache's folder (default: .tfproc_lint_cache in the project root)",
           doc=OptionDoc("PATH", "`.tfproc_lint_cache` in the project root (else the current folder)",
                         "The result cache's folder; in a file, relative to that file. See "
                         "[The result cache](#the-result-cache).")),
    Option("per-file-ignores", value=ValueKind.PER_FILE_IGNORES, flags=None,
           doc=OptionDoc("", "`{}`", "File patterns and the codes or prefixes turned off in the files they match, "
                                     "as in Ruff. See [Per-file ignores](#per-file-ignores).")),
    Option("project-analysis", value=ValueKind.BOOLEAN, flags=("--no-project",), action="store_const", const=False,
           help="check each file alone: do not read the project's other modules (project-analysis = false)",
           doc=OptionDoc("", "`true`", "Read the other modules of the file's project through their summaries. "
                                       "`false`: each file alone. See "
                                       "[Project analysis](#project-analysis-other-modules-of-the-project).")),
    Option("src", value=ValueKind.STRINGS, flags=None,
           doc=OptionDoc("", '`[".", "src"]`', "The project's source folders, relative to its root, where imported "
                                               "modules are looked up (Ruff's `src`).")),
    Option("jobs", flags=("-j", "--jobs"), type=int, default=0, help="worker processes (default: all cores)"),
    Option("color", choices=("auto", "always", "never"), default="auto"),
    Option("quiet", flags=("-q", "--quiet"), action="store_true",
           help="print findings only, no summary or progress"),
    Option("statistics", action="store_true", group=ADOPTING,
           help="print the number of findings per rule instead of the findings (text or json)"),
    Option("exit-zero", action="store_true", group=ADOPTING,
           help="exit 0 even when findings remain or a file could not be checked (still 2 on "
                "usage and internal errors)"),
    Option("add-noqa", action="store_true", group=ADOPTING,
           help="add `# noqa: CODE` to the line of every finding, keeping the codes already there"),
)

# The settings read from files (and the command line's for them), by name.
SETTINGS = {option.name: option for option in CHECK_OPTIONS if option.value is not None}
FLAKE8_OPTIONS = tuple(option for option in CHECK_OPTIONS if option.flake8_help is not None)
