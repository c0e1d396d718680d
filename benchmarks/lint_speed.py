"""How fast is tfproc-lint on real code? Side-by-side timings over the same files.

Default corpus: the installed TensorFlow and Keras sources (found with importlib, without importing
them). Each round runs, in a rotating order (reversed every other round), as separate processes
from an empty working directory (so that no project configuration is picked up):

    tfproc-lint check --no-cache PATHS      cold: default jobs (all cores), no result cache
    tfproc-lint check -j1 --no-cache PATHS
    tfproc-lint check PATHS                 warm: a second run, its result cache filled by a run
                                            before the rounds (in a cache folder of its own)
    tfproc-lint check --no-cache --no-project PATHS   each file alone (issue 29's budget: the
                                            project layer costs at most 1.15x on a cold run)
    tfproc-lint check --no-cache LARGE, and with --no-project   a synthetic project package of
                                            several hundred modules (benchmarks/large_project.py,
                                            written to a temporary folder; issue 36's budget: the
                                            project layer costs at most 2x on a cold run)
    flake8 --isolated --select TFP PATHS
    flake8 --isolated --select F PATHS      our plugin installed: flake8 runs every plugin, whatever
                                            --select says, so this includes our pre-filter
    flake8 --isolated --select F PATHS      our plugin hidden from flake8's plugin discovery
    ruff check --isolated --select F,B --no-cache --extend-exclude '*.pyi' PATHS   (if installed)

the single-file latency (each row started `SINGLE_FILE_RUNS` times per round, on
benchmarks/one_file.py, 43 lines with one finding, and benchmarks/plain_file.py, 46 lines with
neither TensorFlow nor processes):

    tfproc-lint check --no-cache one_file.py   what a pre-commit hook or an editor waits for
    python -c pass                          the interpreter's own start
    python -c "import libcst"               the floor while the analysis runs on LibCST
    python -c "import tfproc_lint.cli, tfproc_lint.engine"   every import a check needs
    pyflakes one_file.py                    the reference of issue 21's targets (pyflakes comes with flake8)
    tfproc-lint check --no-cache plain_file.py, pyflakes plain_file.py
    ruff check one_file.py                  (if installed)

Before timing, tfproc-lint's own modules are compiled to bytecode (`compileall`), as pip does
when it installs a package and as Python does on a first import: a checkout installed with
`pip install -e .` on a machine with PYTHONDONTWRITEBYTECODE set would otherwise compile every
module again at each start (0.04-0.1 s), while pyflakes, flake8 and LibCST have theirs from pip.

and, in this process, `ast.parse` of every file (sources read beforehand) and `TFProcPlugin.run()`
on every file (what the flake8 plugin itself costs). The worst case is timed in this process too:
only the files that pass both stages of the pre-filter (`may_match` on the text, then
`may_match_tree` on CPython's tree: the files LibCST parses), a bare `libcst.parse_module` of each
against `tfproc_lint.engine.lint_source` on each (guard, parse, analysis, rules, positions and
fixes of the findings).

Usage:
    python benchmarks/lint_speed.py                     # full run (several minutes: flake8 is slow)
    python benchmarks/lint_speed.py --rounds 3 --flake8-rounds 1 --json out.json
    python benchmarks/lint_speed.py --paths some/dir other/file.py
    python benchmarks/lint_speed.py --quick             # one round on a small subset; proves it runs
    python benchmarks/lint_speed.py --readme benchmarks/latest.json   # README's Speed tables from a run

The exit status is 0 unless a tool failed (an exit status other than 0/1, or `-j1` and default
jobs disagreeing); `--strict` also exits 1 when a target is missed. Nothing here asserts on time in
the test suite: timings on a shared machine are noisy, which is why medians of several rounds and
their spread (min-max) are printed.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# Runs flake8's own entry point; with "hide", our plugin is dropped from flake8's plugin discovery
# first (flake8 has no option that disables an installed plugin: --select only filters its output).
_FLAKE8_RUNNER = """\
import sys
if sys.argv.pop(1) == "hide":
    from flake8.plugins import finder
    _find = finder._find_importlib_plugins
    finder._find_importlib_plugins = lambda: (p for p in _find() if p.package != "tfproc-lint")
