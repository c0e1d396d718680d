"""Bad input through the CLI: every bad file gets results or one line on stderr, never a traceback.

Most cases share one run over a directory of bad files plus bad paths given explicitly (a process
start costs more than all the checks together); the slow or environment-dependent cases have runs
of their own. Every run has a timeout, so a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import processes
from conftest import run_env, tool

# Enough for the text pre-filter: files with this header are parsed and analysed, not skipped.
HEADER = "import multiprocessing as mp\nimport tensorflow as tf\n\npool = mp.Pool(2)\n"
# A real finding: TFP101 on line 4, column 52 (1-based), `sess`.
BAD = (
    "import multiprocessing as mp\n"
    "import tensorflow.compat.v1 as tf\n"
    "sess = tf.Session()\n"
    "if __name__ == '__main__': mp.get_context('spawn').Process(target=print, args=(sess,)).start()\n"
)
BAD_LINE, BAD_COL = 4, 80


def run(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return processes.run([tool("tfproc-lint"), "check", *args], cwd=cwd, capture_output=True, text=True,
                         errors="replace", env=run_env(), check=False, timeout=timeout)


def reasons(result: subprocess.CompletedProcess) -> dict[str, list[str]]:
    """stderr as {path: [reason, ...]}, after checking that it holds nothing but such lines."""
    found: dict[str, list[str]] = {}
    for line in result.stderr.splitlines():
        assert line.startswith("tfproc-lint: "), f"unexpected stderr line: {line!r}\n{result.stderr}"
        path, _, reason = line[len("tfproc-lint: "):].partition(": ")
        assert reason, line
        found.setdefault(path, []).append(reason)
    return found


def assert_clean_exit(result: subprocess.CompletedProcess) -> None:
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert "internal error" not in output, output
    assert result.returncode in (0, 1), (result.returncode, output)


def finding_lines(result: subprocess.CompletedProcess, path: str) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith(f"{path}:")]


# One run over many bad files ------------------------------------------------------------------------
DEEP_PARENS = HEADER + "x = " + "(" * 1000 + "1" + ")" * 1000 + "\n"
DEEP_LISTS = HEADER + "x = " + "[" * 1000 + "]" * 1000 + "\n"
# 5,000 chained lambdas: LibCST's native parser overflows the C stack (SIGSEGV) on this.
DEEP_LAMBDAS = HEADER + "f = " + "lambda: " * 5000 + "1\n"
# 1,500 terms: CPython and LibCST parse it; the tree is 1,500 levels deep.
LONG_SUM = HEADER + "total = 1" + " + 1" * 1500 + "\n"

# file name in bad/ -> contents (bytes); the expectations are in EXPECTED.
FILES: dict[str, bytes] = {
    "py2_plain.py": b'print "hello"\n',  # no TensorFlow: skipped by the pre-filter, nothing to say
    "py2_tf.py": (HEADER + 'print "hello"\nexec "x = 1"\n').encode(),
    "syntax_error.py": (HEADER + "def broken(:\n    pass\n").encode(),
    "nul_bytes.py": HEADER.encode() + b"x = 1\x00\n",
    "latin1_no_cookie.py": HEADER.encode() + b'label = "caf\xe9"\n',
    "latin1_cookie.py": b"# -*- coding: latin-1 -*-\n" + BAD.encode("latin-1") + b'label = "caf\xe9"\n',
    "bom.py": b"\xef\xbb\xbf" + BAD.encode(),
    "empty.py": b"",
    "only_newlines.py": b"\n\n\n",
    "crlf.py": BAD.replace("\n", "\r\n").encode(),
    "deep_parens.py": DEEP_PARENS.encode(),
    "deep_lists.py": DEEP_LISTS.encode(),
    "deep_lambdas.py": DEEP_LAMBDAS.encode(),
    "long_sum.py": LONG_SUM.encode(),
    "tabs_and_spaces.py": (HEADER + "def f():\n\tif x:\n        return 1\n").encode(),
    "unterminated.py": (HEADER + 'x = """never closed\n').encode(),
}

