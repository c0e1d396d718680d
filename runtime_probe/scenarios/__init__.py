"""Scenario scripts: each one is a standalone program run by `runtime_probe.runner`."""
