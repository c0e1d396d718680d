"""Configuration: one place for every option, read from files and the command line.

Precedence (highest first): command line, `[tool.tfproc-lint]` in pyproject.toml,
`[tfproc_lint]` (or `[tfproc-lint]`) in setup.cfg, the project's `requires-python`
(for `target-python` only) and its dependencies (for `assume-gpu` only: a GPU build of
TensorFlow), the defaults below. Each checked file takes the configuration closest to it, as in
Ruff (`find_project_root`, `Configs`); `--config` names one file for all.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, NamedTuple

from tfproc_lint.options import SETTINGS, START_METHODS, ValueKind
from tfproc_lint.rule_index import RULE_NAME, rule_names

if TYPE_CHECKING:
    import configparser


DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".eggs", "*.egg-info",
    "__pycache__", "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".ipynb_checkpoints",
)
FORKSERVER_DEFAULT_FROM = (3, 14)  # Python 3.14: forkserver became the Linux default
COMMAND_LINE = "the command line"  # `where` of the options given on the command line
INI_SECTIONS = ("tfproc_lint", "tfproc-lint")  # setup.cfg's sections for tfproc-lint


class ConfigError(ValueError):
    """A bad option or value; the message names the option and where it came from."""


class PerFileIgnore(NamedTuple):
    """One `per-file-ignores` entry, as in Ruff: codes or prefixes turned off in the files that match
    `pattern`, a glob relative to `base` (the directory of the file that gave it) matched against
    the file's absolute path, or against its name alone; a leading `!` negates it."""

    pattern: str
    codes: tuple[str, ...]
    base: str

    def matches(self, absolute: str) -> bool:
        pattern, negated = (self.pattern[1:], True) if self.pattern.startswith("!") else (self.pattern, False)
        base = "" if os.path.isabs(pattern) else os.path.join(self.base, "")  # taken literally, not as a glob
        found = _glob(os.path.normpath(pattern), base).fullmatch(absolute) is not None \
            or _glob(pattern).fullmatch(os.path.basename(absolute)) is not None
        return found is not negated


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("TFP",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    target_python: tuple[int, int] | None = None
    assume_start_method: str | None = None
    assume_gpu: bool = False  # the code runs where TensorFlow sees GPUs (TFP401)
    per_file_ignores: tuple[PerFileIgnore, ...] = ()
    # The codes `per-file-ignores` turns off for the one file this configuration was made for
    # (`for_path`): off whatever `select` says, as in Ruff.
    file_ignores: tuple[str, ...] = ()
    # The result cache's folder (None: `.tfproc_lint_cache` in the project root); not part of a result.
    cache_dir: str | None = None
    # Where target_python came from, in the user's terms ("requires-python in pyproject.toml").
    target_python_source: str = ""
    origin: dict = field(default_factory=dict, compare=False, hash=False)
    # Every code or prefix read for select, ignore or extend-select: (option, selector, where).
    selectors: tuple[tuple[str, str, str], ...] = field(default=(), compare=False, hash=False)
    # Problems that do not stop a run (a misspelled table), one line each.
    warnings: tuple[str, ...] = field(default=(), compare=False, hash=False)
    # Read the project's other modules through their summaries (False: each file alone).
    project_analysis: bool = True
    # The project's source folders, relative to its root (Ruff's `src`); empty: the root and `src`.
    src: tuple[str, ...] = ()

    def is_enabled(self, code: str, default_enabled: bool = True) -> bool:
        """Longest matching prefix wins, as in flake8 and Ruff; ties go to ignore. An opt-in rule
        (`default_enabled=False`) counts only selectors more specific than the bare prefix: `TFP3`
        or `TFP302` enable TFP302, `TFP` (the default selection) does not. A code that
        `per-file-ignores` turns off for this file is off."""
        if any(code.startswith(prefix) for prefix in self.file_ignores):
            return False
        selected = max((len(p) for p in self.select
                        if code.startswith(p) and (default_enabled or is_specific(p))), default=-1)
        ignored = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return selected > ignored

    def for_path(self, path: str | os.PathLike) -> Config:
        """The configuration of one file: its `per-file-ignores` resolved into `file_ignores`."""
        if not self.per_file_ignores:
            return self
        absolute = os.path.abspath(path)
        codes = tuple(dict.fromkeys(code for entry in self.per_file_ignores if entry.matches(absolute)
                                    for code in entry.codes))
        return replace(self, per_file_ignores=(), file_ignores=self.file_ignores + codes)

    def default_start_method(self) -> tuple[str, str]:
        """The start method assumed where the file names none, and why, in one line that says
        where the assumption came from: "target Python 3.10 from python_requires in setup.cfg:
        fork is the Linux default"."""
        if self.assume_start_method:
            where = self.origin.get("assume_start_method", "the configuration")
            return self.assume_start_method, setting_name("assume-start-method", where)
        if self.target_python is not None:
            version = ".".join(map(str, self.target_python))
            method = "forkserver" if self.target_python >= FORKSERVER_DEFAULT_FROM else "fork"
            source = self.target_python_source or "target-python"
            return method, f"target Python {version} from {source}: {method} is the Linux default"
        return "fork", "no start method set; fork is the Linux default before Python 3.14"

    def gpu_assumed(self) -> str:
        """Why the code is taken to run on GPUs ("assume-gpu in ...", "tensorflow[and-cuda] in
        requirements.txt"), or "" when it is not."""
        if not self.assume_gpu:
            return ""
        where = self.origin.get("assume_gpu", "the configuration")
        return where if where.startswith(GPU_DEPENDENCY) else setting_name("assume-gpu", where)

    def check_selectors(self, codes: Iterable[str], enables_some: bool = True) -> None:
        """Raise ConfigError for the first selector that is no prefix of any of the rules' `codes`
        (a misspelled code would otherwise select or ignore nothing, silently), and when the
        selection enables none of them (the run would check nothing and pass)."""
        codes = list(codes)
        for option, selector, where in self.selectors:
            if not any(code.startswith(selector) for code in codes):
                raise ConfigError(f"{option} in {where}: {selector!r} matches no rule (rules: {', '.join(codes)})")
        if enables_some and codes and not any(self.is_enabled(code) for code in codes):
            places = sorted({where for option, _, where in self.selectors if option in ("select", "ignore")})
            raise ConfigError(f"select and ignore ({', '.join(places) or 'the defaults'}) enable no rule: "
                              "nothing would be checked")


def is_specific(selector: str) -> bool:
    """More than the bare prefix (`TFP`): names a group of rules or one rule (`TFP3`, `TFP302`)."""
    return any(character.isdigit() for character in selector)


# Each kind of value's parser (options.ValueKind); a parser takes the value and the option's name
# as messages give it ("select in setup.cfg").
def _codes(value, option: str) -> tuple[str, ...]:
    """Codes and prefixes (`TFP1`, `TFP201`), and rules' names (`runtime-initialised-before-fork`),
    which become their codes."""
    return tuple(_code(item, option) for item in _list(value, option))


_CODE = re.compile(r"[A-Z]{1,5}[0-9]{0,3}")


def _code(item: str, option: str) -> str:
    if _CODE.fullmatch(item):
        return item
    if RULE_NAME.fullmatch(item):
        if item in rule_names():
            return rule_names()[item]
        raise ConfigError(f"{option}: {item!r} is no rule's name; `tfproc-lint rules` lists each rule's code and name")
    raise ConfigError(f"{option}: {item!r} is not a rule code, prefix or name "
                      "(e.g. TFP1, TFP201, runtime-initialised-before-fork)")


def _list(value, option: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(item.strip() for item in re.split(r"[,\s]+", value) if item.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{option}: expected a list of strings, got {value!r}")


def parse_version(value, option: str) -> tuple[int, int]:
    if isinstance(value, float):  # TOML `target-python = 3.10` is the number 3.1
        raise ConfigError(f"{option}: write the version as a string, e.g. \"3.10\" (got the number {value!r}; "
                          "as a number, 3.10 is 3.1)")
    match = re.fullmatch(r"(?:py)?3\.?(\d{1,2})", str(value).strip())
    if not match:
        raise ConfigError(f"{option}: expected a Python version like 3.11 or py311, got {value!r}")
    return 3, int(match.group(1))


def _boolean(value, option: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise ConfigError(f"{option}: expected true or false, got {value!r}")


def _path(value, option: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{option}: expected a folder path, got {value!r}")
    return value.strip()


def _per_file_ignores(value, option: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(pattern, codes) pairs: a TOML table `"tests/*" = ["TFP101"]`, or flake8's form in setup.cfg,
    `pattern: codes` pairs (`tests/*: TFP101, TFP102`, one or more a line)."""
    if isinstance(value, dict):
        pairs = [(pattern, _codes(codes, f"{option} for {pattern!r}")) for pattern, codes in value.items()]
    elif isinstance(value, str):
        pairs = _flake8_mapping(value, option)
    else:
        raise ConfigError(f"{option}: expected a table of file patterns to lists of codes, got {value!r}")
    for pattern, codes in pairs:
        if not pattern.strip("!") or not codes:
            raise ConfigError(f"{option}: {pattern!r} needs a file pattern and at least one code")
    return tuple((pattern, tuple(_code(code, f"{option} for {pattern!r}") for code in codes))
                 for pattern, codes in pairs)


def _flake8_mapping(text: str, option: str) -> list[tuple[str, tuple[str, ...]]]:
    """flake8's `per-file-ignores` text: file patterns, a colon, codes; the next pattern starts a new pair."""
    pairs: list[tuple[str, tuple[str, ...]]] = []
    patterns: list[str] = []
    codes: list[str] = []
    after_colon = False
    for token in re.findall(r"[^\s:,]+|:", text):
        if token == ":":
            if after_colon or not patterns:
                raise ConfigError(f"{option}: expected `pattern: codes` pairs, got {text.strip()!r}")
            after_colon = True
        elif after_colon and (_CODE.fullmatch(token) or token in rule_names()):
            codes.append(token)
        else:
            if after_colon:  # a pattern after the codes: the next pair
                pairs += [(pattern, tuple(codes)) for pattern in patterns]
                patterns, codes, after_colon = [], [], False
            patterns.append(token)
    if patterns and not after_colon:
        raise ConfigError(f"{option}: {patterns[-1]!r} has no `: codes` after it")
    pairs += [(pattern, tuple(codes)) for pattern in patterns]
    return pairs


def _glob(pattern: str, prefix: str = "") -> re.Pattern:
    """Ruff's glob syntax (globset) as a regular expression, after the literal `prefix`: `*` and `?`
    also match `/`, `**/` matches any number of directories, `{a,b}` either, `[...]` a class."""
    found = _GLOBS.get((prefix, pattern))
    if found is None:
        parts, index = [re.escape(prefix)], 0
        while index < len(pattern):
            char = pattern[index]
            if pattern.startswith("**/", index):
                parts.append("(?:.*/)?")
                index += 3
                continue
            if char == "*":
                parts.append(".*")
            elif char == "?":
                parts.append(".")
            elif char == "[" and "]" in pattern[index + 2:]:
                end = pattern.index("]", index + 2)
                body = pattern[index + 1:end]
                parts.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
                index = end
            elif char == "{" and "}" in pattern[index:]:
                end = pattern.index("}", index)
                parts.append("(?:" + "|".join(re.escape(a) for a in pattern[index + 1:end].split(",")) + ")")
                index = end
            else:
                parts.append(re.escape(char))
            index += 1
        found = _GLOBS[(prefix, pattern)] = re.compile("".join(parts), re.DOTALL)
    return found


_GLOBS: dict[tuple[str, str], re.Pattern] = {}


def _start_method(value, option: str) -> str:
    if value not in START_METHODS:
        raise ConfigError(f"{option}: expected one of {', '.join(START_METHODS)}, got {value!r}")
    return value


OPTIONS = SETTINGS  # the settings read from files, by name (tfproc_lint/options.py)
PARSERS = {
    ValueKind.CODES: _codes, ValueKind.STRINGS: _list, ValueKind.VERSION: parse_version,
    ValueKind.START_METHOD: _start_method, ValueKind.BOOLEAN: _boolean, ValueKind.FOLDER: _path,
    ValueKind.PER_FILE_IGNORES: _per_file_ignores,
}


# The TOML type each kind of value must have in pyproject.toml, where values are typed (setup.cfg and
# the command line give strings): `assume-gpu = "yes"` is a string, not the boolean true. A folder
# has none here: its parser names what it expects.
TOML_TYPES = {
    ValueKind.CODES: (list, str), ValueKind.STRINGS: (list, str), ValueKind.VERSION: (str,),
    ValueKind.START_METHOD: (str,), ValueKind.BOOLEAN: (bool,), ValueKind.PER_FILE_IGNORES: (dict,),
}
TOML_EXPECTED = {
    (list, str): "a list of strings", (str,): "a string", (bool,): "true or false (a TOML boolean, unquoted)",
    (dict,): 'a table of file patterns to lists of codes (`[tool.tfproc-lint.per-file-ignores]`, '
             '`"tests/*" = ["TFP101"]`)',
}


def check_toml_types(options: dict, where: str) -> None:
    """One line naming the option and the file for a value of the wrong TOML type."""
    for raw_key, value in options.items():
        option = OPTIONS.get(raw_key.replace("_", "-"))
        types = TOML_TYPES.get(option.value) if option is not None else None
        if types is None or isinstance(value, types):
            continue
        if option.value is ValueKind.VERSION and isinstance(value, float):
            continue  # target-python = 3.10: parse_version explains why a number cannot say it
        raise ConfigError(f"{raw_key.replace('_', '-')} in {where}: expected {TOML_EXPECTED[types]}, "
                          f"got {_toml_value(value)}")


def _toml_value(value) -> str:
    """A TOML value as the user wrote it: `the string "yes"`, `the number 1`, `an array`."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        import json

        return f"the string {json.dumps(value)}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"{type(value).__name__} {value!r}"  # dates and times


def apply_options(config: Config, options: dict, where: str, base: Path | None = None) -> Config:
    """Validate `options` (file keys, dashes or underscores) and layer them over `config`. `base`:
    the directory `per-file-ignores` patterns are relative to (the file's; else the working one)."""
    changes: dict = {}
    # extend-select last, so that it extends a `select` given in the same place whatever the order.
    for raw_key, value in sorted(options.items(), key=lambda item: item[0].replace("_", "-") == "extend-select"):
        key = raw_key.replace("_", "-")
        option = OPTIONS.get(key)
        if option is None:
            known = ", ".join(sorted(OPTIONS))
            raise ConfigError(f"unknown option {raw_key!r} in {where} (known options: {known})")
        parsed = PARSERS[option.value](value, f"{key} in {where}")
        if option.value is ValueKind.CODES:
            changes["selectors"] = changes.get("selectors", config.selectors) + tuple(
                (key, selector, where) for selector in parsed)
        if option.value is ValueKind.PER_FILE_IGNORES:
            changes["selectors"] = changes.get("selectors", config.selectors) + tuple(
                (key, code, where) for _, codes in parsed for code in codes)
            directory = str((base or Path.cwd()).resolve())
            parsed = tuple(PerFileIgnore(pattern, codes, directory) for pattern, codes in parsed)
        if option.extends is not None:
            extended = OPTIONS[option.extends].attribute
            changes[extended] = tuple(changes.get(extended, getattr(config, extended))) + parsed
            continue
        changes[option.attribute] = parsed
        if option.name == "target-python":
            changes["target_python_source"] = setting_name("target-python", where)
    if not changes:
        return config
    if "select" in changes and not changes["select"]:  # an extend-select in the same place would fill it
        raise ConfigError(f"{setting_name('select', where)} is empty: it would check nothing; name codes or "
                          "prefixes (e.g. TFP, TFP1, TFP201), or leave select out for the default rules")
    origin = dict(config.origin)
    origin.update({key: where for key in changes if key != "selectors"})
    return replace(config, origin=origin, **changes)


def setting_name(option: str, where: str) -> str:
    """An option as the user wrote it: `--target-python`, or `target-python in [tfproc_lint] in setup.cfg`."""
    return f"--{option}" if where == COMMAND_LINE else f"{option} in {where}"


PROJECT_FILES = ("setup.cfg", "pyproject.toml")  # read in this order: pyproject.toml wins


def find_project_root(start: Path) -> Path | None:
    """The directory whose files configure code in `start`, as Ruff finds its configuration: the
    nearest directory (from `start` upwards) whose pyproject.toml has a `[tool.tfproc-lint]` table
    or whose setup.cfg has a `[tfproc_lint]` section (or a misspelling of either, which is then
    reported); failing that, the nearest directory holding a pyproject.toml or setup.cfg at all
    (its `requires-python` and dependencies still apply)."""
    start = start.resolve()
    nearest = None
    for directory in [start, *start.parents]:
        for name in PROJECT_FILES:
            path = directory / name
            if path.is_file():
                nearest = nearest or directory
                if _configures_tfproc_lint(path):
                    return directory
    return nearest


def _configures_tfproc_lint(path: Path) -> bool:
    """The file has tfproc-lint's table or section, or one spelled close to it."""
    text = _project_text(path)
    if text is None:  # most files: no parse
        return False
    if path.name.endswith(".toml"):
        names = _toml_tables(_read_toml(path, text))
    else:
        names = _read_ini(path, text).sections()
    return any(_normal(name) == "tfproclint" for name in names)


def _tool(data: dict) -> dict:
    tool = data.get("tool")
    return tool if isinstance(tool, dict) else {}


def _toml_tables(data: dict) -> list[str]:
    """The names a tfproc-lint table could have been given: `tool.NAME` and top-level ones."""
    return [f"tool.{key}" for key in _tool(data)] + list(data)


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", re.sub(r"^tool[.:]", "", name.lower()))


def display_path(path: Path) -> str:
    """A configuration file as messages name it: relative to the working directory when it is
    below it (`setup.cfg`, `other/setup.cfg`), else its full path."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_config(start: Path | None = None, explicit: Path | None = None) -> Config:
    """The configuration for code in the directory `start` (or from one explicit file)."""
    config = Config()
    files = [explicit] if explicit else []
    if not explicit:
        root = find_project_root(start or Path.cwd())
        if root is not None:
            files = [root / name for name in PROJECT_FILES]  # later files win
            config = _assume_gpu_from_dependencies(config, root)
    for path in files:
        if path is None or not path.is_file():
            if explicit:
                raise ConfigError(f"config file {path} does not exist")
            continue
        before = config.cache_dir
        if path.name.endswith(".toml"):
            config = _apply_pyproject(config, path, explicit is not None)
        else:
            config = _apply_ini(config, path, explicit is not None)
        if config.cache_dir != before and not Path(config.cache_dir).expanduser().is_absolute():
            # relative to the file that names it, as Ruff's cache-dir
            config = replace(config, cache_dir=str(path.resolve().parent / Path(config.cache_dir).expanduser()))
    return config


class Configs:
    """The configuration of each checked file: the nearest project configuration above the file
    (`find_project_root`), or the `--config` file for every file, then the command line's
    `options` over it. One per project directory, validated once (`check_selectors`); warnings
    are collected once per configuration."""

    def __init__(self, explicit: Path | None = None, options: dict | None = None, where: str = COMMAND_LINE,
                 codes: Iterable[str] = ()) -> None:
        self.explicit, self.options, self.where, self.codes = explicit, options or {}, where, tuple(codes)
        self._by_root: dict = {}
        self._root_of: dict = {}
        self.warnings: list[str] = []

    def for_file(self, path: Path | str) -> Config:
        return self.for_directory(Path(path).absolute().parent)

    def for_directory(self, directory: Path | str) -> Config:
        if self.explicit is not None:
            return self._config(None)
        configured, nearest = self._roots(os.path.abspath(directory))
        return self._config(configured or nearest)

    def root_of(self, directory: Path | str) -> Path | None:
        """find_project_root(directory), sharing the look-ups of the directories above it."""
        configured, nearest = self._roots(os.path.abspath(directory))
        found = configured or nearest
        return Path(found) if found is not None else None

    def _roots(self, directory: str) -> tuple[str | None, str | None]:
        """find_project_root's two answers for `directory` (the nearest directory that configures
        tfproc-lint, the nearest holding a project file), from its parent's: two stats a directory."""
        found = self._root_of.get(directory)
        if found is None:
            present = [path for path in (os.path.join(directory, name) for name in PROJECT_FILES)
                       if os.path.isfile(path)]
            if any(_configures_tfproc_lint(Path(path)) for path in present):
                found = directory, directory
            else:
                parent = os.path.dirname(directory)
                above = (None, None) if parent == directory else self._roots(parent)
                found = above[0], directory if present else above[1]
            self._root_of[directory] = found
        return found

    def _config(self, root: Path | None) -> Config:
        if root not in self._by_root:
            if self.explicit is not None:
                config = load_config(explicit=self.explicit)
            elif root is None:
                config = Config()
            else:
                config = load_config(Path(root))
            if self.options:
                config = apply_options(config, self.options, self.where)
            if self.codes:
                config.check_selectors(self.codes)
            self.warnings.extend(warning for warning in config.warnings if warning not in self.warnings)
            self._by_root[root] = config
        return self._by_root[root]


# "tfproc" however a table's name may spell it (`_normal` drops what is not a letter or digit).
_MAY_CONFIGURE = re.compile(rb"tf[\W_]*proc")


def _project_text(path: Path, explicit: bool = False) -> str | None:
    """A project file's text, or None when it cannot hold tfproc-lint's settings, not even a
    misspelled table, and was not named by `--config` (`explicit`): then it is only the project's
    metadata (`_apply_metadata`)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    if not explicit and not _MAY_CONFIGURE.search(data.lower()):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"cannot read {path}: {error}") from None


def _read_toml(path: Path, text: str | None = None) -> dict:
    if sys.version_info >= (3, 11):  # imported here: a run without pyproject.toml never needs it
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8") if text is None else text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None


# configparser, json and ast are imported where used: most runs read no setup.cfg, and a check of
# one file starts faster without them.
def _read_ini(path: Path, text: str | None = None) -> configparser.ConfigParser:
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8") if text is None else text, source=str(path))
    except configparser.Error as error:
        raise ConfigError(f"cannot read {path}: {ini_error(error)}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    return parser


def _apply_pyproject(config: Config, path: Path, explicit: bool = False) -> Config:
    text = _project_text(path, explicit)
    if text is None:  # only the project's metadata: it never stops a run
        return _apply_metadata(config, path, lambda: _read_toml(path), _requires_python, "requires-python")
    data = _read_toml(path, text)
    config = _target_from_metadata(config, _requires_python(data), f"requires-python in {display_path(path)}")
    name = display_path(path)
    config = _warn_misspelled(config, _toml_tables(data), ("tool.tfproc-lint",), name, "table")
    section = _tool(data).get("tfproc-lint")
    if section is None:
        return config
    if not isinstance(section, dict):
        raise ConfigError(f"[tool.tfproc-lint] in {path} must be a table")
    where = f"[tool.tfproc-lint] in {name}"
    check_toml_types(section, where)
    return apply_options(config, section, where, path.parent)


def _apply_ini(config: Config, path: Path, explicit: bool = False) -> Config:
    text = _project_text(path, explicit)
    if text is None:  # only the project's metadata: it never stops a run
        return _apply_metadata(config, path, lambda: _read_ini(path), _python_requires, "python_requires")
    parser = _read_ini(path, text)
    name = display_path(path)
    config = _target_from_metadata(config, _python_requires(parser), f"python_requires in {name}")
    config = _warn_misspelled(config, parser.sections(), INI_SECTIONS, name, "section")
    for section in INI_SECTIONS:
        if parser.has_section(section):
            config = apply_options(config, dict(parser.items(section)), f"[{section}] in {name}", path.parent)
    return config


# Metadata: what tfproc-lint reads of the packaging settings (the project's lowest Python). A
# vendored or example project's file with a bad value must not stop a run of the whole tree: a
# warning naming the file, and the value is ignored. (Ruff 0.17 stops on a `requires-python` it
# cannot parse, in any pyproject.toml it finds; tfproc-lint also reads setup.cfg's.)
def _requires_python(data: dict):
    project = data.get("project")
    return project.get("requires-python") if isinstance(project, dict) else None


def _python_requires(parser: configparser.ConfigParser):
    return parser.get("options", "python_requires") if parser.has_option("options", "python_requires") else None


def _apply_metadata(config: Config, path: Path, read, requires, key: str) -> Config:
    """A project file without tfproc-lint's settings: only its lowest Python, and one warning for a
    file that cannot be read (undecodable, broken TOML or INI) instead of an error."""
    try:
        parsed = read()
    except ConfigError as error:
        return _warn(config, f"{error}; its {key} is ignored")
    return _target_from_metadata(config, requires(parsed), f"{key} in {display_path(path)}")


def _target_from_metadata(config: Config, specifier, where: str) -> Config:
    """`target_python` from the first `requires-python` / `python_requires` read, unless set; a bad
    one is a warning and is ignored, as if absent."""
    if specifier in (None, "") or config.target_python is not None:
        return config
    if not isinstance(specifier, str):
        return _warn(config, f"{where}: expected a version specifier string, got {specifier!r}; ignored, as if absent")
    try:
        version = lowest_python(specifier, where)
    except ConfigError as error:
        return _warn(config, f"{error}; ignored, as if absent")
    return replace(config, target_python=version, target_python_source=where) if version else config


def _warn(config: Config, warning: str) -> Config:
    return replace(config, warnings=config.warnings + (warning,))


def ini_error(error: configparser.Error) -> str:
    """configparser's message (several lines, with the file's full path) in one line that names the line."""
    import ast
    import configparser

    if isinstance(error, configparser.MissingSectionHeaderError):
        return f"line {error.lineno}: {error.line.strip()!r} comes before any [section] header (or is a broken one)"
    if isinstance(error, configparser.DuplicateOptionError):
        return f"line {error.lineno}: option {error.option!r} is given twice in [{error.section}]"
    if isinstance(error, configparser.DuplicateSectionError):
        return f"line {error.lineno}: section [{error.section}] is given twice"
    if isinstance(error, configparser.ParsingError) and error.errors:
        lineno, line = error.errors[0]
        try:  # configparser keeps repr(line)
            line = ast.literal_eval(line)
        except (ValueError, SyntaxError):
            pass
        line = repr(line.strip())
        more = f" (and {len(error.errors) - 1} more lines)" if len(error.errors) > 1 else ""
        return f"line {lineno}: cannot parse {line}, neither `key = value` nor a [section] header{more}"
    return " ".join(str(error).split())


def _warn_misspelled(config: Config, names: list[str], accepted: tuple[str, ...], where: str, noun: str) -> Config:
    """A warning for each table whose name reads as tfproc-lint's but is spelled differently
    (`[tool.tfproc_lint]`, `[tfproclint]`): it would be ignored without a word."""
    right = " or ".join(f"[{name}]" for name in accepted)
    found = [f"[{name}] in {where} is not read: the {noun} is spelled {right}"
             for name in names if _normal(name) == "tfproclint" and name not in accepted]
    return replace(config, warnings=config.warnings + tuple(found)) if found else config


GPU_DEPENDENCY = "the project depends on "  # how `origin["assume_gpu"]` starts when a dependency set it
_GPU_BUILD = re.compile(
    r"(?<![\w.-])(tensorflow-gpu|tf-nightly-gpu|(?:tensorflow|tf-nightly)\s*\[[^\]]*and-cuda[^\]]*\])", re.IGNORECASE)


def _assume_gpu_from_dependencies(config: Config, root: Path) -> Config:
    """`assume-gpu` is on when the project depends on a GPU build of TensorFlow
    (`tensorflow[and-cuda]`, `tensorflow-gpu`) in pyproject.toml, setup.cfg or requirements*.txt
    at its root; a line-based look, no dependency resolution."""
    candidates = [root / "pyproject.toml", root / "setup.cfg", *sorted(root.glob("requirements*.txt"))]
    for path in candidates:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        match = _GPU_BUILD.search(text)
        if match:
            origin = dict(config.origin)
            origin["assume_gpu"] = f"{GPU_DEPENDENCY}{' '.join(match.group(1).split())} in {display_path(path)}"
            return replace(config, assume_gpu=True, origin=origin)
    return config


# `>=3.10` (a patch of at most two digits, an optional `,<4`): what most projects state, read
# without `packaging`, whose import is about a sixth of a one-file check's start; the answer is the
# SpecifierSet's below (tests/test_config.py compares the two).
_PLAIN_LOWER_BOUND = r"\s*>=\s*3\.(\d{1,2})(?:\.\d{1,2})?\s*(?:,\s*<\s*4(?:\.0)*\s*)?"  # compiled when used


def lowest_python(specifier: str, where: str) -> tuple[int, int] | None:
    """The oldest Python 3 minor version a `requires-python` specifier admits."""
    plain = re.fullmatch(_PLAIN_LOWER_BOUND, specifier)
    if plain is not None and int(plain.group(1)) < 30:  # SpecifierSet's answer (the loop below)
        return 3, int(plain.group(1))
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # only where a project states one

    try:
        spec = SpecifierSet(specifier)
    except InvalidSpecifier:
        raise ConfigError(f"{where}: {specifier!r} is not a valid version specifier") from None
    for minor in range(0, 30):
        if spec.contains(f"3.{minor}.99", prereleases=True) or spec.contains(f"3.{minor}", prereleases=True):
            return 3, minor
    return None