# path as the CLI prints it -> ("reason", prefix of the one-line reason) | ("finding", code) | ("quiet", None)
EXPECTED: dict[str, tuple[str, str | None]] = {
    "bad/py2_plain.py": ("quiet", None),
    "bad/py2_tf.py": ("reason", "cannot parse as Python 3 (line 5"),
    "bad/syntax_error.py": ("reason", "cannot parse as Python 3 (line 5"),
    "bad/nul_bytes.py": ("reason", "contains NUL bytes"),
    "bad/latin1_no_cookie.py": ("reason", "cannot decode"),
    "bad/latin1_cookie.py": ("finding", "TFP101"),
    "bad/bom.py": ("finding", "TFP101"),
    "bad/empty.py": ("quiet", None),
    "bad/only_newlines.py": ("quiet", None),
    "bad/crlf.py": ("finding", "TFP101"),
    "bad/deep_parens.py": ("reason", "cannot parse: too many nested parentheses"),
    "bad/deep_lists.py": ("reason", "cannot parse: too many nested parentheses"),
    "bad/deep_lambdas.py": ("reason", "cannot parse: the code is nested too deeply"),
    "bad/long_sum.py": ("results or reason", None),
    "bad/tabs_and_spaces.py": ("reason", "cannot parse as Python 3"),
    "bad/unterminated.py": ("reason", "cannot parse as Python 3"),
    # found by the directory walk
    "bad/unreadable.py": ("reason", "cannot read"),  # a link to /proc/self/mem: reading it fails (EIO)
    # given explicitly
    "notes.txt": ("finding", "TFP101"),  # explicit files are checked whatever their name
    "blob.bin": ("reason", "contains NUL bytes"),
    "README": ("quiet", None),
    "missing.py": ("reason", "no such file or directory"),
    "fifo.py": ("reason", "not a regular file or directory"),
    "dangling.py": ("reason", "broken symbolic link"),
    "loop_a.py": ("reason", "symbolic link loop"),  # loop_a.py -> loop_b.py -> loop_a.py
    "nothing_here": ("quiet", None),  # a directory without Python files
}
EXPLICIT = ["notes.txt", "blob.bin", "README", "missing.py", "fifo.py", "dangling.py", "loop_a.py", "nothing_here"]


