"""`probe --merge`: a run of some scenarios merges into the committed report instead of replacing it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from runtime_probe import catalog, cli, lintloop, report, runner

OK = "from runtime_probe.support import report\nreport(1, 1)\n"
FAILS = "raise TypeError(\"cannot pickle 'Graph' object\")\n"


def scenario(folder: Path, name: str, body: str, rule: str, kind: str) -> catalog.Scenario:
    expect = {"outcome": "ok"} if kind == "fixed" else {"outcome": "exception", "type": "TypeError"}
    path = folder / f"{name}.py"
    path.write_text(f"PROBE = {{'rule': {rule!r}, 'kind': {kind!r}, 'expect': {expect!r}, 'timeout': 60}}\n"
                    + textwrap.dedent(body), encoding="utf-8")
    return catalog.load(path)


def built(scenarios, command: str) -> dict:
    observed = {s.name: runner.run_scenario(s) for s in scenarios}
    return report.build(scenarios, observed, {}, lintloop.LintLoop(status="ran"), None, 0, 1.0, command)


def test_a_partial_run_replaces_its_rows_and_keeps_the_others(tmp_path):
    old_bad = scenario(tmp_path, "a_bad", OK, "TFP101", "bad")  # wrong at first: it does not fail
    fixed = scenario(tmp_path, "a_fixed", OK, "TFP101", "fixed")
    other = scenario(tmp_path, "b_fixed", OK, "TFP102", "fixed")
    first = built([old_bad, fixed, other], "full run")
    assert not first["passed"] and first["rules"]["TFP101"]["status"] == "not confirmed"

    new_bad = scenario(tmp_path, "a_bad", FAILS, "TFP101", "bad")
    added = scenario(tmp_path, "c_bad", FAILS, "TFP103", "bad")
    merged = report.merge(first, built([new_bad, added], "some scenarios"))
    assert [row["name"] for row in merged["scenarios"]] == ["a_bad", "a_fixed", "b_fixed", "c_bad"]
    assert merged["rules"]["TFP101"]["status"] == "confirmed"
    assert merged["rules"]["TFP102"] == first["rules"]["TFP102"]
    assert merged["rules"]["TFP103"]["counts"] == "bad 1/1"
    assert merged["environment"] == first["environment"]
    assert merged["passed"], merged["result"]
    text = report.markdown(merged)
    assert "`full run`" in text and "`some scenarios`" in text and "| c_bad | bad |" in text


def test_merge_is_a_command_line_option(tmp_path, monkeypatch):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    chosen = [scenario(folder, "a_fixed", OK, "TFP101", "fixed"), scenario(folder, "b_fixed", OK, "TFP102", "fixed")]
    monkeypatch.setattr(catalog, "discover", lambda: chosen)
    monkeypatch.setattr(lintloop, "run", lambda scenarios, outdir: lintloop.LintLoop(status="ran"))
    out = tmp_path / "out"
    assert cli.main(["--scenarios", "a_fixed", "--output", str(out), "--no-progress"]) == 0
    assert cli.main(["--scenarios", "b_fixed", "--output", str(out), "--no-progress", "--merge"]) == 0
    rows = json.loads((out / "report.json").read_text(encoding="utf-8"))["scenarios"]
    assert [row["name"] for row in rows] == ["a_fixed", "b_fixed"]
    assert cli.main(["--scenarios", "b_fixed", "--output", str(out), "--no-progress"]) == 0
    rows = json.loads((out / "report.json").read_text(encoding="utf-8"))["scenarios"]
    assert [row["name"] for row in rows] == ["b_fixed"]


def test_the_guard_passes_run_from_the_command_line(tmp_path, monkeypatch):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    chosen = [scenario(folder, "a_fixed", OK, "TFP101", "fixed")]
    monkeypatch.setattr(catalog, "discover", lambda: chosen)
    monkeypatch.setattr(lintloop, "run", lambda scenarios, outdir: lintloop.LintLoop(status="ran"))
    out = tmp_path / "out"
    assert cli.main(["--scenarios", "a_fixed", "--output", str(out), "--no-progress", "--guard"]) == 0
    assert cli.main(["--scenarios", "a_fixed", "--output", str(out), "--no-progress", "--guard-only"]) == 0
    result = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert result["scenarios"][0]["guard"]["verdict"] == "clean"
    assert len(result["guard"]["runs"]) == 2
