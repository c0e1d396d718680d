"""The README's promises: the two commands, CI running the same test command, and figures that
are verbatim excerpts of reports produced by scripts in this repository."""

from __future__ import annotations

import re

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title_start: str) -> str:
    match = re.search(rf"^## {re.escape(title_start)}.*?(?=^## |\Z)", README, re.MULTILINE | re.DOTALL)
    assert match, f"README has no section starting with {title_start!r}"
    return match.group(0)


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| ---")]


def test_quick_start_is_two_make_targets_and_ci_runs_the_same_test_command() -> None:
    commands = re.findall(r"^make (\w+)", section("Quick start"), re.MULTILINE)
    assert commands == ["demo", "test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in commands:
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), target
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_probe_figures_come_from_the_committed_probe_report() -> None:
    report = (ROOT / "docs" / "probe" / "report.md").read_text(encoding="utf-8")
    probe = section("Runtime probe")
    rows = table_rows(probe)
    assert len(rows) > 10
    for row in rows:
        assert row in report, f"README row not in docs/probe/report.md: {row}"
    for bullet in (line for line in probe.splitlines() if line.startswith("- ")):
        assert bullet in report, bullet
    assert (ROOT / "docs" / "probe" / "benchmark.png").exists()


def test_speed_figures_are_the_benchmark_run_figure_for_figure() -> None:
    """README's Speed tables and targets are what benchmarks/lint_speed.py renders from the run
    committed in benchmarks/latest.json (`--readme`), which benchmarks/README.md quotes too, and
    README names the command that produced it. (Rows were once copied by their first cell, and
    the description table of benchmarks/README.md, whose rows start the same, was copied instead.)"""
    import importlib.util
    import json
    import sys

    lint_speed = sys.modules.get("lint_speed")
    if lint_speed is None:
        spec = importlib.util.spec_from_file_location("lint_speed", ROOT / "benchmarks" / "lint_speed.py")
        lint_speed = importlib.util.module_from_spec(spec)
        sys.modules["lint_speed"] = lint_speed  # its dataclasses look their module up
        spec.loader.exec_module(lint_speed)
    document = json.loads((ROOT / "benchmarks" / "latest.json").read_text(encoding="utf-8"))
    rendered = lint_speed.readme_tables(document)
    speed = section("Speed")
    assert rendered in speed
    assert table_rows(speed) == table_rows(rendered)
    for row in table_rows(rendered):
        assert re.search(r"\| [0-9.]+ \| [0-9.]+-[0-9.]+ \|", row) or row.startswith("| what |"), row
    figures = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    for line in rendered.splitlines():
        if line.startswith("- "):
            assert line in figures, line
    for row in table_rows(rendered):
        if not row.startswith("| what |"):
            cells = row.split(" | ")
            assert any(other.startswith(cells[0]) and other.split(" | ")[1:4] == cells[1:4]
                       for other in table_rows(figures)), f"not in benchmarks/README.md: {row}"
    command = f"benchmarks/lint_speed.py {' '.join(document['argv'])}"
    assert command in speed and command in figures
    before = json.loads((ROOT / "benchmarks" / "runs" / "issue19-close-quiet.json").read_text(encoding="utf-8"))
    assert lint_speed.compare_runs(before, document) in figures  # the before/after table of issue 21


def test_make_tests_time_and_size_are_the_same_everywhere() -> None:
    """README once said 13 minutes in its Quick start and 16 in its probe section, and 1.7 GB where
    the venv measured 2.8: every statement of `make test`'s time and of the install's size (README,
    CONTRIBUTING.md, the Makefile) must give the Quick start's figures."""
    quick_start = " ".join(section("Quick start").split())
    tests = re.search(r"about (\d+) minutes of tests", quick_start).group(1)
    install = re.search(r"about (\d+) minutes with the install", quick_start).group(1)
    size = re.search(r"about ([\d.]+) GB", quick_start).group(1)
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    statements = {
        "README, probe": (re.findall(r"of its (\d+) minutes", README), [tests]),
        "CONTRIBUTING, make test": (re.findall(r"about (\d+) minutes, about (\d+) with the install", contributing),
                                    [(tests, install)]),
        "CONTRIBUTING, before a pull request": (re.findall(r"about (\d+) minutes of `make test`", contributing),
                                                [tests]),
        "Makefile": (re.findall(r"about (\d+) minutes on 2 cores, about (\d+) with this install", makefile),
                     [(tests, install)]),
        "sizes": (re.findall(r"about ([\d.]+) GB", README + contributing + makefile), [size] * 3),
    }
    for where, (found, expected) in statements.items():
        assert found == expected, where


