"""A rule whose severity is a warning (TFP301) reads as one in every format; errors as errors."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from tfproc_lint.cli import main
from tfproc_lint.diagnostics import Severity
from tfproc_lint.rules.base import all_rules

WARNING = "fixtures/lint/TFP301/bad_keras_pool_load_per_task.py"
ERROR = "fixtures/lint/TFP101/bad_a3c_session_to_actors.py"
ESC = "\x1b["


def check(capsys, monkeypatch, *args: str) -> str:
    monkeypatch.chdir(ROOT)
    assert main(["check", "-j", "1", "--select", "TFP301,TFP101", *args, ERROR, WARNING]) == 1
    return capsys.readouterr().out


def test_tfp301_is_a_warning() -> None:
    assert {rule.code for rule in all_rules() if rule.severity is Severity.WARNING} >= {"TFP301"}


def test_text_labels_and_colours_warnings_yellow(capsys, monkeypatch) -> None:
    lines = check(capsys, monkeypatch, "--color", "always").splitlines()
    warning = next(line for line in lines if "TFP301" in line)
    error = next(line for line in lines if "TFP101" in line)
    assert f"{ESC}33mTFP301{ESC}0m {ESC}33mwarning:{ESC}0m " in warning and f"{ESC}31m" not in warning
    assert f"{ESC}31mTFP101{ESC}0m " in error and "warning" not in error


def test_plain_text_labels_warnings(capsys, monkeypatch) -> None:
    lines = check(capsys, monkeypatch, "--color", "never").splitlines()
    assert any(line.startswith(f"{WARNING}:") and " TFP301 warning: " in line for line in lines)
    assert all(" TFP101 warning" not in line for line in lines)


def test_json_severity(capsys, monkeypatch) -> None:
    findings = json.loads(check(capsys, monkeypatch, "--format", "json"))["findings"]
    assert {f["code"]: f["severity"] for f in findings} == {"TFP101": "error", "TFP301": "warning"}


def test_sarif_level(capsys, monkeypatch) -> None:
    run = json.loads(check(capsys, monkeypatch, "--format", "sarif"))["runs"][0]
    assert {r["ruleId"]: r["level"] for r in run["results"]} == {"TFP101": "error", "TFP301": "warning"}
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in run["tool"]["driver"]["rules"]}
    assert levels["TFP301"] == "warning" and levels["TFP101"] == "error"


@pytest.mark.parametrize("code, command", [("TFP301", "::warning "), ("TFP101", "::error ")])
def test_github_command(capsys, monkeypatch, code, command) -> None:
    lines = [line for line in check(capsys, monkeypatch, "--format", "github").splitlines() if f"title={code}" in line]
    assert lines and all(line.startswith(command) for line in lines)
