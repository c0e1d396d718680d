"""Runtime probe: run the real TensorFlow + multiprocessing scenario behind each tfproc-lint rule,
check that it fails the way the rule says (and that the fixed twin works), and benchmark the fixes.

Entry points: `runtime_probe.cli.main` (`python -m runtime_probe`, `tfproc-lint probe`) and
`runtime_probe.evidence` (what the last report observed, per rule).
"""
