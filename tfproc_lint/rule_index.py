"""The rules' codes and names, read from the rule modules' file names (`rules/tfpNNN_<name>.py`,
the name in snake case) without importing them: the command line and the configuration check and
translate selectors (`--select runtime-initialised-before-fork`) before LibCST is imported.
tests/test_config.py checks that the file names match the rule classes."""

from __future__ import annotations

import functools
import pkgutil
import re
from pathlib import Path

RULES_DIRECTORY = Path(__file__).resolve().with_name("rules")
_RULE_MODULE = re.compile(r"tfp(\d{3})_(\w+)")
# A rule's name as the rule classes spell it: kebab case (`runtime-initialised-before-fork`).
RULE_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")


def rule_modules() -> list[str]:
    """The names of the rule modules, by code."""
    return sorted(info.name for info in pkgutil.iter_modules([str(RULES_DIRECTORY)])
                  if _RULE_MODULE.fullmatch(info.name))


def rule_codes() -> list[str]:
    return [f"TFP{_RULE_MODULE.fullmatch(name).group(1)}" for name in rule_modules()]


@functools.lru_cache(maxsize=1)
def rule_names() -> dict[str, str]:
    """Each rule's name -> its code (`runtime-initialised-before-fork` -> `TFP201`)."""
    found = {}
    for module in rule_modules():
        match = _RULE_MODULE.fullmatch(module)
        found[match.group(2).replace("_", "-")] = f"TFP{match.group(1)}"
    return found
