"""Compare observations with the declared expectations: per scenario, then per rule."""

from __future__ import annotations

import re

from .catalog import Scenario, compared_to
from .runner import PROBE_ERROR, Observation

CONFIRMED = "confirmed"
NOT_CONFIRMED = "not confirmed"
# PROBE_ERROR: the probe could not run the scenario; says nothing about the rule.


def describe_expectation(expect: dict) -> str:
    text = expect["outcome"]
    if text == "exception":
        text += f" {expect.get('type', '?')}"
        if "match" in expect:
            text += f" /{expect['match']}/"
        if "where" in expect:
            text += f" ({expect['where']})"
    for relation in ("slower_than", "faster_than"):
        if relation in expect:
            other = expect[relation]
            text += f", {relation.replace('_', ' ')} {other['scenario']} x{other['factor']} (tasks/s)"
    return text


def _throughput(obs: Observation | None) -> float | None:
    if obs is None or obs.outcome != "ok":
        return None
    return (obs.result.get("metrics") or {}).get("tasks_per_s")


def check(scenario: Scenario, obs: Observation, observations: dict[str, Observation]) -> tuple[str, str]:
    """(verdict, reason) for one scenario; the reason is empty when confirmed."""
    expect = scenario.expect
    if obs.outcome == PROBE_ERROR:
        return PROBE_ERROR, obs.detail
    if obs.outcome != expect["outcome"]:
        return NOT_CONFIRMED, f"expected {expect['outcome']}, observed {obs.summary()}"
    if obs.outcome == "exception":
        if "type" in expect and obs.exc_type.rsplit(".", 1)[-1] != expect["type"]:
            return NOT_CONFIRMED, f"expected {expect['type']}, observed {obs.exc_type}"
        if "match" in expect and not re.search(expect["match"], obs.message or ""):
            return NOT_CONFIRMED, f"message {obs.message!r} does not match /{expect['match']}/"
        if "where" in expect and obs.where != expect["where"]:
            return NOT_CONFIRMED, f"raised in the {obs.where}, expected in the {expect['where']}"
    other = compared_to(scenario)
    if other:
        relation = expect.get("slower_than") or expect.get("faster_than")
        mine, theirs = _throughput(obs), _throughput(observations.get(other))
        if mine is None or theirs is None:
            return NOT_CONFIRMED, f"no throughput to compare with {other}"
        ratio = theirs / mine if "slower_than" in expect else mine / theirs
        if ratio < relation["factor"]:
            return NOT_CONFIRMED, f"only x{ratio:.1f} vs {other} ({mine:.0f} vs {theirs:.0f} tasks/s)"
    return CONFIRMED, ""


def rule_status(rows: list[dict]) -> str:
    """Rows: one per scenario of the rule, with 'kind' and 'verdict'."""
    ran = [r for r in rows if not r["verdict"].startswith("skipped")]
    if not ran:
        return rows[0]["verdict"] if rows else "no scenarios"
    core = [r for r in ran if r["kind"] in ("bad", "fixed")]
    if any(r["verdict"] == PROBE_ERROR for r in core):
        return PROBE_ERROR
    if any(r["verdict"] != CONFIRMED for r in core):
        return NOT_CONFIRMED
    kinds = {r["kind"] for r in core}
    if kinds != {"bad", "fixed"}:
        return "partial: no " + ("fixed" if "bad" in kinds else "bad") + " scenario run"
    return CONFIRMED
