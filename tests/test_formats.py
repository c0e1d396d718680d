"""`--format sarif` validated with jsonschema against the official SARIF 2.1.0 schema, `--format github`
checked line by line; both on the real lint fixtures through the real command."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest
import processes
from conftest import ROOT, run_env, tool

from tfproc_lint.diagnostics import Applicability, Diagnostic, Edit, FileError, FileResult, Fix, Severity
from tfproc_lint.docs import render_rule
from tfproc_lint.fixing import apply_edits
from tfproc_lint.output import Run, github, sarif
from tfproc_lint.rules.base import all_rules, rule_by_code

SCHEMA = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
FIXTURES = "fixtures/lint"
# Passes the text pre-filter (so it is parsed) and does not parse.
BROKEN = "import tensorflow as tf\nimport multiprocessing as mp\npool = mp.Pool(2)\ndef f(:\n"


def check(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return processes.run([tool("tfproc-lint"), "check", *args], check=False, cwd=cwd, env=run_env(),
                         capture_output=True, text=True, timeout=120)


def validate(document: dict) -> None:
    validator_class = jsonschema.validators.validator_for(SCHEMA)
    validator_class.check_schema(SCHEMA)
    validator = validator_class(SCHEMA, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


@pytest.fixture(scope="module")
def fixture_runs() -> dict:
    """The fixtures through each format once (json is the reference for the others)."""
    outputs = {}
    for name in ("json", "sarif", "github"):
        completed = check("--format", name, "-j", "1", FIXTURES)
        assert completed.returncode == 1, completed.stderr
        outputs[name] = completed.stdout
    return outputs


# SARIF -----------------------------------------------------------------------------------------------
def test_schema_is_the_official_sarif_2_1_0_schema() -> None:
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert SCHEMA["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]


def test_schema_rejects_what_it_should() -> None:
    """The validator bites: a misspelt property and a 0 column are errors."""
    document = json.loads(json.dumps(sarif.sarif_log(Run([FileResult("a.py", [_diagnostic("a.py")])]))))
    validate(document)
    document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startColumn"] = 0
    with pytest.raises(AssertionError):
        validate(document)
    document = sarif.sarif_log(Run([]))
    document["runs"][0]["tool"]["driver"]["informationURI"] = "https://example.org/"
    with pytest.raises(AssertionError):
        validate(document)


@pytest.mark.slow
def test_sarif_on_fixtures_validates_and_matches_json(fixture_runs) -> None:
    document = json.loads(fixture_runs["sarif"])
    validate(document)
    assert document["version"] == "2.1.0" and len(document["runs"]) == 1
    run = document["runs"][0]
    findings = json.loads(fixture_runs["json"])["findings"]
    assert findings and len(run["results"]) == len(findings)
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [rule.code for rule in all_rules()]
    assert run["invocations"][0]["executionSuccessful"] is True
    assert run["invocations"][0]["toolExecutionNotifications"] == []
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.as_uri() + "/"
    for result, finding in zip(run["results"], findings, strict=True):
        assert result["ruleId"] == finding["code"]
        assert rules[result["ruleIndex"]]["id"] == finding["code"]
        assert result["level"] == finding["severity"]
        assert result["message"]["text"] == finding["message"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {"uri": finding["path"], "uriBaseId": "%SRCROOT%"}
        assert location["artifactLocation"]["uri"].startswith("fixtures/lint/")
        assert (ROOT / location["artifactLocation"]["uri"]).is_file()
        cell = {"properties": {"cell": finding["cell"]}} if finding["cell"] is not None else {}
        assert location["region"] == {"startLine": finding["line"], "startColumn": finding["column"],
                                      "endLine": finding["end_line"], "endColumn": finding["end_column"], **cell}
        assert result.get("properties", {}).get("documentation", "https://").startswith("https://")
        related = [(r["physicalLocation"]["region"]["startLine"], r["message"]["text"])
                   for r in result.get("relatedLocations", [])]
        assert related == [(r["line"], r["message"]) for r in finding["related"]]
        assert ("fixes" in result) == (finding["fix"] is not None and finding["fix"]["edits"] is not None)
        if "fixes" in result:  # the replacements, applied by line/column, do what the edits do
            (fix,) = result["fixes"]
            assert fix["properties"]["applicability"] == finding["fix"]["applicability"]
            assert fix["description"]["text"].startswith(finding["fix"]["title"])
            text = (ROOT / finding["path"]).read_text(encoding="utf-8")
            edits = [Edit(e["start"], e["end"], e["content"]) for e in finding["fix"]["edits"]]
            (change,) = fix["artifactChanges"]
            assert change["artifactLocation"] == location["artifactLocation"]
            assert _apply_sarif_replacements(text, change["replacements"]) == apply_edits(text, edits)
    assert {r["level"] for r in run["results"]} == {"error", "warning"}  # TFP301 is a warning


def test_sarif_rule_metadata(project_urls) -> None:
    document = sarif.sarif_log(Run([]))
    validate(document)
    driver = document["runs"][0]["tool"]["driver"]
    assert driver["name"] == "tfproc-lint" and driver["version"]
    assert driver["informationUri"] == f"{REPOSITORY}#readme"
    for descriptor in driver["rules"]:
        rule = rule_by_code(descriptor["id"])
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"] == " ".join(rule.what_it_does.split())
        assert descriptor["help"]["markdown"] == render_rule(rule) == descriptor["help"]["text"]
        assert descriptor["helpUri"] == f"{REPOSITORY}/blob/main/docs/rules/{rule.code}.md"
        assert (ROOT / descriptor["helpUri"].split("/blob/main/")[1]).is_file()
        assert descriptor["defaultConfiguration"]["level"] == rule.severity.value


# Links to the rule pages ------------------------------------------------------------------------------
REPOSITORY = "https://github.com/tfproc-lint/tfproc-lint"


def _fake_metadata(monkeypatch, metadata) -> None:
    import importlib.metadata

    from tfproc_lint import links

    def fake(name: str):
        if metadata is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return metadata

    monkeypatch.setattr(importlib.metadata, "metadata", fake)
    links.project_urls.cache_clear()  # and again after the test, by the fixtures


@pytest.fixture
def project_urls(monkeypatch):
    """The package metadata as setup.cfg's project_urls make it (the test venv's may be older)."""
    from email.message import Message

    from tfproc_lint import links

    metadata = Message()
    for entry in read_project_urls():
        metadata["Project-URL"] = entry
    _fake_metadata(monkeypatch, metadata)
    yield
    links.project_urls.cache_clear()


@pytest.fixture
def no_project_urls(monkeypatch):
    from tfproc_lint import links

    _fake_metadata(monkeypatch, None)
    yield
    links.project_urls.cache_clear()


def read_project_urls() -> list[str]:
    """setup.cfg's project_urls, written as the metadata's Project-URL entries ("Label, URL")."""
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "setup.cfg", encoding="utf-8")
    lines = [line.strip() for line in parser.get("metadata", "project_urls").splitlines() if line.strip()]
    return [", ".join(part.strip() for part in line.split("=", 1)) for line in lines]


def test_setup_cfg_names_the_repository() -> None:
    assert read_project_urls() == [f"Documentation, {REPOSITORY}#readme", f"Source, {REPOSITORY}"]


def test_sarif_and_json_link_to_the_rule_pages_with_absolute_urls(project_urls) -> None:
    from tfproc_lint.output import json_format

    run = Run([FileResult("a.py", [_diagnostic("a.py")])])
    document = sarif.sarif_log(run)
    validate(document)
    page = f"{REPOSITORY}/blob/main/docs/rules/TFP102.md"
    assert document["runs"][0]["results"][0]["properties"]["documentation"] == page
    assert json.loads(json_format.render(run))["findings"][0]["url"] == page


def test_links_are_left_out_without_metadata(no_project_urls) -> None:
    from tfproc_lint.output import json_format

    run = Run([FileResult("a.py", [_diagnostic("a.py")])])
    document = sarif.sarif_log(run)
    validate(document)
    driver = document["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    assert all("helpUri" not in rule for rule in driver["rules"])
    assert "documentation" not in document["runs"][0]["results"][0].get("properties", {})
    assert "url" not in json.loads(json_format.render(run))["findings"][0]


def test_rules_listing_links_to_the_pages(project_urls, capsys) -> None:
    from tfproc_lint.cli import main

    assert main(["rules", "--format", "json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [rule["url"] for rule in listing] == [f"{REPOSITORY}/blob/main/docs/rules/{rule.code}.md"
                                                 for rule in all_rules()]


def _diagnostic(path: str, fix: Fix | None = None, **changes) -> Diagnostic:
    values = {"code": "TFP102", "message": "model sent to a worker", "path": path, "line": 1, "col": 0,
              "end_line": 1, "end_col": 5}
    values.update(changes)
    return Diagnostic(fix=fix, **values)


def _apply_sarif_replacements(text: str, replacements: list[dict]) -> str:
    """Apply SARIF replacements by line/column (code points, 1-based) the way a SARIF consumer would."""
    starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    spans = []
    for replacement in replacements:
        region = replacement["deletedRegion"]
        spans.append((offset(region["startLine"], region["startColumn"]),
                      offset(region["endLine"], region["endColumn"]),
                      replacement.get("insertedContent", {}).get("text", "")))
    for start, end, content in sorted(spans, reverse=True):
        text = text[:start] + content + text[end:]
    return text


def test_sarif_fixes_become_line_column_replacements(tmp_path) -> None:
    # CRLF, a lone CR and non-ASCII text before the edits: offsets are code points, lines end at \r\n|\r|\n.
    text = ("import tensorflow as tf  # é中\r\nimport multiprocessing as mp\rx = 1\n\n"
            "model = load()\npool.map(f, [model])\n")
    path = tmp_path / "fixme.py"
    path.write_text(text, encoding="utf-8", newline="")
    model_at = text.index("model = load()")
    edits = (
        Edit(0, 0, "# header\n"),                                # insertion at the very start
        Edit(text.index("x = 1"), text.index("x = 1") + 5, "x = 2"),  # after a lone CR
        Edit(model_at, model_at + len("model = load()\n"), ""),  # a whole line, ending on the next line
        Edit(len(text), len(text), "# end\n"),                   # insertion at the end of the file
    )
    fix = Fix("build the model in the worker", Applicability.UNSAFE, edits)
    relative = str(path.relative_to(tmp_path))
    diagnostic = _diagnostic(relative, fix, line=6, col=12, end_col=17)
    document = sarif.sarif_log(Run([FileResult(relative, [diagnostic])]), cwd=str(tmp_path))
    validate(document)
    result = document["runs"][0]["results"][0]
    (fix_object,) = result["fixes"]
    assert fix_object["description"]["text"] == "build the model in the worker (unsafe fix)"
    assert fix_object["properties"] == {"applicability": "unsafe"}
    (change,) = fix_object["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "fixme.py", "uriBaseId": "%SRCROOT%"}
    regions = [r["deletedRegion"] for r in change["replacements"]]
    assert regions[0] == {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1}
    assert regions[1] == {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 6}
    assert regions[2] == {"startLine": 5, "startColumn": 1, "endLine": 6, "endColumn": 1}
    assert regions[3] == {"startLine": 7, "startColumn": 1, "endLine": 7, "endColumn": 1}
    assert _apply_sarif_replacements(text, change["replacements"]) == apply_edits(text, list(edits))
    # The text the run carries (after --fix) wins over the file on disk.
    shifted = "\n\n" + text
    moved = Fix("f", Applicability.SAFE, (Edit(2, 2, "# header\n"),))
    document = sarif.sarif_log(Run([FileResult(relative, [_diagnostic(relative, moved)])], sources={relative: shifted}),
                               cwd=str(tmp_path))
    region = document["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0]["replacements"][0]["deletedRegion"]
    assert region["startLine"] == 3
    assert document["runs"][0]["results"][0]["fixes"][0]["properties"] == {"applicability": "safe"}


@pytest.mark.slow
def test_sarif_files_not_checked_are_notifications(tmp_path) -> None:
    (tmp_path / "broken.py").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    completed = check("--format", "sarif", "broken.py", "ok.py", "missing.py", cwd=tmp_path)
    assert completed.returncode == 1
    document = json.loads(completed.stdout)
    validate(document)
    invocation = document["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = invocation["toolExecutionNotifications"]
    uris = sorted(n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes)
    assert uris == ["broken.py", "missing.py"]
    assert all(n["level"] == "error" for n in notes)
    assert any("no such file" in n["message"]["text"] for n in notes)


@pytest.mark.slow
def test_sarif_paths_relative_to_cwd_or_absolute_uri(tmp_path) -> None:
    inside = tmp_path / "pkg dir" / "mod.py"
    inside.parent.mkdir()
    bad = ROOT / FIXTURES / "TFP101" / "bad_a3c_session_to_actors.py"
    inside.write_text(bad.read_text(encoding="utf-8"), encoding="utf-8")
    completed = check("--format", "sarif", str(inside), str(bad), cwd=tmp_path)
    document = json.loads(completed.stdout)
    validate(document)
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in document["runs"][0]["results"]]
    assert {"uri": "pkg%20dir/mod.py", "uriBaseId": "%SRCROOT%"} in locations
    assert {"uri": bad.as_uri()} in locations


# GitHub ----------------------------------------------------------------------------------------------
ANNOTATION = re.compile(r"::(?P<level>error|warning) (?P<properties>[^:]*)::(?P<message>.*)")


@pytest.mark.slow
def test_github_annotations_match_json(fixture_runs) -> None:
    findings = json.loads(fixture_runs["json"])["findings"]
    lines = fixture_runs["github"].splitlines()
    assert len(lines) == len(findings)
    for line, finding in zip(lines, findings, strict=True):
        match = ANNOTATION.fullmatch(line)
        assert match, line
        properties = dict(item.split("=", 1) for item in match["properties"].split(","))
        rule = rule_by_code(finding["code"])
        assert match["level"] == ("warning" if rule.severity is Severity.WARNING else "error")
        assert properties == {
            "file": finding["path"], "line": str(finding["line"]), "col": str(finding["column"]),
            "endLine": str(finding["end_line"]), "endColumn": str(finding["end_column"]),
            "title": f"{finding['code']} {rule.name}" + (f" (cell {finding['cell']})" if finding["cell"] else ""),
        }
        assert match["message"] == github.escape_data(finding["message"])
    assert any(line.startswith("::warning ") for line in lines)


def test_github_escaping() -> None:
    diagnostic = _diagnostic("dir,x/a:b.py", message="100% broken\r\nsecond line: a, b")
    output = github.render(Run([FileResult("dir,x/a:b.py", [diagnostic]),
                                FileResult("gone.py", error=FileError("gone.py", "cannot read: 50%\nNo"))]))
    assert output.splitlines() == [
        ("::error file=dir%2Cx/a%3Ab.py,line=1,col=1,endLine=1,endColumn=6,"
         "title=TFP102 runtime-state-crosses-process::100%25 broken%0D%0Asecond line: a, b"),
        "::error file=gone.py::cannot read: 50%25%0ANo",
    ]


def test_github_warning_level_and_missing_end() -> None:
    diagnostic = _diagnostic("a.py", code="TFP301", severity=Severity.WARNING, end_line=None, end_col=None, col=3)
    assert github.render(Run([FileResult("a.py", [diagnostic])])) == (
        "::warning file=a.py,line=1,col=4,title=TFP301 missing-worker-initializer::model sent to a worker\n")


def test_github_files_not_checked(tmp_path) -> None:
    (tmp_path / "broken.py").write_text(BROKEN, encoding="utf-8")
    completed = check("--format", "github", "broken.py", "missing.py", cwd=tmp_path)
    assert completed.returncode == 1
    lines = completed.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("::error file=") for line in lines)
    assert lines[1] == "::error file=missing.py::no such file or directory"


def test_unknown_format_is_a_usage_error(tmp_path) -> None:
    completed = check("--format", "xml", ".", cwd=tmp_path)
    assert completed.returncode == 2
    assert "--format" in completed.stderr and "sarif" in completed.stderr and "github" in completed.stderr
