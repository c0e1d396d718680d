"""Fix verification compares findings by (code, finding key), never by message text: rewording a
message changes no fix, and a rewrite that hides another finding is refused whatever the wording."""

from __future__ import annotations

import dataclasses

import libcst as cst
import pytest

from tfproc_lint import engine, records
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.config import Config, apply_options
from tfproc_lint.engine import _checked_fix, finding_key, lint_source
from tfproc_lint.fixes.base import FixBuilder, Refusal
from tfproc_lint.fixing import fix_source
from tfproc_lint.rules import tfp403_environment_after_runtime_start as tfp403
from tfproc_lint.rules.base import LINE_OR_CODE, Report, all_rules

# Fixing the first setting moves it above line 5, which starts the runtime: line 5 becomes line 6,
# and the second finding's message says so.
TWO_SETTINGS = (
    "import os\nimport tensorflow as tf\n\n"
    "def main():\n"
    "    total = tf.reduce_sum(tf.ones((256, 256)))\n"
    "    os.environ['TF_NUM_INTRAOP_THREADS'] = '1'\n"
    "    os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"
    "    print(float(total))\n\n"
    "if __name__ == '__main__':\n"
    "    main()\n"
)


def _fixed(source: str):
    engine._RECENT.clear()  # analyses of rewrites are kept by text: none from another wording
    outcome = fix_source(source, "job.py", unsafe=True)
    return outcome.source, [(d.code, d.line) for d in outcome.applied], [(d.code, d.line) for d in outcome.remaining]


def test_rewording_a_message_changes_no_fix(monkeypatch) -> None:
    """The runtime's start line, reworded so that the message-text comparison this replaced would
    not have left it out ("at 5", not "line 5"): the first fix changes the second finding's
    message, not its key, and both fixes still apply."""
    as_worded = _fixed(TWO_SETTINGS)
    assert as_worded[1] == [("TFP403", 6), ("TFP403", 7)] and as_worded[2] == []
    monkeypatch.setattr(tfp403.SetAfterStart, "message",
                        lambda self: f"`{self.setting}` comes after the runtime's start at {self.line}")
    messages = [d.message for d in lint_source(TWO_SETTINGS, "job.py")]
    assert messages == ['`os.environ["TF_NUM_INTRAOP_THREADS"]` comes after the runtime\'s start at 5',
                        '`os.environ["CUDA_VISIBLE_DEVICES"]` comes after the runtime\'s start at 5']
    assert _fixed(TWO_SETTINGS) == as_worded
    engine._RECENT.clear()


class _DeleteStatements(FixBuilder):
    """A rewrite that deletes its finding's statement and another one: it hides the other."""

    title = "delete statements"

    def __init__(self, *statements) -> None:
        self.statements = statements

    def plan(self, analysis):
        return {statement: lambda updated: cst.RemovalSentinel.REMOVE for statement in self.statements}


@pytest.mark.parametrize("message", ["one text for every finding", None])
def test_a_rewrite_that_hides_another_finding_is_refused_whatever_the_wording(monkeypatch, message) -> None:
    """Both findings say the same text (or their own): the keys still tell them apart, and a
    rewrite made for the first that also deletes the second is refused."""
    if message is not None:
        monkeypatch.setattr(tfp403.SetAfterStart, "message", lambda self: message)
    module = cst.parse_module(TWO_SETTINGS)
    analysis = FileAnalysis(module, "job.py", Config())
    rule = next(r for r in all_rules() if r.code == "TFP403")()
    first, second = rule.check_file(analysis)
    assert (first.message == second.message) is (message is not None)
    assert first.finding.key() != second.finding.key()
    own, other = (next(s for s in module.body[2].body.body if word in module.code_for_node(s))
                  for word in ("INTRAOP", "CUDA"))
    hiding = Report(first.node, first.finding, fix=_DeleteStatements(own, other))
    before = [(("TFP403", r.finding.key()), r) for r in (hiding, second)]
    fix, refusal = _checked_fix(hiding, rule, analysis, TWO_SETTINGS, before, fix_edits=True, verify_fixes=True)
    assert fix is None
    assert refusal == "the rewrite would hide TFP403 on line 7 without fixing it"


