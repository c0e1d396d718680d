"""Scenario scripts, notebooks and packages, and the `PROBE = {...}` metadata each one declares.

A script's metadata is read with `ast.literal_eval`; a scenario is never imported by the probe. A
notebook scenario (`*.ipynb`, run in a Jupyter kernel) keeps the same dictionary in its notebook
metadata under the key `probe`. A package scenario is a folder holding a small project (a marker
such as pyproject.toml, its modules) and one top-level entry script that carries the `PROBE`
literal; the folder's name is the scenario's. It runs in a copy of the folder, and is linted as a
project: the entry script, and the files its metadata names under `lint` (paths in the folder).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
OUTCOMES = ("ok", "wrong result", "exception", "hang", "crash", "lost task", "no result")
KINDS = ("bad", "fixed", "auto-fixed")


@dataclass(frozen=True)
class Scenario:
    name: str
    path: Path
    rule: str
    kind: str
    expect: dict = field(hash=False)
    timeout: float = 60.0
    gpus: int = 0  # GPUs the scenario needs; 0 = runs on CPU
    max_cpus: int = 0  # skipped on machines with more CPUs (a pool of one TF worker per CPU); 0 = any
    quick: bool = False  # one of the pairs `--quick` runs: a bad scenario and its twin per rule
    requires: tuple[str, ...] = ()  # modules it imports beyond the probe extra ("ray"), or "java"
    root: Path | None = None  # a package scenario: its folder (`path` is the entry script in it)
    lint_files: tuple[str, ...] = ()  # a package scenario: more files the linter checks, relative to `root`

    @property
    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @property
    def is_notebook(self) -> bool:
        return self.path.suffix == ".ipynb"


def read_metadata(source: str, filename: str) -> dict:
    """The literal assigned to the module-level name PROBE."""
    for node in ast.parse(source, filename).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "PROBE"
        ):
            return ast.literal_eval(node.value)
    raise ValueError(f"{filename}: no module-level PROBE = {{...}} literal")


def read_notebook_metadata(text: str, filename: str) -> dict:
    """The dictionary under `probe` in a notebook's metadata."""
    try:
        meta = json.loads(text)["metadata"]["probe"]
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"{filename}: no notebook metadata 'probe'") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{filename}: the notebook metadata 'probe' must be an object")
    return meta


PROJECT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py")  # what makes a folder a project's root


def package_entry(folder: Path) -> Path:
    """The one top-level script of a package scenario that declares `PROBE`."""
    entries = [path for path in sorted(folder.glob("*.py")) if _declares_probe(path)]
    if len(entries) != 1:
        found = ", ".join(path.name for path in entries) or "none"
        raise ValueError(f"{folder}: a package scenario needs exactly one top-level script with PROBE (found {found})")
    if not any((folder / marker).is_file() for marker in PROJECT_MARKERS):
        raise ValueError(f"{folder}: a package scenario needs a project marker ({', '.join(PROJECT_MARKERS)})")
    return entries[0]


def _declares_probe(path: Path) -> bool:
    try:
        read_metadata(path.read_text(encoding="utf-8"), str(path))
    except ValueError:
        return False
    return True


def load(path: Path) -> Scenario:
    if path.is_dir():
        return load_package(path)
    text = path.read_text(encoding="utf-8")
    meta = read_notebook_metadata(text, str(path)) if path.suffix == ".ipynb" else read_metadata(text, str(path))
    return _scenario(path, meta, path.stem)


def load_package(folder: Path) -> Scenario:
    entry = package_entry(folder)
    meta = read_metadata(entry.read_text(encoding="utf-8"), str(entry))
    lint_files = tuple(meta.get("lint", ()))
    missing = [name for name in lint_files if not (folder / name).is_file()]
    if missing:
        raise ValueError(f"{entry}: 'lint' names files not in the package: {', '.join(missing)}")
    return replace(_scenario(entry, meta, folder.name), root=folder, lint_files=lint_files)


