"""The rules: one per `tfpNNN_<name>.py` module, whose name carries the rule's code and name.

`rule_codes()` reads the codes from the module names without importing the modules (and LibCST),
so that the command line can check its selectors before anything is parsed; base.py imports them.
"""

from __future__ import annotations

from tfproc_lint.rule_index import rule_codes, rule_modules, rule_names

__all__ = ["rule_codes", "rule_modules", "rule_names"]
