"""The rules: one per `tfpNNN_<name>.py` module, whose name carries the rule's code.

`rule_codes()` reads the codes from the module names without importing the modules (and LibCST),
so that the command line can check its selectors before anything is parsed; base.py imports them.
"""

from __future__ import annotations

import pkgutil
import re

_RULE_MODULE = re.compile(r"tfp(\d{3})_\w+")


def rule_modules() -> list[str]:
    """The names of the rule modules in this package, by code."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if _RULE_MODULE.fullmatch(info.name))


def rule_codes() -> list[str]:
    return [f"TFP{_RULE_MODULE.fullmatch(name).group(1)}" for name in rule_modules()]