from flake8.main.cli import main
sys.argv[0] = "flake8"
raise SystemExit(main())
"""

QUICK_SUBSET = ("keras/src/saving", "keras/src/trainers/data_adapters")

# Targets (issue 21; the worst case is issue 13's).
COLD_LIMIT = 1.0  # `tfproc-lint check --no-cache` at most 1.0x `ruff check --select F,B --no-cache`
WARM_LIMIT = 0.3  # a second `tfproc-lint check` (cache filled) at most 0.3x the same ruff
PROJECT_LIMIT = 1.15  # cold, project analysis on, at most 1.15x the file-local run (issue 29)
LARGE_PROJECT_LIMIT = 2.0  # the same on benchmarks/large_project.py's package: at most 2x (issue 36)
PLUGIN_OVERHEAD_LIMIT = 0.05  # the flake8 plugin adds at most 5% to `flake8 --select F`
WORST_CASE_LIMIT = 1.5  # full analysis of pre-filter candidates at most 1.5x a bare LibCST parse
ONE_FILE_LIMIT = 5.5  # one small file with a finding, cold CLI: at most 5.5x pyflakes on it
PLAIN_FILE_LIMIT = 2.0  # one small file without TensorFlow or processes: at most 2.0x pyflakes
ONE_FILE = Path(__file__).resolve().with_name("one_file.py")
PLAIN_FILE = Path(__file__).resolve().with_name("plain_file.py")
SINGLE_FILE_RUNS = 10  # cold starts per round: each is short and noisy


@dataclass
class Row:
    name: str
    command: str  # as a user would type it
    times: list[float] = field(default_factory=list)  # wall seconds per round
    cpu: list[float] = field(default_factory=list)  # user+sys seconds per round (with children)
    argv: list[str] | None = None  # None: measured in this process
    output: str = ""  # stdout of the last round (tfproc-lint rows: compared across -j)
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def as_json(self, ruff: float | None, parse: float | None) -> dict:
        return {
            "name": self.name, "command": self.command, "wall_s": self.times, "cpu_s": self.cpu,
            "median_s": self.median, "min_s": min(self.times), "max_s": max(self.times),
            "median_cpu_s": statistics.median(self.cpu) if self.cpu else None,
            "ratio_to_ruff": self.median / ruff if ruff else None,
            "ratio_to_ast_parse": self.median / parse if parse else None,
            "note": self.note,
        }


# Corpus -----------------------------------------------------------------------------------------
def package_dir(name: str) -> Path | None:
    """The directory of an installed package, without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def default_roots(quick: bool) -> list[Path]:
    roots = [d for d in (package_dir("tensorflow"), package_dir("keras")) if d is not None]
    if not roots:
        raise SystemExit("lint_speed: neither tensorflow nor keras is installed; pass --paths")
    if quick:
        site = roots[0].parent
        subset = [site / part for part in QUICK_SUBSET if (site / part).is_dir()]
        return subset or roots
    return roots


def python_files(roots: list[str]) -> list[Path]:
    """The files tfproc-lint checks for these paths (same discovery, same default excludes)."""
    from tfproc_lint.config import Config
    from tfproc_lint.files import collect_files

    files, _ = collect_files(roots, Config())
    return [f.path for f in files]


# Measurements -------------------------------------------------------------------------------------
def run_command(row: Row, cwd: str) -> None:
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(row.argv, cwd=cwd, capture_output=True, text=True, errors="replace", check=False)
    elapsed = time.perf_counter() - start
    after = os.times()
    if done.returncode not in (0, 1):
        raise SystemExit(f"lint_speed: `{row.command}` exited with {done.returncode}:\n{done.stderr[-3000:]}")
    row.times.append(elapsed)
    row.cpu.append((after.children_user - before.children_user) + (after.children_system - before.children_system))
    row.output = done.stdout


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def time_in_process(function, *args) -> tuple[float, float]:
    before = os.times()
    start = time.perf_counter()
    function(*args)
    elapsed = time.perf_counter() - start
    after = os.times()
    return elapsed, (after.user - before.user) + (after.system - before.system)


