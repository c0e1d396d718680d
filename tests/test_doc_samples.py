"""The sample outputs in docs/integrations.md are what the linter prints today.

Each sample is a fenced block right after a comment naming the command that produces it, run from
the repository root on a fixture:

    <!-- output of: tfproc-lint check FIXTURE ... -->   the block is the command's stdout
    <!-- ends with output of: tfproc-lint check ... --> the block ends with it (a pre-commit run)
    <!-- excerpt of: tfproc-lint check ... -->          the block is JSON taken from the output:
        every key it has, with the same value; a list's items are found among the output's; in a
        string, `...` stands for text left out

`python tests/test_doc_samples.py` rewrites the `output of` and `ends with output of` blocks from
the real output (excerpts are shortened by hand, so they are only checked).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import pytest

import processes
from conftest import ROOT, run_env, tool

DOC = ROOT / "docs" / "integrations.md"
SAMPLE = re.compile(r"<!-- (output of|ends with output of|excerpt of): (tfproc-lint [^>]*?) -->\n```[a-z]*\n(.*?)```\n",
                    re.DOTALL)
# Differs from machine to machine: the absolute folder SARIF names as %SRCROOT%.
MACHINE_DEPENDENT = ("originalUriBaseIds",)


def samples(text: str) -> list[re.Match]:
    return list(SAMPLE.finditer(text))


def output_of(command: str) -> str:
    arguments = shlex.split(command)
    completed = processes.run([tool(arguments[0]), *arguments[1:]], cwd=ROOT, env=run_env(), capture_output=True,
                              text=True, check=False, timeout=300)
    assert completed.returncode in (0, 1), completed.stderr
    return completed.stdout


def matches(expected, actual, where: str = "") -> list[str]:
    """What in `expected` (a shortened excerpt) is not in `actual`, one line each."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r:.80}"]
        problems = []
        for key, value in expected.items():
            if key in MACHINE_DEPENDENT:
                continue
            if key not in actual:
                problems.append(f"{where}.{key}: not in the output")
            else:
                problems += matches(value, actual[key], f"{where}.{key}")
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{where}: expected a list, got {actual!r:.80}"]
        if not expected and actual:
            return [f"{where}: the output's list is not empty"]
        problems = []
        for index, item in enumerate(expected):
            if not any(not matches(item, candidate) for candidate in actual):
                best = min((matches(item, candidate, f"{where}[{index}]") for candidate in actual), key=len,
                           default=[f"{where}[{index}]: the output's list is empty"])
                problems += best
        return problems
    if isinstance(expected, str) and "..." in expected and isinstance(actual, str):
        pattern = ".*?".join(re.escape(part) for part in expected.split("..."))
        found = re.fullmatch(pattern, actual, re.DOTALL)
        return [] if found else [f"{where}: the output has {actual!r:.120}, the doc {expected!r:.120}"]
    return [] if expected == actual else [f"{where}: the output has {actual!r:.120}, the doc {expected!r:.120}"]


def check(match: re.Match) -> list[str]:
    mode, command, block = match.groups()
    output = output_of(command)
    if mode == "output of":
        return [] if block == output else [f"`{command}` prints:\n{output}"]
    if mode == "ends with output of":
        return [] if block.endswith(output) and output else [f"`{command}` prints:\n{output}"]
    return matches(json.loads(block), json.loads(output))


def test_integrations_md_has_samples_of_every_format_and_of_each_hook() -> None:
    commands = [match.group(2) for match in samples(DOC.read_text(encoding="utf-8"))]
    for fmt in ("full", "json", "sarif", "github"):
        assert any(f"--format {fmt}" in command for command in commands), fmt
    assert any("--format" not in command and "--diff" not in command for command in commands)
    assert any("--diff" in command and "--unsafe-fixes" not in command for command in commands)  # tfproc-lint-fix


@pytest.mark.parametrize("index", range(len(samples(DOC.read_text(encoding="utf-8")))))
def test_each_sample_is_the_real_output(index: int) -> None:
    match = samples(DOC.read_text(encoding="utf-8"))[index]
    problems = check(match)
    assert not problems, f"docs/integrations.md sample {index + 1} ({match.group(2)}):\n" + "\n".join(problems) + \
        "\n(python tests/test_doc_samples.py rewrites the samples that are whole outputs)"


def test_the_excerpt_check_fails_on_a_changed_value() -> None:
    actual = {"findings": [{"code": "TFP102", "message": "Keras model sent", "line": 31}], "errors": []}
    assert matches({"findings": [{"code": "TFP102", "message": "Keras ... sent"}]}, actual) == []
    assert matches({"findings": [{"code": "TFP102", "line": 30}]}, actual)
    assert matches({"findings": [{"code": "TFP102", "message": "Keras model pickled..."}]}, actual)
    assert matches({"findings": [{"code": "TFP102", "message": "Keras ... model"}]}, actual)
    assert matches({"errors": ["x"]}, actual) and matches({"summary": {}}, actual)


def rewrite() -> int:
    text = DOC.read_text(encoding="utf-8")
    changed = 0
    for match in reversed(samples(text)):
        mode, command, block = match.groups()
        if mode == "excerpt of":
            continue
        output = output_of(command)
        new = output if mode == "output of" else block[: len(block) - len(_tail(block, output))] + output
        if new != block:
            start, end = match.span(3)
            text = text[:start] + new + text[end:]
            changed += 1
    DOC.write_text(text, encoding="utf-8")
    for match in samples(text):
        for problem in check(match) if match.group(1) == "excerpt of" else ():
            print(f"excerpt of `{match.group(2)}`: {problem}", file=sys.stderr)
    print(f"{changed} sample(s) rewritten")
    return 0


def _tail(block: str, output: str) -> str:
    """The part of a pre-commit sample that is the linter's output: from its first finding line
    (`path:` at a line start) to the end."""
    first = output.split(":", 1)[0] + ":"
    position = block.find("\n" + first)
    return block[position + 1:] if position >= 0 else ""


if __name__ == "__main__":
    sys.exit(rewrite())