def test_a_key_leaves_out_positions_and_quoted_code() -> None:
    """Two findings of one shape that differ only in what their message quotes or where the
    runtime started have one key; one that differs in a fact does not."""
    finding = tfp403.SetAfterStart("os.environ['TF_GPU_ALLOCATOR'] = 'cuda_malloc_async'", "TF_GPU_ALLOCATOR", 5,
                                   "`tf.ones(...)` on line 5")
    moved = records.replace(finding, setting="os.environ.update(TF_GPU_ALLOCATOR=a)", line=9,
                            reason="`tf.ones((2, 2))` on line 9")
    other = records.replace(finding, variable="CUDA_VISIBLE_DEVICES")
    assert finding.key() == moved.key() != other.key()
    assert finding.message() != moved.message()


def test_each_finding_carries_its_key_to_the_fix_loop() -> None:
    (first, second) = lint_source(TWO_SETTINGS, "job.py", fix_edits=True)
    assert finding_key(first)[0] == "TFP403" and first.key[:2] == ("SetAfterStart", "TF_NUM_INTRAOP_THREADS")
    assert finding_key(first) != finding_key(second)


def test_a_refusal_is_a_value() -> None:
    """`plan` returns a plan or a `Refusal`: the builder keeps no state between plans."""
    builder = FixBuilder()
    assert builder.refuse("why") == Refusal("why") and builder.refuse() == Refusal("")
    assert not hasattr(builder, "refusal")


def _facts(finding):
    """(field, value, worded) of the fields a finding's key holds, Holder-like parts opened."""
    if dataclasses.is_dataclass(finding):
        compared = [(f.name, f.metadata.get("worded", False)) for f in dataclasses.fields(finding) if f.compare]
    else:
        compared = [(f.name, f.worded) for f in records.fields(finding) if f.compare]
    for name, is_worded in compared:
        value = getattr(finding, name)
        if dataclasses.is_dataclass(value) or hasattr(value, "__record_fields__"):
            yield from _facts(value)
        else:
            yield name, value, is_worded


EXAMPLES = [(rule, example) for rule in all_rules() for example in rule.bad_examples]


@pytest.mark.parametrize("rule, example", EXAMPLES, ids=[f"{r.code}-{i}" for i, (r, _) in enumerate(EXAMPLES)])
def test_a_key_holds_facts_not_positions(rule, example) -> None:
    """Every inline bad example's findings: a key is plain, hashable data, and a text field that is
    part of it as it is (not `worded()`) holds no line number or quoted code, which a rewrite
    elsewhere in the file could change."""
    config = apply_options(Config(), dict(example.config), "example") if example.config else Config()
    analysis = FileAnalysis(cst.parse_module(example.code), "example.py", config, notebook=example.notebook)
    checker = rule()
    reports = [r for crossing in analysis.crossings for r in checker.check_crossing(crossing, analysis)]
    reports += list(checker.check_file(analysis))
    assert reports or not example.expect
    for report in reports:
        hash(report.finding.key())
        for name, value, is_worded in _facts(report.finding):
            assert value is None or isinstance(value, (str, int, bool, tuple)), (rule.code, name, value)
            if isinstance(value, str) and not is_worded:
                assert not LINE_OR_CODE.search(value), (rule.code, name, value)


SESSION_TO_POOL = (
    "import multiprocessing as mp\nimport tensorflow.compat.v1 as tf\n\n"
    "{name} = tf.Session()\n"
    "with mp.Pool(2) as pool:\n"
    "    pool.{method}(infer, [({name}, row) for row in rows])\n"
)


def test_a_sent_state_key_holds_the_route_not_the_quoted_state() -> None:
    """TFP101's findings word the analysis's facts: renaming the session keeps the key (and the
    message's shape), another route changes it."""
    def only(name: str, method: str):
        (finding,) = lint_source(SESSION_TO_POOL.format(name=name, method=method), "job.py", fix_edits=True)
        return finding

    first, renamed, other = only("sess", "starmap"), only("session", "starmap"), only("sess", "map")
    assert first.key == renamed.key != other.key
    assert first.key[0] == "SentToProcess" and "`sess`" in first.message and "`session`" in renamed.message