def parse_all(sources: list[bytes]) -> None:
    for data in sources:
        try:
            ast.parse(data)
        except (SyntaxError, ValueError):
            pass


def plugin_all(texts: list[tuple[str, str]]) -> None:
    from tfproc_lint.flake8_plugin import TFProcPlugin

    for path, text in texts:
        list(TFProcPlugin(None, text.splitlines(keepends=True), path).run())


def passes_tree_stage(text: str) -> bool:
    """Whether `engine.lint_source` goes on to parse text that passed the text pre-filter with
    LibCST: its syntax-tree stage lets it through (text CPython cannot parse goes to LibCST, which
    reports the error)."""
    from tfproc_lint.analysis.prefilter import may_match_tree

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return may_match_tree(text, tree)


def libcst_parse_all(texts: list[tuple[str, str]]) -> None:
    import libcst

    for _, text in texts:
        libcst.parse_module(text)


def lint_all(texts: list[tuple[str, str]]) -> None:
    from tfproc_lint.engine import lint_source

    for path, text in texts:
        lint_source(text, path)


# Report ---------------------------------------------------------------------------------------------
def seconds(value: float) -> str:
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def markdown(rows: list[Row], references: list[tuple[str, Row | None]]) -> str:
    """A table of medians, spreads and ratios to each reference row (skipped when it is None)."""
    references = [(label, ref) for label, ref in references if ref is not None and ref.median > 0]
    lines = [
        "| what | median s | min-max s | median cpu s | " + "".join(f"x {label} | " for label, _ in references)
        + "rounds |",
        "|---|---:|---:|---:|" + "---:|" * len(references) + "---:|",
    ]
    for row in rows:
        cpu = seconds(statistics.median(row.cpu)) if row.cpu else "-"
        command = f"`{row.command}`" + (f" ({row.note})" if row.note else "")
        ratios = "".join(f"{row.median / ref.median:.2f} | " for _, ref in references)
        lines.append(f"| {command} | {seconds(row.median)} | {seconds(min(row.times))}-{seconds(max(row.times))} "
                     f"| {cpu} | {ratios}{len(row.times)} |")
    return "\n".join(lines)


def compile_bytecode() -> str:
    """Compile tfproc-lint's modules as an installation does (see the module's docstring)."""
    import compileall

    import tfproc_lint

    package = Path(tfproc_lint.__file__).parent
    if not compileall.compile_dir(str(package), quiet=1):
        return f"warning: tfproc-lint's modules in {package} could not all be compiled: starts may include compiling"
    return f"tfproc-lint's modules compiled to bytecode in {package} (as an install does)"


def versions() -> dict:
    found = {"python": platform.python_version(), "cpus": os.cpu_count()}
    try:
        found["cpus_usable"] = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        pass
    for dist in ("tfproc-lint", "libcst", "flake8", "pyflakes", "pycodestyle", "ruff", "tensorflow-cpu",
                 "tensorflow", "keras"):
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


def tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def flake8_plugin_check(cwd: str) -> tuple[bool, bool]:
    """(our plugin is visible to flake8, hiding it works)."""
    def listed(mode: str) -> bool:
        done = subprocess.run([sys.executable, "-c", _FLAKE8_RUNNER, mode, "--version"], cwd=cwd,
                              capture_output=True, text=True, check=False)
        return "tfproc-lint" in done.stdout

    return listed("keep"), not listed("hide")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths", nargs="+", help="files or directories (default: installed TensorFlow + Keras)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of every measurement (default 5)")
    parser.add_argument("--flake8-rounds", type=int, default=None,
                        help="rounds for the flake8 rows (default: --rounds, at most 3: one flake8 run over "
                             "the TensorFlow + Keras sources takes minutes)")
    parser.add_argument("--no-flake8", action="store_true", help="skip the flake8 rows")
    parser.add_argument("--quick", action="store_true", help="one round on a small subset (a smoke test)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--no-large-project", action="store_true",
                        help="skip the rows on the synthetic project package (benchmarks/large_project.py)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds = 1
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    flake8_rounds = args.flake8_rounds if args.flake8_rounds is not None else min(args.rounds, 3)

    bytecode = compile_bytecode()
    say(f"lint_speed: {bytecode}")
    roots = [os.path.abspath(p) for p in args.paths] if args.paths else [str(p) for p in default_roots(args.quick)]
    files = python_files(roots)
    if not files:
        raise SystemExit("lint_speed: no Python files under " + " ".join(roots))
    from tfproc_lint.source import SourceError, decode

    raw = [path.read_bytes() for path in files]
    texts: list[tuple[str, str]] = []
    for path, data in zip(files, raw, strict=True):
        try:
            texts.append((str(path), decode(data).text))
        except SourceError:
            pass
    from tfproc_lint.analysis.prefilter import may_match

    text_candidates = [(path, text) for path, text in texts if may_match(text)]
    candidates = [(path, text) for path, text in text_candidates if passes_tree_stage(text)]
    total_lines = sum(text.count("\n") for _, text in texts)
    candidate_lines = sum(text.count("\n") for _, text in candidates)
    screened = (f"{len(text_candidates)} pass the pre-filter's text stage, {len(candidates)} of them "
                f"({candidate_lines} lines) also its syntax-tree stage")
    say(f"lint_speed: {len(files)} files ({total_lines} lines) under {' '.join(roots)}; {screened}")

    cwd = tempfile.mkdtemp(prefix="lint_speed_")  # no pyproject.toml / setup.cfg to pick up
    try:
        linter = tool("tfproc-lint")
        base = [linter] if linter else [sys.executable, "-m", "tfproc_lint.cli"]
        cache_dir = os.path.join(cwd, "cache")
        rows: list[Row] = [
            Row("tfproc-lint", "tfproc-lint check --no-cache", argv=base + ["check", "--no-cache", *roots]),
            Row("tfproc-lint -j1", "tfproc-lint check -j1 --no-cache",
                argv=base + ["check", "-j1", "--no-cache", *roots]),
            Row("tfproc-lint warm", "tfproc-lint check", note="second run: its result cache filled",
                argv=base + ["check", "--cache-dir", cache_dir, *roots]),
            Row("tfproc-lint --no-project", "tfproc-lint check --no-cache --no-project",
                note="each file alone: the project layer off",
                argv=base + ["check", "--no-cache", "--no-project", *roots]),
        ]
        run_command(Row("fill the cache", "", argv=rows[2].argv), cwd)  # untimed
        large = large_project_rows(base, Path(cwd)) if not args.no_large_project else []
        rows.extend(large)
        flake8_rows: list[Row] = []
        if not args.no_flake8 and importlib.util.find_spec("flake8") is not None:
            visible, hidable = flake8_plugin_check(cwd)
            runner = [sys.executable, "-c", _FLAKE8_RUNNER]
            if visible:
                flake8_rows.append(Row("flake8 TFP", "flake8 --select TFP",
                                       argv=runner + ["keep", "--isolated", "--select", "TFP", *roots]))
            flake8_rows.append(Row("flake8 F", "flake8 --select F",
                                   argv=runner + ["keep", "--isolated", "--select", "F", *roots],
                                   note="our plugin installed, so it runs" if visible else "plugin not installed"))
            if visible and hidable:
                flake8_rows.append(Row("flake8 F without plugin", "flake8 --select F",
                                       argv=runner + ["hide", "--isolated", "--select", "F", *roots],
                                       note="our plugin hidden"))
            rows.extend(flake8_rows)
        ruff_path = tool("ruff")
        ruff = None
        if ruff_path:
            ruff = Row("ruff", "ruff check --select F,B --no-cache",
                       argv=[ruff_path, "check", "--isolated", "--select", "F,B", "--no-cache", "--quiet",
                             "--extend-exclude", "*.pyi", *roots])
            rows.append(ruff)
        parse = Row("ast.parse", "ast.parse of every file", note="in-process, files read beforehand")
        plugin = Row("plugin run()", "TFProcPlugin.run() on every file", note="in-process: the plugin's own cost")
        worst_parse = Row("libcst parse", f"libcst.parse_module, {len(candidates)} pre-filter candidates",
                          note="in-process")
        worst_lint = Row("lint_source", f"engine.lint_source, {len(candidates)} pre-filter candidates",
                         note="in-process")
        if candidates:  # warm up: imports and LibCST's parser, outside the timings
            lint_all(candidates[:1])

        single = single_file_rows(base, ruff_path)

        for round_number in range(args.rounds):
            say(f"lint_speed: round {round_number + 1}/{args.rounds}")
            subprocess_rows = [r for r in rows if r.argv and (r not in flake8_rows or round_number < flake8_rounds)]
            # Rotate to spread drift evenly, and reverse every other round, so that rows that are
            # compared (the two `flake8 --select F`) run in the order A, B one round and B, A the next.
            shift = round_number % len(subprocess_rows)
            order = subprocess_rows[shift:] + subprocess_rows[:shift]
            for row in order[::-1] if round_number % 2 else order:
                say(f"  {row.command}" + (f" ({row.note})" if row.note else ""))
                run_command(row, cwd)
            for row in single:
                for _ in range(SINGLE_FILE_RUNS):
                    run_command(row, cwd)
            for row, function, data in ((parse, parse_all, raw), (plugin, plugin_all, texts),
                                        (worst_parse, libcst_parse_all, candidates),
                                        (worst_lint, lint_all, candidates)):
                wall, cpu = time_in_process(function, data)
                row.times.append(wall)
                row.cpu.append(cpu)

        problems = []
        if rows[0].output != rows[1].output:
            problems.append("`tfproc-lint check` and `tfproc-lint check -j1` printed different results")
        if rows[0].output != rows[2].output:
            problems.append("`tfproc-lint check` with its cache filled printed different results")
        if rows[0].output != rows[3].output:
            problems.append("`tfproc-lint check` printed other results with and without --no-project")
        flake8_f = [r for r in flake8_rows if r.name.startswith("flake8 F") and r.times]
        if len(flake8_f) == 2 and flake8_f[0].output != flake8_f[1].output:
            problems.append("`flake8 --select F` printed different results with and without our plugin")
        table_rows = [r for r in rows if r.times] + [parse, plugin]
        targets = check_targets(rows[0], rows[1], rows[2], ruff, {r.name: r for r in flake8_rows}, worst_parse,
                                worst_lint)
        targets.extend(single_file_targets(single))
        targets.append(project_target(rows[0], rows[3]))
        targets.append(large_project_target(large))
    finally:
        shutil.rmtree(cwd, ignore_errors=True)

    worst_table = markdown([worst_parse, worst_lint], [("libcst parse", worst_parse)])
    report = [
        f"Corpus: {len(files)} files, {total_lines} lines ({', '.join(roots)}); {screened}.",
        "",
        markdown(table_rows, [("ruff", ruff), ("ast.parse", parse)]),
        "",
        f"One file ({ONE_FILE.name}, {ONE_FILE.read_text().count(chr(10))} lines, one finding; "
        f"{PLAIN_FILE.name}, {PLAIN_FILE.read_text().count(chr(10))} lines, no TensorFlow), cold start, "
        f"{SINGLE_FILE_RUNS} starts per round:",
        "",
        markdown(single, [("python start", single[1])]),
        "",
        breakdown(single),
        "",
        "Worst case (only the files that pass the pre-filter):",
        "",
        worst_table,
        "",
        "Targets:",
        "",
        *(f"- {status}: {name}: {detail}" for name, status, detail in targets),
        *(f"- ERROR: {problem}" for problem in problems),
    ]
    print("\n".join(report))
    if args.json:
        ruff_median = ruff.median if ruff else None
        args.json.write_text(json.dumps({
            "argv": sys.argv[1:] if argv is None else argv,
            "corpus": {"roots": roots, "files": len(files), "lines": total_lines,
                       "candidates": [p for p, _ in candidates], "candidate_lines": candidate_lines},
            "environment": {**versions(), "bytecode": bytecode},
            "rows": [r.as_json(ruff_median, parse.median) for r in table_rows + [worst_parse, worst_lint]],
            "single_file": [r.as_json(None, None) for r in single],
            "targets": [{"target": n, "status": s, "detail": d} for n, s, d in targets],
            "problems": problems,
        }, indent=2) + "\n")
    if problems:
        return 1
    if args.strict and any(status == "FAIL" for _, status, _ in targets):
        return 1
    return 0


def single_file_rows(linter: list[str], ruff_path: str | None) -> list[Row]:
    python = sys.executable
    rows = [
        Row("one file", "tfproc-lint check --no-cache one_file.py",
            argv=linter + ["check", "--no-cache", str(ONE_FILE)]),
        Row("python start", "python -c pass", argv=[python, "-c", "pass"]),
        Row("import libcst", "python -c 'import libcst'", argv=[python, "-c", "import libcst"]),
        Row("imports", "python -c 'import tfproc_lint.cli, tfproc_lint.engine'",
            argv=[python, "-c", "import tfproc_lint.cli, tfproc_lint.engine"]),
    ]
    pyflakes = tool("pyflakes")
    if pyflakes:
        rows.append(Row("pyflakes one file", "pyflakes one_file.py", argv=[pyflakes, str(ONE_FILE)]))
    rows.append(Row("plain file", "tfproc-lint check --no-cache plain_file.py",
                    argv=linter + ["check", "--no-cache", str(PLAIN_FILE)]))
    if pyflakes:
        rows.append(Row("pyflakes plain file", "pyflakes plain_file.py", argv=[pyflakes, str(PLAIN_FILE)]))
    if ruff_path:
        rows.append(Row("ruff one file", "ruff check one_file.py",
                        argv=[ruff_path, "check", "--isolated", "--no-cache", "--quiet", str(ONE_FILE)]))
    return rows


def breakdown(single: list[Row]) -> str:
    """Where the single-file time goes, from the medians: interpreter, LibCST, our imports, the rest."""
    total, start, libcst_import, imports = (row.median for row in single[:4])
    parts = [("interpreter start", start), ("import libcst", libcst_import - start),
             ("tfproc-lint's own imports", imports - libcst_import),
             ("config, files, read, parse, analysis, output", total - imports)]
    return "Breakdown of `tfproc-lint check one_file.py` (medians): " + ", ".join(
        f"{name} {value:.3f} s" for name, value in parts) + f"; total {total:.3f} s."


def single_file_targets(single: list[Row]) -> list[tuple[str, str, str]]:
    rows = {row.name: row for row in single}
    targets = []
    for name, reference, limit, what in (
            ("one file", "pyflakes one file", ONE_FILE_LIMIT, "one small file with a finding"),
            ("plain file", "pyflakes plain file", PLAIN_FILE_LIMIT, "one small file without TensorFlow or processes")):
        title = f"{what}, CLI cold start, at most {limit}x `pyflakes` on it"
        if reference not in rows:
            targets.append((title, "SKIP", "pyflakes is not installed"))
            continue
        ratio = rows[name].median / rows[reference].median
        detail = f"{seconds(rows[name].median)} s vs {seconds(rows[reference].median)} s (x{ratio:.2f})"
        targets.append((title, "PASS" if ratio <= limit else "FAIL", detail))
    return targets


def project_target(default_jobs: Row, file_local: Row) -> tuple[str, str, str]:
    """Issue 29's budget: the project layer costs at most PROJECT_LIMIT on a cold run."""
    name = f"cold `tfproc-lint check --no-cache` at most {PROJECT_LIMIT}x the same with `--no-project`"
    ratio = default_jobs.median / file_local.median
    detail = f"{seconds(default_jobs.median)} s vs {seconds(file_local.median)} s (x{ratio:.2f})"
    return name, "PASS" if ratio <= PROJECT_LIMIT else "FAIL", detail


def large_project_rows(linter: list[str], folder: Path) -> list[Row]:
    """Cold runs on the synthetic project package, written under `folder`: the project layer on and off."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from large_project import project_files, write_large_project

    root = str(write_large_project(folder))
    modules = sum(name.endswith(".py") for name in project_files())
    return [
        Row("large project", "tfproc-lint check --no-cache LARGE", note=f"synthetic package, {modules} modules",
            argv=linter + ["check", "--no-cache", root]),
        Row("large project --no-project", "tfproc-lint check --no-cache --no-project LARGE",
            note="the same, each file alone", argv=linter + ["check", "--no-cache", "--no-project", root]),
    ]


def large_project_target(large: list[Row]) -> tuple[str, str, str]:
    """Issue 36's budget: on a project package of several hundred modules, the project layer costs
    at most LARGE_PROJECT_LIMIT on a cold run."""
    name = (f"cold `tfproc-lint check --no-cache` on a synthetic project package at most {LARGE_PROJECT_LIMIT}x "
            "the same with `--no-project`")
    if not large:
        return name, "SKIP", "not measured: --no-large-project"
    project, file_local = large
    ratio = project.median / file_local.median
    found = project.output.strip().splitlines()[-1:] or ["no output"]
    detail = (f"{seconds(project.median)} s vs {seconds(file_local.median)} s (x{ratio:.2f}); "
              f"{project.note}: {found[0]}")
    return name, "PASS" if ratio <= LARGE_PROJECT_LIMIT else "FAIL", detail


def check_targets(default_jobs: Row, one_job: Row, warm: Row, ruff: Row | None, flake8: dict[str, Row],
                  worst_parse: Row, worst_lint: Row) -> list[tuple[str, str, str]]:
    targets = []
    for row, limit, title in ((default_jobs, COLD_LIMIT, "cold `tfproc-lint check --no-cache`"),
                              (warm, WARM_LIMIT, "warm `tfproc-lint check` (second run, cache filled)")):
        name = f"{title} at most {limit}x `ruff check --select F,B --no-cache`"
        if ruff is None:
            targets.append((name, "SKIP", "ruff is not installed"))
            continue
        ratio = row.median / ruff.median
        detail = f"{seconds(row.median)} s vs {seconds(ruff.median)} s (x{ratio:.2f})"
        if row is default_jobs:
            detail += f"; -j1: {seconds(one_job.median)} s (x{one_job.median / ruff.median:.2f})"
        targets.append((name, "PASS" if ratio <= limit else "FAIL", detail))

    name = f"the flake8 plugin adds at most {PLUGIN_OVERHEAD_LIMIT:.0%} to `flake8 --select F`"
    with_plugin, without = flake8.get("flake8 F"), flake8.get("flake8 F without plugin")
    if with_plugin is None or without is None:
        targets.append((name, "SKIP", "not measured: --no-flake8, flake8 or the plugin not installed, or the plugin "
                                      "cannot be hidden"))
    else:
        overhead = with_plugin.median / without.median - 1
        cpu_overhead = statistics.median(with_plugin.cpu) / statistics.median(without.cpu) - 1
        detail = (f"{seconds(with_plugin.median)} s with vs {seconds(without.median)} s without "
                  f"({overhead:+.1%} wall, {cpu_overhead:+.1%} cpu)")
        targets.append((name, "PASS" if overhead <= PLUGIN_OVERHEAD_LIMIT else "FAIL", detail))

    name = f"on pre-filter candidates, full analysis at most {WORST_CASE_LIMIT}x a bare LibCST parse"
    if not worst_parse.times or worst_parse.median == 0:
        targets.append((name, "SKIP", "no file passes the pre-filter"))
    else:
        ratio = worst_lint.median / worst_parse.median
        detail = f"{seconds(worst_lint.median)} s vs {seconds(worst_parse.median)} s (x{ratio:.2f})"
        targets.append((name, "PASS" if ratio <= WORST_CASE_LIMIT else "FAIL", detail))
    return targets


# README ---------------------------------------------------------------------------------------------
README_ROWS = ("tfproc-lint", "tfproc-lint -j1", "tfproc-lint warm", "ruff", "flake8 F", "flake8 F without plugin")


def readme_tables(document: dict) -> str:
    """README's Speed tables and targets, rendered from a run's JSON (`--json`): the test suite
    renders them again from benchmarks/latest.json and compares with README.md."""
    def row(entry: dict) -> Row:
        return Row(entry["name"], entry["command"], times=entry["wall_s"], cpu=entry["cpu_s"], note=entry["note"])

    rows = {entry["name"]: row(entry) for entry in document["rows"]}
    single = {entry["name"]: row(entry) for entry in document["single_file"]}
    parts = [markdown([rows[name] for name in README_ROWS if name in rows], [("ruff", rows.get("ruff"))])]
    for name, reference in (("one file", "pyflakes one file"), ("plain file", "pyflakes plain file")):
        if name in single and reference in single:
            parts.append(markdown([single[name], single[reference]], [("pyflakes", single[reference])]))
    parts.append("\n".join(f"- {t['status']}: {t['target']}: {t['detail']}" for t in document["targets"]))
    return "\n\n".join(parts) + "\n"


# `--compare`: the reference of each row that is not compared with ruff.
_COMPARED_WITH = {"flake8 F": "flake8 F without plugin", "flake8 TFP": "flake8 F without plugin",
                  "lint_source": "libcst parse", "one file": "pyflakes one file", "plain file": "pyflakes plain file"}


def compare_runs(before: dict, after: dict) -> str:
    """A before/after table of two runs' JSON (`--compare BEFORE.json AFTER.json`): the medians of
    the rows both have, wall and CPU, and each row's ratio to its run's reference (ruff for the
    tree rows, pyflakes on the same file for the single-file rows, a bare LibCST parse for the
    worst case). Ratios within one run are what compare across runs made at different loads."""
    def medians(entry: dict) -> tuple[float, float | None]:
        return statistics.median(entry["wall_s"]), statistics.median(entry["cpu_s"]) if entry["cpu_s"] else None

    def reference(name: str) -> str | None:
        if name in _COMPARED_WITH:
            return _COMPARED_WITH[name]
        return "ruff" if name.startswith("tfproc-lint") or name == "plugin run()" else None

    def entries(document: dict) -> dict:
        return {entry["name"]: entry for entry in document["rows"] + document["single_file"]}

    old, new = entries(before), entries(after)
    lines = ["| what | before s | before cpu s | before x ref | after s | after cpu s | after x ref | ref |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name, entry in new.items():
        if name not in old or name in ("python start", "ruff one file") or name.startswith("pyflakes"):
            continue
        cells = []
        for table in (old, new):
            wall, cpu = medians(table[name])
            ref = reference(name)
            ratio = f"{wall / medians(table[ref])[0]:.2f}" if ref in table else "-"
            cells += [seconds(wall), seconds(cpu) if cpu is not None else "-", ratio]
        ref_name = reference(name)
        hidden = " (plugin hidden)" if ref_name == "flake8 F without plugin" else ""
        label = f"`{new[ref_name]['command']}`{hidden}" if ref_name in new else "-"
        command = f"`{entry['command']}`" + (f" ({entry['note']})" if entry["note"] else "")
        lines.append(f"| {command} | " + " | ".join(cells) + f" | {label} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--readme"] and len(sys.argv) == 3:
        sys.stdout.write(readme_tables(json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))))
        sys.exit(0)
    if sys.argv[1:2] == ["--compare"] and len(sys.argv) == 4:
        documents = [json.loads(Path(name).read_text(encoding="utf-8")) for name in sys.argv[2:]]
        sys.stdout.write(compare_runs(*documents))
        sys.exit(0)
    sys.exit(main())