def test_every_rule_is_in_the_rule_table() -> None:
    from tfproc_lint.rules.base import all_rules

    table = section("What it catches")
    for rule in all_rules():
        assert f"[{rule.code}](docs/rules/{rule.code}.md) | {rule.name} |" in table


def make_dry_run(target: str, venv, *stamps: str) -> str:
    """What `make TARGET` would run (`make -n`) for a virtualenv at `venv` holding `stamps`."""
    import processes

    venv.mkdir(exist_ok=True)
    for stamp in stamps:
        (venv / stamp).touch()
    completed = processes.run(["make", "-n", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True,
                              timeout=60, check=True)
    return completed.stdout


def test_make_demo_installs_the_linter_only(tmp_path) -> None:
    commands = make_dry_run("demo", tmp_path / "venv")
    assert "install --quiet -e ." in commands
    assert "probe" not in commands and "[test" not in commands and "tensorflow" not in commands


def test_make_test_installs_the_probe_engines_and_test_extras_also_after_make_demo(tmp_path) -> None:
    for stamps in ((), (".linter-installed",)):
        commands = make_dry_run("test", tmp_path / f"venv{len(stamps)}", *stamps)
        assert "install --quiet -e '.[notebook,probe,test,engines]'" in commands
        assert "pytest" in commands
    after_test = make_dry_run("demo", tmp_path / "venv2", ".linter-installed", ".all-installed")
    assert " install " not in after_test  # `make test` installed everything `make demo` needs


def test_make_test_fast_installs_the_test_extra_without_tensorflow_in_a_venv_of_its_own(tmp_path) -> None:
    import processes

    main, fast = tmp_path / "venv", tmp_path / "fast"
    commands = processes.run(["make", "-n", "test-fast", f"VENV={main}", f"FAST_VENV={fast}"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60, check=True).stdout
    installs = [line for line in commands.splitlines() if " install " in line]
    assert installs and all("-e '.[test]'" in line and str(fast) in line for line in installs), installs
    assert str(main) not in commands and "tensorflow" not in "".join(installs)
    assert '-m "not tensorflow and not kernel and not precommit and not probe and not slow"' in commands


def test_contributing_names_real_make_targets_and_files() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"`?make (\w+)", text))
    assert {"test", "lint", "probe"} <= targets
    for target in targets:
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), target
    for path in re.findall(r"\]\(([^)#]+)\)", text):  # Markdown links
        assert (ROOT / path).exists(), path


def test_usage_examples_are_real_output() -> None:
    """The full-format and notebook examples in Usage are what the command prints today."""
    import processes

    from conftest import run_env, tool

    usage = section("Usage")
    for args in (["fixtures/lint/mixed/bad_keras_fork_context_partial.py", "--format", "full", "--select", "TFP201",
                  "-q", "--config", "setup.cfg"],
                 ["fixtures/lint/TFP204/bad_spawn_pool_cell_worker.ipynb"]):
        output = processes.run([tool("tfproc-lint"), "check", *args], cwd=ROOT, env=run_env(), capture_output=True,
                               text=True, check=False, timeout=120).stdout
        assert output.strip() and output.strip() in usage, output


def test_the_probe_options_the_readme_names_exist() -> None:
    """README's usage and probe section name `probe --quick` (what the test suite runs) and how to
    silence the progress lines, and the probe's command line accepts each option named."""
    from runtime_probe.cli import build_parser

    assert "tfproc-lint probe --quick" in section("Usage")
    probe = section("Runtime probe")
    known = {option for action in build_parser()._actions for option in action.option_strings}
    for option in ("--quick", "--full", "--rules", "--scenarios", "--no-progress"):
        assert f"`{option}" in probe or f"probe {option}" in probe, option
        assert option in known, option


def test_the_guard_section_matches_what_the_linter_reads() -> None:
    """The linter reads the project's other modules (the project layer): the guard section must not say it cannot."""
    guard = section("Runtime guard")
    assert "one file at a time" not in guard
    assert "cannot see a model loaded in another" not in guard
    assert "project's modules" in guard