def _scenario(path: Path, meta: dict, name: str) -> Scenario:
    expect = meta.get("expect", {"outcome": "ok"})
    kind = meta.get("kind")
    if kind not in ("bad", "fixed"):
        raise ValueError(f"{path}: kind must be 'bad' or 'fixed', not {kind!r}")
    if expect.get("outcome") not in OUTCOMES:
        raise ValueError(f"{path}: expected outcome must be one of {OUTCOMES}")
    if "or" in expect and {expect["outcome"], expect["or"]} != {"hang", "lost task"}:
        raise ValueError(f"{path}: 'or' names the other of hang and lost task (the same failure, seen or not)")
    if kind == "fixed" and expect["outcome"] != "ok":
        raise ValueError(f"{path}: a fixed scenario must expect outcome 'ok'")
    return Scenario(
        name=name,
        path=path,
        rule=meta["rule"],
        kind=kind,
        expect=expect,
        timeout=float(meta.get("timeout", 60)),
        gpus=int(meta.get("gpus", 0)),
        max_cpus=int(meta.get("max_cpus", 0)),
        quick=bool(meta.get("quick", False)),
        requires=tuple(meta.get("requires", ())),
    )


def cpu_skip_reason(max_cpus: int, cpus: int) -> str | None:
    """Why a scenario that starts one TensorFlow worker per CPU is not run here, if it is not."""
    if not max_cpus or cpus <= max_cpus:
        return None
    return f"skipped: {cpus} CPUs here, it starts a TensorFlow worker per CPU (at most {max_cpus})"


JAVA_MIN = 17  # PySpark 4 needs Java 17 or later


def requirement_skip_reason(requires: tuple[str, ...]) -> str | None:
    """Why a scenario that needs an engine (the `engines` extra) or Java is not run here."""
    missing = [name for name in requires if name != "java" and importlib.util.find_spec(name) is None]
    if missing:
        return f"skipped: {', '.join(missing)} not installed (pip install -e '.[engines]')"
    if "java" in requires:
        version = java_version()
        if version is None:
            return f"skipped: no Java on PATH (PySpark needs Java {JAVA_MIN}+)"
        if version < JAVA_MIN:
            return f"skipped: Java {version} on PATH, PySpark needs Java {JAVA_MIN}+"
    return None


def java_version() -> int | None:
    """The major version of the `java` on PATH (from `java -version`), or None."""
    java = shutil.which("java")
    if java is None:
        return None
    try:
        text = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if match is None:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


def discover(directory: Path = SCENARIO_DIR) -> list[Scenario]:
    """Scripts and notebooks in `directory`, and its folders (package scenarios)."""
    folders = [path for path in directory.iterdir() if path.is_dir() and not path.name.startswith(("_", "."))]
    paths = [*directory.glob("*.py"), *directory.glob("*.ipynb"), *folders]
    return [load(path) for path in sorted(paths) if path.name != "__init__.py"]


def select(scenarios: list[Scenario], rules=None, names=None) -> list[Scenario]:
    """Scenarios of the given rules (codes or prefixes: "TFP4") and/or names, plus the ones their
    expectations compare to."""
    chosen = [
        s for s in scenarios
        if (not rules or s.rule.startswith(tuple(rules))) and (not names or s.name in names)
    ]
    by_name = {s.name: s for s in scenarios}
    for scenario in list(chosen):
        other = compared_to(scenario)
        if other in by_name and by_name[other] not in chosen:
            chosen.append(by_name[other])
    return chosen


def quick_set(scenarios: list[Scenario]) -> list[Scenario]:
    """What `--quick` runs when no rule or scenario is named: the scenarios marked `quick` (a bad one
    and its twin for every rule), the GPU ones (skipped without a GPU, at no cost), and the ones their
    expectations compare to."""
    names = [s.name for s in scenarios if s.quick or s.gpus]
    return select(scenarios, names=names)


def compared_to(scenario: Scenario) -> str | None:
    """The scenario whose throughput this one's expectation is relative to, if any."""
    relation = scenario.expect.get("slower_than") or scenario.expect.get("faster_than")
    return relation["scenario"] if relation else None
