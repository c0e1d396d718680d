"""Configuration: one place for every option, read from files and the command line.

Precedence (highest first): command line, `[tool.tfproc-lint]` in pyproject.toml,
`[tfproc_lint]` (or `[tfproc-lint]`) in setup.cfg, the project's `requires-python`
(for `target-python` only) and its dependencies (for `assume-gpu` only: a GPU build of
TensorFlow), the defaults below. Files are looked up from the given
directory upwards; the first directory holding a pyproject.toml or setup.cfg is the project root.
"""

from __future__ import annotations

import configparser
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable


START_METHODS = ("fork", "spawn", "forkserver")
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


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("TFP",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    target_python: tuple[int, int] | None = None
    assume_start_method: str | None = None
    assume_gpu: bool = False  # the code runs where TensorFlow sees GPUs (TFP401)
    # The result cache's folder (None: `.tfproc_lint_cache` in the project root); not part of a result.
    cache_dir: str | None = None
    # Where target_python came from, in the user's terms ("requires-python in pyproject.toml").
    target_python_source: str = ""
    origin: dict = field(default_factory=dict, compare=False, hash=False)
    # Every code or prefix read for select, ignore or extend-select: (option, selector, where).
    selectors: tuple[tuple[str, str, str], ...] = field(default=(), compare=False, hash=False)
    # Problems that do not stop a run (a misspelled table), one line each.
    warnings: tuple[str, ...] = field(default=(), compare=False, hash=False)

    def is_enabled(self, code: str, default_enabled: bool = True) -> bool:
        """Longest matching prefix wins, as in flake8 and Ruff; ties go to ignore. An opt-in rule
        (`default_enabled=False`) counts only selectors more specific than the bare prefix: `TFP3`
        or `TFP302` enable TFP302, `TFP` (the default selection) does not."""
        selected = max((len(p) for p in self.select
                        if code.startswith(p) and (default_enabled or is_specific(p))), default=-1)
        ignored = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return selected > ignored

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

    def check_selectors(self, codes: Iterable[str]) -> None:
        """Raise ConfigError for the first selector that is no prefix of any of the rules' `codes`
        (a misspelled code would otherwise select or ignore nothing, silently)."""
        codes = list(codes)
        for option, selector, where in self.selectors:
            if not any(code.startswith(selector) for code in codes):
                raise ConfigError(f"{option} in {where}: {selector!r} matches no rule (rules: {', '.join(codes)})")


def is_specific(selector: str) -> bool:
    """More than the bare prefix (`TFP`): names a group of rules or one rule (`TFP3`, `TFP302`)."""
    return any(character.isdigit() for character in selector)


# Option table: file key -> (Config field, parser)
def _codes(value, option: str) -> tuple[str, ...]:
    items = _list(value, option)
    for item in items:
        if not re.fullmatch(r"[A-Z]{1,5}[0-9]{0,3}", item):
            raise ConfigError(f"{option}: {item!r} is not a rule code or prefix (e.g. TFP1, TFP101)")
    return items


def _list(value, option: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(item.strip() for item in re.split(r"[,\s]+", value) if item.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{option}: expected a list of strings, got {value!r}")


def parse_version(value, option: str = "target-python") -> tuple[int, int]:
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


def _start_method(value, option: str = "assume-start-method") -> str:
    if value not in START_METHODS:
        raise ConfigError(f"{option}: expected one of {', '.join(START_METHODS)}, got {value!r}")
    return value


OPTIONS = {
    "select": ("select", _codes),
    "ignore": ("ignore", _codes),
    "extend-select": ("extend_select", _codes),
    "exclude": ("exclude", _list),
    "extend-exclude": ("extend_exclude", _list),
    "target-python": ("target_python", parse_version),
    "assume-start-method": ("assume_start_method", _start_method),
    "assume-gpu": ("assume_gpu", _boolean),
    "cache-dir": ("cache_dir", _path),
}


def apply_options(config: Config, options: dict, where: str) -> Config:
    """Validate `options` (file keys, dashes or underscores) and layer them over `config`."""
    changes: dict = {}
    # extend-select last, so that it extends a `select` given in the same place whatever the order.
    for raw_key, value in sorted(options.items(), key=lambda item: item[0].replace("_", "-") == "extend-select"):
        key = raw_key.replace("_", "-")
        if key not in OPTIONS:
            known = ", ".join(sorted(OPTIONS))
            raise ConfigError(f"unknown option {raw_key!r} in {where} (known options: {known})")
        attribute, parser = OPTIONS[key]
        parsed = parser(value, f"{key} in {where}")
        if parser is _codes:
            changes["selectors"] = changes.get("selectors", config.selectors) + tuple(
                (key, selector, where) for selector in parsed)
        if attribute == "extend_select":
            changes["select"] = tuple(changes.get("select", config.select)) + parsed
            continue
        changes[attribute] = parsed
        if attribute == "target_python":
            changes["target_python_source"] = setting_name("target-python", where)
    if not changes:
        return config
    origin = dict(config.origin)
    origin.update({key: where for key in changes if key != "selectors"})
    return replace(config, origin=origin, **changes)


def setting_name(option: str, where: str) -> str:
    """An option as the user wrote it: `--target-python`, or `target-python in [tfproc_lint] in setup.cfg`."""
    return f"--{option}" if where == COMMAND_LINE else f"{option} in {where}"


def find_project_root(start: Path) -> Path | None:
    start = start.resolve()
    for directory in [start, *start.parents]:
        if (directory / "pyproject.toml").is_file() or (directory / "setup.cfg").is_file():
            return directory
    return None


def load_config(start: Path | None = None, explicit: Path | None = None) -> Config:
    """The configuration for a run started in `start` (or from one explicit file)."""
    config = Config()
    files = [explicit] if explicit else []
    if not explicit:
        root = find_project_root(start or Path.cwd())
        if root is not None:
            files = [root / "setup.cfg", root / "pyproject.toml"]  # later files win
            config = _assume_gpu_from_dependencies(config, root)
    for path in files:
        if path is None or not path.is_file():
            if explicit:
                raise ConfigError(f"config file {path} does not exist")
            continue
        before = config.cache_dir
        if path.name.endswith(".toml"):
            config = _apply_pyproject(config, path)
        else:
            config = _apply_ini(config, path)
        if config.cache_dir != before and not Path(config.cache_dir).expanduser().is_absolute():
            # relative to the file that names it, as Ruff's cache-dir
            config = replace(config, cache_dir=str(path.resolve().parent / Path(config.cache_dir).expanduser()))
    return config


def _apply_pyproject(config: Config, path: Path) -> Config:
    if sys.version_info >= (3, 11):  # imported here: a run without pyproject.toml never needs it
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    requires = data.get("project", {}).get("requires-python")
    if requires and config.target_python is None:
        version = lowest_python(requires, f"requires-python in {path.name}")
        if version:
            config = replace(config, target_python=version,
                             target_python_source=f"requires-python in {path.name}")
    tables = [f"tool.{key}" for key in data.get("tool", {})] + list(data)
    config = _warn_misspelled(config, tables, ("tool.tfproc-lint",), path.name, "table")
    section = data.get("tool", {}).get("tfproc-lint")
    if section is None:
        return config
    if not isinstance(section, dict):
        raise ConfigError(f"[tool.tfproc-lint] in {path} must be a table")
    return apply_options(config, section, f"[tool.tfproc-lint] in {path.name}")


def _apply_ini(config: Config, path: Path) -> Config:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError, configparser.Error) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    if parser.has_option("options", "python_requires"):
        requires = parser.get("options", "python_requires")
        version = lowest_python(requires, f"python_requires in {path.name}")
        if version:
            config = replace(config, target_python=version,
                             target_python_source=f"python_requires in {path.name}")
    config = _warn_misspelled(config, parser.sections(), INI_SECTIONS, path.name, "section")
    for section in INI_SECTIONS:
        if parser.has_section(section):
            config = apply_options(config, dict(parser.items(section)), f"[{section}] in {path.name}")
    return config


def _warn_misspelled(config: Config, names: list[str], accepted: tuple[str, ...], where: str, noun: str) -> Config:
    """A warning for each table whose name reads as tfproc-lint's but is spelled differently
    (`[tool.tfproc_lint]`, `[tfproclint]`): it would be ignored without a word."""
    def normal(name: str) -> str:
        return re.sub(r"[^a-z0-9]", "", re.sub(r"^tool[.:]", "", name.lower()))

    right = " or ".join(f"[{name}]" for name in accepted)
    found = [f"[{name}] in {where} is not read: the {noun} is spelled {right}"
             for name in names if normal(name) == "tfproclint" and name not in accepted]
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
            origin["assume_gpu"] = f"{GPU_DEPENDENCY}{' '.join(match.group(1).split())} in {path.name}"
            return replace(config, assume_gpu=True, origin=origin)
    return config


def lowest_python(specifier: str, where: str) -> tuple[int, int] | None:
    """The oldest Python 3 minor version a `requires-python` specifier admits."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # only where a project states one

    try:
        spec = SpecifierSet(specifier)
    except InvalidSpecifier:
        raise ConfigError(f"{where}: {specifier!r} is not a valid version specifier") from None
    for minor in range(0, 30):
        if spec.contains(f"3.{minor}.99", prereleases=True) or spec.contains(f"3.{minor}", prereleases=True):
            return 3, minor
    return None