@pytest.fixture(scope="module")
def bad_tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bad_input")
    bad = root / "bad"
    bad.mkdir()
    for name, data in FILES.items():
        (bad / name).write_bytes(data)
    if Path("/proc/self/mem").exists():
        (bad / "unreadable.py").symlink_to("/proc/self/mem")
    (bad / "loop").symlink_to(".")  # a directory symlinked into itself
    (bad / "sub").mkdir()
    (bad / "sub" / "up").symlink_to("..")  # and a cycle through the parent
    os.mkfifo(bad / "walk_fifo.py")  # reading it would block forever: the walk must skip it
    (bad / "walk_dangling.py").symlink_to("nowhere.py")
    (root / "notes.txt").write_text(BAD)
    (root / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (root / "README").write_text("Nothing to see here.\n")
    os.mkfifo(root / "fifo.py")
    (root / "dangling.py").symlink_to("gone.py")
    (root / "loop_a.py").symlink_to("loop_b.py")
    (root / "loop_b.py").symlink_to("loop_a.py")
    (root / "nothing_here").mkdir()
    (root / "nothing_here" / "data.csv").write_text("a,b\n1,2\n")
    return root


@pytest.fixture(scope="module")
def bad_run(bad_tree) -> subprocess.CompletedProcess:
    return run("bad", *EXPLICIT, cwd=bad_tree)


def test_bad_input_run_ends_cleanly(bad_run) -> None:
    assert_clean_exit(bad_run)
    assert bad_run.returncode == 1  # findings, and files that could not be checked
    reported = reasons(bad_run)
    for path, lines in reported.items():
        assert len(lines) == 1, (path, lines)  # one line per bad file
        assert path in EXPECTED, f"unexpected reason for {path}: {lines}"
    # nothing from the walk outside the files written here (the loops are not followed)
    paths = {line.split(":", 1)[0] for line in bad_run.stdout.splitlines() if ":" in line}
    assert paths <= set(EXPECTED), paths


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_each_bad_input(bad_run, path) -> None:
    if path == "bad/unreadable.py" and not Path("/proc/self/mem").exists():
        pytest.skip("no /proc/self/mem to stand for an unreadable file")
    kind, detail = EXPECTED[path]
    given = reasons(bad_run).get(path, [])
    findings = finding_lines(bad_run, path)
    if kind == "reason":
        assert len(given) == 1 and given[0].startswith(detail), (given, bad_run.stderr)
        assert not findings
    elif kind == "finding":
        assert not given, given
        assert findings and all(f" {detail} " in line for line in findings), bad_run.stdout
    elif kind == "quiet":
        assert not given and not findings, (given, findings)
    else:  # results or one line, whichever the analysis manages
        assert len(given) <= 1 and not (given and findings)


def test_findings_in_decoded_files_point_at_the_right_place(bad_run) -> None:
    # the coding cookie adds a line; the BOM and CRLF line ends move nothing
    cookie = finding_lines(bad_run, "bad/latin1_cookie.py")[0]
    assert cookie.startswith(f"bad/latin1_cookie.py:{BAD_LINE + 1}:{BAD_COL}:")
    assert finding_lines(bad_run, "bad/bom.py")[0].startswith(f"bad/bom.py:{BAD_LINE}:{BAD_COL}:")
    assert finding_lines(bad_run, "bad/crlf.py")[0].startswith(f"bad/crlf.py:{BAD_LINE}:{BAD_COL}:")
    assert finding_lines(bad_run, "notes.txt")[0].startswith(f"notes.txt:{BAD_LINE}:{BAD_COL}:")


def test_bad_input_results_do_not_depend_on_jobs(bad_tree, bad_run) -> None:
    one = run("-j1", "bad", *EXPLICIT, cwd=bad_tree)
    many = run("-j4", "bad", *EXPLICIT, cwd=bad_tree)
    assert one.stdout == bad_run.stdout == many.stdout
    assert sorted(one.stderr.splitlines()) == sorted(bad_run.stderr.splitlines()) == sorted(many.stderr.splitlines())


# Runs of their own ------------------------------------------------------------------------------------
def test_nonexistent_path_alone(tmp_path) -> None:
    result = run("does/not/exist.py", cwd=tmp_path)
    assert_clean_exit(result)
    assert result.returncode == 1
    assert reasons(result) == {"does/not/exist.py": ["no such file or directory"]}


def test_directory_without_python_files(tmp_path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Docs\n")
    (tmp_path / "docs" / "conf.pyc").write_bytes(b"\x00\x01")
    result = run("docs", cwd=tmp_path)
    assert_clean_exit(result)
    assert result.returncode == 0 and result.stdout == "All checks passed.\n"
    assert result.stderr == NO_FILES  # as Ruff: exit 0, and a warning that nothing was checked


NO_FILES = "tfproc-lint: warning: no Python files or notebooks found under the given path(s)\n"


@pytest.mark.parametrize("args", [["empty"], ["empty", "--fix"], ["empty", "--diff"], ["empty", "--add-noqa"],
                                  ["."], ["--force-exclude", "gen/app.py"]])
def test_nothing_to_check_is_a_warning(tmp_path, args) -> None:
    """An empty folder, or paths whose every file is excluded (pre-commit passes --force-exclude),
    exit 0 with one warning on stderr."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "app.py").write_text(BAD)
    (tmp_path / "pyproject.toml").write_text('[tool.tfproc-lint]\nextend-exclude = ["gen"]\n')
    result = run(*args, cwd=tmp_path)
    assert (result.returncode, result.stderr.splitlines(keepends=True)[0]) == (0, NO_FILES), result.stdout
    assert result.stderr in (NO_FILES, NO_FILES + "0 fixes would be applied.\n")  # --diff's summary


@pytest.mark.parametrize("output", ["json", "sarif", "github"])
def test_nothing_to_check_keeps_machine_output_valid(tmp_path, output) -> None:
    result = run("--format", output, ".", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, NO_FILES)
    if output == "github":
        assert result.stdout == ""
    else:
        document = json.loads(result.stdout)
        assert document.get("findings", document.get("runs")) is not None


def test_nothing_to_check_is_quiet_with_quiet_and_silent_for_a_file_or_a_missing_path(tmp_path) -> None:
    assert (run("-q", ".", cwd=tmp_path).stderr, run("-q", ".", cwd=tmp_path).stdout) == ("", "")
    (tmp_path / "notes.txt").write_text("not Python\n")
    named = run("notes.txt", cwd=tmp_path)  # a file named on the command line is checked whatever its name
    assert (named.returncode, named.stderr) == (0, "")
    missing = run("missing.py", cwd=tmp_path)
    assert missing.returncode == 1 and NO_FILES not in missing.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads chmod-000 files and directories; "
                                              "bad/unreadable.py (/proc/self/mem) covers unreadable files")
def test_permission_denied(tmp_path) -> None:
    (tmp_path / "locked.py").write_text(BAD)
    (tmp_path / "locked.py").chmod(0)
    (tmp_path / "closed").mkdir()
    (tmp_path / "closed" / "inside.py").write_text(BAD)
    (tmp_path / "closed").chmod(0)
    try:
        result = run("locked.py", "closed", cwd=tmp_path)
    finally:
        (tmp_path / "closed").chmod(0o755)
    assert_clean_exit(result)
    given = reasons(result)
    assert given["locked.py"][0].startswith("cannot read") and given["closed"][0].startswith("cannot read directory")


def test_unreadable_file_given_explicitly(tmp_path) -> None:
    if not Path("/proc/self/mem").exists():
        pytest.skip("no /proc/self/mem")
    result = run("/proc/self/mem", cwd=tmp_path)
    assert_clean_exit(result)
    assert reasons(result) == {"/proc/self/mem": ["cannot read: Input/output error"]}


def big_source(lines: int = 50_000) -> tuple[str, int]:
    """A realistic generated TensorFlow + multiprocessing module, and the line of its one finding."""
    header = (
        '"""Sharded batch inference over a large image archive (generated)."""\n\n'
        "import multiprocessing as mp\nimport sys\n\nimport numpy as np\nimport tensorflow as tf\n\n"
        "MEAN, STD = 127.5, 64.0\n_MODEL = None\n\n\n"
        "def _init_worker(model_path):\n    global _MODEL\n    _MODEL = tf.keras.models.load_model(model_path)\n\n\n"
        "def work(payload):\n    return payload\n"
    )
    block = '''

# --- shard {i} -------------------------------------------------------------------------------

def preprocess_{i}(batch):
    """Normalise one batch of shard {i}.

    The archive stores uint8 RGB frames; the model was trained on frames scaled with the
    dataset-wide mean and standard deviation, so the same scaling happens here, in the worker,
    on plain numpy arrays (nothing TensorFlow crosses the process boundary).
    """
    images = np.asarray(batch, dtype=np.float32)
    images = (images - MEAN) / STD
    return images.tolist()


def predict_{i}(rows):
    # The model lives in the worker: _init_worker loaded it once per process.
    outputs = _MODEL.predict(np.asarray(rows), verbose=0)
    return [float(x) for x in outputs[:, 0]]


class Shard{i}Runner:
    def __init__(self, path):
        self.path = path
        self.size = {i}

    def paths(self):
        return [f"{{self.path}}/part-{{k:05d}}" for k in range(self.size)]


def run_shard_{i}(pool, rows):
    chunks = [rows[k:k + 64] for k in range(0, len(rows), 64)]
    cleaned = pool.map(preprocess_{i}, chunks)
    return pool.map(predict_{i}, cleaned)
'''
    footer = (
        "\n\ndef main(model_path, rows):\n"
        '    context = mp.get_context("spawn")\n'
        "    with context.Pool(4, initializer=_init_worker, initargs=(model_path,)) as pool:\n"
        "        results = [run_shard_0(pool, rows), run_shard_1(pool, rows)]\n"
        "    sess = tf.compat.v1.Session()\n"
        "    with mp.Pool(2) as pool:\n"
        "        pool.apply_async(work, (sess,)).get()\n"
        "    return results\n\n\n"
        'if __name__ == "__main__":\n    main(sys.argv[1], [[0.0] * 8] * 256)\n'
    )
    count = (lines - header.count("\n") - footer.count("\n")) // block.count("\n") + 1
    source = header + "".join(block.format(i=i) for i in range(count)) + footer
    finding_line = source.count("\n") - footer.count("\n") + footer.splitlines().index(
        "        pool.apply_async(work, (sess,)).get()") + 1
    return source, finding_line


@pytest.mark.slow
def test_fifty_thousand_line_file_is_analysed(tmp_path) -> None:
    source, line = big_source()
    assert source.count("\n") >= 50_000
    (tmp_path / "big.py").write_text(source)
    result = run("big.py", cwd=tmp_path, timeout=300)
    assert_clean_exit(result)
    assert result.stderr == ""
    assert [text.split(" ", 2)[:2] for text in finding_lines(result, "big.py")] == [[f"big.py:{line}:33:", "TFP101"]]


def test_python_module_entry_point_on_bad_input(tmp_path) -> None:
    # the same through `python -m tfproc_lint.cli`, with a file that LibCST alone would crash on
    (tmp_path / "deep.py").write_text(DEEP_LAMBDAS)
    result = processes.run([sys.executable, "-m", "tfproc_lint.cli", "check", "deep.py"], cwd=tmp_path,
                           capture_output=True, text=True, env=run_env(), timeout=120, check=False)
    assert_clean_exit(result)
    assert reasons(result) == {"deep.py": ["cannot parse: the code is nested too deeply"]}


def test_code_that_libcst_rejects_after_parsing_is_one_line(tmp_path) -> None:
    """Valid Python that LibCST's parser builds and then rejects (`"" not in.0`, found by hypothesmith)."""
    from tfproc_lint.engine import SourceError, lint_source

    source = "import multiprocessing as mp\nimport tensorflow as tf\nmp.Pool(2)\nx = f\"\" not in.0\n"
    compile(source, "<test>", "exec")
    try:
        lint_source(source, "x.py")
    except SourceError as error:
        assert "cannot parse with LibCST" in str(error) and "\n" not in str(error)
    else:
        raise AssertionError("expected a SourceError")
