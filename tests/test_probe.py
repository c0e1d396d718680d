"""The runtime probe for real (`--quick`): a bad scenario and its twin per rule with TensorFlow, the lint
loop, the quick benchmark. `make probe` runs every scenario.

Slow (several minutes on 2 cores) and marked `probe`, but part of the default run: it is the proof
that the rules are true.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time

import pytest
import processes
from conftest import run_env, tool

from runtime_probe import catalog, cli
from runtime_probe.benchmark import PATTERNS
from runtime_probe.evidence import evidence, for_docs, for_rule
from tfproc_lint.rules.base import all_rules

pytestmark = [pytest.mark.probe, pytest.mark.tensorflow]
RULES = [rule.code for rule in all_rules()]


@pytest.fixture(scope="module")
def probe(tmp_path_factory, pytestconfig):
    out = tmp_path_factory.mktemp("probe-report")
    start = time.monotonic()
    # Several minutes: one line per finished scenario on the terminal, past pytest's capture.
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print("\nrunning the probe (--quick): one line per scenario", file=sys.stderr, flush=True)
        with contextlib.redirect_stdout(io.StringIO()):  # the summary tables: in report.md
            code = cli.main(["--quick", "--progress", "--output", str(out)])
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return {"code": code, "report": report, "out": out, "wall_s": time.monotonic() - start}


def test_each_rule_is_confirmed_on_cpu(probe):
    rules = probe["report"]["rules"]
    failures = {
        row["name"]: row["reason"] for row in probe["report"]["scenarios"] if row["verdict"] == "not confirmed"
    }
    skipped_here = {row["rule"] for row in probe["report"]["scenarios"] if row["verdict"].startswith("skipped: ")
                    and "CPUs here" in row["verdict"]}  # TFP302's pool of one worker per CPU, on a big machine
    if not probe["report"]["environment"]["gpus"]:  # rules shown only on a GPU (TFP401): the GPU test below
        skipped_here |= gpu_only_rules()
    for code in RULES:
        assert code in rules, (f"{code} has no probe scenario: add runtime_probe/scenarios/{code.lower()}_<what>_bad.py"
                               " and _fixed.py (CONTRIBUTING.md, step 4)")
        if code in skipped_here:
            continue
        assert rules[code]["status"] == "confirmed", (code, failures)


def gpu_only_rules() -> set[str]:
    """Rules whose every scenario needs a GPU."""
    scenarios = catalog.discover()
    return {s.rule for s in scenarios} - {s.rule for s in scenarios if not s.gpus}


def test_every_scenario_is_classified_and_leaves_nothing_running(probe):
    for row in probe["report"]["scenarios"]:
        if row["verdict"].startswith("skipped"):
            assert row["observation"] is None
            continue
        assert row["observation"]["outcome"] in catalog.OUTCOMES, row["name"]
        assert row["verdict"] in ("confirmed", "not confirmed"), row["name"]
        assert row["observation"]["leftovers"] == [], row["name"]


def test_gpu_scenarios_are_skipped_not_passed_without_a_gpu(probe):
    if probe["report"]["environment"]["gpus"]:
        pytest.skip("this machine has a GPU: the GPU scenarios ran")
    gpu_rows = [row for row in probe["report"]["scenarios"] if row["name"].startswith("gpu_")]
    assert gpu_rows
    assert all(row["verdict"] == "skipped: no GPU" for row in gpu_rows)


def test_exit_code_matches_the_result(probe):
    assert probe["code"] == (0 if probe["report"]["passed"] else 1)


def test_lint_loop_is_reported_never_silently_passed(probe):
    lint = probe["report"]["lint"]
    if lint["status"].startswith("linter unavailable"):
        assert "lint loop not run" in probe["report"]["result"]
        return
    checked = {check["scenario"] for check in lint["checks"]}
    assert {row["name"] for row in probe["report"]["scenarios"] if row["kind"] != "auto-fixed"} <= checked


def test_autofixed_bad_scenarios_now_work(probe):
    rows = [r for r in probe["report"]["scenarios"] if r["kind"] == "auto-fixed" and r["observation"]]
    if not rows:
        pytest.skip(f"no auto-fixed scenario ran (lint loop: {probe['report']['lint']['status']})")
    assert {r["name"]: r["reason"] for r in rows if r["verdict"] != "confirmed"} == {}


def test_quick_benchmark_writes_json_markdown_and_chart(probe):
    out, bench = probe["out"], probe["report"]["benchmark"]
    assert (out / "benchmark.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "## Benchmark (quick)" in (out / "report.md").read_text(encoding="utf-8")
    for workload, summary in bench["summary"].items():
        assert set(summary["patterns"]) == set(PATTERNS)
        for pattern, row in summary["patterns"].items():
            assert row["failed"] == [] and row["tasks_per_s"]["median"] > 0, (workload, pattern, row["failed"])
        assert summary["fastest"] in PATTERNS
    assert all(run["leftovers"] == [] for run in bench["runs"])


def test_evidence_quotes_the_observations_per_rule(probe):
    path = probe["out"] / "report.json"
    assert evidence(path)["TFP201"]["status"] == "confirmed"
    lines = for_rule("TFP101", path)
    assert any("tfp101_pool_session_bad" in line and "cannot pickle" in line for line in lines)
    written = json.loads((probe["out"] / "evidence.json").read_text(encoding="utf-8"))
    assert written == for_docs(json.loads(path.read_text(encoding="utf-8")))  # what the rule pages read


def test_default_relative_output_from_a_scratch_folder(tmp_path):
    """`tfproc-lint probe` with its default output folder (probe-report, relative), run from
    another directory: the auto-fixed scenario written there is found and runs ok."""
    completed = processes.run(
        [tool("tfproc-lint"), "probe", "--scenarios", "tfp301_session_pool_bad", "--jobs", "2"],
        cwd=tmp_path, env=run_env(), capture_output=True, text=True, timeout=300, check=False)
    out = tmp_path / "probe-report"
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert (out / "report.md").is_file()
    rows = {row["name"]: row for row in report["scenarios"]}
    fixed = rows["tfp301_session_pool_bad (auto-fixed)"]
    assert (fixed["observation"]["outcome"], fixed["verdict"]) == ("ok", "confirmed"), fixed["observed"]
    assert fixed["path"] == str(out / "autofixed" / "tfp301_session_pool_bad.py")
    assert completed.returncode == 0 and report["passed"], report["result"]
