"""Compare observations with the declared expectations: per scenario, then per rule."""

from __future__ import annotations

import re

from .catalog import Scenario, compared_to
from .runner import PROBE_ERROR, Observation

CONFIRMED = "confirmed"
NOT_CONFIRMED = "not confirmed"
# PROBE_ERROR: the probe could not run the scenario; says nothing about the rule.


def describe_expectation(expect: dict) -> str:
    text = expect["outcome"] + (f" or {expect['or']}" if "or" in expect else "")
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
    if obs.outcome not in (expect["outcome"], expect.get("or")):
        return NOT_CONFIRMED, f"expected {describe_expectation(expect)}, observed {obs.summary()}"
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


# --- The runtime guard's pass (every scenario again under `python -m tfproc_lint.guard`) -----------
# A bad scenario: the guard reported its rule and the run ended by itself; for one that works but costs
# time or memory (expected outcome ok: TFP102/103 per task, TFP301-303) the guard warns, and the run must
# end with its normal result.
GUARD_CAUGHT = "caught"
GUARD_CLEAN = "clean"  # a fixed scenario: ran ok, and the guard reported nothing
GUARD_GOOD = (GUARD_CAUGHT, GUARD_CLEAN)


def guard_check(scenario: Scenario, obs: Observation) -> tuple[str, str]:
    """(verdict, detail) of the guard's run of a scenario."""
    codes = ", ".join(obs.guard_codes)
    if obs.outcome == PROBE_ERROR:
        return PROBE_ERROR, obs.detail
    if scenario.kind != "bad":
        if obs.guard_codes:
            return "false alarm", f"reported {codes}; {obs.summary()}"
        if obs.outcome != "ok":
            return "not ok", obs.summary()
        return GUARD_CLEAN, f"ok in {obs.duration_s:.0f} s"
    killed = obs.outcome in ("hang", "lost task") and "killed after" in obs.detail
    if scenario.rule in obs.guard_codes:
        if killed:
            return "named, still hung", f"reported {codes}; {obs.summary()}"
        if scenario.expect["outcome"] == "ok":
            # A working but costly pattern: the guard only warns, so the run must end with its normal result.
            if obs.outcome != "ok":
                return "named, run changed", f"reported {codes}; {obs.summary()}"
            return GUARD_CAUGHT, f"{codes}: warning, ok in {obs.duration_s:.0f} s"
        return GUARD_CAUGHT, f"{codes}: {obs.outcome} after {obs.duration_s:.0f} s"
    if obs.guard_codes:
        return "other rule", f"reported {codes}, not {scenario.rule}; {obs.summary()}"
    return "missed", obs.summary()


def guard_counts(rows: list[dict]) -> str:
    """'bad 5/6 caught, fixed 3/3 clean' over the rows the guard ran."""
    ran = [r for r in rows if r.get("guard") and not r["guard"]["verdict"].startswith("skipped")]
    parts = [
        f"{kind} {sum(r['guard']['verdict'] == good for r in of_kind)}/{len(of_kind)} {good}"
        for kind, good in (("bad", GUARD_CAUGHT), ("fixed", GUARD_CLEAN))
        if (of_kind := [r for r in ran if r["kind"] == kind])
    ]
    return ", ".join(parts) or "not run"
