"""--fix, --unsafe-fixes and --diff: expected rewrites, idempotence, and safe file writing."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import libcst as cst
import pytest

import processes
from conftest import tool
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.engine import lint_source
from tfproc_lint.fixing import fix_source

ROOT = Path(__file__).resolve().parent.parent
INPUTS = sorted((ROOT / "fixtures" / "fix").rglob("*.in.py"))


def expected_output(path: Path) -> Path:
    return path.with_name(path.name.replace(".in.py", ".out.py"))


NO_FIX_OFFERED = "none"  # `# expect-refusal: none`: the finding offers no fix, so no reason is given


def expected_refusal(source: str) -> str:
    """The `# expect-refusal: <reason>` line every manual_*.in.py ends with (a substring of why its fix is refused)."""
    lines = [line for line in source.splitlines() if line.startswith("# expect-refusal:")]
    assert len(lines) == 1, "a manual_*.in.py needs one `# expect-refusal: <reason>` line (fixtures/fix/README.md)"
    reason = lines[0].removeprefix("# expect-refusal:").strip()
    assert reason, "`# expect-refusal:` needs the reason (or `none`)"
    return reason


@pytest.mark.parametrize("path", INPUTS, ids=[f"{p.parent.name}/{p.name}" for p in INPUTS])
def test_fix_fixture(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    rule = path.parent.name
    findings = [d for d in lint_source(source, str(path)) if d.code == rule]
    assert findings, "the input must have the finding"
    outcome = fix_source(source, str(path), unsafe=True)
    safe = all(d.fix is None or d.fix.applicability is Applicability.SAFE for d in findings)
    # --fix alone applies only safe fixes: all of them, or (for a rule whose fixes are unsafe) none
    assert fix_source(source, str(path)).source == (outcome.source if safe else source)
    output = expected_output(path)
    if path.name.startswith("manual_"):
        assert not output.exists()
        assert outcome.source == source
        expected = expected_refusal(source)
        refused = [d for d in outcome.remaining if d.code == rule]
        assert refused and all(d.fix is None and d.manual_edit is not None for d in refused)
        for diagnostic in refused:
            if expected == NO_FIX_OFFERED:
                assert diagnostic.manual_edit == "", diagnostic.manual_edit
            else:
                assert expected in diagnostic.manual_edit, diagnostic.manual_edit
        return
    assert outcome.source == output.read_text(encoding="utf-8")
    cst.parse_module(outcome.source)
    assert rule not in {d.code for d in outcome.remaining}
    assert fix_source(outcome.source, str(path), unsafe=True).source == outcome.source, "not idempotent"


def test_every_fixable_rule_has_a_fix_fixture() -> None:
    from tfproc_lint.rules.base import FixAvailability, all_rules

    with_outputs = {p.parent.name for p in INPUTS if expected_output(p).exists()}
    fixable = {rule.code for rule in all_rules() if rule.fix_availability is not FixAvailability.NONE}
    assert fixable <= with_outputs


BAD = (
    "import multiprocessing as mp\n"
    "import tensorflow as tf\n"
    "def norm(seed):\n"
    "    return float(tf.norm(tf.random.normal((512, 512), seed=seed)))\n"
    "def main():\n"
    "    print(norm(0))  # caf\u00e9\n"
    "    with mp.Pool(2) as pool:\n"
    "        print(pool.map(norm, range(4)))\n"
)


def run(*args, cwd) -> subprocess.CompletedProcess:
    return processes.run([tool("tfproc-lint"), *args], cwd=cwd, capture_output=True, text=True,
                         check=False, timeout=120)


@pytest.mark.slow
def test_fix_levels_and_exit_codes(tmp_path) -> None:
    target = tmp_path / "job.py"
    target.write_text(BAD, encoding="utf-8")
    safe = run("check", "--fix", "job.py", cwd=tmp_path)
    assert safe.returncode == 1
    assert target.read_text(encoding="utf-8") == BAD
    assert "1 fixable with --fix --unsafe-fixes" in safe.stdout
    diff = run("check", "--diff", "--unsafe-fixes", "job.py", cwd=tmp_path)
    assert diff.returncode == 1 and '+    with mp.get_context("spawn").Pool(2) as pool:' in diff.stdout
    assert target.read_text(encoding="utf-8") == BAD, "--diff writes nothing"
    fixed = run("check", "--fix", "--unsafe-fixes", "job.py", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout
    assert "fixed 1" in fixed.stdout
    assert 'mp.get_context("spawn").Pool(2)' in target.read_text(encoding="utf-8")
    again = run("check", "--fix", "--unsafe-fixes", "job.py", cwd=tmp_path)
    assert again.returncode == 0 and "fixed" not in again.stdout


@pytest.mark.slow
@pytest.mark.parametrize("encoding,bom,newline", [
    ("utf-8", False, "\r\n"),
    ("utf-8", True, "\n"),
    ("latin-1", False, "\n"),
])
def test_written_files_keep_encoding_bom_newlines_and_mode(tmp_path, encoding, bom, newline) -> None:
    text = BAD if encoding == "utf-8" else "# -*- coding: latin-1 -*-\n" + BAD
    data = text.replace("\n", newline).encode(encoding)
    if bom:
        data = b"\xef\xbb\xbf" + data
    target = tmp_path / "job.py"
    target.write_bytes(data)
    os.chmod(target, 0o750)
    assert run("check", "--fix", "--unsafe-fixes", "job.py", cwd=tmp_path).returncode == 0
    written = target.read_bytes()
    assert written.startswith(b"\xef\xbb\xbf") == bom
    body = written[3:] if bom else written
    decoded = body.decode(encoding)
    assert "caf\u00e9" in decoded and 'get_context("spawn")' in decoded
    lines = decoded.split(newline)
    assert all("\n" not in line and "\r" not in line for line in lines), "mixed newlines"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert [p.name for p in tmp_path.iterdir()] == ["job.py"], "no temporary file left behind"


@pytest.mark.slow
def test_a_file_that_cannot_be_fixed_is_left_byte_identical(tmp_path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_bytes(b"import tensorflow\nimport multiprocessing\nmultiprocessing.Pool(\n")
    before = broken.read_bytes()
    result = run("check", "--fix", "--unsafe-fixes", "broken.py", cwd=tmp_path)
    assert result.returncode == 1 and "broken.py: cannot parse" in result.stderr
    assert broken.read_bytes() == before


def _make_unwritable(directory: Path) -> None:
    """chmod for ordinary users; root ignores modes, so use the immutable flag where it exists."""
    if os.geteuid() != 0:
        os.chmod(directory, 0o500)
    elif processes.run(["chattr", "+i", str(directory)], capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot make a directory unwritable for root here (no chattr +i)")


def _make_writable(directory: Path) -> None:
    if os.geteuid() == 0:
        processes.run(["chattr", "-i", str(directory)], capture_output=True, check=False)
    os.chmod(directory, 0o700)


def test_unwritable_directory_is_reported(tmp_path) -> None:
    directory = tmp_path / "project"
    directory.mkdir()
    target = directory / "job.py"
    target.write_text(BAD, encoding="utf-8")
    _make_unwritable(directory)
    try:
        result = run("check", "--fix", "--unsafe-fixes", "job.py", cwd=directory)
    finally:
        _make_writable(directory)
    assert result.returncode == 1, result.stdout
    assert "job.py: cannot write" in result.stderr
    assert target.read_text(encoding="utf-8") == BAD


MANUAL = (  # a session sent to a spawned process: TFP101, which has no fix
    "import multiprocessing as mp\n"
    "import tensorflow.compat.v1 as tf\n"
    "if __name__ == '__main__':\n"
    "    sess = tf.Session()\n"
    "    mp.get_context('spawn').Process(target=print, args=(sess,)).start()\n"
)
DIFF_LINE = ("--- ", "+++ ", "@@ ", " ", "+", "-")


@pytest.mark.slow
def test_diff_summary_counts_findings_without_a_fix(tmp_path) -> None:
    """Piped: the diff alone on stdout (a clean patch), the summary on stderr."""
    (tmp_path / "job.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "manual.py").write_text(MANUAL, encoding="utf-8")
    diff = run("check", "--diff", "--unsafe-fixes", "job.py", "manual.py", cwd=tmp_path)
    assert diff.returncode == 1
    assert diff.stdout and all(line.startswith(DIFF_LINE) for line in diff.stdout.splitlines())
    assert diff.stderr == "1 fix would be applied; 1 finding has no fix (manual edit required).\n"
    safe_only = run("check", "--diff", "job.py", "manual.py", cwd=tmp_path)
    assert safe_only.stdout == ""
    assert safe_only.stderr == ("0 fixes would be applied (1 with --unsafe-fixes); "
                                "1 finding has no fix (manual edit required).\n")
    (tmp_path / "manual2.py").write_text(MANUAL, encoding="utf-8")
    two = run("check", "--diff", "--unsafe-fixes", "manual.py", "manual2.py", cwd=tmp_path)
    assert two.stderr == "0 fixes would be applied; 2 findings have no fix (manual edit required).\n"


def test_diff_summary_follows_the_diff_on_a_terminal(tmp_path) -> None:
    import pty

    (tmp_path / "job.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "manual.py").write_text(MANUAL, encoding="utf-8")
    primary, secondary = pty.openpty()
    try:
        with processes.started([tool("tfproc-lint"), "check", "--diff", "--unsafe-fixes", "job.py", "manual.py"],
                               cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=secondary,
                               stderr=subprocess.PIPE) as process:
            os.close(secondary)
            secondary = None
            received = processes.read_terminal(process, primary, timeout=120)
            stderr = processes.finish(process, 60)[1]
    finally:
        os.close(primary)
        if secondary is not None:
            os.close(secondary)
    terminal = received.decode("utf-8").replace("\r\n", "\n")
    assert terminal.startswith("--- a/job.py")
    assert terminal.endswith("\n1 fix would be applied; 1 finding has no fix (manual edit required).\n")
    assert stderr == b""
