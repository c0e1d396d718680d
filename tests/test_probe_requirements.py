"""Engine scenarios declare what they need beyond the probe extra (`requires`): they are skipped,
with the reason, where an engine or Java 17+ is missing, and run where it is there."""

from __future__ import annotations

import subprocess

import pytest

from runtime_probe import catalog


def test_every_engine_scenario_declares_its_engine() -> None:
    for scenario in catalog.discover():
        source = scenario.source
        for module in ("ray", "dask", "pyspark"):
            if f"import {module}" in source or f"from {module}" in source:
                assert module in scenario.requires, scenario.name
        if "pyspark" in source:
            assert "java" in scenario.requires, scenario.name


def test_a_missing_module_is_a_skip_reason() -> None:
    reason = catalog.requirement_skip_reason(("no_such_engine_module",))
    assert reason == "skipped: no_such_engine_module not installed (pip install -e '.[engines]')"
    assert catalog.requirement_skip_reason(("json",)) is None


def test_java_missing_or_too_old_is_a_skip_reason(monkeypatch) -> None:
    monkeypatch.setattr(catalog.shutil, "which", lambda name: None)
    assert catalog.requirement_skip_reason(("java",)) == "skipped: no Java on PATH (PySpark needs Java 17+)"
    monkeypatch.setattr(catalog.shutil, "which", lambda name: "/usr/bin/java")

    def run(version):
        return lambda *a, **k: subprocess.CompletedProcess(a, 0, "", f'openjdk version "{version}" 2025-04-15\n')

    monkeypatch.setattr(catalog.subprocess, "run", run("11.0.2"))
    assert catalog.requirement_skip_reason(("java",)) == "skipped: Java 11 on PATH, PySpark needs Java 17+"
    monkeypatch.setattr(catalog.subprocess, "run", run("1.8.0_292"))
    assert catalog.java_version() == 8
    monkeypatch.setattr(catalog.subprocess, "run", run("17.0.15"))
    assert catalog.requirement_skip_reason(("java",)) is None


@pytest.mark.parametrize("name", ["tfp301_spark_row_udf_bad", "tfp102_ray_traced_function_bad"])
def test_requires_is_read_from_the_metadata(name: str) -> None:
    scenario = next(s for s in catalog.discover() if s.name == name)
    assert scenario.requires and all(isinstance(r, str) for r in scenario.requires)
